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
  frontendhlsl perfjitevents)

# The LLVM exports name system libraries through imported targets that
# Debian's config does not create. zlib goes in statically; zstd and libxml2
# stay shared but, with --as-needed, are only recorded when an object that
# was pulled in uses them (so is libz3, which LLVMSupport names).
if(NOT TARGET ZLIB::ZLIB)
  add_library(ZLIB::ZLIB INTERFACE IMPORTED)
  find_library(ATTN_ZLIB_STATIC NAMES libz.a)
  set_target_properties(ZLIB::ZLIB PROPERTIES INTERFACE_LINK_LIBRARIES
    "${ATTN_ZLIB_STATIC}")
endif()
if(NOT TARGET zstd::libzstd_shared)
  add_library(zstd::libzstd_shared INTERFACE IMPORTED)
  set_target_properties(zstd::libzstd_shared PROPERTIES
    INTERFACE_LINK_LIBRARIES zstd)
endif()
if(NOT TARGET LibXml2::LibXml2)
  add_library(LibXml2::LibXml2 INTERFACE IMPORTED)
  set_target_properties(LibXml2::LibXml2 PROPERTIES
    INTERFACE_LINK_LIBRARIES xml2)
endif()
add_link_options(-Wl,--as-needed -Wl,--gc-sections)

set(ATTN_LLVM_STATIC_GROUP
  "-Wl,--start-group" ${ATTN_LLVM_STATIC_LIBS} "-Wl,--end-group")

get_property(attn_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(t ${attn_imported})
  get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
  if(deps)
    set(swapped OFF)
    foreach(name LLVM "$<LINK_ONLY:LLVM>")
      list(FIND deps "${name}" at)
      if(NOT at EQUAL -1)
        list(REMOVE_ITEM deps "${name}")
        set(swapped ON)
      endif()
    endforeach()
    # MLIRExecutionEngine names the MLIR dylib; its static pieces instead.
    list(FIND deps MLIR at)
    if(NOT at EQUAL -1)
      list(REMOVE_ITEM deps MLIR)
      list(APPEND deps MLIRExecutionEngineUtils MLIRTargetLLVMIRExport
        MLIRLLVMToLLVMIRTranslation MLIRBuiltinToLLVMIRTranslation
        MLIRLLVMDialect MLIRIR MLIRSupport)
      set(swapped ON)
    endif()
    if(swapped)
      list(APPEND deps ${ATTN_LLVM_STATIC_LIBS})
      set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${deps}")
    endif()
  endif()
endforeach()

# libstdc++ and libgcc statically too, so the binaries do not depend on the
# build machine's C++ runtime version.
add_link_options(-static-libstdc++ -static-libgcc)
