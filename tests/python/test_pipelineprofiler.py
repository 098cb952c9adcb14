"""The trace format of the user's earlier PipelineProfiler framework read
natively (docs/format-chrome-json.md "Dialects"): a program written from
that framework's design (tests/python/pipelineprofiler/seed_pipeline.py,
real OpenVINO CPU inference in three stages, one of them data parallel)
writes its trace, and `pipeprof analyze` with no options gives the
framework's three figures equal to the framework's own pandas computation
from the same file, with its devices, stages and batches."""
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("PP_SANITIZE") == "address":
    pytest.skip("OpenVINO's TBB dlopens a library with RTLD_DEEPBIND, which AddressSanitizer "
                "cannot run (google/sanitizers#611); the plain suite runs these tests",
                allow_module_level=True)
pytest.importorskip("openvino", reason="openvino is not installed (run scripts/setup)")
pd = pytest.importorskip("pandas", reason="pandas is not installed (run scripts/setup)")

BATCHES = 8
STAGES = ["Stage1_GraphPrep", "Stage2_Embedding", "Stage3_Classifier"]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("seed") / "pipeline_trace.json"
    prog = os.path.join(os.path.dirname(__file__), "pipelineprofiler", "seed_pipeline.py")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    p = subprocess.run([sys.executable, prog, str(out), str(BATCHES)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


def frame(path):
    """The framework's DataFrame (its analyze_metrics), with the stage as
    the name without its _Batch suffix."""
    rows = []
    for e in json.loads(path.read_text()):
        name = e["name"]
        stage = name.rsplit("_Batch", 1)[0] if "_Batch" in name else None
        rows.append({"Stage": stage, "Device": e["cat"], "Batch": e["args"]["batch_id"],
                     "Start_ms": e["ts"] / 1000, "End_ms": (e["ts"] + e["dur"]) / 1000,
                     "Duration_Wall_ms": e["dur"] / 1000,
                     "Duration_HW_ms": e["args"]["hw_time_ms"]})
    return pd.DataFrame(rows)


def figures(df):
    """HW Utilization % = total HW / total wall; Bubbles = mean gap > 0
    between the end of one task and the start of the next on the same
    device, in start order; Concurrency penalty = wall - HW."""
    d_df = df.sort_values("Start_ms").copy()
    d_df["bubble"] = d_df["Start_ms"] - d_df["End_ms"].shift(1)
    gaps = d_df[d_df["bubble"] > 0]["bubble"]
    wall, hw = df["Duration_Wall_ms"].sum(), df["Duration_HW_ms"].sum()
    return {"tasks": len(df), "util": hw / wall * 100, "bubbles": len(gaps),
            "bubble_ms": gaps.mean() if len(gaps) else None, "penalty_ms": wall - hw}


def expected(df):
    out = {}
    for device in df["Device"].unique():
        d_df = df[df["Device"] == device]
        out[(device, None)] = figures(d_df)
        for stage in d_df["Stage"].dropna().unique():
            out[(device, stage)] = figures(d_df[d_df["Stage"] == stage])
    return out


def check_figures(report, df):
    """The report's rows against the pandas figures: equal up to the float
    rounding of the file's microseconds (a ns or so a task)."""
    want = expected(df)
    got = {(row["device"], row["stage"]): row for row in report["pipelineprofiler"]}
    assert set(got) == set(want)
    for key, w in want.items():
        g = got[key]
        tol_ns = 2 * w["tasks"]
        assert g["tasks"] == w["tasks"], key
        assert g["hw_utilization_pct"] == pytest.approx(w["util"], rel=1e-6), key
        assert abs(g["concurrency_penalty_ns"] - w["penalty_ms"] * 1e6) <= tol_ns, key
        assert g["bubbles"] == w["bubbles"], key
        if w["bubble_ms"] is None:
            assert g["bubble_mean_ns"] is None
        else:
            assert abs(g["bubble_mean_ns"] - w["bubble_ms"] * 1e6) <= 2, key


def test_three_figures_equal_the_frameworks_pandas(trace, analyze_json, cli, tmp_path):
    report = analyze_json(str(trace))  # no options: the dialect is detected
    check_figures(report, frame(trace))
    # the text report names them; pipelineprofiler.csv holds the JSON's rows
    code, out, err = cli("analyze", trace, "--csv", tmp_path / "csv")
    assert code == 0, err
    assert "HW Utilization %" in out and "Bubbles" in out and "Concurrency penalty" in out
    csv = pd.read_csv(tmp_path / "csv" / "pipelineprofiler.csv")
    assert len(csv) == len(report["pipelineprofiler"])
    for (_, row), want in zip(csv.iterrows(), report["pipelineprofiler"]):
        assert row["device"] == want["device"]
        assert (None if pd.isna(row["stage"]) else row["stage"]) == want["stage"]
        assert row["concurrency_penalty_ns"] == want["concurrency_penalty_ns"]
        assert row["hw_utilization_pct"] == pytest.approx(want["hw_utilization_pct"], rel=1e-15)


def test_devices_stages_and_batches(trace, analyze_json):
    events = json.loads(trace.read_text())
    report = analyze_json(str(trace))
    assert [d["name"] for d in report["devices"]] == ["CPU"]
    assert [s["name"] for s in report["stages"]] == STAGES
    kinds = {s["name"]: s["kind"] for s in report["stages"]}
    assert kinds["Stage2_Embedding"] == "dp"
    assert [b["batch"] for b in report["batches"]] == list(range(BATCHES))
    assert all(b["complete"] for b in report["batches"])

    def ns(e):  # the file's float us, to the ns they carry
        return round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
    got = {(t["stage"], t["batch"]): t["time_ns"] for t in report["stage_times"]}
    for b in range(BATCHES):
        of = [e for e in events if e["args"]["batch_id"] == b]
        for stage in ("Stage1_GraphPrep", "Stage3_Classifier"):
            (e,) = [e for e in of if e["name"] == f"{stage}_Batch{b}"]
            s, t = ns(e)
            assert abs(got[(stage, b)] - (t - s)) <= 1
        (part,), (merge,) = ([e for e in of if e["name"] == n] for n in ("Partition", "Merge"))
        workers = [ns(e) for e in of if e["name"] == f"Stage2_Embedding_Batch{b}"]
        assert len(workers) == 2
        want = (ns(part)[1] - ns(part)[0]) + max(t - s for s, t in workers) + \
            (ns(merge)[1] - ns(merge)[0])
        assert abs(got[("Stage2_Embedding", b)] - want) <= 3


def test_devices_named_as_written(tmp_path, analyze_json):
    """A trace in the same format with the document's three devices (built
    here: this machine has no GPU or NPU): each cat is a device of that name,
    and the figures still equal pandas'."""
    ev, t = [], 0.0
    for b in range(4):
        for stage, device, dur, hw in (("Stage1_GraphPrep", "CPU", 120.5, 0.0801),
                                       ("Stage2_Embedding", "GPU", 300.25, 0.2503),
                                       ("Stage3_Classifier", "NPU", 80.125, 0.0704)):
            ev.append({"name": f"{stage}_Batch{b}", "cat": device, "ph": "X", "ts": t,
                       "dur": dur, "pid": 1, "tid": {"CPU": 1, "GPU": 2, "NPU": 3}[device],
                       "args": {"batch_id": b, "hw_time_ms": hw,
                                "sw_overhead_ms": dur / 1000 - hw}})
            t += dur + 10.375
        t += 2000.0
    path = tmp_path / "three_devices.json"
    path.write_text(json.dumps(ev))
    report = analyze_json(str(path))
    assert sorted(d["name"] for d in report["devices"]) == ["CPU", "GPU", "NPU"]
    assert [s["name"] for s in report["stages"]] == STAGES
    check_figures(report, frame(path))
    # read as plain Chrome JSON instead, the same file has no execs
    code, _, err = cli_run(analyze_json, path)
    assert code == 2 and "nothing to analyze" in err


def cli_run(analyze_json, path):
    cli = os.environ["PP_CLI"]
    p = subprocess.run([cli, "analyze", str(path), "--dialect", "chrome"], capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr
