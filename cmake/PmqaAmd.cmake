# PmqaAmd: the AMD side of the kernels' toolchain.
#
# 1. An ISA check that needs no ROCm install and no GPU: Debian 12's clang-19 + libamdhip64-dev
#    (HIP 5.2.3 headers) + rocm-device-libs compile the kernels' device code for gfx942 to assembly,
#    and a CTest test compares the fp8 instructions of every kernel with an expectation file.
#
#      include(PmqaAmd)
#      pmqa_enable_amd_isa_check()                 # sets PMQA_HAVE_AMD_ISA (caller's scope and a
#                                                  # global property of the same name)
#      pmqa_add_amd_isa_check(NAME <n> SOURCE <file.hip> EXPECT <expected.txt>
#                             [ARCH gfx942] [DEFINES ...] [INCLUDES ...] [TARGETS ...]
#                             [OPTIONS ...] [LABELS ...])
#
#    Cache variables: PMQA_AMD_ISA_CHECK (AUTO: on when everything below is found and a probe compile
#    works; ON: error otherwise; OFF), PMQA_AMD_CLANG (clang++-19 by default), PMQA_HIP_INCLUDE_DIR
#    (folder holding hip/hip_runtime.h), PMQA_AMD_DEVICE_LIB_SRC (folder holding ockl.bc etc.).
#
#    How clang-19 is driven, and why:
#      clang++-19 -x hip --offload-arch=gfx942 --cuda-device-only -O3 -S -std=c++20
#                 --rocm-device-lib-path=<build>/amd_device_libs  [-isystem <hip include>] ...
#    - HIP headers: Debian's clang-19 searches /usr/lib/llvm-19, /opt/rocm, /usr/local and /usr for a
#      ROCm install; it finds none, but still force-includes its own __clang_hip_runtime_wrapper.h,
#      and <hip/hip_runtime.h> resolves in /usr/include. So neither --rocm-path nor -nogpuinc is
#      needed, and no -I/usr/include must be added (that would break libstdc++'s #include_next);
#      -isystem is added only when the HIP headers are elsewhere.
#    - Device libraries: without --rocm-device-lib-path clang stops with "cannot find ROCm device
#      library". rocm-device-libs 5.2.3 (/usr/lib/x86_64-linux-gnu/amdgcn/bitcode) has no
#      oclc_isa_version_942.bc, so the configure step makes <build>/amd_device_libs with links to
#      every installed .bc file plus oclc_isa_version_942.bc -> oclc_isa_version_940.bc (the same
#      ISA family; only device-library code that branches on __oclc_ISA_version could differ).
#    - gfx950 (MI350) and gfx1250 are unknown to clang-19 ("invalid target ID"): they need ROCm 7's
#      compiler, i.e. pmqa_enable_rocm() below. clang-19 knows gfx90a, gfx940-942, gfx11xx, gfx12xx.
#
#    The test (label unit) runs pmqa_isa_list (kernels/toolchain/isa_list.cpp, built here): it lists,
#    per function of the assembly (demangled), the sorted set of fp8-related mnemonics (any v_*
#    mnemonic containing fp8, bf8 or f8f6f4, encoding suffix dropped) and fails with a diff against
#    EXPECT, printing the command that regenerates EXPECT.
#
# 2. A real ROCm build for users with ROCm 7 (gfx942 and gfx950):
#
#      pmqa_enable_rocm()       # a macro, top-level file scope; does something only with -DPMQA_ROCM=ON
#
#    validates PMQA_AMD_ARCHS (default "gfx942;gfx950"; each entry a known target, optionally with
#    target-ID features such as gfx942:xnack-) and enables CMake's HIP language with
#    CMAKE_HIP_ARCHITECTURES = PMQA_AMD_ARCHS. Sets PMQA_HAVE_ROCM. Example:
#      cmake -DPMQA_ROCM=ON -DCMAKE_HIP_COMPILER=/opt/rocm/llvm/bin/clang++ -DPMQA_AMD_ARCHS="gfx942;gfx950"

include_guard(GLOBAL)

set(_PMQA_AMD_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")

# Targets the project knows (spec.md §3-4, AITER's list); gfx950 and gfx1250 need ROCm 7's clang.
set(PMQA_AMD_KNOWN_ARCHS gfx90a gfx940 gfx941 gfx942 gfx950 gfx1100 gfx1101 gfx1200 gfx1201 gfx1250)

# pmqa_validate_amd_archs(<out-error-var> <arch>...): empty <out> when every entry is a known target
# (optionally followed by target-ID features, e.g. gfx942:sramecc+:xnack-), else a message naming
# the first bad entry.
function(pmqa_validate_amd_archs out)
  set(archs ${ARGN})
  string(REPLACE ";" " " known "${PMQA_AMD_KNOWN_ARCHS}")
  set(${out} "" PARENT_SCOPE)
  if(NOT archs)
    set(${out} "PMQA_AMD_ARCHS is empty; give at least one of: ${known}" PARENT_SCOPE)
    return()
  endif()
  foreach(entry IN LISTS archs)
    string(STRIP "${entry}" e)
    if(NOT e MATCHES "^(gfx[0-9a-z]+)((:[a-z0-9_]+[+-])*)$")
      set(${out} "PMQA_AMD_ARCHS entry '${entry}' is not a target ID (gfxNNN or gfxNNN:feature+/-)" PARENT_SCOPE)
      return()
    endif()
    if(NOT CMAKE_MATCH_1 IN_LIST PMQA_AMD_KNOWN_ARCHS)
      set(${out} "PMQA_AMD_ARCHS entry '${entry}' names the unknown target '${CMAKE_MATCH_1}'; known: ${known}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

function(_pmqa_amd_isa_off reason mode)
  if(mode STREQUAL "ON")
    message(FATAL_ERROR "pmqa: PMQA_AMD_ISA_CHECK=ON but ${reason}")
  endif()
  message(STATUS "pmqa: AMD ISA check off: ${reason}")
endfunction()

# pmqa_enable_amd_isa_check(): detect clang + HIP headers + device libraries, make the device-lib
# folder, probe-compile fp8 builtins for gfx942 (once per toolchain), set PMQA_HAVE_AMD_ISA.
function(pmqa_enable_amd_isa_check)
  set(PMQA_HAVE_AMD_ISA OFF PARENT_SCOPE)
  set_property(GLOBAL PROPERTY PMQA_HAVE_AMD_ISA OFF)
  if(NOT DEFINED PMQA_AMD_ISA_CHECK)
    set(PMQA_AMD_ISA_CHECK "AUTO" CACHE STRING "Compile the kernels for gfx942 with clang-19 and check their fp8 instructions: AUTO, ON, OFF")
  endif()
  string(TOUPPER "${PMQA_AMD_ISA_CHECK}" mode)
  if(NOT mode STREQUAL "AUTO")
    if(PMQA_AMD_ISA_CHECK)
      set(mode ON)
    else()
      set(mode OFF)
    endif()
  endif()
  if(mode STREQUAL "OFF")
    message(STATUS "pmqa: AMD ISA check off (PMQA_AMD_ISA_CHECK=${PMQA_AMD_ISA_CHECK})")
    return()
  endif()

  find_program(PMQA_AMD_CLANG NAMES clang++-19 clang++
               DOC "clang++ used to compile the kernels for gfx942 (Debian: clang-19)")
  find_path(PMQA_HIP_INCLUDE_DIR hip/hip_runtime.h HINTS "$ENV{HIP_PATH}/include" PATHS /usr/include /opt/rocm/include
            DOC "folder holding the installed hip/ headers")
  find_path(PMQA_AMD_DEVICE_LIB_SRC NAMES ockl.bc
            PATHS /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /usr/lib/amdgcn/bitcode /opt/rocm/amdgcn/bitcode
            NO_DEFAULT_PATH DOC "folder holding the ROCm device libraries (ockl.bc, oclc_*.bc)")
  if(NOT PMQA_AMD_CLANG)
    _pmqa_amd_isa_off("clang++-19 was not found (Debian: apt-get install clang-19)" "${mode}")
    return()
  endif()
  if(NOT PMQA_HIP_INCLUDE_DIR OR NOT EXISTS "${PMQA_HIP_INCLUDE_DIR}/hip/amd_detail")
    _pmqa_amd_isa_off("HIP's headers with hip/amd_detail were not found (Debian: apt-get install libamdhip64-dev; or set PMQA_HIP_INCLUDE_DIR)" "${mode}")
    return()
  endif()
  if(NOT PMQA_AMD_DEVICE_LIB_SRC OR NOT EXISTS "${PMQA_AMD_DEVICE_LIB_SRC}/oclc_isa_version_940.bc")
    _pmqa_amd_isa_off("the ROCm device libraries (ockl.bc, oclc_isa_version_940.bc) were not found (Debian: apt-get install rocm-device-libs; or set PMQA_AMD_DEVICE_LIB_SRC)" "${mode}")
    return()
  endif()

  # The device-lib folder: links to the installed bitcode, plus the missing gfx942 ISA version file.
  set(dl "${CMAKE_BINARY_DIR}/amd_device_libs")
  file(MAKE_DIRECTORY "${dl}")
  file(GLOB bcs "${PMQA_AMD_DEVICE_LIB_SRC}/*.bc")
  foreach(bc IN LISTS bcs)
    get_filename_component(n "${bc}" NAME)
    if(NOT IS_SYMLINK "${dl}/${n}" AND NOT EXISTS "${dl}/${n}")
      file(CREATE_LINK "${bc}" "${dl}/${n}" SYMBOLIC COPY_ON_ERROR)
    endif()
  endforeach()
  if(NOT EXISTS "${PMQA_AMD_DEVICE_LIB_SRC}/oclc_isa_version_942.bc" AND NOT IS_SYMLINK "${dl}/oclc_isa_version_942.bc")
    file(CREATE_LINK "${PMQA_AMD_DEVICE_LIB_SRC}/oclc_isa_version_940.bc" "${dl}/oclc_isa_version_942.bc"
         SYMBOLIC COPY_ON_ERROR)
  endif()

  set(flags -x hip --offload-arch=gfx942 --cuda-device-only -O3 -S -std=c++20 "--rocm-device-lib-path=${dl}")
  if(NOT PMQA_HIP_INCLUDE_DIR STREQUAL "/usr/include")
    list(APPEND flags -isystem "${PMQA_HIP_INCLUDE_DIR}")
  endif()

  # Probe: the fp8 builtins the kernels use must compile to the expected instructions.
  set(key "${PMQA_AMD_CLANG}|${PMQA_HIP_INCLUDE_DIR}|${PMQA_AMD_DEVICE_LIB_SRC}")
  if(NOT _PMQA_AMD_ISA_PROBED STREQUAL key)
    set(probe "${CMAKE_BINARY_DIR}/amd_isa_probe")
    file(MAKE_DIRECTORY "${probe}")
    file(WRITE "${probe}/probe.hip" "#include <hip/hip_runtime.h>\n"
      "typedef float f4 __attribute__((ext_vector_type(4)));\n"
      "__global__ void pmqa_probe(const long* a, f4* c, float* o) {\n"
      "  o[threadIdx.x] = __builtin_amdgcn_cvt_f32_fp8(static_cast<int>(a[threadIdx.x]), 0) + __expf(o[threadIdx.x]);\n"
      "  c[threadIdx.x] = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a[threadIdx.x], a[threadIdx.x], c[threadIdx.x], 0, 0, 0);\n"
      "}\n")
    execute_process(COMMAND "${PMQA_AMD_CLANG}" ${flags} probe.hip -o probe.s
                    WORKING_DIRECTORY "${probe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    set(asm "")
    if(rc EQUAL 0)
      file(READ "${probe}/probe.s" asm)
    endif()
    if(NOT rc EQUAL 0 OR NOT asm MATCHES "v_mfma_f32_16x16x32_fp8_fp8" OR NOT asm MATCHES "v_cvt_f32_fp8")
      string(REPLACE ";" " " cmd "${PMQA_AMD_CLANG} ${flags} probe.hip -o probe.s")
      _pmqa_amd_isa_off("the probe compile for gfx942 failed or lacks the fp8 instructions.\n  in ${probe}: ${cmd}\n${out}" "${mode}")
      return()
    endif()
    execute_process(COMMAND "${PMQA_AMD_CLANG}" --version OUTPUT_VARIABLE ver ERROR_QUIET)
    string(REGEX MATCH "clang version [0-9.]+" ver "${ver}")
    set(_PMQA_AMD_ISA_PROBED "${key}" CACHE INTERNAL "pmqa: AMD ISA toolchain probed")
    set(_PMQA_AMD_CLANG_VERSION "${ver}" CACHE INTERNAL "pmqa: clang used for the AMD ISA check")
  endif()

  set_property(GLOBAL PROPERTY PMQA_AMD_ISA_FLAGS "${flags}")
  set_property(GLOBAL PROPERTY PMQA_HAVE_AMD_ISA ON)
  set(PMQA_HAVE_AMD_ISA ON PARENT_SCOPE)
  message(STATUS "pmqa: AMD ISA check on: ${PMQA_AMD_CLANG} (${_PMQA_AMD_CLANG_VERSION}), gfx942, device libraries ${dl}")
endfunction()

# pmqa_add_amd_isa_check(NAME <n> SOURCE <file.hip> EXPECT <expected.txt>
#                        [ARCH <gfx942>] [DEFINES <d>...] [INCLUDES <dir>...] [TARGETS <tgt>...]
#                        [OPTIONS <clang flag>...] [LABELS <label>...])
# Compiles SOURCE for ARCH (default gfx942) to <build>/<n>.<arch>.s at build time (target <n>, part of
# ALL; its properties PMQA_ISA_ASM and PMQA_ISA_ARCH name the file and arch), and adds the CTest
# test <n> (labels: unit + LABELS). DEFINES without -D, INCLUDES as -I;
# TARGETS adds the (transitive) INTERFACE include directories and compile definitions of those
# targets. Does nothing when PMQA_HAVE_AMD_ISA is off.
function(pmqa_add_amd_isa_check)
  cmake_parse_arguments(A "" "NAME;SOURCE;EXPECT;ARCH" "DEFINES;INCLUDES;TARGETS;OPTIONS;LABELS" ${ARGN})
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pmqa_add_amd_isa_check: unexpected arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  foreach(req NAME SOURCE EXPECT)
    if(NOT A_${req})
      message(FATAL_ERROR "pmqa_add_amd_isa_check: ${req} is required")
    endif()
  endforeach()
  get_property(have GLOBAL PROPERTY PMQA_HAVE_AMD_ISA)
  if(NOT have)
    return()
  endif()
  if(NOT A_ARCH)
    set(A_ARCH gfx942)
  endif()
  get_filename_component(src "${A_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(expect "${A_EXPECT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${src}")
    message(FATAL_ERROR "pmqa_add_amd_isa_check(${A_NAME}): SOURCE ${src} does not exist")
  endif()
  if(NOT EXISTS "${expect}")
    message(WARNING "pmqa_add_amd_isa_check(${A_NAME}): EXPECT ${expect} does not exist yet; the test "
                    "fails and prints the command that writes it")
  endif()

  if(NOT TARGET pmqa_isa_list)
    add_executable(pmqa_isa_list "${_PMQA_AMD_MODULE_DIR}/../kernels/toolchain/isa_list.cpp")
    target_compile_features(pmqa_isa_list PRIVATE cxx_std_17)
    if(TARGET pmqa_warnings)
      target_link_libraries(pmqa_isa_list PRIVATE pmqa_warnings)
    endif()
  endif()

  get_property(flags GLOBAL PROPERTY PMQA_AMD_ISA_FLAGS)
  list(TRANSFORM flags REPLACE "^--offload-arch=.*" "--offload-arch=${A_ARCH}")
  set(extra "")
  foreach(d IN LISTS A_DEFINES)
    list(APPEND extra "-D${d}")
  endforeach()
  foreach(i IN LISTS A_INCLUDES)
    get_filename_component(i "${i}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND extra "-I${i}")
  endforeach()
  foreach(t IN LISTS A_TARGETS)
    set(inc "$<TARGET_PROPERTY:${t},INTERFACE_INCLUDE_DIRECTORIES>")
    set(def "$<TARGET_PROPERTY:${t},INTERFACE_COMPILE_DEFINITIONS>")
    list(APPEND extra "$<$<BOOL:${inc}>:-I$<JOIN:${inc},$<SEMICOLON>-I>>" "$<$<BOOL:${def}>:-D$<JOIN:${def},$<SEMICOLON>-D>>")
  endforeach()

  set(asm "${CMAKE_CURRENT_BINARY_DIR}/${A_NAME}.${A_ARCH}.s")
  file(RELATIVE_PATH asm_rel "${CMAKE_BINARY_DIR}" "${asm}")
  add_custom_command(
    OUTPUT "${asm}"
    COMMAND "${PMQA_AMD_CLANG}" ${flags} ${extra} ${A_OPTIONS} -MD -MF "${asm}.d" -o "${asm}" "${src}"
    DEPENDS "${src}"
    DEPFILE "${asm}.d"
    COMMENT "Compiling ${A_SOURCE} for ${A_ARCH} to assembly (${asm_rel})"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${A_NAME} ALL DEPENDS "${asm}")
  set_target_properties(${A_NAME} PROPERTIES PMQA_ISA_ASM "${asm}" PMQA_ISA_ARCH ${A_ARCH})
  add_test(NAME ${A_NAME}
           COMMAND pmqa_isa_list "${asm}" --check "${expect}" --arch ${A_ARCH} --name ${A_NAME}
                   --build-dir "${CMAKE_BINARY_DIR}" --target ${A_NAME})
  set_tests_properties(${A_NAME} PROPERTIES LABELS "unit;${A_LABELS}" TIMEOUT 60)
endfunction()

# pmqa_enable_rocm(): with -DPMQA_ROCM=ON, enable CMake's HIP language for CMAKE_HIP_ARCHITECTURES =
# PMQA_AMD_ARCHS (needs ROCm's clang; ROCm 7 for gfx950). A macro: enable_language() must run at
# file scope, in the top-level CMakeLists.txt. Sets PMQA_HAVE_ROCM. PMQA_AMD_ARCHS is validated in
# every configuration, so a typo fails early even when PMQA_ROCM is off.
macro(pmqa_enable_rocm)
  option(PMQA_ROCM "Build the HIP kernels for AMD GPUs with ROCm's compiler (CMake HIP language, PMQA_AMD_ARCHS)" OFF)
  if(NOT DEFINED PMQA_AMD_ARCHS)
    set(PMQA_AMD_ARCHS "gfx942;gfx950" CACHE STRING "AMD offload targets for ROCm builds (a ROCm 7 compiler is needed for gfx950)")
  endif()
  pmqa_validate_amd_archs(_pmqa_rocm_error ${PMQA_AMD_ARCHS})
  if(_pmqa_rocm_error)
    message(FATAL_ERROR "pmqa: ${_pmqa_rocm_error}")
  endif()
  unset(_pmqa_rocm_error)
  set(PMQA_HAVE_ROCM OFF)
  if(PMQA_ROCM)
    # PMQA_AMD_ARCHS is the one setting; a different -DCMAKE_HIP_ARCHITECTURES given on the first
    # configure is an error rather than silently overridden.
    if(NOT _PMQA_ROCM_ARCHS_OWNED AND DEFINED CMAKE_HIP_ARCHITECTURES
       AND NOT "${CMAKE_HIP_ARCHITECTURES}" STREQUAL "${PMQA_AMD_ARCHS}")
      message(FATAL_ERROR "pmqa: CMAKE_HIP_ARCHITECTURES (${CMAKE_HIP_ARCHITECTURES}) differs from "
                          "PMQA_AMD_ARCHS (${PMQA_AMD_ARCHS}); set only PMQA_AMD_ARCHS")
    endif()
    set(CMAKE_HIP_ARCHITECTURES "${PMQA_AMD_ARCHS}" CACHE STRING "AMD offload targets (set from PMQA_AMD_ARCHS)" FORCE)
    set(_PMQA_ROCM_ARCHS_OWNED ON CACHE INTERNAL "pmqa: CMAKE_HIP_ARCHITECTURES follows PMQA_AMD_ARCHS")
    # CMake's HIP language needs ROCm's clang and ROCm's hip-lang CMake package (Debian's clang-19
    # and HIP 5.2.3 are not enough); say so before CMake's own "Failed to find ROCm root directory".
    if(NOT CMAKE_HIP_COMPILER AND NOT DEFINED ENV{HIPCXX} AND NOT DEFINED ENV{ROCM_PATH}
       AND NOT EXISTS "/opt/rocm/lib/cmake/hip-lang")
      message(FATAL_ERROR "pmqa: PMQA_ROCM=ON needs a ROCm install (ROCm 7 for gfx950): none at /opt/rocm. "
                          "Pass -DCMAKE_HIP_COMPILER=<rocm>/llvm/bin/clang++ (or set ROCM_PATH / HIPCXX), "
                          "or leave PMQA_ROCM off (the gfx942 ISA check needs no ROCm).")
    endif()
    enable_language(HIP)
    if(NOT DEFINED CMAKE_HIP_STANDARD)
      set(CMAKE_HIP_STANDARD 20)
      set(CMAKE_HIP_STANDARD_REQUIRED ON)
    endif()
    set(PMQA_HAVE_ROCM ON)
    message(STATUS "pmqa: ROCm build on: ${CMAKE_HIP_COMPILER} (${CMAKE_HIP_COMPILER_VERSION}), "
                   "architectures ${CMAKE_HIP_ARCHITECTURES}")
  endif()
endmacro()
