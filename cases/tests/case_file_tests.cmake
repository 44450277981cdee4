# Case-file tests (included from cases/tests/CMakeLists.txt).
pmqa_add_test(NAME pmqa_case_file_test
  SOURCES case_file_test.cpp
  LIBS pmqa_cases pmqa_fixtures nlohmann_json::nlohmann_json
  LABELS unit)
pmqa_add_test(NAME pmqa_case_file_corpus_test
  SOURCES case_file_corpus_test.cpp
  LIBS pmqa_cases pmqa_fixtures nlohmann_json::nlohmann_json
  LABELS unit)

# A small helper for the cross-language tests registered in python/CMakeLists.txt: writes the
# sample and seeded cases, and checks files the Python side wrote.
add_executable(pmqa_case_file_tool case_file_tool.cpp)
target_link_libraries(pmqa_case_file_tool PRIVATE pmqa_cases pmqa_fixtures nlohmann_json::nlohmann_json pmqa_warnings)
