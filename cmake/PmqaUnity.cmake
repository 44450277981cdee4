# Unity builds for pmqa's libraries, the commands and the extension: each target's sources compiled
# as one or a few combined units, so the heavy headers every unit includes (nlohmann/json, CLI11,
# pybind11, Eigen) are parsed and their inline code generated once per group instead of once per file.
# On the 2-core machines this halves the build of the pmqa command and the Python package (the
# README's figures). PMQA_UNITY_BUILD=OFF compiles every file on its own (quicker when iterating on
# one file).
#
#   pmqa_unity(TARGET)                         every .cpp the target has so far, from its source folder,
#                                              in one unit
#   pmqa_unity(TARGET GROUP a.cpp b.cpp GROUP c.cpp ...)   the groups given, one unit each
#
# Groups are explicit (CMake's GROUP mode): a file added to the target later, or one with its own
# COMPILE_OPTIONS (CMake leaves those out), is compiled on its own, so a new file never breaks a
# unit. Files whose file-local names collide (two anonymous-namespace helpers of one name) go into
# different groups.
option(PMQA_UNITY_BUILD "Compile each pmqa library, command and the extension as a few combined units (unity build)" ON)

function(pmqa_unity target)
  if(NOT PMQA_UNITY_BUILD)
    return()
  endif()
  set(args ${ARGN})
  if(NOT args)
    get_target_property(sources ${target} SOURCES)
    set(args GROUP)
    foreach(s IN LISTS sources)
      if(s MATCHES "[.]cpp$" AND NOT IS_ABSOLUTE "${s}")
        list(APPEND args "${s}")
      endif()
    endforeach()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  set(group 0)
  foreach(a IN LISTS args)
    if(a STREQUAL "GROUP")
      math(EXPR group "${group} + 1")
    else()
      set_source_files_properties("${a}" TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP "${target}_${group}")
    endif()
  endforeach()
endfunction()
