# cmake --install: headers, libattn.so, the tools, the Python module and a
# CMake package (find_package(attn), target attn::attn), so that an outside
# project links attn like any library (examples/host is built that way by
# test/host/InstallCheck.cmake).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Installed binaries keep finding Debian's libLLVM/libMLIR (with
# ATTN_STATIC_LLVM they need neither).
set_target_properties(attn attn-opt attn-run PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS attn EXPORT attnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/runtime/include/attn/attn.h
  ${PROJECT_SOURCE_DIR}/runtime/include/attn/Runtime.h
  ${PROJECT_SOURCE_DIR}/runtime/include/attn/Npy.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attn)
install(TARGETS attn-opt attn-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# <prefix>/lib/python/attn finds <prefix>/lib/libattn.so beside it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/attn
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/python
  PATTERN "__pycache__" EXCLUDE)

set(ATTN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attn)
install(EXPORT attnTargets NAMESPACE attn:: DESTINATION ${ATTN_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attnConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/attnConfig.cmake
  INSTALL_DESTINATION ${ATTN_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/attnConfigVersion.cmake
  VERSION 0.1 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/attnConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/attnConfigVersion.cmake
  DESTINATION ${ATTN_CMAKE_DIR})
