# The shared library exports its public API and nothing else: the functions
# declared in include/pipeprof/*.h (a declaration starts its line: a return
# type, then pp_NAME followed by "("), written into a linker version script
# at configure time; everything else (an_*, chrome_*, jreader_*, the C++ of
# the OpenVINO backend, ...) is local. Tests, benches and the CLI that reach
# into internals link pipeprof_static, which keeps every symbol.
file(GLOB pipeprof_public_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/pipeprof/*.h)
set(pipeprof_exports "")
foreach(header IN LISTS pipeprof_public_headers)
  file(STRINGS ${header} lines REGEX "^[A-Za-z_][A-Za-z0-9_ *]*[ *]pp_[a-z0-9_]+\\(")
  foreach(line IN LISTS lines)
    if(line MATCHES "^static ")
      continue() # the inline stubs of PIPEPROF_DISABLE
    endif()
    string(REGEX MATCH "pp_[a-z0-9_]+\\(" name "${line}")
    string(REPLACE "(" "" name "${name}")
    list(APPEND pipeprof_exports ${name})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES pipeprof_exports)
list(SORT pipeprof_exports)
list(JOIN pipeprof_exports ";\n    " pipeprof_export_lines)
set(PIPEPROF_EXPORTS_MAP ${PROJECT_BINARY_DIR}/generated/pipeprof.map)
file(CONFIGURE OUTPUT ${PIPEPROF_EXPORTS_MAP}
  CONTENT "{\n  global:\n    ${pipeprof_export_lines};\n  local: *;\n};\n")
target_link_options(pipeprof PRIVATE "LINKER:--version-script=${PIPEPROF_EXPORTS_MAP}")
set_property(TARGET pipeprof APPEND PROPERTY LINK_DEPENDS ${PIPEPROF_EXPORTS_MAP})
