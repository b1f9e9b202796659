# Installs weft from WEFT_BINARY_DIR into a scratch prefix, builds tests/consumer
# against it with find_package(weft), and runs the result.
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install "${WEFT_BINARY_DIR}" --prefix "${WORK_DIR}/prefix")
set(cuda_args "")
load_cache("${WEFT_BINARY_DIR}" READ_WITH_PREFIX W_ WEFT_CUDA CMAKE_CUDA_COMPILER CMAKE_CUDA_FLAGS)
if(W_WEFT_CUDA)
  set(cuda_args "-DCMAKE_CUDA_COMPILER=${W_CMAKE_CUDA_COMPILER}" "-DCMAKE_CUDA_FLAGS=${W_CMAKE_CUDA_FLAGS}"
                "-DCMAKE_CUDA_ARCHITECTURES=OFF")
endif()
run(${CMAKE_COMMAND} -S "${WEFT_SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build" -G Ninja
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DHELLO_SOURCE=${WEFT_SOURCE_DIR}/examples/hello.cpp" ${cuda_args})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build" -j 2)
set(ENV{WEFT_BACKEND} host)
run("${WORK_DIR}/build/hello_consumer")
if(NOT last_output MATCHES "45 via host")
  message(FATAL_ERROR "hello_consumer printed '${last_output}', expected '45 via host'")
endif()
message(STATUS "consumer: ${last_output}")
