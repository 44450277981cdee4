# Warnings for every pmqa target, and -march=native for Release builds unless PMQA_NATIVE is off.
add_library(pmqa_warnings INTERFACE)
target_compile_options(pmqa_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
install(TARGETS pmqa_warnings EXPORT pmqaTargets)

if(PMQA_NATIVE AND CMAKE_BUILD_TYPE STREQUAL "Release")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native PMQA_HAS_MARCH_NATIVE)
  if(PMQA_HAS_MARCH_NATIVE)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=native>)
  endif()
endif()
