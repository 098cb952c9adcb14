#!/usr/bin/env bash
# pipeprof record captures the NVTX annotations of a Python program made
# with the nvtx package (tests/inject/nvtx_program.py): nesting, domains,
# categories, payloads, a range ended on another thread, marks
# (tests/inject/trace_expect.py, nvtx_python).
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
source "$PP_SOURCE_DIR/tests/inject/python_env.sh"

if [[ -z ${PP_NVTX_PROGRAM:-} ]]; then
    echo "skipped: this build has no NVTX injection library (the nvtx3 headers were not found)"
    exit 77
fi
if ! "$PY" -c 'import nvtx' 2>/dev/null; then
    echo "skipped: $PY has no nvtx package (scripts/setup installs it)"
    exit 77
fi

run "$PP_CLI" record -o "$tmp/nvtx.json" -- "$PY" "$PP_SOURCE_DIR/tests/inject/nvtx_program.py"
expect "record runs the Python NVTX program and writes the trace" 0 "wrote $tmp/nvtx.json" \
    "from 3 threads"
run "$PY" "$PP_SOURCE_DIR/tests/inject/trace_expect.py" "$tmp/nvtx.json" nvtx_python
expect "the trace holds each range as the program made it" 0
echo "$out"

finish
