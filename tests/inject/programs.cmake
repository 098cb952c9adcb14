# Programs annotated with NVTX or ITT and nothing else, for the tests in
# this folder: they must not link libpipeprof (pipeprof record attaches it
# through the injection libraries).
if(PIPEPROF_HAVE_NVTX)
  add_executable(nvtx_program ${CMAKE_CURRENT_LIST_DIR}/nvtx_program.c)
  target_include_directories(nvtx_program SYSTEM PRIVATE ${NVTX3_INCLUDE_DIR})
  target_compile_definitions(nvtx_program PRIVATE _GNU_SOURCE)
  target_link_libraries(nvtx_program PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  list(APPEND PP_TEST_ENV "PP_NVTX_PROGRAM=$<TARGET_FILE:nvtx_program>")
  add_executable(nvtx_hostile ${CMAKE_CURRENT_LIST_DIR}/nvtx_hostile.c)
  target_include_directories(nvtx_hostile SYSTEM PRIVATE ${NVTX3_INCLUDE_DIR})
  target_compile_definitions(nvtx_hostile PRIVATE _GNU_SOURCE)
  target_link_libraries(nvtx_hostile PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  list(APPEND PP_TEST_ENV "PP_NVTX_HOSTILE=$<TARGET_FILE:nvtx_hostile>")
endif()
add_executable(itt_static_part ${CMAKE_CURRENT_LIST_DIR}/itt_static_part.c)
target_include_directories(itt_static_part PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(itt_static_part PRIVATE _GNU_SOURCE)
target_link_libraries(itt_static_part PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
list(APPEND PP_TEST_ENV "PP_ITT_STATIC_PART=$<TARGET_FILE:itt_static_part>")
add_executable(itt_hostile ${CMAKE_CURRENT_LIST_DIR}/itt_hostile.c)
target_compile_definitions(itt_hostile PRIVATE _GNU_SOURCE)
target_link_libraries(itt_hostile PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
list(APPEND PP_TEST_ENV "PP_ITT_HOSTILE=$<TARGET_FILE:itt_hostile>")

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
# The collector, and a CUDA program for test_cupti_gpu.sh: driver API and a
# PTX kernel, so the CUDA headers suffice (no nvcc); it opens libcuda.so.1
# at run time and exits 77 where there is none.
if(PIPEPROF_HAVE_CUPTI)
  list(APPEND PP_TEST_ENV "PP_CUPTI_COLLECTOR=$<TARGET_FILE:pipeprof_cupti>")
  if(PIPEPROF_HAVE_NVTX)
    add_executable(cuda_program ${CMAKE_CURRENT_LIST_DIR}/cuda_program.c)
    target_include_directories(cuda_program SYSTEM PRIVATE ${PIPEPROF_CUPTI_INCLUDE_DIRS} ${NVTX3_INCLUDE_DIR})
    target_link_libraries(cuda_program PRIVATE ${CMAKE_DL_LIBS})
    list(APPEND PP_TEST_ENV "PP_CUDA_PROGRAM=$<TARGET_FILE:cuda_program>")
  endif()
endif()
