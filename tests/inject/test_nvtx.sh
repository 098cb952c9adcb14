#!/usr/bin/env bash
# pipeprof record captures the NVTX annotations of a program that does not
# link libpipeprof (tests/inject/nvtx_program.c): nesting, categories,
# payloads, domains, registered strings, marks, wide strings and a range
# ended on another thread (tests/inject/trace_expect.py says what each must
# look like).
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

if [[ -z ${PP_NVTX_PROGRAM:-} ]]; then
    echo "skipped: this build has no NVTX injection library (the nvtx3 headers were not found;" \
         "scripts/setup installs the nvidia-nvtx wheel that has them)"
    exit 77
fi

run "$PP_CLI" --version
expect "--version names the NVTX injection" 0 "nvtx"

run "$PP_CLI" record -o "$tmp/nvtx.json" -- "$PP_NVTX_PROGRAM"
expect "record runs the NVTX program and writes the trace" 0 "wrote $tmp/nvtx.json" "from 2 threads"
run "$PY" "$PP_SOURCE_DIR/tests/inject/trace_expect.py" "$tmp/nvtx.json" nvtx
expect "the trace holds each range as the program made it" 0
echo "$out"

run "$PP_CLI" record --no-nvtx -o "$tmp/off.json" -- "$PP_NVTX_PROGRAM"
expect "--no-nvtx records nothing from NVTX" 1 \
    "wrote no trace to $tmp/off.json: does it use libpipeprof, NVTX or ITT?"

# Without a session to record into, the library declines at load and NVTX
# makes every call a no-op: the program runs as it would alone.
run env -u PIPEPROF_OUTPUT NVTX_INJECTION64_PATH="$PP_BINARY_DIR/libpipeprof_nvtx.so" "$PP_NVTX_PROGRAM"
expect "with the library but no PIPEPROF_OUTPUT the program runs as usual" 0

finish
