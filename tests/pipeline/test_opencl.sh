#!/usr/bin/env bash
# The opencl backend as a user meets it (PoCL's CPU device in CI): listed by
# `pipeprof devices`; a pipeline mixing opencl:0, cpu and sim:NPU runs,
# analyzes and renders with the wall decomposition and the device's clock
# alignment in every output; a sweep calibrates on it; a device it lacks is
# refused naming those it has.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

if [[ $("$P" --version) != *opencl* ]]; then
    echo "SKIP: built without OpenCL (Debian: ocl-icd-opencl-dev opencl-c-headers; scripts/setup installs them)"
    exit 77
fi
run "$P" devices --backend opencl
if [[ $out != *opencl:0* ]]; then
    echo "SKIP: no OpenCL device on this machine (PoCL's is the Debian package pocl-opencl-icd)"
    exit 77
fi
expect "devices lists the OpenCL device with its platform" 0 "opencl     opencl:0" "platform \""

# examples/opencl_pipeline.json: GraphPrep and Classifier on opencl:0,
# Embedding data-parallel over cpu and sim:NPU.
cp "$PP_SOURCE_DIR/examples/opencl_pipeline.json" mix.json
run "$P" run mix.json --out d --level 2 --batches 12
expect "a pipeline mixing opencl:0, cpu and sim:NPU runs and analyzes" 0 \
    "opencl: 12 batches streaming" "opencl:0/req 0" "NPU (simulated)" \
    "Wall decomposition (% of exec wall; xfer is part of device)" \
    "GraphPrep      opencl:0" "Embedding      NPU (simulated)" "Ops on opencl:0 by name" \
    "clock: opencl:0 aligned by"
for f in trace.json trace.pptrace trace.pftrace report.html; do
    check "the run wrote $f" test -s "d/$f"
done

# The same decomposition from every trace format that reads back, with
# parts summing to wall in every row.
run "$P" analyze d/trace.pptrace --json
expect "analyze --json of the .pptrace" 0 '"decomposition": ['
printf '%s' "$out" >pptrace.report.json
run "$P" analyze d/trace.json --json
printf '%s' "$out" >chrome.report.json
check "the Chrome JSON trace gives the same decomposition and clocks" test \
    "$(json_get pptrace.report.json '[d["decomposition"], d["clocks"]]')" == \
    "$(json_get chrome.report.json '[d["decomposition"], d["clocks"]]')"
check "every row's parts sum to its wall" test "$(json_get pptrace.report.json \
    'all(r["submit_ns"] + r["queue_ns"] + r["device_ns"] + r["completion_ns"] + r["unattributed_ns"] == r["wall_ns"] and r["split_execs"] == r["execs"] for r in d["decomposition"])')" == True
check "the clock alignment is stated" test "$(json_get pptrace.report.json \
    '[(c["device"], c["method"] in ("marker QUEUED", "clGetDeviceAndHostTimer"), c["error_ns"] >= 0) for c in d["clocks"]]')" == \
    "[('opencl:0', True, True)]"
pftrace_check "the run's .pftrace" d/trace.pftrace d/trace.json
check "the .pftrace carries the split as annotations" grep -q "queue_ns" <<<"$out"

mkdir -p csv
run "$P" analyze d/trace.pptrace --csv csv
expect "analyze --csv" 0
check "decomposition.csv has a row per stage and device" test "$(wc -l <csv/decomposition.csv)" -eq 5

cat >sweep.json <<'JSON'
{"name": "cl", "features": 16, "sizes": [{"nodes": 128, "edges": 512}],
 "devices": ["opencl:0"], "stages": [{"name": "Embedding", "model": "matmul", "out_dim": 16}],
 "warmup": 1, "iterations": 3}
JSON
run "$P" sweep sweep.json --out sw
expect "a sweep calibrates on opencl:0" 0 "1 of 1 combinations recorded"
check "its lookup table names the device" grep -q '"opencl:0"' sw/lookup_table.json

printf '{"stages": [{"name": "A", "device": "opencl:99", "out_dim": 8}]}' >bad.json
run "$P" run bad.json
expect "a device OpenCL lacks names the ones it has" 2 \
    "pipeprof: bad.json: stages[0].devices[0]: opencl: no device 99 (have: 0 ("
printf '{"stages": [{"name": "A", "device": "opencl:gpu", "out_dim": 8}]}' >bad2.json
run "$P" run bad2.json
expect "a device that is not a number says how to name one" 2 \
    "opencl: device \"gpu\": expected a device number (opencl:0; \`pipeprof devices --backend opencl\` lists them)"

# A machine without any OpenCL driver (the ICD loader pointed at an empty
# vendors folder): nothing is listed, and a pipeline naming opencl:0 says
# what to install.
mkdir -p novendors
OCL_ICD_VENDORS=$tmp/novendors run "$P" devices --backend opencl
expect "without a driver, devices lists no OpenCL device" 0
check "and prints nothing" test -z "$out"
OCL_ICD_VENDORS=$tmp/novendors run "$P" run mix.json --out none
expect "without a driver, a pipeline on opencl:0 says what to install" 2 \
    "pipeprof: mix.json: stages[0].devices[0]: opencl: no OpenCL device found (no platform driver is installed; PoCL's is the Debian package pocl-opencl-icd)"
check "and leaves no trace behind" test ! -e none/trace.pptrace
finish
