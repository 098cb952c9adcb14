#!/usr/bin/env bash
# `pipeprof devices` and the openvino backend as a user meets them: the
# device list names every backend's devices (simulated ones labeled), the
# demo runs its CPU work on OpenVINO with the devices visible in the report,
# and a device OpenVINO does not have is refused naming the ones it has.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

run "$P" devices --help
expect "devices help shows usage and an example" 0 "usage: pipeprof devices" "example:"
run "$P" devices --backend sim
expect "devices lists the simulated devices, labeled" 0 "sim:NPU" "sim:GPU" "simulated: launch"
run "$P" devices --backend cpu
expect "devices lists the cpu device" 0 "cpu        cpu"
run "$P" devices --backend opnvino
expect "devices refuses an unknown backend" 2 "pipeprof: devices: unknown backend \"opnvino\""
check "devices prints no table for an unknown backend" \
    test -z "$("$P" devices --backend opnvino 2>/dev/null)"
run "$P" demo --backend tpu
expect "demo refuses an unknown backend" 2 "pipeprof: demo: unknown backend \"tpu\" for the demo (have: cpu, openvino)"

if [[ $("$P" --version) != *openvino* ]]; then
    run "$P" demo --backend openvino --out d
    expect "demo --backend openvino says the backend is not built" 2 \
        "unknown backend \"openvino\" (have: cpu, sim"
    skip_part "built without OpenVINO: its devices and the demo on it did not run"
    finish
fi
if [[ -n ${PP_SANITIZE:-} ]]; then
    skip_part "OpenVINO's TBB dlopens with RTLD_DEEPBIND, which the sanitizers cannot run"
    finish
fi

run "$P" devices
expect "devices lists every backend" 0 "cpu        cpu" "sim:NPU" "openvino:CPU"

run "$P" demo --backend openvino --out d --batches 5 --level 2
expect "demo runs its CPU stages on OpenVINO" 0 "demo: 5 batches streaming" \
    "openvino:CPU/req 0" "NPU (simulated)" "Ops on openvino:CPU" "matmul_1"
check "the OpenVINO demo wrote its trace" test -s d/trace.pptrace

printf '{"stages": [{"name": "A", "device": "openvino:NPU7", "out_dim": 8}]}' >npu.json
run "$P" run npu.json
expect "a device OpenVINO lacks names the available ones" 2 \
    "pipeprof: npu.json: stages[0].devices[0]: openvino: device \"NPU7\" not found (available: " \
    "CPU"
finish
