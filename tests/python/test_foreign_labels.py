"""Foreign traces labeled by --stage-pattern when the batch is in a span's
own args (batch_id or batch), and the hint when a pattern matches nothing.
The traces are built here; every expected figure comes from their
construction."""
import json


def write_trace(path, events):
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def span(name, ts, dur, tid, **args):
    return {"ph": "X", "cat": "user_annotation", "name": name, "pid": 7, "tid": tid,
            "ts": ts, "dur": dur, "args": args}


def two_stage_trace(path, key):
    """Prep (100 us) then Infer (300 us) per batch, on two threads; the batch
    only in each span's args under `key`."""
    ev = []
    for b in range(4):
        t0 = 1000 + 500 * b
        ev.append(span("Prep", t0, 100, 1, **{key: b}))
        ev.append(span("Infer", t0 + 100, 300, 2, **{key: b}))
    return write_trace(path, ev)


def test_batch_from_the_spans_own_args(tmp_path, analyze_json):
    for key in ("batch_id", "batch"):
        trace = two_stage_trace(tmp_path / ("t_%s.json" % key), key)
        report = analyze_json(trace, "--stage-pattern", "^(?<stage>Prep|Infer)$")
        assert [s["name"] for s in report["stages"]] == ["Prep", "Infer"]
        times = {(t["stage"], t["batch"]): t["time_ns"] for t in report["stage_times"]}
        assert times == {**{("Prep", b): 100_000 for b in range(4)},
                         **{("Infer", b): 300_000 for b in range(4)}}
        assert [r["bottleneck"] for r in report["batches"]] == ["Infer"] * 4


def test_a_pattern_that_matches_nothing_gets_the_hint(tmp_path, cli):
    ev = []
    for b in range(3):
        ev.append(span("Stage1_Prep/batch%d" % b, 1000 + 400 * b, 100, 1))
        ev.append(span("Stage2_Infer/batch%d" % b, 1100 + 400 * b, 200, 1))
    trace = write_trace(tmp_path / "t.json", ev)
    code, out, err = cli("analyze", trace, "--stage-pattern", "^(?<stage>Embed.*)$")
    assert code == 2
    assert "--stage-pattern matched no span name" in err
    assert "--batch-pattern '^(?<stage>.+)/batch(?<batch>[0-9]+)$'" in err
    # the hinted pattern works
    code, out, err = cli("analyze", trace, "--batch-pattern",
                         "^(?<stage>.+)/batch(?<batch>[0-9]+)$")
    assert code == 0, err
