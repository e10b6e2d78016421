# attn_link_mlir(target lib...): link `target` against MLIR/LLVM.
#
# Default: the shared libMLIR.so/libLLVM.so of Debian's packages (fast links
# on a 2-core machine). With ATTN_STATIC_LLVM the listed static MLIR archives
# are linked instead and LLVM's shared library is swapped for its static
# archives (cmake/StaticLLVM.cmake), giving self-contained binaries for the
# GPU machine, which has no LLVM. Mixing the two would register MLIR's global
# options twice, so every attn target goes through this one function.
function(attn_link_mlir target)
  if(ATTN_STATIC_LLVM)
    target_link_libraries(${target} PUBLIC ${ARGN} ${ATTN_LLVM_STATIC_GROUP})
  else()
    target_link_libraries(${target} PUBLIC MLIR LLVM)
  endif()
endfunction()
