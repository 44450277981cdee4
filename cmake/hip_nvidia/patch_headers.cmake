# Copy HIP's headers and patch HIP 5.2.3's NVIDIA backend so that it compiles with CUDA 13.
#
# Debian 12's libamdhip64-dev ships HIP 5.2.3, whose nvidia_detail/nvidia_hip_runtime_api.h was
# written for CUDA 11/12. CUDA 13 removed cudaDeviceProp fields (clockRate, memoryClockRate,
# computeMode, kernelExecTimeoutEnabled, cooperativeMultiDeviceLaunch), texture references,
# multi-device cooperative launch, cudaStreamGetCaptureInfo_v2, and changed cuCtxCreate,
# cudaMemAdvise / cudaMemPrefetchAsync (a cudaMemLocation instead of a device) and the graph-edge
# functions (an edge-data argument). Each fix is one "hunk" in hunks/:
#
#   NN-name.old   the exact text expected in the installed header (whole lines, ending in a newline)
#   NN-name.new   (REPLACE hunks only) what CUDA >= 13 gets instead
#
# Two kinds, listed in _PMQA_HIP_NVIDIA_HUNKS below with the reason:
#   REPLACE  ->  #if CUDART_VERSION >= 13000 <new> #else <old> #endif   (API changed: adapt the call)
#   GUARD    ->  #if CUDART_VERSION <  13000 <old> #endif               (API removed: so is the wrapper,
#                                                                        a use is a compile error)
# The patched header therefore still compiles with CUDA 11/12 exactly as before.
#
# Every hunk must match exactly once in the installed header, at the start of a line; hunks must not
# overlap. Anything else stops the configure with a message naming the hunk, the file and the text
# that did not match. The SHA-256 of the header the hunks were written against is recorded; a
# different header whose hunks all match is accepted with a note.
#
# Use from CMake:   include(<this file>)  then  pmqa_hip_nvidia_patch(SRC <dir> DST <dir>)
# Or standalone:    cmake -DSRC=/usr/include/hip -DDST=<out>/hip -P cmake/hip_nvidia/patch_headers.cmake
# SRC is the installed hip/ folder; DST receives a full copy of it (so DST's parent is the include
# directory to put before the system one).

set(_PMQA_HIP_NVIDIA_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(_PMQA_HIP_NVIDIA_FILE "nvidia_detail/nvidia_hip_runtime_api.h")
# libamdhip64-dev 5.2.3-8 (Debian 12)
set(_PMQA_HIP_NVIDIA_TESTED_SHA256 "f835740af0ed8bd8d9d010dc9ef94e517c474c718b4b8c8cf215b7f38ce074c2")

set(_PMQA_HIP_NVIDIA_HUNKS
  "01-mem-advise|REPLACE|cudaMemAdvise takes a cudaMemLocation instead of a device"
  "02-mem-prefetch|REPLACE|cudaMemPrefetchAsync takes a cudaMemLocation and flags"
  "03-choose-device-clock|GUARD|cudaDeviceProp::clockRate removed"
  "04-choose-device-compute-mode|GUARD|cudaDeviceProp::computeMode removed"
  "05-choose-device-memory-clock|GUARD|cudaDeviceProp::memoryClockRate removed"
  "06-props-clocks|REPLACE|clockRate and memoryClockRate read with cudaDeviceGetAttribute"
  "07-props-compute-mode|REPLACE|computeMode read with cudaDeviceGetAttribute"
  "08-props-coop-multi-device|REPLACE|cudaDeviceProp::cooperativeMultiDeviceLaunch removed (reported as 0)"
  "09-props-kernel-exec-timeout|REPLACE|kernelExecTimeoutEnabled read with cudaDeviceGetAttribute"
  "10-attr-coop-multi-device|REPLACE|cudaDevAttrCooperativeMultiDeviceLaunch removed (reported as 0)"
  "11-ctx-create|REPLACE|cuCtxCreate is cuCtxCreate_v4 with a CUctxCreateParams argument"
  "12-bind-texture-ref|GUARD|texture references removed (cudaBindTexture, cudaBindTexture2D)"
  "13-texture-alignment-offset|GUARD|texture references removed (cudaGetTextureAlignmentOffset)"
  "14-launch-coop-multi-device|GUARD|cudaLaunchCooperativeKernelMultiDevice removed"
  "15-texture-templates|GUARD|texture<T> and its bind/unbind functions removed"
  "16-graph-add-deps|REPLACE|cudaGraphAddDependencies takes edge data"
  "17-graph-remove-deps|REPLACE|cudaGraphRemoveDependencies takes edge data"
  "18-graph-get-edges|REPLACE|cudaGraphGetEdges takes edge data"
  "19-node-get-deps|REPLACE|cudaGraphNodeGetDependencies takes edge data"
  "20-node-get-dependents|REPLACE|cudaGraphNodeGetDependentNodes takes edge data"
  "21-capture-info-v2|REPLACE|cudaStreamGetCaptureInfo_v2 is cudaStreamGetCaptureInfo with edge data"
  "22-update-capture-deps|REPLACE|cudaStreamUpdateCaptureDependencies takes edge data"
)

# Read one hunk file; it must exist, be non-empty and end with a newline.
function(_pmqa_hip_nvidia_read_hunk path out)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "pmqa hip_nvidia patch: hunk file ${path} is missing")
  endif()
  file(READ "${path}" text)
  string(LENGTH "${text}" len)
  if(len EQUAL 0)
    message(FATAL_ERROR "pmqa hip_nvidia patch: hunk file ${path} is empty")
  endif()
  math(EXPR last "${len} - 1")
  string(SUBSTRING "${text}" ${last} 1 tail)
  if(NOT tail STREQUAL "\n")
    message(FATAL_ERROR "pmqa hip_nvidia patch: hunk file ${path} must end with a newline (whole lines only)")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# pmqa_hip_nvidia_patch(SRC <installed hip dir> DST <output hip dir>)
function(pmqa_hip_nvidia_patch)
  cmake_parse_arguments(P "" "SRC;DST" "" ${ARGN})
  if(NOT P_SRC OR NOT P_DST)
    message(FATAL_ERROR "pmqa_hip_nvidia_patch: SRC and DST are required")
  endif()
  set(src_file "${P_SRC}/${_PMQA_HIP_NVIDIA_FILE}")
  if(NOT EXISTS "${src_file}")
    message(FATAL_ERROR "pmqa hip_nvidia patch: ${src_file} not found. Install HIP's headers "
                        "(Debian: apt-get install libamdhip64-dev) or set PMQA_HIP_INCLUDE_DIR.")
  endif()
  file(READ "${src_file}" content)
  if(content MATCHES "pmqa hip_nvidia hunk")
    message(FATAL_ERROR "pmqa hip_nvidia patch: ${src_file} is already patched; point SRC at the "
                        "pristine HIP headers, not at a patched copy")
  endif()
  file(SHA256 "${src_file}" sha)
  if(NOT sha STREQUAL _PMQA_HIP_NVIDIA_TESTED_SHA256)
    message(STATUS "pmqa hip_nvidia patch: ${src_file} differs from the HIP 5.2.3 (Debian 12) header "
                   "the hunks were written against (sha256 ${sha}); applying them anyway, each is checked")
  endif()
  string(LENGTH "${content}" content_len)

  # Pass 1: locate every hunk in the pristine text (exactly once, at a line start).
  set(located "")
  set(errors "")
  foreach(entry IN LISTS _PMQA_HIP_NVIDIA_HUNKS)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 name)
    list(GET fields 1 kind)
    list(GET fields 2 reason)
    _pmqa_hip_nvidia_read_hunk("${_PMQA_HIP_NVIDIA_DIR}/hunks/${name}.old" old)
    string(FIND "${content}" "${old}" first)
    string(FIND "${content}" "${old}" last REVERSE)
    if(first EQUAL -1)
      string(APPEND errors "\n  hunk ${name} (${reason}): expected text not found:\n${old}")
      continue()
    endif()
    if(NOT first EQUAL last)
      string(APPEND errors "\n  hunk ${name} (${reason}): expected text found more than once (at offsets ${first} and ${last}):\n${old}")
      continue()
    endif()
    if(first GREATER 0)
      math(EXPR before "${first} - 1")
      string(SUBSTRING "${content}" ${before} 1 ch)
      if(NOT ch STREQUAL "\n")
        string(APPEND errors "\n  hunk ${name} (${reason}): text matches in the middle of a line:\n${old}")
        continue()
      endif()
    endif()
    string(LENGTH "${old}" old_len)
    math(EXPR padded "1000000000 + ${first}")  # zero-free fixed width so a string sort is numeric
    list(APPEND located "${padded}|${old_len}|${name}|${kind}|${reason}")
  endforeach()
  if(errors)
    message(FATAL_ERROR "pmqa hip_nvidia patch: ${src_file} is not the header the CUDA 13 hunks in "
                        "${_PMQA_HIP_NVIDIA_DIR}/hunks expect:${errors}\n"
                        "Update the named hunks for this HIP version, or configure with -DPMQA_GPU=OFF.")
  endif()

  # Pass 2: check for overlaps, then splice from the end so earlier offsets stay valid.
  list(SORT located)
  set(prev_end 0)
  set(prev_name "")
  foreach(item IN LISTS located)
    string(REPLACE "|" ";" f "${item}")
    list(GET f 0 padded)
    list(GET f 1 len)
    list(GET f 2 name)
    math(EXPR pos "${padded} - 1000000000")
    if(pos LESS prev_end)
      message(FATAL_ERROR "pmqa hip_nvidia patch: hunks ${prev_name} and ${name} overlap in ${src_file}")
    endif()
    math(EXPR prev_end "${pos} + ${len}")
    set(prev_name "${name}")
  endforeach()
  list(REVERSE located)
  set(patched "${content}")
  foreach(item IN LISTS located)
    string(REPLACE "|" ";" f "${item}")
    list(GET f 0 padded)
    list(GET f 1 len)
    list(GET f 2 name)
    list(GET f 3 kind)
    list(GET f 4 reason)
    math(EXPR pos "${padded} - 1000000000")
    math(EXPR after "${pos} + ${len}")
    string(SUBSTRING "${patched}" 0 ${pos} head)
    string(SUBSTRING "${patched}" ${pos} ${len} old)
    string(SUBSTRING "${patched}" ${after} -1 tail)
    if(kind STREQUAL "REPLACE")
      _pmqa_hip_nvidia_read_hunk("${_PMQA_HIP_NVIDIA_DIR}/hunks/${name}.new" new)
      set(body "#if CUDART_VERSION >= 13000 /* pmqa hip_nvidia hunk ${name}: ${reason} */\n${new}#else\n${old}#endif\n")
    elseif(kind STREQUAL "GUARD")
      set(body "#if CUDART_VERSION < 13000 /* pmqa hip_nvidia hunk ${name}: ${reason} */\n${old}#endif\n")
    else()
      message(FATAL_ERROR "pmqa hip_nvidia patch: hunk ${name} has unknown kind '${kind}'")
    endif()
    set(patched "${head}${body}${tail}")
  endforeach()
  list(LENGTH located n_hunks)
  set(patched "/* Copied from ${src_file} and patched for CUDA 13 by pmqa (cmake/hip_nvidia, ${n_hunks} hunks). */\n${patched}")

  # Copy the whole hip/ folder (timestamps kept, unchanged files skipped), then the patched file,
  # written only when its text changed so that rebuilds are not triggered by a re-configure.
  file(MAKE_DIRECTORY "${P_DST}")
  file(COPY "${P_SRC}/" DESTINATION "${P_DST}" PATTERN "nvidia_hip_runtime_api.h" EXCLUDE)
  set(dst_file "${P_DST}/${_PMQA_HIP_NVIDIA_FILE}")
  file(WRITE "${dst_file}.tmp" "${patched}")
  file(COPY_FILE "${dst_file}.tmp" "${dst_file}" ONLY_IF_DIFFERENT)
  file(REMOVE "${dst_file}.tmp")
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT DEFINED SRC)
    set(SRC "/usr/include/hip")
  endif()
  if(NOT DEFINED DST)
    message(FATAL_ERROR "usage: cmake [-DSRC=/usr/include/hip] -DDST=<out>/hip -P ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  pmqa_hip_nvidia_patch(SRC "${SRC}" DST "${DST}")
  message(STATUS "patched HIP headers written to ${DST}")
endif()
