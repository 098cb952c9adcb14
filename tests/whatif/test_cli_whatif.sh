#!/usr/bin/env bash
# pipeprof whatif on the traces the project makes: a pipeline of simulated
# devices and the demo (real compute on the cpu backend) run by `pipeprof
# run`, and a merged two-process trace. The model's structure comes from
# the pipeline files (stages, parts, shares, the recorded queue depth); its
# replay error is printed for each and, on the simulated pipeline, must stay
# inside the 10% the tool itself refuses beyond; the JSON has the keys
# scripts read; a stage moved with a sweep's table; bad input exits 2.
# Nothing here asserts on how fast anything ran.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/../cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

# json_get FILE EXPR: EXPR over the parsed JSON d
json_get() {
    "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

sim_pipeline() { # CLASSIFY_DEVICE
    cat <<EOF
{"name": "whatif", "nodes": 1024, "edges": 8192, "features": 64,
 "batches": 150, "warmup": 3, "queue_depth": 3, "seed": 1, "sim_bus_gbps": 1000,
 "sim_devices": [{"name": "A", "launch_ns": 100000, "gflops": 4, "units": 1},
                 {"name": "B", "launch_ns": 100000, "gflops": 6, "units": 1},
                 {"name": "C", "launch_ns": 100000, "gflops": 6, "units": 1},
                 {"name": "D", "launch_ns": 100000, "gflops": 3, "units": 2},
                 {"name": "E", "launch_ns": 100000, "gflops": 12, "units": 1}],
 "stages": [{"name": "Prep", "device": "sim:A", "out_dim": 64},
            {"name": "Embed", "devices": ["sim:B", "sim:C"], "split": [1, 3], "out_dim": 64},
            {"name": "Classify", "device": "$1", "requests": 2, "out_dim": 32}]}
EOF
}

# ---- a pipeline of simulated devices ---------------------------------------
sim_pipeline sim:D >sim.json
run "$P" run sim.json --out sim
expect "the simulated pipeline runs" 0 "streaming"
run "$P" whatif sim/trace.pptrace --exclude-region "warm up" --json --speedup Prep=2 \
    --split Embed=B:1,C:1 --requests D=1 --queue-depth 1
expect "whatif predicts four scenarios" 0 '"scenarios"'
echo "$out" >sim-whatif.json
echo "replay error on the simulated pipeline: throughput $(json_get sim-whatif.json \
    '"%+.2f%%" % (100 * d["replay"]["error"])'), cycle $(json_get sim-whatif.json \
    '"%+.2f%%" % (100 * d["replay"]["cycle_error"])')"
check "the replay is inside the 10% whatif refuses beyond" test \
    "$(json_get sim-whatif.json 'abs(d["replay"]["error"]) <= 0.10 and not d["replay"]["refused"]')" = True
check "the model has the file's stages in order" test \
    "$(json_get sim-whatif.json '[s["name"] for s in d["model"]["stages"]]')" = "['Prep', 'Embed', 'Classify']"
check "Embed is data parallel over B and C with the file's split 1:3" test \
    "$(json_get sim-whatif.json '[(p["device"], round(p["share"], 3)) for p in d["model"]["stages"][1]["parts"]]')" \
    = "[('B (simulated)', 0.25), ('C (simulated)', 0.75)]"
check "Classify runs 2 requests a batch" test \
    "$(json_get sim-whatif.json 'd["model"]["stages"][2]["parts"][0]["requests"]')" = 2
check "the queue depth is the file's, recorded" test \
    "$(json_get sim-whatif.json '(d["model"]["queue_depth"], d["model"]["queue_depth_inferred"])')" = "(3, False)"
check "one thread per stage: one server each, not inferred" test \
    "$(json_get sim-whatif.json '[(s["servers"], s["servers_inferred"]) for s in d["model"]["stages"]]')" \
    = "[(1, False), (1, False), (1, False)]"
check "every scenario has throughput {mean, lo, hi}, cycle and end-to-end figures" test \
    "$(json_get sim-whatif.json 'all(s["throughput_per_s"]["lo"] <= s["throughput_per_s"]["mean"] <= s["throughput_per_s"]["hi"] and s["e2e_ns"]["p50"] <= s["e2e_ns"]["p95"] and s["cycle_ns"]["mean"]["mean"] > 0 for s in d["scenarios"])')" = True
check "the scenarios name their changes" test \
    "$(json_get sim-whatif.json '[s["changes"] for s in d["scenarios"]]')" \
    = "[['Prep 2x faster'], ['Embed split B:1,C:1'], ['1 request on D'], ['queue depth 1']]"
check "the causal profile has each stage and device, gains growing with the speed-up" test \
    "$(json_get sim-whatif.json 'len(d["causal"]) == 3 + 4 and all(r["gains"][0]["gain"]["mean"] <= r["gains"][3]["gain"]["mean"] + 1e-9 for r in d["causal"])')" = True
check "measured and replayed throughputs are there for scripts" test \
    "$(json_get sim-whatif.json 'd["measured"]["throughput_per_s"] > 0 and d["replay"]["throughput_per_s"] > 0')" = True

run "$P" whatif sim/trace.pptrace --exclude-region "warm up" --no-causal --speedup Prep=2 --seed 9
first=$out
run "$P" whatif sim/trace.pptrace --exclude-region "warm up" --no-causal --speedup Prep=2 --seed 9
check "the same seed gives the same prediction" test "$first" = "$out"
expect "the text shows measured, replayed and predicted side by side" 0 "measured" "replayed" \
    "predicted" "scenario 1: Prep 2x faster" "replay (the unchanged model): throughput error"

# ---- a stage moved with a sweep's table -------------------------------------
cat >sweep.json <<'EOF'
{"name": "move", "features": 64, "warmup": 2, "iterations": 30, "sim_bus_gbps": 1000,
 "sim_devices": [{"name": "D", "launch_ns": 100000, "gflops": 3, "units": 2},
                 {"name": "E", "launch_ns": 100000, "gflops": 12, "units": 1}],
 "sizes": [{"nodes": 1024, "edges": 8192}],
 "devices": ["sim:D", "sim:E"],
 "stages": [{"name": "Classify", "model": "matmul", "in_dim": 64, "out_dim": 32}]}
EOF
run "$P" sweep sweep.json --out calib
if [[ $rc != 0 ]]; then
    skip_part "--move: the sweep failed: $out"
else
    run "$P" whatif sim/trace.pptrace --exclude-region "warm up" --json --no-causal \
        --move Classify=sim:E --lookup calib/lookup_table.json
    expect "--move takes the stage's time on its new device from the table" 0 "Classify moved to E"
    echo "$out" >move.json
    sim_pipeline sim:E >moved.json
    run "$P" run moved.json --out moved
    run "$P" analyze moved/trace.pptrace --exclude-region "warm up" --json
    echo "$out" >moved-report.json
    echo "Classify moved to E: predicted $(json_get move.json \
        '"%.1f" % d["scenarios"][0]["throughput_per_s"]["mean"]')/s, measured on a rerun \
$(json_get moved-report.json '"%.1f" % d["cycles"]["throughput_measured_per_s"]')/s"
    # plan: each plan simulated by the same engine; a table cell whose runs
    # spread (a CV of 0.4, made here) is named under the plans built on it
    cat >classify.json <<'EOF'
{"name": "one", "nodes": 1024, "edges": 8192, "features": 64, "batches": 20,
 "sim_devices": [{"name": "D", "launch_ns": 100000, "gflops": 3, "units": 2},
                 {"name": "E", "launch_ns": 100000, "gflops": 12, "units": 1}],
 "stages": [{"name": "Classify", "device": "sim:D", "out_dim": 32}]}
EOF
    # the sweep's table with its spread set: steady (CV 0.01, mean = median,
    # max = median) and unstable (CV 0.4); this machine's load can make the
    # measured one either
    "$PY" - calib/lookup_table.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for cv, name in ((0.01, "steady.json"), (0.4, "unstable.json")):
    for e in d["entries"].values():
        w = e["wall_ns"]
        w.update(std=cv * w["mean"], p50=w["mean"], max=w["mean"])
    json.dump(d, open(name, "w"))
PYEOF
    run "$P" plan steady.json classify.json --top 1
    expect "plan prints each plan simulated by the whatif engine" 0 \
        "simulated (whatif engine, stages on one device taking turns):"
    check "a steady table names no unstable cell" test "${out/unstable/}" = "$out"
    run "$P" plan unstable.json classify.json --top 1
    expect "a plan built on an unstable cell says so" 0 \
        "[built on an unstable sweep cell: Classify, sim:" "CV 0.40 above 0.25]"
fi

# ---- the demo: real compute on the cpu backend ------------------------------
run "$P" run "$PP_SOURCE_DIR/examples/demo_pipeline.json" --out demo --batches 150
expect "the demo runs" 0 "streaming"
run "$P" whatif demo/trace.pptrace --exclude-region "warm up" --json --speedup Embedding=2
expect "whatif models the demo" 0 '"replay"'
echo "$out" >demo-whatif.json
echo "replay error on the demo (cpu backend, this machine's load): throughput $(json_get \
    demo-whatif.json '"%+.2f%%" % (100 * d["replay"]["error"])'), cycle $(json_get \
    demo-whatif.json '"%+.2f%%" % (100 * d["replay"]["cycle_error"])')"
check "the replay of the demo is inside the 10% whatif refuses beyond, and predicts" test \
    "$(json_get demo-whatif.json 'abs(d["replay"]["error"]) <= 0.10 and len(d["scenarios"]) == 1')" = True
check "the cpu device the two stages share is named" test \
    "$(json_get demo-whatif.json 'd["model"]["shared_devices"]')" = "['CPU']"

# ---- a merged two-process trace ---------------------------------------------
two=$PP_BINARY_DIR/examples/two_process
if [[ -x $two ]]; then
    run "$P" record -o 'two-%p.pptrace' -- "$two" 40
    traces=(two-*.pptrace)
    run "$P" whatif "${traces[@]}" --json --no-causal
    expect "whatif merges several traces as analyze does" 0 '"replay"'
    echo "$out" >two.json
    echo "replay error on the merged two-process trace: throughput $(json_get two.json \
        '"%+.2f%%" % (100 * d["replay"]["error"])')"
    # Two processes joined by a pipe replay within a few percent on a quiet
    # machine (docs/whatif.md); a loaded one stalls a process as a whole,
    # which the model cannot explain. What must hold on any machine: a
    # replay beyond the threshold is refused, with the reason.
    check "the merged trace's replay refuses exactly beyond the 10% threshold, with a reason" test \
        "$(json_get two.json '(abs(d["replay"]["error"]) > 0.10) == bool(d["replay"]["refused"]) and (not d["replay"]["refused"] or len(d["replay"]["reason"]) > 0)')" = True
    check "its stages come from both processes" test \
        "$(json_get two.json 'sorted(s["name"] for s in d["model"]["stages"])')" = "['Infer', 'Prepare']"
    check "its queue depth is inferred and says so" test \
        "$(json_get two.json 'd["model"]["queue_depth_inferred"]')" = True
else
    skip_part "the two-process trace: $two is not built"
fi

# ---- bad input --------------------------------------------------------------
run "$P" whatif sim/trace.pptrace --speedup Nope=2
expect "an unknown stage is bad input naming the stages" 2 'stage "Nope" is not in the model (have: Prep, Embed, Classify)'
run "$P" whatif sim/trace.pptrace --speedup Prep=0
expect "a factor must be positive" 2 "--speedup \"Prep=0\""
run "$P" whatif sim/trace.pptrace --move Prep=E
expect "--move needs a table" 2 "--move needs the stage's times on its new device: --lookup TABLE"
run "$P" whatif
expect "a TRACE is needed" 2 "whatif: expected a TRACE"
run "$P" whatif --help
expect "--help shows a real run" 0 "pipeprof demo --out out" "pipeprof whatif out/trace.pptrace"
finish
