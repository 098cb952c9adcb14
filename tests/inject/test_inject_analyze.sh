#!/usr/bin/env bash
# Traces recorded from NVTX and ITT analyze into stages and cycles:
# the NVTX program's ranges are named "prep/batchN" and "embed/batchN" and
# take their stage and batch from --batch-pattern; the ITT tasks carry
# "stage" and "batch" metadata. Both programs run the same two-stage loop,
# so reports of the same shape are expected (tests/inject/trace_expect.py,
# pipeline_report). These traces have host spans only: the analyzer takes
# their stage instances as execs of "CPU (host)" (docs/analysis.md).
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

# analyze_case WHAT TRACE [ARGS...]: the report of TRACE must be the pipeline's.
analyze_case() {
    local what=$1 trace=$2
    shift 2
    run "$PP_CLI" analyze "$trace" --json "$@"
    expect "$what: analyze runs" 0 || return 0
    printf '%s\n' "$out" >"$tmp/report.json"
    run "$PY" "$PP_SOURCE_DIR/tests/inject/trace_expect.py" "$tmp/report.json" pipeline_report
    expect "$what: stages, batches and bottlenecks as the program ran them" 0
    echo "$out"
}

if [[ -n ${PP_NVTX_PROGRAM:-} ]]; then
    run "$PP_CLI" record -o "$tmp/nvtx.pptrace" -- "$PP_NVTX_PROGRAM"
    expect "NVTX program recorded" 0
    analyze_case "NVTX with --batch-pattern" "$tmp/nvtx.pptrace" \
        --batch-pattern '^(?<stage>.+)/batch(?<batch>[0-9]+)$'
else
    skip_part "no NVTX injection library in this build (nvtx3 headers not found)"
fi

run "$PP_CLI" record -o "$tmp/itt.pptrace" -- "$PP_ITT_STATIC_PART"
expect "ITT program recorded" 0
analyze_case "ITT with stage and batch metadata" "$tmp/itt.pptrace"

finish
