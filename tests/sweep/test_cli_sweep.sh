#!/usr/bin/env bash
# pipeprof sweep and pipeprof plan from the command line: a sweep killed by
# SIGKILL mid-way and resumed gives the tables of an uninterrupted one
# (simulated devices, exact in integers: hardware and transfer times compared,
# wall times are real time and left out), shards merge, mistakes exit 2 with
# messages, and plan --verify runs the plan it picks.
source "$(dirname "$0")/../cli/lib.sh"

cat >"$tmp/sweep.json" <<'EOF'
{"name": "cli", "features": 16, "warmup": 1, "iterations": 1000, "sim_bus_gbps": 1,
 "sim_devices": [{"name": "A", "launch_ns": 50000, "gflops": 1},
                 {"name": "B", "launch_ns": 50000, "gflops": 4}],
 "sizes": [{"nodes": 16, "edges": 32}, {"nodes": 32, "edges": 64}, {"nodes": 48, "edges": 96},
           {"nodes": 64, "edges": 128}, {"nodes": 80, "edges": 160}, {"nodes": 96, "edges": 192}],
 "devices": ["sim:A", "sim:B"],
 "stages": [{"name": "mm", "model": "matmul", "out_dim": 16}, {"name": "sg", "model": "sage", "out_dim": 8}]}
EOF

# the deterministic part of a sweep's tables, as one line of JSON
tables() {
    "$PY" - "$1" <<'EOF'
import json, sys
d = sys.argv[1]
lk = json.load(open(d + "/lookup_table.json"))["entries"]
bw = json.load(open(d + "/bandwidth_table.json"))["entries"]
for e in list(lk.values()) + list(bw.values()):
    e.pop("wall_ns", None)
    e.pop("wall", None)
print(json.dumps([lk, bw], sort_keys=True))
EOF
}

run "$PP_CLI" sweep "$tmp/sweep.json" --out "$tmp/whole"
expect "a whole sweep completes" 0 "24 of 24 combinations recorded" "wrote $tmp/whole/lookup_table.json"
expect "progress is one plain line per combination off a terminal" 0 \
    "sweep: 1/24 16,32,sim:A,mm (simulated) (ETA " "sweep: 24/24 96,192,sim:B,sg (simulated) (ETA 0.0s)"
if command -v script >/dev/null; then
    script -qec "'$PP_CLI' sweep '$tmp/sweep.json' --out '$tmp/tty' --limit 3" /dev/null >"$tmp/tty.log" 2>&1
    check "on a terminal the progress is one redrawn bar with ETA" \
        grep -q $'\r\\[#.*\\] 3/24  12% ETA .* 16,32,sim:B,mm (simulated)' "$tmp/tty.log"
else
    skip_part "no script(1) to give the sweep a terminal"
fi
check "the report labels simulated devices" grep -q "16,32,sim:A,mm (simulated)" "$tmp/whole/report.txt"

# 1000 iterations make the whole sweep take seconds (simulated devices sleep
# in real time), so that the kill after the fifth line comes mid-way.
kill_mid_way "$tmp/killed/raw.jsonl" 5 24 "$PP_CLI" sweep "$tmp/sweep.json" --out "$tmp/killed"
lines=$killed_lines
check "SIGKILL stopped the sweep mid-way ($lines of 24 lines)" test "$lines" -ge 1 -a "$lines" -lt 24
printf '{"index":%d,"key":"cut by' "$lines" >>"$tmp/killed/raw.jsonl"
run "$PP_CLI" sweep "$tmp/sweep.json" --out "$tmp/killed"
expect "a directory holding a sweep needs --resume" 2 "already holds a sweep" "--resume continues it"
run "$PP_CLI" sweep "$tmp/sweep.json" --out "$tmp/killed" --resume
expect "the killed sweep resumes" 0 "24 of 24 combinations recorded" "($lines resumed, 0 failed)"
check "the resumed raw.jsonl has one line per combination" test "$(wc -l <"$tmp/killed/raw.jsonl")" -eq 24
check "resumed tables equal the uninterrupted sweep's" test "$(tables "$tmp/whole")" = "$(tables "$tmp/killed")"

for i in 1 2; do
    run "$PP_CLI" sweep "$tmp/sweep.json" --out "$tmp/s$i" --shard "$i/2"
    expect "shard $i/2 runs its half" 0 "12 of 12 combinations" "shard $i/2 complete"
done
run "$PP_CLI" sweep merge "$tmp/s1" --out "$tmp/m1"
expect "merge refuses a missing shard" 2 "shard 2/2 is missing"
run "$PP_CLI" sweep merge "$tmp/s1" "$tmp/s2" --out "$tmp/merged"
expect "shards merge" 0 "merged 2 shards into $tmp/merged"
check "merged tables equal the unsharded sweep's" test "$(tables "$tmp/whole")" = "$(tables "$tmp/merged")"
sed 's/"iterations": 1000/"iterations": 1001/' "$tmp/sweep.json" >"$tmp/other.json"
run "$PP_CLI" sweep "$tmp/other.json" --out "$tmp/o2" --shard 2/2 --limit 1
expect "--limit stops early and says how to go on" 0 "1 of 12 combinations" "--resume"
run "$PP_CLI" sweep merge "$tmp/s1" "$tmp/o2" --out "$tmp/m2"
expect "merge refuses shards of another config" 2 "are sweeps of different configs"
run "$PP_CLI" sweep "$tmp/other.json" --out "$tmp/s1" --shard 1/2 --resume
expect "resume refuses another config" 2 "holds a sweep of another config"

printf '{"features": 4, "sizes": [{"nodes": 8, "edges": 8}], "devices": ["cpu"], "stages": [{"name": "a", "model": "gcn", "out_dim": 4}]}' >"$tmp/bad.json"
run "$PP_CLI" sweep "$tmp/bad.json" --out "$tmp/bad"
expect "a bad config exits 2 naming the key" 2 "bad.json: stages[0].model: unknown model \"gcn\""
run "$PP_CLI" sweep "$tmp/sweep.json" --out "$tmp/x" --shard 3/2
expect "a bad --shard exits 2" 2 "--shard \"3/2\": expected i/N"
run "$PP_CLI" sweep "$tmp/sweep.json"
expect "--out is required" 2 "expected a config and --out DIR"
run "$PP_CLI" sweep --help
expect "sweep --help has examples" 0 "pipeprof sweep merge s1 s2 --out calib"

# The contention factor: one stage alone in a pipeline on sim:A runs as it
# did in the sweep (exact model, nothing else on the bus), so it is exactly 1.
cat >"$tmp/alone.json" <<'EOF'
{"name": "alone", "nodes": 32, "edges": 64, "features": 16, "batches": 5, "warmup": 1,
 "sim_bus_gbps": 1, "sim_devices": [{"name": "A", "launch_ns": 50000, "gflops": 1}],
 "stages": [{"name": "mm", "device": "sim:A", "model": "matmul", "out_dim": 16}]}
EOF
run "$PP_CLI" run "$tmp/alone.json" --out "$tmp/alone"
expect "the one-stage pipeline runs" 0 "alone: 5 batches"
run "$PP_CLI" analyze "$tmp/alone/trace.pptrace" --exclude-region "warm up" \
    --lookup "$tmp/whole/lookup_table.json" --lookup-size 32,64
expect "analyze --lookup adds the contention table" 0 \
    "Contention (mean hw in the pipeline / hw alone" "A (simulated)" "1.00x"
"$PP_CLI" analyze "$tmp/alone/trace.pptrace" --exclude-region "warm up" --json \
    --lookup "$tmp/whole/lookup_table.json" --lookup-size 32,64 >"$tmp/alone.report.json"
check "the JSON contention factor of a stage alone is 1" test \
    "$(json_get "$tmp/alone.report.json" '[(c["stage"], c["device"], c["factor"], c["mean_hw_ns"] == c["isolated_hw_ns"]) for c in d["contention"]]')" \
    = "[('mm', 'A', 1.0, True)]"
run "$PP_CLI" analyze "$tmp/alone/trace.pptrace" --lookup "$tmp/whole/lookup_table.json"
expect "a table of several sizes needs --lookup-size" 2 "at more than one size" "--lookup-size NODES,EDGES"
run "$PP_CLI" analyze "$tmp/alone/trace.pptrace" --lookup "$tmp/whole/lookup_table.json" --lookup-size 32
expect "a bad --lookup-size exits 2" 2 "expected NODES,EDGES"
run "$PP_CLI" plan "$tmp/whole/lookup_table.json" "$tmp/whole/config.json" --top 0
expect "plan refuses --top 0" 2 'plan: --top "0": expected a whole number from 1 to 1000'
run "$PP_CLI" plan "$tmp/whole/lookup_table.json" "$tmp/whole/config.json" --copy-mbps fast
expect "plan refuses a --copy-mbps that is no number" 2 'plan: --copy-mbps "fast": expected a whole number'

# A stage that is 50x faster on FAST: the plan puts both stages there, and
# --verify runs it.
cat >"$tmp/plan_sweep.json" <<'EOF'
{"name": "plan", "features": 64, "warmup": 1, "iterations": 3, "min_time_ms": 0,
 "sim_devices": [{"name": "FAST", "launch_ns": 20000, "gflops": 50},
                 {"name": "SLOW", "launch_ns": 20000, "gflops": 1}],
 "sizes": [{"nodes": 256, "edges": 1024}, {"nodes": 512, "edges": 2048}],
 "devices": ["sim:FAST", "sim:SLOW"],
 "stages": [{"name": "big", "model": "matmul", "out_dim": 64, "layers": 2},
            {"name": "small", "model": "matmul", "in_dim": 64, "out_dim": 8}]}
EOF
cat >"$tmp/pipeline.json" <<'EOF'
{"name": "two", "nodes": 512, "edges": 2048, "features": 64, "batches": 10, "warmup": 1,
 "sim_devices": [{"name": "FAST", "launch_ns": 20000, "gflops": 50},
                 {"name": "SLOW", "launch_ns": 20000, "gflops": 1}],
 "stages": [{"name": "big", "device": "sim:SLOW", "model": "matmul", "out_dim": 64, "layers": 2},
            {"name": "small", "device": "sim:SLOW", "model": "matmul", "out_dim": 8}]}
EOF
run "$PP_CLI" sweep "$tmp/plan_sweep.json" --out "$tmp/plan"
expect "the planning sweep completes" 0 "8 of 8 combinations"
run "$PP_CLI" plan "$tmp/plan/lookup_table.json" "$tmp/pipeline.json" --top 2 --verify
expect "plan ranks and verifies" 0 "#1  cycle" "#2  cycle" "verify #1 (" \
    "predicted     measured    error" "mean cycle"
# --verify runs the pipeline's 10 batches, or more: 250 ms of predicted cycles
batches=$(sed -n 's/^verify #1 (\([0-9]*\) measured batches):$/\1/p' <<<"$out")
cycle=$(awk '$1 == "mean" && $2 == "cycle" {print $3}' <<<"$out")
# (the cycle printed is rounded to the us: +-0.0005 ms)
check "verify measures at least 250 ms of predicted cycles ($batches x $cycle ms)" \
    awk -v n="$batches" -v c="$cycle" 'BEGIN {exit !(n >= 10 && n * (c + 0.0005) >= 250 && (n == 10 || (n - 1) * (c - 0.0005) < 250))}'
best=$(printf '%s\n' "$out" | sed -n '/^#1 /,/^#2 /p')
check "the best plan runs big on FAST" grep -Eq "^ +big +[0-9.]+ ms  sim:FAST \(simulated\)$" <<<"$best"
check "the best plan runs small on FAST" grep -Eq "^ +small +[0-9.]+ ms  sim:FAST \(simulated\)$" <<<"$best"
sed 's/"out_dim": 8}/"out_dim": 16}/' "$tmp/pipeline.json" >"$tmp/pipeline16.json"
run "$PP_CLI" plan "$tmp/plan/lookup_table.json" "$tmp/pipeline16.json"
expect "plan refuses a stage the table measured with other dims" 2 \
    "stage \"small\": the table measured matmul 64->8 x1, the pipeline runs matmul 64->16 x1"
run "$PP_CLI" plan "$tmp/plan/bandwidth_table.json" "$tmp/pipeline.json"
expect "plan refuses a file that is not a lookup table" 2 "not a lookup table"
# each stage: FAST, SLOW, or both at 9 splits = 11 ways; 11 x 11 plans
run "$PP_CLI" plan "$tmp/plan/lookup_table.json" "$tmp/pipeline.json" --top 5
expect "the search says it is exact and what it cut" 0 "exact search over 121 plans: " \
    "evaluated in full, the rest ruled out by a bound"
check "simulated devices share the bus: a plan using both says it is not calibrated" \
    grep -q "\[stages sharing hardware, estimated as independent: sweep --co-run\]" <<<"$out"

# --co-run: both sizes x the one sharing pair (sim:FAST, sim:SLOW) x 2 x 2
# stage pairs, measured together, into co_run.jsonl and the lookup table
run "$PP_CLI" sweep "$tmp/plan_sweep.json" --out "$tmp/plan_co" --co-run
expect "a sweep with --co-run measures the pairs sharing hardware" 0 \
    "co-run: 8 pairs of stages on devices sharing hardware measured together"
check "co_run.jsonl holds them" test "$(json_get "$tmp/plan_co/lookup_table.json" \
    'sorted(k for k in d["co_run"])[:2] + [len(d["co_run"]), d["shared"]]')" = \
    "['256,1024,sim:FAST,big+sim:SLOW,big', '256,1024,sim:FAST,big+sim:SLOW,small', 8, [{'hardware': 'bus', 'devices': ['sim:FAST', 'sim:SLOW']}]]"
check "each pair ran together the config's iterations, timed alone and together" test \
    "$(json_get "$tmp/plan_co/lookup_table.json" 'sorted({(v["a"]["runs"], v["b"]["runs"], v["a"]["alone_ns"] > 0, abs(v["a"]["slowdown"] - v["a"]["together_ns"] / v["a"]["alone_ns"]) < 1e-9) for v in d["co_run"].values()})')" = \
    "[(3, 3, True, True)]"
run "$PP_CLI" plan "$tmp/plan_co/lookup_table.json" "$tmp/pipeline.json" --top 5
expect "plans over a co-run table" 0 "#1  cycle"
check "a calibrated table leaves no plan estimated as independent" \
    test -z "$(grep "estimated as independent" <<<"$out")"
run "$PP_CLI" sweep "$tmp/plan_sweep.json" --out "$tmp/plan_co" --co-run --resume
expect "a finished co-run resumes with nothing to measure" 0 "co-run: 0 pairs"
# Alone means alone: each side is timed alone while the other waits, then
# both at once. On a bus of 10 MB/s, a 1024 x 64 matmul moves 256 KiB in
# and out (52 ms, long beside a loaded machine's late wake-ups) and computes
# for microseconds: alone it has the bus to itself, together the bus is
# shared and each transfer takes twice as long, so each side's slowdown is
# close to 2 (timed alone at the same time, both would read close to 1).
cat >"$tmp/bus.json" <<'EOF'
{"name": "bus", "features": 64, "warmup": 1, "iterations": 3, "min_time_ms": 0,
 "sim_bus_gbps": 0.01,
 "sim_devices": [{"name": "P", "launch_ns": 1000, "gflops": 50},
                 {"name": "Q", "launch_ns": 1000, "gflops": 50}],
 "sizes": [{"nodes": 1024, "edges": 1024}], "devices": ["sim:P", "sim:Q"],
 "stages": [{"name": "mm", "model": "matmul", "out_dim": 64}]}
EOF
run "$PP_CLI" sweep "$tmp/bus.json" --out "$tmp/bus" --co-run
expect "a bus-bound pair is co-run" 0 "co-run: 1 pairs"
slowdowns=$(json_get "$tmp/bus/lookup_table.json" '[round(v[s]["slowdown"], 2) for v in d["co_run"].values() for s in "ab"]')
check "each side was timed alone with the bus to itself: slowdowns near 2 ($slowdowns)" test \
    "$(json_get "$tmp/bus/lookup_table.json" '[1.4 < v[s]["slowdown"] < 2.6 for v in d["co_run"].values() for s in "ab"]')" = \
    "[True, True]"
# a declared group: cpu and sim:FAST on one memory; sim:SLOW is left alone
# on the simulated bus, so the co-run pairs are (cpu, sim:FAST), 2 sizes x
# 2 x 2 stages, and two stages on cpu, whose threads run at once: 2 sizes x
# 3 unordered pairs of the 2 stages (big+big, big+small, small+small)
sed 's/"devices": \["sim:FAST", "sim:SLOW"\],/"devices": ["sim:FAST", "sim:SLOW", "cpu"], "shared": [{"hardware": "memory", "devices": ["cpu", "sim:FAST"]}],/' \
    "$tmp/plan_sweep.json" >"$tmp/declared.json"
run "$PP_CLI" sweep "$tmp/declared.json" --out "$tmp/declared" --co-run
expect "a declared group is co-run" 0 "co-run: 14 pairs"
check "the table lists the declared group, and no bus group of one device" test \
    "$(json_get "$tmp/declared/lookup_table.json" '[d["shared"], sorted({k.split(",")[2] + "+" + k.split("+")[1].split(",")[0] for k in d["co_run"]})]')" = \
    "[[{'hardware': 'memory', 'devices': ['sim:FAST', 'cpu']}], ['cpu+cpu', 'sim:FAST+cpu']]"
bad_shared() {
    sed "s/\"devices\": \[\"sim:FAST\", \"sim:SLOW\"\],/\"devices\": [\"sim:FAST\", \"sim:SLOW\"], \"shared\": $1,/" \
        "$tmp/plan_sweep.json" >"$tmp/bad_shared.json"
    run "$PP_CLI" sweep "$tmp/bad_shared.json" --out "$tmp/bad_shared"
}
bad_shared '[{"hardware": "disk", "devices": ["sim:FAST", "sim:SLOW"]}]'
expect "an unknown shared hardware is refused" 2 "bad_shared.json: shared[0].hardware: expected \"cores\", \"bus\" or \"memory\""
bad_shared '[{"hardware": "memory", "devices": ["sim:FAST", "cpu"]}]'
expect "a shared device that is not swept is refused" 2 "bad_shared.json: shared[0].devices[1]: not one of the config's devices"
bad_shared '[{"hardware": "memory", "devices": ["sim:FAST", "sim:SLOW"]}, {"hardware": "bus", "devices": ["sim:SLOW", "sim:FAST"]}]'
expect "a device in two groups is refused" 2 "shared[1].devices[0]: \"sim:SLOW\" is already in shared[0]"
bad_shared '[{"hardware": "memory", "devices": ["sim:FAST"]}]'
expect "a group of one is refused" 2 "shared[0].devices: expected two or more of the swept devices"

printf '{"format": "pipeprof-lookup", "entries": {"1,1,cpu,a": {"status": "failed", "device": "cpu", "stage": "a", "model": "matmul", "nodes": 1, "edges": 1, "in_dim": 1, "out_dim": 1, "bytes": 8, "layers": 1}}, "shared": [["cpu"]]}' >"$tmp/badshared.json"
run "$PP_CLI" plan "$tmp/badshared.json" "$tmp/pipeline.json"
expect "a lookup table with a malformed shared group is refused naming it" 2 \
    "badshared.json: shared[0]: expected {\"hardware\": \"cores\" or \"bus\", \"devices\": [...]}"
run "$PP_CLI" plan --help
expect "plan --help has an example" 0 "pipeprof plan calib/lookup_table.json"
finish
