# The xlsx workbook of `pipeprof report` (src/analyze/render_xlsx.c) is
# built when libxlsxwriter is found by pkg-config (Debian:
# libxlsxwriter-dev, which scripts/setup installs). Without it the report
# leaves the workbook out and says so. PIPEPROF_XLSX=OFF builds without it,
# ON makes its absence an error.
set(PIPEPROF_XLSX AUTO CACHE STRING "xlsx workbook: AUTO (when found), ON (required) or OFF")
set(PIPEPROF_HAVE_XLSX OFF)
set(PIPEPROF_PC_REQUIRES_XLSX "")
if(NOT PIPEPROF_XLSX STREQUAL "OFF")
  pkg_check_modules(XLSXWRITER QUIET IMPORTED_TARGET xlsxwriter)
  if(XLSXWRITER_FOUND)
    set(PIPEPROF_HAVE_XLSX ON)
    set(PIPEPROF_PC_REQUIRES_XLSX " xlsxwriter")
    string(APPEND PIPEPROF_FEATURES " xlsx")
    message(STATUS "pipeprof: xlsx workbook on (libxlsxwriter ${XLSXWRITER_VERSION})")
  elseif(PIPEPROF_XLSX STREQUAL "ON")
    message(FATAL_ERROR "PIPEPROF_XLSX=ON but libxlsxwriter was not found (Debian: libxlsxwriter-dev)")
  else()
    message(STATUS "pipeprof: xlsx workbook off (no libxlsxwriter)")
  endif()
endif()

# Compiles render_xlsx.c against libxlsxwriter and links it into the
# library targets.
function(pipeprof_link_xlsx)
  if(NOT PIPEPROF_HAVE_XLSX)
    return()
  endif()
  target_compile_definitions(pipeprof_objects PRIVATE PP_HAVE_XLSX)
  target_link_libraries(pipeprof_objects PRIVATE PkgConfig::XLSXWRITER)
  foreach(t pipeprof pipeprof_static)
    target_link_libraries(${t} PRIVATE PkgConfig::XLSXWRITER)
  endforeach()
endfunction()
