#!/usr/bin/env bash
# pipeprof merge, and analyze / export of several traces: a two-process
# pipeline recorded with a name pattern is merged into one trace whose
# cycles span both processes; traces on different clocks are aligned by
# their sync marks (a known offset comes back) or by --offset; traces with
# no common clock and no sync mark are refused; bad arguments say what is
# wrong. Expected figures follow from the traces the test writes.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

# ---- two traces on different clocks ------------------------------------------
# a.json: a producer on host alpha; sync marks at 1000, 2000, 3000 us; batch
# b prepared at 1100 + 1000b .. +200 us. b.json: a consumer on host beta
# whose clock reads 500.250 us less: its sync marks at 499.750, ...; batch b
# inferred at 849.750 + 1000b .. +300 us on its clock, i.e. 1350 + 1000b on
# a's. So the offset is +500.250 us exactly (three pairs agree: error 0),
# and batch b ends-to-end 1100 .. 1650 = 550 us, its cycle the longer stage,
# 300 us.
other() { # HOST BOOT NAME
    printf '"otherData":{"pipeprof_version":"0.1.0","level":1,"process_name":"%s","clock":"CLOCK_MONOTONIC","host":"%s","boot_id":"%s"}' "$3" "$1" "$2"
}
{
    printf '{%s,"traceEvents":[\n' "$(other alpha boot-a producer)"
    for k in 1 2 3; do printf '{"ph":"i","s":"t","name":"sync","pid":1,"tid":1,"ts":%d000.000},\n' "$k"; done
    printf '{"ph":"X","name":"prepare","cat":"stage","pid":1,"tid":1,"ts":1100.000,"dur":200.000,"args":{"stage":"Prepare","batch_id":0,"role":"stage"}},\n'
    printf '{"ph":"X","name":"prepare","cat":"stage","pid":1,"tid":1,"ts":2100.000,"dur":200.000,"args":{"stage":"Prepare","batch_id":1,"role":"stage"}}]}\n'
} >a.json
{
    printf '{%s,"traceEvents":[\n' "$(other beta boot-b consumer)"
    for t in 499.750 1499.750 2499.750; do printf '{"ph":"i","s":"t","name":"sync","pid":1,"tid":1,"ts":%s},\n' "$t"; done
    printf '{"ph":"X","name":"infer","cat":"exec","pid":1,"tid":1,"ts":849.750,"dur":300.000,"args":{"stage":"Infer","batch_id":0,"role":"exec"}},\n'
    printf '{"ph":"X","name":"infer","cat":"exec","pid":1,"tid":1,"ts":1849.750,"dur":300.000,"args":{"stage":"Infer","batch_id":1,"role":"exec"}}]}\n'
} >b.json
sed -e 's/"clock":"CLOCK_MONOTONIC","host":"beta","boot_id":"boot-b"/"clock":"CLOCK_MONOTONIC","host":"gamma","boot_id":"boot-c"/' \
    -e 's/"name":"sync"/"name":"tick"/' b.json >nosync.json
sed -e 's/"name":"sync"/"name":"tick"/' a.json >atick.json

run "$P" merge a.json b.json -o ab.json
expect "merge aligns by the sync marks" 0 "merged a.json + b.json -> ab.json" \
    "b.json: 3 sync mark pairs with a.json, offset +500.250 us, error <= 0.000 us"
check "the consumer's first exec lands at 1350 us on the producer's clock" test \
    "$(json_get ab.json '[e["ts"] for e in d["traceEvents"] if e.get("name") == "infer"][0]')" = 1350.0
check "the merged trace states its alignment" test \
    "$(json_get ab.json 'd["otherData"]["alignment_error_ns"]')" = 0
check "each process keeps its own group (pid 1 of both renumbered apart)" test \
    "$(json_get ab.json 'len({e["args"]["pipeprof_track"]["pid"] for e in d["traceEvents"] if e.get("name") == "thread_name"})')" = 2

run "$P" analyze a.json b.json --json
expect "analyze merges several traces" 0 '"clock_alignment"'
echo "$out" >ab-report.json
check "the report says how the clocks were aligned" test \
    "$(json_get ab-report.json '"offset +500.250 us" in d["clock_alignment"]["how"] and d["clock_alignment"]["error_ns"] == 0')" = True
check "the stages of both processes" test \
    "$(json_get ab-report.json '[s["name"] for s in d["stages"]]')" = "['Prepare', 'Infer']"
check "each batch ends-to-end spans both processes (550 us), its cycle 300 us" test \
    "$(json_get ab-report.json '[(b["e2e_ns"], b["cycle_ns"], b["complete"]) for b in d["batches"]]')" = \
    "[(550000, 300000, True), (550000, 300000, True)]"
run "$P" analyze a.json b.json
expect "the text report states the alignment and its bound" 0 "merged, clock alignment:" \
    "error bound 0 ns"
run "$P" report a.json b.json -o ab-dir --no-xlsx
expect "report merges several traces" 0 "report ab-dir: summary, html, pftrace, csv"
check "its summary states the alignment" grep -q "merged, clock alignment:" ab-dir/summary.txt
check "and its error bound" grep -q "error bound 0 ns" ab-dir/summary.txt
check "its summary names both inputs" grep -q "a.json + b.json" ab-dir/summary.txt
run "$P" report a.json nosync.json -o never-dir
expect "report refuses traces with no common clock" 2 "no common clock"
check "and writes no directory" test ! -e never-dir

run "$P" merge a.json b.json --offset b.json=+500.25us -o offset.pptrace
expect "an --offset is taken as given" 0 "b.json: offset +500.250 us given by the user (error not known)"
run "$P" export a.json b.json --offset "$tmp/b.json=+0.5ms" --to html -o ab.html
expect "export merges several traces (--offset by path)" 0 "a.json + b.json -> ab.html (html)"
run "$P" export a.json b.json --to json -o ab-window.json --from 1300000 --to 1400000
expect "export of merged traces to a trace format keeps a window" 0 \
    "a.json + b.json -> ab-window.json (json)"
check "only the events that overlap it (1300 .. 1400 us)" test "$(json_get ab-window.json \
    'all(e["ts"] < 1400 and e["ts"] + e.get("dur", 0) >= 1300 for e in d["traceEvents"] if e["ph"] != "M") and len([e for e in d["traceEvents"] if e["ph"] != "M"]) > 0')" = True
check "the HTML report carries the alignment" grep -q "offset +500.000 us given by the user" ab.html

run "$P" merge a.json nosync.json -o never.json
expect "no common clock and no sync mark: refused" 2 \
    "merge: a.json and nosync.json have no common clock: they were recorded on different hosts (alpha and gamma), no offset was given for nosync.json, and no sync mark \"sync\" is in both"
check "nothing is written when refused" test ! -e never.json
run "$P" merge atick.json nosync.json --sync tick -o tick.json
expect "--sync names another mark" 0 "nosync.json: 3 sync mark pairs with atick.json, offset +500.250 us"
run "$P" analyze a.json nosync.json
expect "analyze refuses the same way" 2 "analyze: a.json and nosync.json have no common clock"

# ---- bad arguments --------------------------------------------------------------

run "$P" merge a.json -o x.json
expect "merge of one trace" 2 "merge: expected two or more TRACEs and -o OUT"
run "$P" merge a.json b.json
expect "merge without -o" 2 "merge: expected two or more TRACEs and -o OUT"
run "$P" merge a.json b.json -o x.txt
expect "merge to an unknown format" 2 "merge: -o x.txt: the merged trace is written as .pptrace, .json or .pftrace"
run "$P" merge a.json b.json -o b.json
expect "merge over an input" 2 "merge: -o b.json is the TRACE b.json: writing it would destroy an input"
run "$P" merge a.json b.json --offset b.json -o x.json
expect "--offset without a time" 2 'merge: --offset "b.json": expected TRACE=TIME'
run "$P" merge a.json b.json --offset b.json=12 -o x.json
expect "--offset without a unit" 2 'merge: --offset time "12": expected a signed number and a unit (ns, us, ms or s)'
run "$P" merge a.json b.json --offset b.json=1.5ns -o x.json
expect "--offset finer than a nanosecond" 2 'merge: --offset time "1.5ns" is finer than a nanosecond'
run "$P" merge a.json b.json --offset c.json=+1us -o x.json
expect "--offset of no input" 2 "merge: --offset c.json: names no TRACE argument"
run "$P" merge a.json b.json --offset a.json=+1us -o x.json
expect "--offset of the reference" 2 "merge: --offset a.json: the first TRACE is the reference clock"
run "$P" merge a.json b.json --sync= -o x.json
expect "--sync without a name" 2 "merge: --sync needs a mark name"
run "$P" merge a.json missing.json -o x.json
expect "a missing input" 2 "missing.json: cannot open: No such file or directory"
run "$P" analyze a.json --offset a.json=+1us
expect "--offset with one trace" 2 "analyze: --offset and --sync align several traces; 1 given"
run "$P" export a.json b.json --to json
expect "export of several traces needs -o" 2 "export: several TRACEs are merged into one output: name it with -o"
check "no output after bad arguments" test ! -e x.json

# ---- a real two-process pipeline ----------------------------------------------

two=$PP_BINARY_DIR/examples/two_process
if [[ ! -x $two ]]; then
    skip_part "the two-process pipeline: $two is not built"
    finish
fi
# 12 batches: the producer prepares each (stage Prepare, its host thread),
# the consumer infers it (stage Infer, device CPU) in another process.
run "$P" record -o 'two-%p.pptrace' -- "$two" 12
expect "record of the two-process example writes one trace per process" 0 "wrote $tmp/two-"
traces=(two-*.pptrace)
check "two traces" test "${#traces[@]}" = 2
run "$P" merge "${traces[@]}" -o pipeline.pptrace
expect "the processes share this host's clock" 0 "same clock as ${traces[0]} (CLOCK_MONOTONIC"
run "$P" analyze pipeline.pptrace --json
expect "the merged trace analyzes" 0 '"clock_alignment"'
echo "$out" >pipeline.json
check "its stages come from both processes" test \
    "$(json_get pipeline.json 'sorted(s["name"] for s in d["stages"])')" = "['Infer', 'Prepare']"
check "12 batches, each with both stages" test \
    "$(json_get pipeline.json '(d["cycles"]["batches"], d["cycles"]["complete"])')" = "(12, 12)"
# end-to-end of a batch: from the producer's Prepare start to the consumer's
# Infer end, computed here from the merged trace's own events
"$P" convert pipeline.pptrace pipeline-trace.json >/dev/null 2>&1
check "each batch's end-to-end latency runs from Prepare in one process to Infer in the other" \
    "$PY" - pipeline-trace.json pipeline.json <<'PYEOF'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
report = json.load(open(sys.argv[2]))
span = {}
pids = {}
for e in events:
    a = e.get("args", {})
    if e.get("ph") == "X" and "batch_id" in a:
        start, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
        lo, hi = span.get(a["batch_id"], (start, end))
        span[a["batch_id"]] = (min(lo, start), max(hi, end))
        pids.setdefault(a["stage"], set()).add(e["pid"])
assert pids["Prepare"].isdisjoint(pids["Infer"]), pids
got = {b["batch"]: b["e2e_ns"] for b in report["batches"]}
want = {b: hi - lo for b, (lo, hi) in span.items()}
assert got == want, (got, want)
PYEOF

finish
