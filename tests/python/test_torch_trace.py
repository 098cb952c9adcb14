"""A real torch.profiler trace of a CPU pipeline (tests/python/torch/
cpu_pipeline.py): GraphPrep and Classifier on the main thread inside
ProfilerStep#N, Embedding data parallel over two worker threads between a
Partition and a Merge. pipeprof's report is checked against figures this
test computes itself from the trace's own events: stage times, cycles and
their bottlenecks, end-to-end latency, the host threads' busy time.

torch==2.13.0 is installed into a folder of the tests' own (torch_site.py);
where it cannot be, every test here is skipped with pip's reason."""
import json
import re
from decimal import Decimal

import pytest

from torch_site import run_traced

BATCHES = 5
PATTERNS = ["--batch-pattern", "^ProfilerStep#(?<batch>[0-9]+)$",
            "--stage-pattern", "^(?<stage>Stage[0-9]_[A-Za-z]+)(/batch(?<batch>[0-9]+))?$"]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("torch") / "cpu_pipeline.json"
    run_traced("cpu_pipeline.py", out, BATCHES, cwd=out.parent)
    return out


def ns(us):
    return int(Decimal(us) * 1000)


def spans(path):
    """Every complete event of the program (the profiler's own bookkeeping
    left out: its "Trace" span and the "Spans" / "Traces" pseudo-processes)
    as (name, tid, start_ns, end_ns), with decimal timestamps kept exact."""
    events = json.loads(path.read_text(), parse_float=str)["traceEvents"]
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") == "Trace" or e.get("pid") in ("Spans", "Traces"):
            continue
        start = ns(e["ts"])
        out.append((e["name"], e["tid"], start, start + ns(e["dur"])))
    return out


def expected_figures(path):
    """Stage times, cycles and end-to-end latency per batch, from the
    definitions: the main thread's annotations take the batch of the
    ProfilerStep around them; Embedding = partition + slower worker + merge."""
    ev = spans(path)
    steps = {int(n.split("#")[1]): (s, e) for n, _, s, e in ev if n.startswith("ProfilerStep#")}
    main_tid = next(t for n, t, _, _ in ev if n.startswith("ProfilerStep#"))

    def in_step(name, b):
        s0, e0 = steps[b]
        return [(s, e) for n, t, s, e in ev if n == name and t == main_tid and s0 <= s and e <= e0]

    fig = {}
    for b in range(BATCHES):
        (prep,), (part,), (merge,), (cls,) = (in_step(n, b) for n in
                                              ("Stage1_GraphPrep", "Partition", "Merge",
                                               "Stage3_Classifier"))
        workers = [(s, e) for n, _, s, e in ev if n == f"Stage2_Embedding/batch{b}"]
        assert len(workers) == 2
        times = {"Stage1_GraphPrep": prep[1] - prep[0],
                 "Stage2_Embedding": (part[1] - part[0]) + max(e - s for s, e in workers)
                 + (merge[1] - merge[0]),
                 "Stage3_Classifier": cls[1] - cls[0]}
        order = ["Stage1_GraphPrep", "Stage2_Embedding", "Stage3_Classifier"]
        cycle = max(times.values())
        labeled = [steps[b], prep, part, merge, cls, *workers]
        fig[b] = {"times": times, "cycle": cycle,
                  "bottleneck": next(s for s in order if times[s] == cycle),
                  "e2e": max(e for _, e in labeled) - min(s for s, _ in labeled)}
    return ev, main_tid, fig


def union(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def test_stages_cycles_and_latency_match_the_trace(trace, analyze_json):
    _, _, fig = expected_figures(trace)
    report = analyze_json(str(trace), *PATTERNS)
    stages = [s["name"] for s in report["stages"]]
    assert stages == ["Stage1_GraphPrep", "Stage2_Embedding", "Stage3_Classifier"]
    kinds = {s["name"]: s["kind"] for s in report["stages"]}
    assert kinds == {"Stage1_GraphPrep": "host", "Stage2_Embedding": "dp",
                     "Stage3_Classifier": "host"}
    got = {(t["stage"], t["batch"]): t["time_ns"] for t in report["stage_times"]}
    for b, f in fig.items():
        for stage, value in f["times"].items():
            assert got[(stage, b)] == value, (stage, b)
    rows = {row["batch"]: row for row in report["batches"]}
    for b, f in fig.items():
        assert rows[b]["cycle_ns"] == f["cycle"]
        assert rows[b]["bottleneck"] == f["bottleneck"]
        assert rows[b]["e2e_ns"] == f["e2e"]
        assert rows[b]["complete"]
    counts = {s: sum(f["bottleneck"] == s for f in fig.values()) for s in stages}
    assert {s["name"]: s["bottleneck_count"] for s in report["stages"]} == counts


def test_host_threads_have_busy_time(trace, analyze_json):
    ev, main_tid, _ = expected_figures(trace)
    report = analyze_json(str(trace), *PATTERNS)
    w = report["window"]
    assert w["start_ns"] == min(s for _, _, s, _ in ev)
    stage_spans = [(t, s, e) for n, t, s, e in ev
                   if re.match(r"^Stage[0-9]_[A-Za-z]+(/batch[0-9]+)?$", n)]
    # the host's busy time holds the Partition and Merge spans too: splitting
    # and joining the batch is host CPU work (docs/analysis.md, busy(d))
    brackets = [(t, s, e) for n, t, s, e in ev if n in ("Partition", "Merge")]
    (host,) = [d for d in report["devices"] if d["name"] == "CPU (host)"]
    assert host["busy_ns"] == union([(s, e) for _, s, e in stage_spans + brackets])
    assert host["execs"] == len(stage_spans) == 4 * BATCHES
    assert host["hw_quality"] == ["host"]
    main = [t for t in report["tracks"] if t["name"].startswith("CPU (host)/thread %d" % main_tid)]
    assert len(main) == 1
    assert main[0]["busy_ns"] == union([(s, e) for t, s, e in stage_spans + brackets
                                        if t == main_tid])
    (dp,) = report["data_parallel"]
    assert len(dp["devices"]) == 2 and all(d["track"] for d in dp["devices"])
    assert all(d["batches"] == BATCHES for d in dp["devices"])


def test_text_report_names_host_work(trace, cli):
    code, out, err = cli("analyze", trace, *PATTERNS)
    assert code == 0, err
    _, _, fig = expected_figures(trace)
    counts = {}
    for f in fig.values():
        counts[f["bottleneck"]] = counts.get(f["bottleneck"], 0) + 1
    top = max(counts, key=lambda s: (counts[s], -["Stage1_GraphPrep", "Stage2_Embedding",
                                                  "Stage3_Classifier"].index(s)))
    assert 'Bottleneck: stage "%s" limits %d of %d cycles' % (top, counts[top], BATCHES) in out
    assert "CPU (host)" in out and "Cycles (%d batches, %d complete)" % (BATCHES, BATCHES) in out


def test_ops_inside_host_stages_match_the_trace(trace, analyze_json):
    """The cpu_op events nested in each stage instance on its thread,
    per stage and name: count and total time, from the trace's events."""
    events = json.loads(trace.read_text(), parse_float=str)["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X" and e.get("cat") != "Trace"
          and e.get("pid") not in ("Spans", "Traces")]
    stage_of = re.compile(r"^(Stage[0-9]_[A-Za-z]+)(/batch[0-9]+)?$")
    instances = [(e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), stage_of.match(e["name"])[1])
                 for e in xs if stage_of.match(e["name"])]
    want = {}
    for e in xs:
        if e.get("cat") != "cpu_op":
            continue
        s, t = ns(e["ts"]), e["tid"]
        end = s + ns(e["dur"])
        holders = [st for tid, a, b, st in instances if tid == t and a <= s and end <= b]
        if holders:
            count, total = want.get((holders[0], e["name"]), (0, 0))
            want[(holders[0], e["name"])] = (count + 1, total + end - s)
    report = analyze_json(str(trace), *PATTERNS)
    got = {(r["stage"], r["name"]): (r["count"], r["total_ns"]) for r in report["stage_ops"]}
    assert want and all(got[k] == v for k, v in want.items()), (want, got)
    assert all(r["self_ns"] <= r["total_ns"] for r in report["stage_ops"])


def sign_test(k, n):
    """Two-sided exact binomial test at p = 1/2, as docs/analysis.md says."""
    from math import comb
    low = min(k, n - k)
    return min(1.0, 2 * sum(comb(n, i) for i in range(low + 1)) / 2 ** n)


@pytest.fixture(scope="module")
def even_trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("torch") / "even_halves.json"
    run_traced("cpu_pipeline.py", out, EVEN_BATCHES, 6, "even", cwd=out.parent)
    return out


EVEN_BATCHES = 40


def test_identical_halves_get_no_resplit_advice(even_trace, analyze_json):
    """Two workers doing the same work: per batch, which one took longer
    (from the trace's own worker spans), the sign test of those counts,
    and no re-split advice unless that test and the imbalance's interval
    say the difference is real."""
    events = json.loads(even_trace.read_text(), parse_float=str)["traceEvents"]
    workers = {}
    for e in events:
        m = re.match(r"^Stage2_Embedding/batch([0-9]+)$", e.get("name", ""))
        if e.get("ph") == "X" and m:
            workers.setdefault(int(m[1]), []).append((e["tid"], ns(e["dur"])))
    tids = sorted({t for pair in workers.values() for t, _ in pair})
    slowest = {t: 0 for t in tids}
    for pair in workers.values():
        (ta, da), (tb, db) = pair
        if da != db:
            slowest[ta if da > db else tb] += 1
    report = analyze_json(str(even_trace), *PATTERNS)
    (dp,) = report["data_parallel"]
    got = {int(re.search(r"thread ([0-9]+)", d["track"])[1]): d["slowest"] for d in dp["devices"]}
    assert got == slowest
    k, n = max(slowest.values()), sum(slowest.values())
    records = [f for f in report["finding_records"] if f["kind"] == "imbalance"]
    advice = [f for f in records if f["action"]]
    if sign_test(k, n) >= 0.05:
        assert not advice and all(f["significant"] is False for f in records)
    for f in advice:  # a real difference must be a significant one
        assert f["significant"] and f["figure"]["lo"] > 1.05


def test_without_a_pattern_the_error_shows_one(trace, cli):
    code, out, err = cli("analyze", trace)
    assert code == 2
    assert "nothing to analyze; its annotations look like" in err
    assert "--batch-pattern '^" in err
