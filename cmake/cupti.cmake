# The CUPTI collector (src/inject/cupti_*.c): libpipeprof_cupti, which the
# CUDA driver loads through CUDA_INJECTION64_PATH (docs/recording.md).
#
# It needs CUPTI's headers with the CUDA headers they include (cuda.h and
# crt/host_defines.h) and libcupti, all from one CUDA release. They are
# looked for, first set complete wins, in
#   CUPTI_ROOT (a toolkit or a CUPTI folder), $CUDA_HOME, /usr/local/cuda
#   (include/ and extras/CUPTI/), then the PIPEPROF_PYTHON venv's NVIDIA
#   wheels: nvidia-cuda-cupti, nvidia-cuda-runtime and nvidia-cuda-crt
#   (CUDA 13, nvidia/cu13/; scripts/setup installs them), or their CUDA 12
#   versions (nvidia/cuda_cupti, cuda_runtime, cuda_nvcc).
# Headers alone build the record conversion and its test (no GPU needed);
# with libcupti the collector is built too and `pipeprof --version` lists
# "cupti". PIPEPROF_CUPTI=OFF builds neither, ON makes their absence an error.
set(PIPEPROF_CUPTI AUTO CACHE STRING "CUPTI collector: AUTO (when CUPTI is found), ON or OFF")
set(CUPTI_ROOT "" CACHE PATH "a CUDA toolkit or CUPTI folder to take CUPTI from")
set(PIPEPROF_HAVE_CUPTI_HEADERS OFF)
set(PIPEPROF_HAVE_CUPTI OFF)

# The newest layout of record `kind` (Kernel, Memcpy, Memset) that
# cupti_activity.h defines, in `out`: CUPTI hands out the newest one its
# release knows, and the collector is built against that release's library.
function(pipeprof_cupti_newest header kind out)
  file(STRINGS ${header} lines REGEX "^} CUpti_Activity${kind}[0-9]+;")
  set(best 0)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^} CUpti_Activity${kind}([0-9]+);.*" "\\1" n "${line}")
    if(n GREATER best)
      set(best ${n})
    endif()
  endforeach()
  if(best EQUAL 0)
    set(${out} "" PARENT_SCOPE)
  else()
    set(${out} "CUpti_Activity${kind}${best}" PARENT_SCOPE)
  endif()
endfunction()

if(NOT PIPEPROF_CUPTI STREQUAL "OFF")
  set(roots "")
  foreach(root IN ITEMS "${CUPTI_ROOT}" "$ENV{CUDA_HOME}" /usr/local/cuda)
    if(root)
      list(APPEND roots "${root}/include|${root}/extras/CUPTI/include|${root}/lib64|${root}/lib|${root}/extras/CUPTI/lib64")
    endif()
  endforeach()
  if(PIPEPROF_PYTHON)
    execute_process(
      COMMAND ${PIPEPROF_PYTHON} -c "import nvidia; print(';'.join(nvidia.__path__))"
      OUTPUT_VARIABLE wheel_dirs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    foreach(w IN LISTS wheel_dirs)
      list(APPEND roots "${w}/cu13/include|${w}/cu13/lib"
        "${w}/cuda_cupti/include|${w}/cuda_runtime/include|${w}/cuda_nvcc/include|${w}/cuda_cupti/lib")
    endforeach()
  endif()
  foreach(set IN LISTS roots)
    string(REPLACE "|" ";" dirs "${set}")
    unset(cupti_h)
    unset(cuda_h)
    unset(crt_h)
    find_path(cupti_h cupti_activity.h PATHS ${dirs} NO_DEFAULT_PATH NO_CACHE)
    find_path(cuda_h cuda.h PATHS ${dirs} NO_DEFAULT_PATH NO_CACHE)
    find_path(crt_h crt/host_defines.h PATHS ${dirs} NO_DEFAULT_PATH NO_CACHE)
    if(cupti_h AND cuda_h AND crt_h)
      set(PIPEPROF_CUPTI_INCLUDE_DIRS ${cupti_h} ${cuda_h} ${crt_h})
      list(REMOVE_DUPLICATES PIPEPROF_CUPTI_INCLUDE_DIRS)
      find_library(PIPEPROF_CUPTI_LIBRARY NAMES cupti libcupti.so.13 libcupti.so.12
        PATHS ${dirs} NO_DEFAULT_PATH NO_CACHE)
      break()
    endif()
  endforeach()
  if(PIPEPROF_CUPTI_INCLUDE_DIRS)
    set(header ${cupti_h}/cupti_activity.h)
    pipeprof_cupti_newest(${header} Kernel PIPEPROF_CUPTI_KERNEL)
    pipeprof_cupti_newest(${header} Memcpy PIPEPROF_CUPTI_MEMCPY)
    pipeprof_cupti_newest(${header} Memset PIPEPROF_CUPTI_MEMSET)
    if(PIPEPROF_CUPTI_KERNEL AND PIPEPROF_CUPTI_MEMCPY AND PIPEPROF_CUPTI_MEMSET)
      set(PIPEPROF_HAVE_CUPTI_HEADERS ON)
      set(PIPEPROF_CUPTI_DEFINITIONS PP_CUPTI_KERNEL=${PIPEPROF_CUPTI_KERNEL}
        PP_CUPTI_MEMCPY=${PIPEPROF_CUPTI_MEMCPY} PP_CUPTI_MEMSET=${PIPEPROF_CUPTI_MEMSET})
    endif()
  endif()
  if(PIPEPROF_HAVE_CUPTI_HEADERS AND PIPEPROF_CUPTI_LIBRARY)
    set(PIPEPROF_HAVE_CUPTI ON)
    string(APPEND PIPEPROF_FEATURES " cupti")
    message(STATUS "pipeprof: CUPTI collector on (${cupti_h}, ${PIPEPROF_CUPTI_LIBRARY}; "
                   "${PIPEPROF_CUPTI_KERNEL}, ${PIPEPROF_CUPTI_MEMCPY}, ${PIPEPROF_CUPTI_MEMSET})")
  elseif(PIPEPROF_CUPTI STREQUAL "ON")
    message(FATAL_ERROR "PIPEPROF_CUPTI=ON but CUPTI was not found complete (cupti_activity.h, "
                        "cuda.h, crt/host_defines.h and libcupti of one release): set CUPTI_ROOT, "
                        "or PIPEPROF_PYTHON to a venv with nvidia-cuda-cupti, nvidia-cuda-runtime "
                        "and nvidia-cuda-crt (scripts/setup)")
  elseif(PIPEPROF_HAVE_CUPTI_HEADERS)
    message(STATUS "pipeprof: CUPTI collector off (headers at ${cupti_h} but no libcupti); "
                   "its record conversion is built and tested")
  else()
    message(STATUS "pipeprof: CUPTI collector off (CUPTI headers not found; set CUPTI_ROOT)")
  endif()
endif()

# The conversion from activity records to session spans (pure, testable
# without a GPU) and, with libcupti, the collector around it.
function(pipeprof_add_cupti)
  if(NOT PIPEPROF_HAVE_CUPTI_HEADERS)
    return()
  endif()
  add_library(pipeprof_cupti_convert STATIC src/inject/cupti_convert.c src/inject/cupti_record.c)
  target_include_directories(pipeprof_cupti_convert SYSTEM PUBLIC ${PIPEPROF_CUPTI_INCLUDE_DIRS})
  target_include_directories(pipeprof_cupti_convert PUBLIC ${PROJECT_SOURCE_DIR}/src
    ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(pipeprof_cupti_convert PUBLIC ${PIPEPROF_CUPTI_DEFINITIONS}
    PRIVATE _GNU_SOURCE)
  # no libpipeprof here: the collector links the shared one, tests the
  # static one, and one process must not hold both
  set_target_properties(pipeprof_cupti_convert PROPERTIES
    POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
  if(NOT PIPEPROF_HAVE_CUPTI)
    return()
  endif()
  get_filename_component(cupti_libdir ${PIPEPROF_CUPTI_LIBRARY} DIRECTORY)
  add_library(pipeprof_cupti SHARED src/inject/cupti_inject.c)
  target_compile_definitions(pipeprof_cupti PRIVATE _GNU_SOURCE)
  target_link_libraries(pipeprof_cupti PRIVATE pipeprof_cupti_convert pipeprof ${PIPEPROF_CUPTI_LIBRARY})
  # libcupti is found where it was at build time (a wheel has no system path)
  set_target_properties(pipeprof_cupti PROPERTIES C_VISIBILITY_PRESET hidden
    BUILD_RPATH "${cupti_libdir}" INSTALL_RPATH "$ORIGIN;${cupti_libdir}")
  install(TARGETS pipeprof_cupti LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
