# The pictures of a comparison (included from cases/tests/CMakeLists.txt).
pmqa_add_test(NAME pmqa_error_map_picture_test
  SOURCES error_map_picture_test.cpp
  LIBS pmqa_cases pmqa_fixtures pmqa_oracle
  LABELS unit)
