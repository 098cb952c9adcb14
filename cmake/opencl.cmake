# The opencl backend (src/device/opencl) is built when an OpenCL ICD loader
# and headers are found (Debian: ocl-icd-opencl-dev, opencl-c-headers;
# scripts/setup installs them with PoCL, a CPU device, so CI runs it).
# PIPEPROF_OPENCL=OFF builds without it, ON makes its absence an error.
set(PIPEPROF_OPENCL AUTO CACHE STRING "opencl backend: AUTO (when found), ON (required) or OFF")
set(PIPEPROF_HAVE_OPENCL OFF)
if(NOT PIPEPROF_OPENCL STREQUAL "OFF")
  find_package(OpenCL QUIET)
  if(OpenCL_FOUND AND OpenCL_VERSION_STRING VERSION_GREATER_EQUAL 2.1)
    set(PIPEPROF_HAVE_OPENCL ON)
    string(APPEND PIPEPROF_FEATURES " opencl")
    file(GLOB opencl_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/device/opencl/*.c)
    list(APPEND PIPEPROF_SOURCES ${opencl_sources})
    message(STATUS "pipeprof: opencl backend on (OpenCL ${OpenCL_VERSION_STRING} headers, ${OpenCL_LIBRARY})")
  elseif(PIPEPROF_OPENCL STREQUAL "ON")
    message(FATAL_ERROR "PIPEPROF_OPENCL=ON but OpenCL >= 2.1 headers and an ICD loader were not "
                        "found (Debian: ocl-icd-opencl-dev opencl-c-headers)")
  else()
    message(STATUS "pipeprof: opencl backend off (no OpenCL >= 2.1 headers and ICD loader)")
  endif()
endif()

# Links the backend into the library targets and embeds its kernels'
# source (src/device/opencl/kernels.cl, kept readable in the tree).
function(pipeprof_link_opencl)
  if(NOT PIPEPROF_HAVE_OPENCL)
    return()
  endif()
  set(cl_c ${PROJECT_BINARY_DIR}/generated/opencl_kernels.c)
  add_custom_command(OUTPUT ${cl_c}
    COMMAND ${CMAKE_COMMAND} -DIN=${PROJECT_SOURCE_DIR}/src/device/opencl/kernels.cl
      -DOUT=${cl_c} -DNAME=pp_cl_kernels_source -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/src/device/opencl/kernels.cl ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    COMMENT "Embedding the OpenCL kernels")
  target_sources(pipeprof_objects PRIVATE ${cl_c})
  target_compile_definitions(pipeprof_objects PRIVATE PP_HAVE_OPENCL CL_TARGET_OPENCL_VERSION=210)
  target_link_libraries(pipeprof_objects PRIVATE OpenCL::OpenCL)
  foreach(t pipeprof pipeprof_static)
    target_link_libraries(${t} PRIVATE OpenCL::OpenCL)
  endforeach()
endfunction()
