# ATTN_STATIC_LLVM: self-contained binaries for machines without LLVM (the
# GPU machine, DESIGN §8).
#
# Debian's MLIR archives (libMLIR*.a) name the shared libLLVM.so ("LLVM") in
# their INTERFACE_LINK_LIBRARIES. Swap that name, in every imported target,
# for LLVM's static component archives, linked as one group because they
# depend on each other cyclically.
llvm_map_components_to_libnames(ATTN_LLVM_STATIC_LIBS
  ${LLVM_TARGETS_TO_BUILD} core support orcjit executionengine passes
  ipo instcombine scalaropts vectorize linker mc mcparser irreader
  asmparser bitreader bitwriter frontendopenmp frontendoffloading
  transformutils analysis target targetparser object objectyaml
  debuginfodwarf symbolize demangle option coverage profiledata
  windowsdriver windowsmanifest frontendhlsl)

set(ATTN_LLVM_STATIC_GROUP
  "-Wl,--start-group" ${ATTN_LLVM_STATIC_LIBS} "-Wl,--end-group")

get_property(attn_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(t ${attn_imported})
  get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
  if(deps)
    list(FIND deps LLVM has_llvm)
    if(NOT has_llvm EQUAL -1)
      list(REMOVE_ITEM deps LLVM)
      list(APPEND deps ${ATTN_LLVM_STATIC_LIBS})
      set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${deps}")
    endif()
  endif()
endforeach()

# libstdc++ and libgcc statically too, so the binaries do not depend on the
# build machine's C++ runtime version.
add_link_options(-static-libstdc++ -static-libgcc)
