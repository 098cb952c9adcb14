# The openvino backend (src/device/openvino) is built when OpenVINO's C API
# is found: at OpenVINO_DIR, else in the `openvino` wheel of the
# PIPEPROF_PYTHON venv (the wheel ships the C headers, libopenvino_c and
# OpenVINOConfig.cmake; scripts/setup installs it). PIPEPROF_OPENVINO=OFF
# builds without it, ON makes its absence an error.
set(PIPEPROF_OPENVINO AUTO CACHE STRING "openvino backend: AUTO (when found), ON (required) or OFF")
set(PIPEPROF_HAVE_OPENVINO OFF)
if(NOT PIPEPROF_OPENVINO STREQUAL "OFF")
  if(NOT OpenVINO_DIR AND PIPEPROF_PYTHON)
    execute_process(
      COMMAND ${PIPEPROF_PYTHON} -c "import openvino.utils as u; print(u.get_cmake_path())"
      OUTPUT_VARIABLE ov_cmake_dir OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE ov_rc ERROR_QUIET)
    if(ov_rc EQUAL 0 AND EXISTS "${ov_cmake_dir}/OpenVINOConfig.cmake")
      set(OpenVINO_DIR "${ov_cmake_dir}" CACHE PATH "Folder of OpenVINOConfig.cmake")
    endif()
  endif()
  find_package(OpenVINO QUIET COMPONENTS Runtime)
  if(TARGET openvino::runtime::c)
    set(PIPEPROF_HAVE_OPENVINO ON)
    string(APPEND PIPEPROF_FEATURES " openvino")
    # ov_export.cpp is C++: OpenVINO's C API cannot save a model (sweeps
    # export a static model per size for static-shape devices).
    enable_language(CXX)
    file(GLOB openvino_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/device/openvino/*.c
      ${PROJECT_SOURCE_DIR}/src/device/openvino/*.cpp)
    list(APPEND PIPEPROF_SOURCES ${openvino_sources})
    message(STATUS "pipeprof: openvino backend on (OpenVINO ${OpenVINO_VERSION} at ${OpenVINO_DIR})")
  elseif(PIPEPROF_OPENVINO STREQUAL "ON")
    message(FATAL_ERROR "PIPEPROF_OPENVINO=ON but OpenVINO's C API was not found: set OpenVINO_DIR "
                        "or PIPEPROF_PYTHON to a venv with the openvino wheel (scripts/setup)")
  else()
    message(STATUS "pipeprof: openvino backend off (OpenVINO not found; set PIPEPROF_PYTHON or OpenVINO_DIR)")
  endif()
endif()

# Links the backend into the library targets. The libraries stay where the
# wheel put them, so the build and install trees find them by RPATH.
function(pipeprof_link_openvino)
  if(NOT PIPEPROF_HAVE_OPENVINO)
    return()
  endif()
  target_compile_definitions(pipeprof_objects PRIVATE PP_HAVE_OPENVINO)
  target_link_libraries(pipeprof_objects PRIVATE openvino::runtime::c openvino::runtime)
  foreach(t pipeprof pipeprof_static)
    target_link_libraries(${t} PRIVATE openvino::runtime::c openvino::runtime)
  endforeach()
  # An imported target is linked by its full path, which is no link
  # directory: INSTALL_RPATH_USE_LINK_PATH alone would leave the wheel's
  # folder out of the installed library's RUNPATH, and every program linking
  # the installed libpipeprof would fail to load libopenvino_c.
  get_target_property(ov_lib openvino::runtime::c IMPORTED_LOCATION_RELEASE)
  if(NOT ov_lib)
    get_target_property(ov_lib openvino::runtime::c IMPORTED_LOCATION)
  endif()
  get_filename_component(ov_lib_dir "${ov_lib}" DIRECTORY)
  foreach(t pipeprof pipeprof_cli)
    set_target_properties(${t} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    set_property(TARGET ${t} APPEND PROPERTY INSTALL_RPATH "${ov_lib_dir}")
  endforeach()
endfunction()
