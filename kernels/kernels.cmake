# pmqa::kernels: the kernel sources (device/), the host API and the host executor. The GPU
# executor (nvcc through HIP's NVIDIA headers) joins it when a GPU toolchain is found. It links
# dispatch for the arch table (a device's capabilities) and for running a dispatch decision.
add_library(pmqa_kernels src/executor.cpp src/device_caps.cpp src/run_decision.cpp)
if(PMQA_HAVE_NVIDIA)
  # The GPU executor: the same kernel sources and run_path, compiled by nvcc (no Eigen in here).
  target_sources(pmqa_kernels PRIVATE gpu/gpu_executor.cu)
  target_link_libraries(pmqa_kernels PRIVATE pmqa_hip_nvidia)
else()
  target_sources(pmqa_kernels PRIVATE src/gpu_unavailable.cpp)
endif()
add_library(pmqa::kernels ALIAS pmqa_kernels)
pmqa_unity(pmqa_kernels)
set_target_properties(pmqa_kernels PROPERTIES EXPORT_NAME kernels OUTPUT_NAME pmqa_kernels)
target_include_directories(pmqa_kernels PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/device>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# The model only, never the oracle (pmqa::reference): the kernels keep their own decode and
# indexing, and a call into the oracle's fails to build (model/tests).
target_link_libraries(pmqa_kernels PUBLIC pmqa_model pmqa_dispatch pmqa_host_runtime pmqa_hip_check PRIVATE pmqa_warnings)
install(TARGETS pmqa_kernels EXPORT pmqaTargets)
install(DIRECTORY include/ device/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

if(PMQA_BUILD_TESTS)
  add_subdirectory(tests)
endif()

# gfx942 assembly of every kernel, its fp8 instructions checked against the expectation file.
if(PMQA_BUILD_TESTS)
  pmqa_add_amd_isa_check(NAME pmqa_kernels_isa
    SOURCE isa/kernels.hip
    EXPECT isa/kernels.gfx942.expected.txt
    INCLUDES ${CMAKE_CURRENT_SOURCE_DIR}/device)
endif()
