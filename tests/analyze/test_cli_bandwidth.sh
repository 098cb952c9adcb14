#!/usr/bin/env bash
# Bandwidth end to end: the bytes a pipeline run's executors record are
# what the report sums (recomputed here from the Chrome JSON of the run),
# in JSON and in bandwidth.csv;
# they survive .pptrace -> .json -> .pptrace with the same figures; and a
# PyTorch-profiler trace's memcpy bytes give its GPU's transfer rate
# (bytes / the copy's duration, computed here from the fixture).
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
D=$PP_SOURCE_DIR/tests/analyze/data
cd "$tmp" || exit 1

run "$P" demo --out d --batches 6
expect "demo runs" 0
"$P" analyze d/trace.pptrace --json >r.json 2>/dev/null
# Per device label: the bytes_in / bytes_out of its execs in the trace.
# The demo's window is the whole trace, so every exec is inside it.
sums=$("$PY" - d/trace.json <<'PYEOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"]
         if e.get("ph") == "M" and e.get("name") == "process_name"}
acc = collections.defaultdict(lambda: [0, 0, 0])
for e in d["traceEvents"]:
    a = e.get("args", {})
    if e.get("ph") == "X" and a.get("role") == "exec" and "bytes_in" in a:
        s = acc[names[e["pid"]]]
        s[0] += 1; s[1] += a["bytes_in"]; s[2] += a.get("bytes_out", 0)
print(" ".join(f"{k}={v[0]},{v[1]},{v[2]}" for k, v in sorted(acc.items())))
PYEOF
)
got=$("$PY" - r.json <<'PYEOF'
import json, sys
label = lambda x: x["name"] + (" (simulated)" if x["simulated"] else "")
b = [(label(x), x["bandwidth"]) for x in json.load(open(sys.argv[1]))["devices"]]
print(" ".join(sorted("%s=%d,%d,%d" % (n, v["execs"], v["read_bytes"], v["write_bytes"]) for n, v in b)))
PYEOF
)
check "every device's bytes are the sum of its execs' bytes_in / bytes_out (${sums:-none})" \
    test -n "$sums" -a "$sums" = "$got"
check "each device's rate is its bytes over its busy time" "$PY" -c '
import json, sys
for x in json.load(open(sys.argv[1]))["devices"]:
    b = x["bandwidth"]
    assert b["busy_ns"] == x["busy_ns"], x["name"]
    assert abs(b["total_gbps"] - (b["read_bytes"] + b["write_bytes"]) / x["busy_ns"]) < 1e-9, x["name"]
' r.json

"$P" analyze d/trace.pptrace --csv csv >/dev/null 2>&1
check "bandwidth.csv: a row per device, simulated ones labeled, with the JSON's bytes" "$PY" - \
    csv/bandwidth.csv r.json <<'PYEOF'
import csv, json, sys
rows = {r["name"]: r for r in csv.DictReader(open(sys.argv[1])) if r["scope"] == "device"}
for x in json.load(open(sys.argv[2]))["devices"]:
    r = rows[x["name"] + (" (simulated)" if x["simulated"] else "")]
    assert int(r["read_bytes"]) == x["bandwidth"]["read_bytes"], x["name"]
    assert int(r["write_bytes"]) == x["bandwidth"]["write_bytes"], x["name"]
    assert int(r["busy_ns"]) == x["busy_ns"], x["name"]
assert len(rows) == len(json.load(open(sys.argv[2]))["devices"])
PYEOF

"$P" convert d/trace.pptrace rt.json >/dev/null 2>&1
"$P" convert rt.json rt.pptrace >/dev/null 2>&1
for f in rt.json rt.pptrace; do
    "$P" analyze "$f" --json >"$f.report" 2>/dev/null
    check "bandwidth survives the conversion to $f" test \
        "$(json_get r.json '[x["bandwidth"] for x in d["devices"] + d["tracks"] + d["stages"]]')" = \
        "$(json_get "$f.report" '[x["bandwidth"] for x in d["devices"] + d["tracks"] + d["stages"]]')"
done

# Kineto: the HtoD memcpy carries args.bytes; its time is its duration (us)
"$P" analyze "$D/kineto_pipeline.json" --json >k.json 2>/dev/null
want=$("$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = [e for e in d["traceEvents"] if e.get("cat") == "gpu_memcpy" and "bytes" in e.get("args", {})]
print(sum(e["args"]["bytes"] for e in c), sum(e["args"]["bytes"] for e in c) / sum(e["dur"] * 1000 for e in c))
' "$D/kineto_pipeline.json")
got=$(json_get k.json '" ".join(str(x) for x in [sum(g["bandwidth"]["read_bytes"] for g in d["devices"]), [g["bandwidth"]["xfer_gbps"] for g in d["devices"] if g["bandwidth"]["execs"]][0]])')
check "a Kineto memcpy's bytes are read by its GPU, at bytes / copy time ($want)" \
    test "$want" = "$got"
run "$P" analyze "$D/kineto_pipeline.json"
expect "the text report has the bandwidth table" 0 "Bandwidth (" "GPU 0/stream 7"

finish
