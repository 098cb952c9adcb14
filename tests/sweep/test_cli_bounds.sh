#!/usr/bin/env bash
# Config numbers and sweep files that once hung a run or produced a table
# that later commands refuse: every one is refused up front with a message
# naming the file and the key (exit 2), quickly. `timeout` turns a hang
# (a simulated device at 1e-300 GFLOP/s slept forever) into a failure.
source "$(dirname "$0")/../cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

pipeline() { # pipeline FILE EXTRA_KEYS
    cat >"$1" <<EOF
{"name": "b", "nodes": 16, "edges": 32, "features": 8, "batches": 2, "warmup": 0, $2
 "stages": [{"name": "S", "device": "sim:NPU", "out_dim": 4}]}
EOF
}
pipeline slow.json '"sim_devices": [{"name": "NPU", "launch_ns": 1000, "gflops": 1e-300}],'
run timeout 20 "$P" run slow.json --out slow
expect "a device at 1e-300 GFLOP/s is refused" 2 \
    "pipeprof: slow.json: sim_devices[0].gflops: 1e-300 (expected 0.01..1e+07)"
pipeline bus.json '"sim_bus_gbps": 1e-300,'
run timeout 20 "$P" run bus.json --out bus
expect "a bus of 1e-300 GB/s is refused" 2 \
    "pipeprof: bus.json: sim_bus_gbps: 1e-300 (expected 0 for the default, or 0.01..100000)"
pipeline launch.json '"sim_devices": [{"name": "NPU", "launch_ns": 100000000000000, "gflops": 1}],'
run timeout 20 "$P" run launch.json --out launch
expect "a launch of a day is refused" 2 \
    "launch.json: sim_devices[0].launch_ns: 100000000000000 (expected 0..10000000000)"

sweep_config() { # sweep_config FILE SIM_DEVICE
    cat >"$1" <<EOF
{"name": "b", "features": 8, "warmup": 0, "iterations": 1,
 "sim_devices": [$2],
 "sizes": [{"nodes": 16, "edges": 32}, {"nodes": 32, "edges": 64}], "devices": ["sim:A"],
 "stages": [{"name": "mm", "model": "matmul", "out_dim": 4}]}
EOF
}
sweep_config slow_sweep.json '{"name": "A", "launch_ns": 1000, "gflops": 1e-300}'
run timeout 20 "$P" sweep slow_sweep.json --out slow_sweep
expect "a sweep's device at 1e-300 GFLOP/s is refused" 2 "slow_sweep.json: sim_devices[0].gflops: 1e-300"

# A finished two-combination sweep, then the first record of its raw.jsonl
# altered (an invalid last line is taken for one cut off by a kill, and
# measured again): merge checks each record as strictly as sweep writes it.
sweep_config ok.json '{"name": "A", "launch_ns": 1000, "gflops": 10}'
run "$P" sweep ok.json --out ok
expect "the small sweep runs" 0 "2 of 2 combinations recorded"
alter() { # alter NAME PYTHON_STATEMENT_ON_r
    rm -rf "$1" "$1.merged"
    cp -r ok "$1"
    "$PY" - "$1/raw.jsonl" "$2" <<'PYEOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
r = json.loads(lines[0])
exec(sys.argv[2])
lines[0] = json.dumps(r)
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PYEOF
}
alter nobytes 'del r["bytes"]'
run "$P" sweep merge nobytes --out nobytes.merged
expect "a record without bytes is refused" 2 \
    "nobytes/raw.jsonl:1: not a record of this sweep's config: bytes: expected an integer"
check "and nothing is written" test ! -e nobytes.merged/lookup_table.json
alter strmean 'r["wall_ns"]["mean"] = "12"'
run "$P" sweep merge strmean --out strmean.merged
expect "a mean that is a string is refused" 2 \
    "strmean/raw.jsonl:1: not a record of this sweep's config: wall_ns: mean, min, max, p25, p50 and p75 must be whole numbers >= 0"
alter order 'r["wall_ns"]["min"] = r["wall_ns"]["max"] + 1'
run "$P" sweep merge order --out order.merged
expect "min above max is refused" 2 \
    "order/raw.jsonl:1: not a record of this sweep's config: wall_ns: expected min <= p25 <= p50 <= p75 <= max, min <= mean <= max"
alter quartiles 'r["wall_ns"]["p25"] = r["wall_ns"]["p75"] + 1'
run "$P" sweep merge quartiles --out quartiles.merged
expect "a p25 above p75 is refused" 2 \
    "quartiles/raw.jsonl:1: not a record of this sweep's config: wall_ns: expected min <= p25 <= p50 <= p75 <= max, min <= mean <= max"
alter onequartile 'del r["wall_ns"]["p75"]'
run "$P" sweep merge onequartile --out onequartile.merged
expect "a p25 without p75 is refused" 2 \
    "onequartile/raw.jsonl:1: not a record of this sweep's config: wall_ns: expected {\"mean\", \"std\", \"min\", \"max\", \"p25\", \"p50\", \"p75\"}"
alter noquartiles '[r[k].pop(q) for k in ("wall_ns", "hw_ns", "xfer_ns") if r.get(k) for q in ("p25", "p75")]'
run "$P" sweep merge noquartiles --out noquartiles.merged
expect "a record of a sweep from before the quartiles still merges" 0
alter status 'r["status"] = "maybe"'
run "$P" sweep merge status --out status.merged
expect "an unknown status is refused" 2 "status: expected \"ok\" or \"failed\""
alter nodes 'r["nodes"] = 17'
run "$P" sweep merge nodes --out nodes.merged
expect "a size that is not the combination's is refused" 2 "nodes: not this combination's value"
run "$P" sweep merge ok --out ok.merged
expect "the unaltered sweep merges" 0
check "into a lookup table" test -s ok.merged/lookup_table.json

# shards in fingerprint.json is bounded by the directories given before
# anything is allocated from it (200M once touched 1.57 GB).
rm -rf many && cp -r ok many
"$PY" - many/fingerprint.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); d["shards"] = 200000000
json.dump(d, open(sys.argv[1], "w"))
PYEOF
run "$P" sweep merge many --out many.merged
expect "a huge shard count is refused" 2 \
    "shard 2/200000000 is missing (run it with --shard 2/200000000"
finish
