# ctest install-and-build-examples: cmake --install the build into a fresh
# prefix, configure examples/host against it with find_package(attn) as an
# outside project, build and run both programs (each checks itself against
# a naive loop and exits non-zero on a mismatch).
# -D: ATTN_BUILD_DIR, ATTN_SOURCE_DIR, WORK_DIR, ATTN_STATIC_LLVM (a static
# build installs no C++ API: attnConfig.cmake sets attn_CXX_API off, so
# only host_c is built and run).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${ATTN_BUILD_DIR} --prefix ${prefix})
foreach(f include/attn/attn.h include/attn/Runtime.h lib/libattn.so
          bin/attn-run bin/attn-opt lib/cmake/attn/attnConfig.cmake
          lib/python/attn/__init__.py)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
find_program(ninja ninja)
set(gen)
if(ninja)
  set(gen -G Ninja)
endif()
run(${CMAKE_COMMAND} -S ${ATTN_SOURCE_DIR}/examples/host -B ${WORK_DIR}/build
    ${gen} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
if(ATTN_STATIC_LLVM)
  if(EXISTS ${WORK_DIR}/build/host_cpp)
    message(FATAL_ERROR "host_cpp was built against a static build's "
                        "install, which has no C++ API")
  endif()
else()
  if(NOT EXISTS ${WORK_DIR}/build/host_cpp)
    message(FATAL_ERROR "host_cpp was not built (attn_CXX_API off?)")
  endif()
  run(${WORK_DIR}/build/host_cpp)
endif()
run(${WORK_DIR}/build/host_c)
# The installed tool runs too (RUNPATH to its libraries).
run(${prefix}/bin/attn-run --help)
