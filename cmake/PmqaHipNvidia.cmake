# PmqaHipNvidia: build HIP kernels with nvcc through HIP's NVIDIA headers (__HIP_PLATFORM_NVIDIA__).
#
#   include(PmqaHipNvidia)
#   pmqa_enable_nvidia([EXPORT <export-set>])      # a macro: call it at file scope of the top-level
#                                                   # CMakeLists.txt (it runs enable_language(CUDA))
#   if(PMQA_HAVE_NVIDIA)
#     add_executable(x x.cu)
#     target_link_libraries(x PRIVATE pmqa_hip_nvidia)
#   endif()
#
# Cache variables
#   PMQA_GPU                  AUTO (default; on when nvcc is found) | ON (error when it is not) | OFF
#   CMAKE_CUDA_ARCHITECTURES  default 90 (sm_90 SASS + compute_90 PTX); 90a, "90;100" etc. also work
#   CMAKE_CUDA_HOST_COMPILER  default: the C++ compiler when it is GCC, else g++-12 / g++ (CUDAHOSTCXX
#                             in the environment is honoured too)
#   PMQA_HIP_INCLUDE_DIR      the folder that holds the installed hip/ headers (default: found in
#                             /usr/include, /opt/rocm/include)
#   PMQA_HIP_NVIDIA_PATCH     ON (default): use a patched copy of the headers (cmake/hip_nvidia/), needed
#                             for HIP 5.2.3 + CUDA 13; OFF: use PMQA_HIP_INCLUDE_DIR as it is
#
# Results
#   PMQA_HAVE_NVIDIA          ON/OFF, in the caller's scope
#   pmqa_hip_nvidia           INTERFACE target: the (patched) HIP headers as a SYSTEM include directory
#                             (before /usr/include, so they win over the pristine ones), the define
#                             __HIP_PLATFORM_NVIDIA__, and CUDA::cudart_static
#   PMQA_HIP_NVIDIA_INCLUDE_DIR  the include directory that target uses
#
# Portability of the binaries: they are built on a CPU-only machine and run on another x86 machine
# with the GPU. CUDA sources never get -march=native from pmqa (PmqaCompilerFlags adds it for the CXX
# language only), and this module refuses -march=native in CMAKE_CUDA_FLAGS*. C++ libraries linked
# into a GPU binary are still built with -march=native when PMQA_NATIVE is ON (Release), so a warning
# says to configure with -DPMQA_NATIVE=OFF for binaries that travel.
#
# Static cudart: the binary needs only the NVIDIA driver (libcuda.so.1) on the GPU machine, loaded at
# run time, so a binary built here also starts (and its tests skip) on a machine without a driver.
# The HIP wrappers over driver-API calls (hipCtx*, hipModule*, hipMemcpyHtoD, ...) would need
# CUDA::cuda_driver (libcuda) at link and load time; pmqa_hip_nvidia does not link it.
#
# Also set up: CMAKE_CUDA_STANDARD 20 (unless set), and, because CMake 3.25 knows no C++20 flag for
# nvcc, CMAKE_CUDA20_STANDARD_COMPILE_OPTION = -std=c++20. At the first configure a probe program
# including <hip/hip_runtime.h> is compiled and linked with this nvcc (about 2-3 s, cached per
# header / nvcc / architectures / host compiler), so an incompatible HIP/CUDA pair fails there.
# Keep Eigen out of NVIDIA translation units (or include it before the HIP headers).

include_guard(GLOBAL)

set(_PMQA_HIP_NVIDIA_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")
# The patch script, for tests and for running it by hand (cmake -DSRC=.. -DDST=.. -P <it>).
set(PMQA_HIP_NVIDIA_PATCHER "${CMAKE_CURRENT_LIST_DIR}/hip_nvidia/patch_headers.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/hip_nvidia/patch_headers.cmake")

# Decide whether to build for NVIDIA; pick nvcc, the host compiler and the default architecture.
# Sets _pmqa_nv_enable (ON/OFF) in the caller's scope.
function(_pmqa_nvidia_detect)
  if(NOT DEFINED PMQA_GPU)
    set(PMQA_GPU "AUTO" CACHE STRING "Build the NVIDIA GPU executor with nvcc through HIP's NVIDIA headers: AUTO, ON, OFF")
  endif()
  string(TOUPPER "${PMQA_GPU}" mode)
  if(NOT mode STREQUAL "AUTO")
    if(PMQA_GPU)
      set(mode ON)
    else()
      set(mode OFF)
    endif()
  endif()
  set(_pmqa_nv_enable OFF PARENT_SCOPE)
  if(mode STREQUAL "OFF")
    message(STATUS "pmqa: NVIDIA GPU executor off (PMQA_GPU=${PMQA_GPU})")
    return()
  endif()

  # nvcc: CMAKE_CUDA_COMPILER or CUDACXX if the user gave one, else the PATH, else the usual places.
  if(CMAKE_CUDA_COMPILER)
    set(nvcc "${CMAKE_CUDA_COMPILER}")
  elseif(DEFINED ENV{CUDACXX})
    set(nvcc "$ENV{CUDACXX}")
  else()
    find_program(PMQA_NVCC nvcc HINTS "$ENV{CUDA_PATH}/bin" "$ENV{CUDA_HOME}/bin" /usr/local/cuda/bin
                 DOC "nvcc used for the NVIDIA GPU executor")
    set(nvcc "${PMQA_NVCC}")
  endif()
  if(NOT nvcc OR NOT EXISTS "${nvcc}")
    if(mode STREQUAL "ON")
      message(FATAL_ERROR "pmqa: PMQA_GPU=ON but nvcc was not found (looked at CMAKE_CUDA_COMPILER, "
                          "CUDACXX, PATH, CUDA_PATH, CUDA_HOME, /usr/local/cuda/bin). Put nvcc on the PATH, "
                          "pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc, or use -DPMQA_GPU=AUTO/OFF.")
    endif()
    message(STATUS "pmqa: NVIDIA GPU executor off: nvcc not found (PMQA_GPU=AUTO)")
    return()
  endif()

  # The installed HIP headers.
  find_path(PMQA_HIP_INCLUDE_DIR hip/nvidia_detail/nvidia_hip_runtime_api.h
            HINTS "$ENV{HIP_PATH}/include" PATHS /usr/include /opt/rocm/include
            DOC "folder holding the installed hip/ headers (HIP's NVIDIA backend is used)")
  if(NOT PMQA_HIP_INCLUDE_DIR)
    if(mode STREQUAL "ON")
      message(FATAL_ERROR "pmqa: PMQA_GPU=ON but HIP's headers (hip/nvidia_detail/nvidia_hip_runtime_api.h) "
                          "were not found. Debian: apt-get install libamdhip64-dev; or set PMQA_HIP_INCLUDE_DIR.")
    endif()
    message(STATUS "pmqa: NVIDIA GPU executor off: HIP headers not found (PMQA_GPU=AUTO)")
    return()
  endif()

  set(CMAKE_CUDA_COMPILER "${nvcc}" CACHE FILEPATH "CUDA compiler (nvcc)")

  # Host compiler for nvcc: the C++ compiler when it is GCC (same libstdc++ and ABI as the rest of
  # pmqa), else g++-12 / g++. Debian 12's c++ is g++ 12, which nvcc 13 supports.
  if(NOT CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      file(REAL_PATH "${CMAKE_CXX_COMPILER}" host)
    else()
      find_program(PMQA_CUDA_GXX NAMES g++-12 g++ DOC "host compiler for nvcc")
      set(host "${PMQA_CUDA_GXX}")
    endif()
    if(host)
      set(CMAKE_CUDA_HOST_COMPILER "${host}" CACHE FILEPATH "Host compiler used by nvcc")
    endif()
  endif()

  # Default architecture: sm_90 (H100/H200). The user's -DCMAKE_CUDA_ARCHITECTURES (e.g. 90a for the
  # arch-specific wgmma/setmaxnreg features, or "90;100") or CUDAARCHS wins.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures for the NVIDIA GPU executor (90, 90a, ...)")
  endif()

  # Binaries travel to another x86 machine: no -march=native in the CUDA flags.
  foreach(var CMAKE_CUDA_FLAGS CMAKE_CUDA_FLAGS_RELEASE CMAKE_CUDA_FLAGS_RELWITHDEBINFO CMAKE_CUDA_FLAGS_INIT)
    if("${${var}}" MATCHES "march=native|mtune=native")
      message(FATAL_ERROR "pmqa: ${var} contains -march=native / -mtune=native ('${${var}}'). GPU binaries "
                          "are built here and run on another machine; remove it.")
    endif()
  endforeach()
  if(PMQA_NATIVE AND CMAKE_BUILD_TYPE STREQUAL "Release")
    message(WARNING "pmqa: PMQA_NATIVE is ON: C++ code linked into the GPU binaries is built with "
                    "-march=native for this CPU. Configure with -DPMQA_NATIVE=OFF when the build folder "
                    "is carried to the GPU machine. (CUDA translation units never get -march=native.)")
  endif()
  set(_pmqa_nv_enable ON PARENT_SCOPE)
endfunction()

# After enable_language(CUDA): patched headers, a one-time compile check, the INTERFACE target.
function(_pmqa_nvidia_setup)
  cmake_parse_arguments(S "" "EXPORT" "" ${ARGN})
  if(NOT DEFINED CMAKE_CUDA_STANDARD)
    set(CMAKE_CUDA_STANDARD 20 PARENT_SCOPE)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON PARENT_SCOPE)
  endif()
  find_package(CUDAToolkit REQUIRED)

  option(PMQA_HIP_NVIDIA_PATCH "Use a copy of HIP's headers patched for CUDA 13 (cmake/hip_nvidia)" ON)
  if(PMQA_HIP_NVIDIA_PATCH)
    set(inc "${CMAKE_BINARY_DIR}/hip_nvidia/include")
    pmqa_hip_nvidia_patch(SRC "${PMQA_HIP_INCLUDE_DIR}/hip" DST "${inc}/hip")
    file(GLOB hunks "${_PMQA_HIP_NVIDIA_MODULE_DIR}/hip_nvidia/hunks/*")
    set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
      "${PMQA_HIP_INCLUDE_DIR}/hip/nvidia_detail/nvidia_hip_runtime_api.h"
      "${_PMQA_HIP_NVIDIA_MODULE_DIR}/hip_nvidia/patch_headers.cmake" ${hunks})
  else()
    set(inc "${PMQA_HIP_INCLUDE_DIR}")
  endif()
  set(PMQA_HIP_NVIDIA_INCLUDE_DIR "${inc}" PARENT_SCOPE)

  # Compile check of hip_runtime.h with this nvcc, once per (header, nvcc, architectures).
  file(SHA256 "${inc}/hip/nvidia_detail/nvidia_hip_runtime_api.h" hsha)
  set(key "${hsha}|${CMAKE_CUDA_COMPILER}|${CMAKE_CUDA_COMPILER_VERSION}|${CMAKE_CUDA_ARCHITECTURES}|${CMAKE_CUDA_HOST_COMPILER}")
  if(NOT _PMQA_HIP_NVIDIA_CHECKED STREQUAL key)
    set(probe "${CMAKE_BINARY_DIR}/hip_nvidia/probe.cu")
    file(WRITE "${probe}" "#include <hip/hip_runtime.h>\n"
      "__global__ void pmqa_probe(float* p) { p[threadIdx.x] = __shfl_xor(p[threadIdx.x], 1, warpSize); }\n"
      "int pmqa_probe_host() { hipDeviceProp_t prop; int n = 0; float* d = nullptr;\n"
      "  if (hipGetDeviceCount(&n) != hipSuccess || hipGetDeviceProperties(&prop, 0) != hipSuccess) return 1;\n"
      "  if (hipMalloc(&d, 128) != hipSuccess) return 2;\n"
      "  hipLaunchKernelGGL(pmqa_probe, dim3(1), dim3(32), 0, 0, d);\n"
      "  return hipFree(d) == hipSuccess ? 0 : 3; }\n"
      "int main() { return pmqa_probe_host(); }\n")
    try_compile(ok "${CMAKE_BINARY_DIR}/hip_nvidia/probe" SOURCES "${probe}"
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${inc}"
      COMPILE_DEFINITIONS -D__HIP_PLATFORM_NVIDIA__ -std=c++20
      LINK_LIBRARIES CUDA::cudart_static
      OUTPUT_VARIABLE out)
    if(NOT ok)
      message(FATAL_ERROR "pmqa: <hip/hip_runtime.h> from ${inc} does not compile with ${CMAKE_CUDA_COMPILER} "
                          "${CMAKE_CUDA_COMPILER_VERSION} (host ${CMAKE_CUDA_HOST_COMPILER}). The HIP/CUDA pair "
                          "needs more hunks in cmake/hip_nvidia/, or configure with -DPMQA_GPU=OFF.\n${out}")
    endif()
    set(_PMQA_HIP_NVIDIA_CHECKED "${key}" CACHE INTERNAL "pmqa: patched HIP headers compiled with this nvcc")
  endif()

  if(NOT TARGET pmqa_hip_nvidia)
    add_library(pmqa_hip_nvidia INTERFACE)
    target_compile_definitions(pmqa_hip_nvidia INTERFACE __HIP_PLATFORM_NVIDIA__)
    target_link_libraries(pmqa_hip_nvidia INTERFACE CUDA::cudart_static)
    if(S_EXPORT)
      # Installed consumers get the patched headers too; their pmqaConfig.cmake must
      # find_dependency(CUDAToolkit).
      include(GNUInstallDirs)
      set(idir "${CMAKE_INSTALL_INCLUDEDIR}/pmqa/hip_nvidia")
      target_include_directories(pmqa_hip_nvidia SYSTEM INTERFACE
        "$<BUILD_INTERFACE:${inc}>" "$<INSTALL_INTERFACE:${idir}>")
      install(DIRECTORY "${inc}/hip" DESTINATION "${idir}")
      install(TARGETS pmqa_hip_nvidia EXPORT "${S_EXPORT}")
    else()
      target_include_directories(pmqa_hip_nvidia SYSTEM INTERFACE "$<BUILD_INTERFACE:${inc}>")
    endif()
  endif()
  message(STATUS "pmqa: NVIDIA GPU executor on: nvcc ${CMAKE_CUDA_COMPILER_VERSION}, host "
                 "${CMAKE_CUDA_HOST_COMPILER}, architectures ${CMAKE_CUDA_ARCHITECTURES}, HIP headers ${inc}")
endfunction()

# pmqa_enable_nvidia([EXPORT <export-set>])
# A macro because enable_language() must run at file scope. Call it once, from the top-level
# CMakeLists.txt, before the subdirectories that use pmqa_hip_nvidia. EXPORT installs the patched
# headers and adds pmqa_hip_nvidia to the export set (needed when an exported static library links it).
macro(pmqa_enable_nvidia)
  _pmqa_nvidia_detect()
  if(_pmqa_nv_enable)
    enable_language(CUDA)
    # CMake 3.25 knows no C++20 flag for nvcc (nvcc >= 12 takes -std=c++20); pmqa is C++20.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
       AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    _pmqa_nvidia_setup(${ARGN})
    set(PMQA_HAVE_NVIDIA ON)
  else()
    set(PMQA_HAVE_NVIDIA OFF)
  endif()
  unset(_pmqa_nv_enable)
endmacro()
