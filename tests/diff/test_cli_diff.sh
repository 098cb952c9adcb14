#!/usr/bin/env bash
# `pipeprof diff` and `pipeprof gate` as a user meets them, on runs of the
# simulated pipelines in tests/diff/data (docs/diff.md): a stage made 10%
# slower is found with the right sign and size, a bottleneck that really
# moves is said to move, two runs of one configuration pass a 5% gate, a
# saved baseline stands in for its trace, JUnit XML parses, and every bad
# input is a clear message with exit status 2.
#
# sim_base.json: Prep on ACC (~0.4 ms), Embedding on NPU (launch 500 us +
# 256x64x64 MatMul at 4 GFLOP/s = 524 us), Classifier on GPU (~0.8 ms).
# sim_slow.json: NPU launch 550 us and 4/1.1 GFLOP/s: Embedding's modeled
# time 10% longer. sim_shift.json: NPU launch 100 us at 8 GFLOP/s:
# Embedding ~0.4 ms, so Classifier becomes the bottleneck.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
D=$PP_SOURCE_DIR/tests/diff/data
cd "$tmp" || exit 1
W=(--exclude-region "warm up")

run "$P" diff --help
expect "diff --help: usage, options, example" 0 "usage: pipeprof diff BASE NEW" "--save-baseline FILE" \
    "--map OLD=NEW" "examples:"
run "$P" gate --help
expect "gate --help: usage, rules, example" 0 "usage: pipeprof gate BASE NEW RULE" "KEY>=LIMIT%" \
    "--junit FILE" "example:"

runs() { # runs the named configurations: NAME:CONFIG...
    local r
    for r in "$@"; do
        run "$P" run "$D/sim_${r#*:}.json" --out "${r%%:*}"
        [[ $rc == 0 ]] || { expect "pipeline ${r#*:} runs" 0; finish; }
    done
}

# ab_ok: Embedding's p50 in slow/ against base1/ is significant, about
# +10%, and inside its interval; the unchanged Prep's p50 is not significant.
ab_ok() {
    "$P" diff base1/trace.pptrace slow/trace.pptrace "${W[@]}" --json >ab.json &&
        "$PY" -c 'import json, sys
d = {f["key"]: f for f in json.load(open("ab.json"))["figures"]}
e, p = d["stage:Embedding.p50"], d["stage:Prep.p50"]
print("Embedding p50 %+.4f %s p=%.2g sig=%s; Prep p50 %+.4f sig=%s"
      % (e["rel"], e["ci"], e["p"], e["significant"], p["rel"], p["significant"]))
sys.exit(0 if e["significant"] and 0.05 < e["rel"] < 0.15 and e["ci"][0] <= e["rel"] <= e["ci"][1]
         and not p["significant"] else 1)'
}

# A/B: Embedding 10% slower. Its median is stable even on a loaded machine
# (the mean takes the scheduler's stalls too). A burst of load on the
# machine can slow a whole run, which the comparison rightly calls a
# change: such a pair is recorded again, up to three times.
for attempt in 1 2 3; do
    runs base1:base slow:slow
    ab_ok && break
    echo "note: attempt $attempt: the pair differed beyond the designed change; again"
done
check "Embedding p50 significant, about +10%, in its interval; Prep p50 not significant" ab_ok
run "$P" gate base1/trace.pptrace slow/trace.pptrace "${W[@]}" 'stage:Embedding.p50<=+5%' \
    'stage:Embedding.p50<=+20%' --junit gate.xml
expect "gate fails the 5% rule on Embedding and passes the 20% one" 1 \
    "FAIL         stage:Embedding.p50<=+5%" "pass         stage:Embedding.p50<=+20%" \
    "gate: FAILED (1 of 2 rules failed)"
check "JUnit XML: 2 test cases, 1 failure" "$PY" -c '
import xml.etree.ElementTree as E, sys
s = E.parse("gate.xml").getroot().find("testsuite")
cases = s.findall("testcase")
sys.exit(0 if s.get("tests") == "2" and s.get("failures") == "1" and len(cases) == 2
         and cases[0].find("failure") is not None and cases[1].find("failure") is None else 1)'
run "$P" diff base1/trace.pptrace slow/trace.pptrace "${W[@]}" --json
expect "diff --json of the slower run" 0 '"pipeprof_diff": 1'
echo "$out" >ab.json

# Level 2: the ops' modeled times. Embedding's MatMul (256x64x64, 2.1
# MFLOP) takes 524.3 us at 4 GFLOP/s and 576.7 us at 4/1.1: exactly +10.0%,
# whatever the machine's load; the other devices' ops do not change.
for d in l2base:base l2slow:slow; do
    run "$P" run "$D/sim_${d#*:}.json" --out "${d%%:*}" --level 2
done
run "$P" diff l2base/trace.pptrace l2slow/trace.pptrace "${W[@]}"
expect "level 2: the slower device's MatMul op is a finding of exactly +10.0%" 0 \
    "NPU: matmul_1 per op mean +10.0% (+10.0..+10.0%): 524.3 us -> 576.7 us" \
    "GPU: matmul_1 per op mean      524.3 us   524.3 us  +0.0%"

# Bottleneck shift
runs shift:shift
run "$P" diff base1/trace.pptrace shift/trace.pptrace "${W[@]}" --html shift.html
expect "the bottleneck moves from Embedding to Classifier" 0 "Findings" \
    "bottleneck moved from Embedding (" "to Classifier ("
check "--html: one page with the findings and a distribution per stage" grep -q \
    'bottleneck moved from Embedding.*<svg.*Prep time.*<svg.*Embedding time.*<svg.*Classifier time' \
    <(tr '\n' ' ' <shift.html)

# A/A: the same configuration twice passes a 5% gate on robust figures
# (again up to three times, for the same reason as above).
for attempt in 1 2 3; do
    runs base2:base
    run "$P" gate base1/trace.pptrace base2/trace.pptrace "${W[@]}" 'stage:Embedding.p50<=+5%' \
        'cycle.p50<=+5%' 'e2e.p50<=+5%'
    [[ $rc == 0 ]] && break
    echo "note: attempt $attempt: $out"
done
expect "A/A passes a 5% gate" 0 "gate: passed (0 of 3 rules failed)"

# Baselines: saved, read back in place of the trace, same figures.
run "$P" diff base1/trace.pptrace "${W[@]}" --save-baseline base.json
expect "--save-baseline with one trace" 0 "saved the baseline of base1/trace.pptrace to base.json"
check "the baseline holds per-batch samples" "$PY" -c '
import json, sys
d = json.load(open("base.json"))
c = [s for s in d["samples"] if s["kind"] == "cycle"][0]
sys.exit(0 if d["pipeprof_baseline"] == 1 and len(c["ns"]) == 40 else 1)'
run "$P" diff base.json slow/trace.pptrace --new-exclude-region "warm up" --json
echo "$out" >ab2.json
check "a baseline gives the figures its trace gives" "$PY" -c '
import json, sys
a, b = json.load(open("ab.json")), json.load(open("ab2.json"))
sys.exit(0 if [f["rel"] for f in a["figures"]] == [f["rel"] for f in b["figures"]] else 1)'

# --map: a device renamed in the new run
sed 's/"GPU"/"GPU2"/; s/sim:GPU/sim:GPU2/' "$D/sim_base.json" >renamed.json
run "$P" run renamed.json --out renamed
run "$P" diff base1/trace.pptrace renamed/trace.pptrace "${W[@]}" --map GPU=GPU2 --json
echo "$out" >map.json
check "--map GPU=GPU2 pairs Classifier's execs on both" "$PY" -c '
import json, sys
d = json.load(open("map.json"))
f = [f for f in d["figures"] if f["key"] == "exec:Classifier@GPU.mean"][0]
sys.exit(0 if f["in"] == "both" else 1)'

# Bad input: exit 2 with a message that says what and where.
cat >other.json <<'JSON'
{"name": "other", "nodes": 64, "edges": 64, "features": 8, "batches": 3, "warmup": 0,
 "stages": [{"name": "Tokenize", "device": "sim:NPU", "out_dim": 8}]}
JSON
run "$P" run other.json --out other
run "$P" diff base1/trace.pptrace other/trace.pptrace
expect "no common stage" 2 "have no stage in common (base: Prep, Embedding, Classifier; new: Tokenize)"
run "$P" diff base1/trace.pptrace base2/trace.pptrace --from 1 --to 2
expect "an empty window" 2 "pipeprof: diff: base1/trace.pptrace:"
run "$P" diff base1/trace.pptrace
expect "one input without --save-baseline" 2 "diff: expected BASE and NEW"
run "$P" gate base1/trace.pptrace base2/trace.pptrace 'throughput>=5'
expect "a rule without %" 2 "rule \"throughput>=5\": expected KEY>=LIMIT% or KEY<=LIMIT%"
run "$P" gate base1/trace.pptrace base2/trace.pptrace 'stage:Embeding.p95<=+10%'
expect "an unknown figure lists those of its kind" 2 \
    "no figure \"stage:Embeding.p95\" in both runs (have: stage:Prep.mean"
run "$P" gate base1/trace.pptrace base2/trace.pptrace 'busy:NPU>=-5%'
expect "a window figure cannot be gated" 2 "busy:NPU is one value a run (a window figure)"
echo '{"pipeprof_baseline": 1, "source": "x"}' >bad.json
run "$P" diff bad.json base2/trace.pptrace
expect "a file that is not a baseline" 2 "bad.json: not a pipeprof baseline of version 1"
run "$P" diff missing.pptrace base2/trace.pptrace
expect "a missing trace" 2 "missing.pptrace"
run "$P" diff base1/trace.pptrace base2/trace.pptrace --map NPU
expect "a bad --map" 2 "--map \"NPU\": expected OLD=NEW"
run "$P" diff base1/trace.pptrace base2/trace.pptrace --min-change many
expect "a bad --min-change" 2 '--min-change "many": expected a percentage'
run "$P" diff base1/trace.pptrace --html x.html --save-baseline y.json
expect "--html with one run" 2 "diff: --html needs BASE and NEW"
run "$P" gate base1/trace.pptrace base2/trace.pptrace
expect "gate without a rule" 2 "gate: expected BASE NEW and at least one RULE"
run "$P" diff base1/trace.pptrace base2/trace.pptrace slow/trace.pptrace
expect "a third run" 2 '"slow/trace.pptrace": expected two runs, BASE and NEW; this is a third'
finish
