#!/usr/bin/env bash
# The ITT calls that no packaged static part can make from C (frames,
# markers, metadata, handles made before the collector loaded), made by
# tests/inject/itt_static_part.c, which does what the static part does;
# recorded by pipeprof record and checked by tests/inject/trace_expect.py.
# Metadata "stage" and "batch" turn a task into a stage instance.
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

run "$PP_CLI" record -o "$tmp/abi.json" -- "$PP_ITT_STATIC_PART"
expect "record runs the program and writes the trace" 0 "wrote $tmp/abi.json"
run "$PY" "$PP_SOURCE_DIR/tests/inject/trace_expect.py" "$tmp/abi.json" itt_abi
expect "the trace holds each ITT call as the program made it" 0
echo "$out"

# Without a session the collector points every entry at the static part's
# no-ops, so the program runs as if no collector were there.
run env -u PIPEPROF_OUTPUT INTEL_LIBITTNOTIFY64="$PP_BINARY_DIR/libpipeprof_itt.so" "$PP_ITT_STATIC_PART"
expect "with no PIPEPROF_OUTPUT the collector installs only the no-ops" 1 \
    "itt_static_part: the collector installed only the no-ops"

finish
