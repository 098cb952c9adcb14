#!/usr/bin/env bash
# CUDA kernels through CUPTI, on a GPU: pipeprof record runs
# tests/inject/cuda_program.c (4 batches, each an NVTX range around a copy,
# a kernel and a memset on each of 2 streams) and the trace must hold them
# per stream, each linked to its launch call inside its range, with the
# clock alignment's bound covering every causality check
# (tests/inject/cupti_expect.py prints the figures). Skips, with the reason,
# without a CUPTI collector, a CUDA driver or a GPU.
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

if [[ -z ${PP_CUPTI_COLLECTOR:-} ]]; then
    echo "skipped: this build has no CUPTI collector (CUPTI not found; see cmake/cupti.cmake)"
    exit 77
fi
if [[ -z ${PP_CUDA_PROGRAM:-} ]]; then
    echo "skipped: the CUDA test program was not built (it needs the NVTX headers too)"
    exit 77
fi
run "$PP_CUDA_PROGRAM"
if ((rc == 77)); then
    echo "$out"
    exit 77
fi
expect "the CUDA program runs on its own" 0 "4 batches on 2 streams"

run "$PP_CLI" --version
expect "--version names the CUPTI collector" 0 "cupti"
run "$PP_CLI" record -o "$tmp/cuda.json" -- "$PP_CUDA_PROGRAM"
expect "record runs the CUDA program and writes the trace" 0 "wrote $tmp/cuda.json"
if [[ $out == *"pipeprof: cupti:"* ]]; then
    echo "FAIL: the collector reported a CUPTI failure:"
    echo "$out"
    failures=$((failures + 1))
fi
run "$PY" "$PP_SOURCE_DIR/tests/inject/cupti_expect.py" "$tmp/cuda.json" 4 2
expect "kernels, copies and sets per stream, linked to their launches, clock bounded" 0
echo "$out"

run "$PP_CLI" analyze "$tmp/cuda.json" --batch-pattern '^(?<stage>Stage[0-9]+)/batch(?<batch>[0-9]+)$'
expect "the device work analyzes into Stage1's batches" 0 "Stage1" "clock: GPU 0"
echo "$out" | head -n 40

run "$PP_CLI" record --no-cupti -o "$tmp/off.json" -- "$PP_CUDA_PROGRAM"
expect "--no-cupti still records the NVTX ranges" 0 "wrote $tmp/off.json"
check "--no-cupti records no GPU track" bash -c "! grep -q '\"device\":\"GPU 0\"' '$tmp/off.json'"

finish
