# pmqa_add_test(NAME name SOURCES ... LIBS ... LABELS ... [TIMEOUT s] [RESOURCE_LOCK name]
#               [FIXTURES_REQUIRED name]): one GoogleTest executable, its cases discovered into
# CTest with the given labels (unit, property, gpu, slow). Tests sharing a RESOURCE_LOCK never run
# at once (e.g. the gigabyte host tests); FIXTURES_REQUIRED runs a setup test first (e.g. unpacking
# a corpus).
function(pmqa_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;RESOURCE_LOCK;FIXTURES_REQUIRED" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main pmqa_warnings)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  # A GTEST_SKIP (e.g. a GPU test on a machine without one) shows as Skipped in CTest, never Passed.
  set(props LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT} SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  if(T_RESOURCE_LOCK)
    list(APPEND props RESOURCE_LOCK ${T_RESOURCE_LOCK})
  endif()
  if(T_FIXTURES_REQUIRED)
    list(APPEND props FIXTURES_REQUIRED ${T_FIXTURES_REQUIRED})
  endif()
  gtest_discover_tests(${T_NAME} PROPERTIES ${props} DISCOVERY_TIMEOUT 60)
endfunction()
