#!/usr/bin/env bash
# `pipeprof analyze` as a user meets it: the text report (80 columns,
# findings first), --json that parses, --csv files with headers, the window
# options, --batch-pattern on a PyTorch-profiler-shaped trace, the report of
# a real pipeline run, and every error a user can make (message and exit
# code 2).
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
D=$PP_SOURCE_DIR/tests/analyze/data
cd "$tmp" || exit 1
if [[ ! -x $P ]]; then
    echo "FAIL: $P is not built"
    exit 1
fi

run "$P" analyze --help
expect "help shows usage, options and an example" 0 "usage: pipeprof analyze TRACE" \
    "--exclude-region NAME" "--batch-pattern REGEX" "examples:"

# pipeline_small.json: 3 batches of prep (host) -> embed (CPU + NPU data
# parallel) -> cls (GPU), batch 2 without cls, a "warm up" region, 3 dropped
# records.
run "$P" analyze "$D/pipeline_small.json"
expect "text report: header, findings with data loss first, tables" 0 \
    "window: 970.000 us (whole trace)" "data loss: 3 dropped records" \
    "simulated devices: NPU (simulated)" " 1. Data loss: 3 records were dropped" \
    "Bottleneck: stage \"embed\"" "Imbalance within noise: data-parallel stage \"embed\"" \
    "Cycles (3 batches, 2 complete)"
long=$(awk 'length > 80' <<<"$out")
check "every line of the text report fits 80 columns" test -z "$long"

run "$P" analyze "$D/pipeline_small.json" --exclude-region "warm up"
expect "--exclude-region starts W after the region" 0 \
    "window: 870.000 us (after region \"warm up\"), 100000 .. 970000 ns"

run "$P" analyze "$D/pipeline_small.json" --from 400000 --to 700000
expect "--from/--to clip W" 0 "window: 300.000 us"

"$P" analyze "$D/pipeline_small.json" --json >report.json 2>err.txt
check "--json exits 0" test $? -eq 0
check "--json parses" "$PY" -m json.tool report.json /dev/null
check "--json has the schema and version" grep -q '"schema": "pipeprof-report", "version": 1' report.json

run "$P" analyze "$D/pipeline_small.json" --csv csv
expect "--csv writes the report too" 0 "Findings"
for f in devices tracks stages batches gaps; do
    check "$f.csv exists with its header" grep -q '^[a-z_]*,' "csv/$f.csv"
done
for f in ops op_types; do
    check "$f.csv exists with its header (and no ops in this trace)" \
        test "$(cat "csv/$f.csv")" = "$(head -1 "csv/$f.csv")"
done
# CPU, NPU, GPU, and CPU (host): the "prep" stage spans, host work
check "devices.csv has one row per device" test "$(wc -l <csv/devices.csv)" -eq 5
# bubbles: CPU 3 (the warm-up exec, then 3 batches), NPU 2, GPU 1, host 2
check "gaps.csv lists every device bubble" test "$(wc -l <csv/gaps.csv)" -eq 9
check "batches.csv has a row per (batch, stage)" test "$(wc -l <csv/batches.csv)" -eq 9

run "$P" analyze "$D/kineto_pipeline.json" --batch-pattern '^(Stage[0-9]+_[A-Za-z]+)/batch([0-9]+)$'
expect "--batch-pattern labels kernels of a PyTorch trace" 0 "Stage1_Embedding" \
    "Stage2_Classifier" "Cycles (4 batches, 0 complete)" "GPU 0/stream 13"
long=$(awk 'length > 80' <<<"$out")
check "the foreign report fits 80 columns" test -z "$long"

# a real pipeline run at level 2: ops tables, simulated devices named so
run "$P" demo --out demo --batches 5 --level 2
expect "demo runs" 0
run "$P" analyze demo/trace.pptrace --exclude-region "warm up"
expect "the report of a pipeline run" 0 "Bottleneck: stage" "GraphPrep" "Embedding" \
    "Classifier" "Cycles (5 batches, 5 complete)" "Ops on NPU (simulated) by name" \
    "Ops on CPU by type" "MatMul"
long=$(awk 'length > 80' <<<"$out")
check "the pipeline report fits 80 columns" test -z "$long"
"$P" analyze demo/trace.json --exclude-region "warm up" --json >demo.json 2>err.txt
check "its JSON parses, with op rows" "$PY" -c \
    "import json,sys; d=json.load(open('demo.json')); sys.exit(not (d['ops'] and d['op_types'] and d['ops'][0]['type']))"

# ---- errors -----------------------------------------------------------------
run "$P" analyze
expect "no trace" 2 "analyze: expected a TRACE"
run "$P" analyze "$D/pipeline_small.json" --region warmup
expect "unknown region lists the regions" 2 'no region named "warmup"' '(regions: "warm up")'
run "$P" analyze "$D/pipeline_small.json" --from 700000 --to 400000
expect "empty window" 2 "the window is empty"
run "$P" analyze "$D/pipeline_small.json" --from -5
expect "--from takes a whole number" 2 '--from "-5": expected a whole number'
run "$P" analyze "$D/pipeline_small.json" --region a --exclude-region b
expect "--region with --exclude-region" 2 "--region and --exclude-region exclude each other"
run "$P" analyze "$D/pipeline_small.json" --partition-pattern '^Split'
expect "--partition-pattern alone is refused" 2 \
    "--partition-pattern and --merge-pattern apply with --batch-pattern or --stage-pattern"
run "$P" analyze "$D/pipeline_small.json" --stage-pattern '^Stage'
expect "a stage pattern without a stage group" 2 '--stage-pattern "^Stage": needs a stage group'
run "$P" analyze "$D/pipeline_small.json" --batch-pattern '('
expect "bad regex" 2 '--batch-pattern "("'
run "$P" analyze "$D/pipeline_small.json" --frobnicate
expect "unknown option" 2 'unknown option "--frobnicate"'
run "$P" analyze "$D/pipeline_small.json" extra.json
expect "a second TRACE (merged) that does not exist" 2 "extra.json: cannot open: No such file or directory"
run "$P" analyze missing.json
expect "missing file" 2 "missing.json"
echo '{"traceEvents": [{"ph": "X", "name": "work", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}' >noexec.json
run "$P" analyze noexec.json
expect "a trace without execs" 2 "the trace has no execs"
run "$P" analyze "$D/pipeline_small.json" --csv /proc/no/such/dir
expect "unwritable --csv dir" 1 "--csv /proc/no/such/dir"

finish
