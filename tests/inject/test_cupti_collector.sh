#!/usr/bin/env bash
# The CUPTI collector where no GPU is needed: pipeprof record points
# CUDA_INJECTION64_PATH at it (--no-cupti leaves the user's value), and
# where CUPTI cannot work (here: no CUDA driver) the collector says which
# call failed and why, marks it in the trace, and the program runs on.
# Recording a real GPU is tests/inject/test_cupti_gpu.sh.
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

if [[ -z ${PP_CUPTI_COLLECTOR:-} ]]; then
    echo "skipped: this build has no CUPTI collector (CUPTI not found; see cmake/cupti.cmake)"
    exit 77
fi

child_var() {
    local var=$1
    shift
    "$PP_CLI" record -o "$tmp/none.json" "$@" -- env 2>/dev/null | sed -n "s/^$var=//p"
}
check "record sets CUDA_INJECTION64_PATH to the built collector" test \
    "$(child_var CUDA_INJECTION64_PATH)" = "$(realpath "$PP_CUPTI_COLLECTOR")"
check "--no-cupti leaves the user's CUDA_INJECTION64_PATH" test \
    "$(CUDA_INJECTION64_PATH=/opt/other.so child_var CUDA_INJECTION64_PATH --no-cupti)" = /opt/other.so
run "$PP_CLI" record --help
expect "record --help names --no-cupti" 0 "--no-cupti" "CUDA_INJECTION64_PATH"
run "$PP_CLI" record --no-cupti-at-all -o "$tmp/x.json" -- true
expect "a misspelt option is refused" 2 "--no-cupti-at-all"

# What the driver would do at cuInit: load the collector and call
# InitializeInjection; without a driver CUPTI refuses. Python stands in
# for the driver (tests/inject/python_env.sh: how it loads a sanitized
# library).
if [[ ${PP_SANITIZE:-} == thread ]]; then
    skip_part "Python cannot load a ThreadSanitizer library (it is not built with it)"
elif source "$PP_SOURCE_DIR/tests/inject/python_env.sh" &&
    "$PY" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
    skip_part "a CUDA driver is present: CUPTI's refusal without one cannot be shown"
else
    run env PIPEPROF_OUTPUT="$tmp/failed.json" "$PY" -c "
import ctypes, sys
print('InitializeInjection returned', ctypes.CDLL(sys.argv[1]).InitializeInjection())" "$PP_CUPTI_COLLECTOR"
    expect "without a driver the collector names the failed CUPTI call and the program goes on" 0 \
        "pipeprof: cupti: " " failed: " "kernels and copies are not recorded" "InitializeInjection returned 1"
    run grep -c '"CUPTI failed"' "$tmp/failed.json"
    expect "the trace carries the failure" 0 "1"
fi

finish
