#!/usr/bin/env bash
# `pipeprof demo` and `pipeprof run` as a user meets them: both write a
# Chrome JSON trace that parses, a .pptrace that analyze reads back and a
# .pftrace that decodes to the same events as the JSON,
# print the analysis with the simulated devices labeled, and refuse bad
# flags and bad pipeline files with a message naming what is wrong (exit 2).
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

run "$P" demo --help
expect "demo help shows usage and an example" 0 "usage: pipeprof demo" "--serial" "example:"

run "$P" demo --out d --batches 10
expect "demo runs and prints the per-stage analysis" 0 "10 batches streaming" \
    "GraphPrep" "Embedding" "Classifier" "NPU (simulated)" "GPU (simulated)" "Bottleneck"
check "demo wrote trace.json" test -s d/trace.json
check "demo wrote trace.pptrace" test -s d/trace.pptrace
pftrace_check "demo's trace.pftrace holds what its trace.json holds" d/trace.pftrace d/trace.json
check "demo wrote report.html" grep -q '^<!DOCTYPE html>' d/report.html
check "trace.json parses and has events" \
    test "$(json_get d/trace.json "len(d['traceEvents']) > 0")" = True
run "$P" analyze d/trace.pptrace --exclude-region "warm up"
expect "analyze reads the .pptrace back" 0 "Embedding" "dp"

run "$P" demo --out s --batches 5 --serial --level 0
expect "serial demo at level 0" 0 "5 batches one at a time"
run "$P" demo --out s/ --batches 2
expect "a trailing slash on --out is not doubled in the paths" 0 "wrote s/trace.json,"
run "$P" demo --out "$(printf 'x%.0s' {1..5000})"
expect "an --out too long for a path is bad input" 2 "demo: --out: the folder's name is too long"

run "$P" demo --batches 0
expect "demo refuses 0 batches" 2 "demo: --batches \"0\": expected a whole number from 1 to 1000000"
run "$P" demo --level 3
expect "demo refuses level 3" 2 "demo: --level \"3\": expected a whole number from 0 to 2"
run "$P" demo --frobnicate
expect "demo refuses an unknown flag" 2 "demo: unknown option \"--frobnicate\""
run "$P" demo --out
expect "demo needs the value of --out" 2 "demo: option --out needs a value"

run "$P" run "$PP_SOURCE_DIR/examples/gnn_pipeline.json" --out r --batches 5
expect "run executes the example pipeline file" 0 "gnn: 5 batches streaming" "Postprocess" \
    "VPU (simulated)"
check "run wrote trace.json" test -s r/trace.json
pftrace_check "run's trace.pftrace holds what its trace.json holds" r/trace.pftrace r/trace.json
run "$P" run "$PP_SOURCE_DIR/examples/demo_pipeline.json" --out rd --batches 5
expect "the demo's pipeline as a file runs" 0 "demo: 5 batches streaming" "Embedding" \
    "NPU (simulated)" "GPU (simulated)"

printf '{"stages": [{"name": "A", "device": "cpu", "out_dim": 8},\n {"name": "B", "devices": ["opnvino"], "out_dim": 8}]}' >bad_backend.json
backends="cpu, sim"
[[ $("$P" --version) == *openvino* ]] && backends="cpu, sim, openvino"
[[ $("$P" --version) == *opencl* ]] && backends+=", opencl"
run "$P" run bad_backend.json
expect "unknown backend names the key" 2 \
    "pipeprof: bad_backend.json: stages[1].devices[0]: unknown backend \"opnvino\" (have: $backends)"

printf '{"stages": [{"name": "A", "devices": ["cpu", "sim:NPU"], "split": [1, 2, 3], "out_dim": 8}]}' >bad_split.json
run "$P" run bad_split.json
expect "split of the wrong length" 2 "bad_split.json: stages[0].split: 3 values for 2 devices"

printf '{"batches": 5, "stages": [{"name": "A", "devise": "cpu", "out_dim": 8}]}' >bad_key.json
run "$P" run bad_key.json
expect "misspelt key" 2 "bad_key.json: stages[0].devise: unknown key (have: name, device, devices,"

printf '{"batches": "many", "stages": []}' >bad_type.json
run "$P" run bad_type.json
expect "wrong type" 2 "bad_type.json: batches: expected a whole number"

printf '{"queue_depth": 0, "stages": [{"name": "A", "device": "cpu", "out_dim": 8}]}' >bad_depth.json
run "$P" run bad_depth.json
expect "range checked" 2 "bad_depth.json: queue_depth: 0 (expected 1..64)"

printf '{"stages": [{"name": "A", "device": "cpu", "model": "gcn", "out_dim": 8}]}' >bad_model.json
run "$P" run bad_model.json
expect "unknown model" 2 "bad_model.json: stages[0].model: unknown model \"gcn\" (have: matmul, sage)"

printf '{"stages": [\n  {"name": "A",, }\n]}' >bad_syntax.json
run "$P" run bad_syntax.json
expect "syntax error gives line and column" 2 "bad_syntax.json:2:"

run "$P" run missing.json
expect "missing file" 2 "missing.json: cannot open"
run "$P" run
expect "run needs a file" 2 "run: expected a pipeline file"

finish
