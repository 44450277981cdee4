# cmake -DPMQA=<exe> -DEXPECT_RC=<n> -DREGEX=<re> -DARGS=<a;b;c> -P run_cli.cmake
# Runs the pmqa command and checks its exit status and that stdout+stderr match REGEX.
execute_process(COMMAND "${PMQA}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
string(REPLACE "\n" " " flat "${all}")
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "pmqa ${ARGS}: exit ${rc}, expected ${EXPECT_RC}\n${all}")
endif()
if(NOT flat MATCHES "${REGEX}")
  message(FATAL_ERROR "pmqa ${ARGS}: output does not match /${REGEX}/\n${all}")
endif()
message(STATUS "pmqa ${ARGS}: exit ${rc} as expected, output matches /${REGEX}/")
