# Warnings for every pmqa target, and -march=native for Release builds unless PMQA_NATIVE is off.
add_library(pmqa_warnings INTERFACE)
# -Wno-psabi: the wgmma kernel takes its tensor map (128-byte aligned) by value, and GCC notes at
# every host instantiation that such passing changed ABI in GCC 4.6; nothing here links against
# code built by a GCC that old.
target_compile_options(pmqa_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wno-psabi>)
install(TARGETS pmqa_warnings EXPORT pmqaTargets)

if(PMQA_NATIVE AND CMAKE_BUILD_TYPE STREQUAL "Release")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native PMQA_HAS_MARCH_NATIVE)
  if(PMQA_HAS_MARCH_NATIVE)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=native>)
  endif()
endif()
