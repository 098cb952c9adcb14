# The injection libraries (src/inject): libpipeprof_nvtx, loaded by programs
# annotated with NVTX through NVTX_INJECTION64_PATH, and libpipeprof_itt,
# loaded by programs annotated with ITT through INTEL_LIBITTNOTIFY64
# (docs/recording.md). `pipeprof record` sets both variables.
#
# The NVTX library needs the NVTX v3 headers (nvtx3/nvToolsExt.h): at
# NVTX3_INCLUDE_DIR, in a CUDA toolkit, or in the nvidia-nvtx wheel of the
# PIPEPROF_PYTHON venv (scripts/setup installs it). PIPEPROF_NVTX=OFF builds
# without it, ON makes its absence an error. The ITT collector declares the
# few ITT layouts it implements itself (src/inject/itt_abi.h says why) and is
# always built.
set(PIPEPROF_NVTX AUTO CACHE STRING "NVTX injection library: AUTO (when the headers are found), ON or OFF")
set(PIPEPROF_HAVE_NVTX OFF)
if(NOT PIPEPROF_NVTX STREQUAL "OFF")
  set(nvtx_hints "")
  if(PIPEPROF_PYTHON)
    execute_process(
      COMMAND ${PIPEPROF_PYTHON} -c "import glob, nvidia; print(';'.join(d for p in nvidia.__path__ for d in glob.glob(p + '/*/include')))"
      OUTPUT_VARIABLE nvtx_hints OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  find_path(NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h
    HINTS ${nvtx_hints} ENV CUDA_HOME PATH_SUFFIXES include
    PATHS /usr/local/cuda/include)
  if(NVTX3_INCLUDE_DIR)
    set(PIPEPROF_HAVE_NVTX ON)
    string(APPEND PIPEPROF_FEATURES " nvtx")
    message(STATUS "pipeprof: NVTX injection library on (headers at ${NVTX3_INCLUDE_DIR})")
  elseif(PIPEPROF_NVTX STREQUAL "ON")
    message(FATAL_ERROR "PIPEPROF_NVTX=ON but nvtx3/nvToolsExt.h was not found: set NVTX3_INCLUDE_DIR "
                        "or PIPEPROF_PYTHON to a venv with the nvidia-nvtx wheel (scripts/setup)")
  else()
    message(STATUS "pipeprof: NVTX injection library off (nvtx3 headers not found; set NVTX3_INCLUDE_DIR)")
  endif()
endif()
string(APPEND PIPEPROF_FEATURES " itt")

# Builds the libraries next to libpipeprof, which they link (they record
# into its default session); installed beside it, where `pipeprof record`
# looks for them (src/cli/inject_env.c).
function(pipeprof_add_injection)
  set(libs pipeprof_itt)
  add_library(pipeprof_itt SHARED src/inject/itt_collector.c src/inject/inject_thread.c)
  if(PIPEPROF_HAVE_NVTX)
    add_library(pipeprof_nvtx SHARED src/inject/nvtx_inject.c src/inject/inject_thread.c)
    target_include_directories(pipeprof_nvtx SYSTEM PRIVATE ${NVTX3_INCLUDE_DIR})
    list(APPEND libs pipeprof_nvtx)
  endif()
  foreach(lib IN LISTS libs)
    target_include_directories(${lib} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_compile_definitions(${lib} PRIVATE _GNU_SOURCE)
    target_link_libraries(${lib} PRIVATE pipeprof)
    # only the API's entry points are exported: the NVTX and ITT libraries
    # share helper names and may both be loaded into one program
    set_target_properties(${lib} PROPERTIES INSTALL_RPATH "$ORIGIN" C_VISIBILITY_PRESET hidden)
    install(TARGETS ${lib} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endforeach()
  target_compile_definitions(pipeprof_cli PRIVATE
    "PP_INJECT_LIBDIR=\"${CMAKE_INSTALL_LIBDIR}\"")
  # record puts this folder first on a Python program's path: its
  # sitecustomize switches torch's ITT annotations on in every thread
  configure_file(${PROJECT_SOURCE_DIR}/src/inject/python_site/sitecustomize.py
                 ${CMAKE_BINARY_DIR}/pipeprof_python_site/sitecustomize.py COPYONLY)
  install(FILES ${PROJECT_SOURCE_DIR}/src/inject/python_site/sitecustomize.py
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pipeprof_python_site)
endfunction()
