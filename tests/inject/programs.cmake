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

# The CUPTI record conversion, on hand-built records of the real header's
# layouts: built wherever the CUPTI headers are (no GPU needed); named
# outside the test_*.c glob because it needs them.
if(PIPEPROF_HAVE_CUPTI_HEADERS)
  add_executable(inject_test_cupti_convert ${CMAKE_CURRENT_LIST_DIR}/cupti_convert_test.c)
  target_link_libraries(inject_test_cupti_convert PRIVATE pipeprof_cupti_convert pp_testutil)
  add_test(NAME inject_test_cupti_convert COMMAND inject_test_cupti_convert)
else()
  add_test(NAME inject_test_cupti_convert COMMAND sh -c
    "echo 'skipped: the CUPTI headers were not found (scripts/setup installs the nvidia-cuda-cupti, nvidia-cuda-runtime and nvidia-cuda-crt wheels that have them; see cmake/cupti.cmake)'; exit 77")
endif()
set_tests_properties(inject_test_cupti_convert PROPERTIES LABELS inject
  ENVIRONMENT "${PP_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 600)
