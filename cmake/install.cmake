# Install rules: library (shared + static), headers, CLI, pkg-config file and
# a CMake package config so that both `pkg-config --cflags --libs pipeprof`
# and `find_package(pipeprof)` work against an installed copy.
include(CMakePackageConfigHelpers)

install(TARGETS pipeprof pipeprof_static EXPORT pipeprofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS pipeprof_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/pipeprof DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT pipeprofTargets NAMESPACE pipeprof::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pipeprof)
configure_package_config_file(cmake/pipeprofConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pipeprofConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pipeprof)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pipeprofConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pipeprofConfig.cmake
  ${PROJECT_BINARY_DIR}/pipeprofConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pipeprof)

# The .pc file finds the prefix from its own place (${pcfiledir}, which
# pkg-config and pkgconf both set), so a copy installed with `cmake --install
# --prefix DIR`, or moved afterwards, still points at itself. LIBDIR may be
# several levels deep (lib/x86_64-linux-gnu), hence the computed way up.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(PIPEPROF_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH pc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" pc_up "${pc_up}")
  set(PIPEPROF_PC_PREFIX "\${pcfiledir}/${pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(PIPEPROF_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(PIPEPROF_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(cmake/pipeprof.pc.in ${PROJECT_BINARY_DIR}/pipeprof.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pipeprof.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
