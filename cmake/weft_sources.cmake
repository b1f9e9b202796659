# weft_device_sources(<target> <sources>...): compile sources that contain device
# coroutines as CUDA when weft's CUDA backend is built (clang++-22, see
# docs/design.md), else as plain C++ for the host backend.
function(weft_device_sources target)
  target_sources(${target} PRIVATE ${ARGN})
  if(WEFT_CUDA)
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
  endif()
endfunction()
