#!/usr/bin/env bash
# NVTX programs that misuse NVTX or fork at bad moments, recorded through
# the injection library (tests/inject/nvtx_hostile.c): a string handle NVTX
# never returned is ignored and counted, not dereferenced (it crashed the
# program); children forked while another thread holds the injection's
# naming lock never hang (3 in 100 did).
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

if [[ -z ${PP_NVTX_HOSTILE:-} ]]; then
    echo "skipped: this build has no NVTX injection library (the nvtx3 headers were not found;" \
         "scripts/setup installs the nvidia-nvtx wheel that has them)"
    exit 77
fi

run "$PP_CLI" record -o "$tmp/bad.json" -- "$PP_NVTX_HOSTILE" bad-handle
expect "made-up string handles: the program runs to its end and the trace is written" 0 \
    "wrote $tmp/bad.json" \
    "3 event(s) named by a string handle that nvtxDomainRegisterString did not return"
check "the registered string names its range" grep -q '"name":"good"' "$tmp/bad.json"
check "each made-up handle's event is named as such (2 ranges, 1 mark)" \
    test "$(grep -o '"name":"<invalid nvtxStringHandle_t>"' "$tmp/bad.json" | wc -l)" -eq 3

run "$PP_CLI" record -o "$tmp/fork.json" -- "$PP_NVTX_HOSTILE" fork 100
expect "100 forks while a thread takes the naming lock: none hangs" 0 "100 forks: 0 hung, 0 failed"

finish
