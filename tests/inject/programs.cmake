# Programs annotated with NVTX or ITT and nothing else, for the tests in
# this folder: they must not link libpipeprof (pipeprof record attaches it
# through the injection libraries).
if(PIPEPROF_HAVE_NVTX)
  add_executable(nvtx_program ${CMAKE_CURRENT_LIST_DIR}/nvtx_program.c)
  target_include_directories(nvtx_program SYSTEM PRIVATE ${NVTX3_INCLUDE_DIR})
  target_compile_definitions(nvtx_program PRIVATE _GNU_SOURCE)
  target_link_libraries(nvtx_program PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  list(APPEND PP_TEST_ENV "PP_NVTX_PROGRAM=$<TARGET_FILE:nvtx_program>")
endif()
add_executable(itt_static_part ${CMAKE_CURRENT_LIST_DIR}/itt_static_part.c)
target_include_directories(itt_static_part PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(itt_static_part PRIVATE _GNU_SOURCE)
target_link_libraries(itt_static_part PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
list(APPEND PP_TEST_ENV "PP_ITT_STATIC_PART=$<TARGET_FILE:itt_static_part>")
