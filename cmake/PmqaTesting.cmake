# pmqa_add_test(NAME name SOURCES ... LIBS ... LABELS ...): one GoogleTest executable, its cases
# discovered into CTest with the given labels (unit, property, gpu, slow).
function(pmqa_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main pmqa_warnings)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  # A GTEST_SKIP (e.g. a GPU test on a machine without one) shows as Skipped in CTest, never Passed.
  gtest_discover_tests(${T_NAME}
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT} SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
    DISCOVERY_TIMEOUT 60)
endfunction()
