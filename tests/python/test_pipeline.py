"""pipeprof.Pipeline: batches streaming through stages on threads of their
own, recorded as `pipeprof run` records its pipelines; stages over built-in
devices (simulated ones labeled so), OpenVINO, and plain callables."""
import gc
import json
import os
import time

import numpy as np
import pytest

import pipeprof
from pipeprof import workloads

NODES = 256
ASAN = os.environ.get("PP_SANITIZE") == "address"


def events(prof):
    return prof.trace().to_dataframe("events")


def stage_spans(ev):
    """(stage, batch) -> (start, end) of the stage spans."""
    spans = ev[ev["role"] == "stage"]
    return {(r.stage, r.batch): (r.ts_ns, r.ts_ns + r.dur_ns) for r in spans.itertuples()}


def host_prep(x):
    """Host work of a few milliseconds: long enough that, streamed, the next
    batch's first stage runs while this one is still downstream."""
    time.sleep(0.004)
    return x * 0.5


def overlapping_cycles(spans, first, last, batches):
    """Batches b whose successor entered the first stage before b left the last one."""
    return sum(spans[(first, b + 1)][0] < spans[(last, b)][1] for b in range(batches - 1))


def openvino_stage():
    if ASAN:
        pytest.skip("OpenVINO cannot run under AddressSanitizer (see test_openvino.py)")
    pytest.importorskip("openvino", reason="openvino is not installed (run scripts/setup)")
    from pipeprof.openvino import StageExecutor
    return ("Classifier", StageExecutor(workloads.matmul(NODES, 32, 8).to_openvino(), "CPU"))


@pytest.mark.parametrize("third", ["sim", "openvino"])
def test_stages_of_different_batches_overlap(third):
    # host callable -> simulated NPU -> simulated GPU or OpenVINO's CPU: while
    # batch b is in a later stage, batch b + 1 is already in the first one.
    last = openvino_stage() if third == "openvino" else \
        pipeprof.Stage("Classifier", "sim:GPU", workloads.matmul(NODES, 32, 8))
    batches = 12
    with pipeprof.Profiler() as prof:
        pipe = pipeprof.Pipeline([host_prep,
                                  pipeprof.Stage("Embed", "sim:NPU",
                                                 workloads.matmul(NODES, 16, 32, layers=2)),
                                  last])
        rng = np.random.default_rng(0)
        out = pipe.run(rng.random((batches, NODES, 16), dtype=np.float32))
    assert len(out) == batches and out[0].shape == (NODES, 8)
    spans = stage_spans(events(prof))
    assert {s for s, _ in spans} == {"host_prep", "Embed", "Classifier"}
    assert overlapping_cycles(spans, "host_prep", "Classifier", batches) > (batches - 1) // 2
    report = prof.trace().summary()
    assert report["cycles"]["batches"] == batches and report["cycles"]["complete"] == batches


def test_host_stage_is_a_stage_instance_on_its_own_row():
    # A plain callable records one stage span per batch (role stage, its
    # name, the batch) on the row of the thread that runs it, named after it.
    with pipeprof.Profiler() as prof:
        pipeprof.Pipeline([host_prep, ("double", lambda x: x * 2)]).run([np.ones(3)] * 4)
    ev = events(prof)
    tracks = prof.trace().to_dataframe("track_info").set_index("track")
    for stage in ("host_prep", "double"):
        spans = ev[(ev["role"] == "stage") & (ev["stage"] == stage)]
        assert list(spans["batch"]) == [0, 1, 2, 3]
        assert set(tracks.loc[spans["track"], "name"]) == {stage}


def test_host_stage_is_analyzed_as_host_work():
    # A callable stage's spans have no exec of their (stage, batch): the
    # analyzer takes each as host work, an exec of "CPU (host)" on the row
    # of the thread that ran it, so the stage has execs, busy time and a
    # place in every cycle like a device stage.
    with pipeprof.Profiler() as prof:
        pipeprof.Pipeline([host_prep, pipeprof.Stage("Embed", "sim:NPU",
                                                     workloads.matmul(NODES, 16, 16))]).run(
            np.zeros((4, NODES, 16), np.float32))
    report = prof.trace().summary()
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["host_prep"]["kind"] == "host" and stages["host_prep"]["execs"] == 4
    host = [d for d in report["devices"] if d["name"] == "CPU (host)"]
    assert len(host) == 1 and host[0]["execs"] == 4 and not host[0]["simulated"]
    assert [t["name"] for t in report["tracks"] if t["device"] == "CPU (host)"] == \
        ["CPU (host)/host_prep"]
    assert report["cycles"]["complete"] == 4


def test_each_batch_flows_through_every_stage_and_warm_up_is_a_region():
    with pipeprof.Profiler() as prof:
        pipe = pipeprof.Pipeline([host_prep, ("b", lambda x: x), ("c", lambda x: x)])
        out = pipe.run(iter([np.full(2, 2.0 * b) for b in range(5)]), warmup=2)
    assert [o[0] for o in out] == [0, 1, 2, 3, 4]
    assert pipe.last_run["batches"] == 3
    ev = events(prof)
    flows = ev[ev["kind"] == "flow"]
    assert sorted(flows["id"].unique()) == [1, 2, 3, 4, 5]   # batch + 1
    assert set(flows.groupby("id").size()) == {3}            # one step per stage
    (region,) = ev[ev["kind"] == "region"].itertuples()
    assert region.name == "warm up"
    spans = stage_spans(ev)
    assert region.ts_ns <= spans[("host_prep", 0)][0]
    assert spans[("c", 1)][1] <= region.ts_ns + region.dur_ns <= spans[("host_prep", 2)][0]


def test_python_pipeline_records_what_pipeprof_run_records(tmp_path, cli):
    # The demo pipeline, built in Python and described as a file for `pipeprof
    # run`: the same stages, rows and roles (names, not timings). Devices of
    # earlier tests must be closed, so that row numbers start at 0 here too.
    gc.collect()
    spec = {"name": "demo", "nodes": NODES, "edges": 4 * NODES, "features": 16, "batches": 4,
            "warmup": 1, "queue_depth": 2, "seed": 1,
            "stages": [
                {"name": "GraphPrep", "device": "cpu", "model": "sage", "out_dim": 16},
                {"name": "Embedding", "devices": ["cpu", "sim:NPU"], "model": "matmul",
                 "out_dim": 16, "layers": 2},
                {"name": "Classifier", "device": "sim:GPU", "requests": 2, "model": "matmul",
                 "out_dim": 8}]}
    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps(spec))
    code, _, err = cli("run", path, "--out", tmp_path / "run")
    assert code == 0, err
    c_trace = pipeprof.load(tmp_path / "run" / "trace.pptrace")

    with pipeprof.Profiler() as prof:
        pipe = pipeprof.Pipeline([
            pipeprof.Stage("GraphPrep", "cpu", workloads.sage(NODES, 4 * NODES, 16, 16, seed=1)),
            pipeprof.Stage("Embedding", ["cpu", "sim:NPU"],
                           workloads.matmul(NODES, 16, 16, layers=2, seed=2)),
            pipeprof.Stage("Classifier", "sim:GPU", workloads.matmul(NODES, 16, 8, seed=3),
                           requests=2)])
        pipe.run([workloads.matmul(NODES, 16, 16).input(b) for b in range(5)], warmup=1)
    py_trace = prof.trace()

    def shape(trace):
        ev = trace.to_dataframe("events")
        tracks = trace.to_dataframe("track_info").set_index("track")
        spans = ev[ev["kind"] == "span"]
        rows = {(t.kind, t.device, t.name, t.simulated) for t in tracks.itertuples()
                if t.kind in ("device", "thread")}
        roles = {(s.stage, s.role, tracks.loc[s.track, "kind"]) for s in spans.itertuples()}
        stages = [s["name"] for s in trace.summary(exclude_region="warm up")["stages"]]
        kinds = set(ev["kind"])
        return rows, roles, stages, kinds
    assert shape(py_trace) == shape(c_trace)


def test_simulated_devices_are_labeled_everywhere():
    npu = pipeprof.device("sim:NPU")
    assert npu.simulated and npu.label == "NPU (simulated)"
    assert not pipeprof.device("cpu").simulated
    with pipeprof.Profiler() as prof:
        stage = pipeprof.Stage("Embed", [npu], workloads.matmul(NODES, 16, 16))
        stage.run(np.zeros((NODES, 16), np.float32), batch=0)
    assert stage.labels == ["NPU (simulated)"]
    report = prof.trace().summary()
    (dev,) = report["devices"]
    assert dev["name"] == "NPU" and dev["simulated"] is True
    assert all(t["name"].startswith("NPU (simulated)/") for t in report["tracks"])


def test_bad_stages_and_devices_are_refused_with_the_reason():
    with pytest.raises(pipeprof.PipeprofError, match='unknown backend "gpu"'):
        pipeprof.device("gpu:0")
    with pytest.raises(pipeprof.PipeprofError, match="neither a stage"):
        pipeprof.Pipeline([("x", 42)])
    with pytest.raises(pipeprof.PipeprofError, match=r"stages\[1\] is named 'f'"):
        pipeprof.Pipeline([("f", abs), ("f", abs)])
    with pytest.raises(pipeprof.PipeprofError, match="queue_depth 0"):
        pipeprof.Pipeline([abs], queue_depth=0)
    with pytest.raises(pipeprof.PipeprofError, match="split"):
        pipeprof.Stage("s", ["cpu", "sim:NPU"], workloads.matmul(NODES), split=[1])
    with pytest.raises(pipeprof.PipeprofError, match="nodes"):
        workloads.matmul(nodes=0)
    stage = pipeprof.Stage("Embed", "cpu", workloads.matmul(NODES, 16, 16))
    with pytest.raises(pipeprof.PipeprofError, match=r"input of shape \(3, 16\), expected"):
        stage.run(np.zeros((3, 16)), 0)


def test_a_failing_stage_stops_the_run_and_names_itself():
    def broken(x):
        if x[0] == 3:
            raise ValueError("bad batch")
        return x
    pipe = pipeprof.Pipeline([host_prep, broken, ("after", lambda x: x)], queue_depth=1)
    with pytest.raises(ValueError, match="bad batch") as info:
        pipe.run(np.arange(40.0).reshape(20, 2))   # batch b: [2b, 2b + 1], halved first
    assert "stage 'broken' on batch 3" in "".join(info.value.__notes__)


def dp_parts(report, stage):
    (dp,) = [d for d in report["data_parallel"] if d["stage"] == stage]
    return {p["device"]: p for p in dp["devices"]}


def test_configured_split_is_recorded_and_reported():
    """A data-parallel stage records each request's part of the batch, so the
    report's shares are the configured split (1:3), not an assumed even one."""
    cpu, npu = pipeprof.device("cpu"), pipeprof.device("sim:NPU")
    with pipeprof.Profiler() as prof:
        stage = pipeprof.Stage("Embed", [cpu, npu], workloads.matmul(NODES, 16, 16), split=[1, 3])
        for b in range(3):
            stage.run(np.zeros((NODES, 16), np.float32), batch=b)
    parts = dp_parts(prof.trace().summary(), "Embed")
    assert parts["CPU"]["share"] == pytest.approx(0.25)
    assert parts["NPU"]["share"] == pytest.approx(0.75)
    assert all(p["share_recorded"] for p in parts.values())


def test_builtin_executors_record_the_share_they_are_given():
    """StageExecutors over built-in devices in a DataParallelStage record the
    share of the rows each gets, as OpenVINO executors do."""
    if ASAN:
        pytest.skip("OpenVINO cannot run under AddressSanitizer (see test_openvino.py)")
    pytest.importorskip("openvino", reason="openvino is not installed (run scripts/setup)")
    from pipeprof.openvino import DataParallelStage, StageExecutor
    w = workloads.matmul(NODES, 16, 16)
    with pipeprof.Profiler() as prof:
        stage = DataParallelStage("Embed", [StageExecutor(w, pipeprof.device("cpu")),
                                            StageExecutor(w, pipeprof.device("sim:NPU"))],
                                  split=[3, 1])
        for b in range(3):
            stage.run(np.zeros((NODES, 16), np.float32), batch=b)
    parts = dp_parts(prof.trace().summary(), "Embed")
    assert parts["CPU"]["share"] == pytest.approx(0.75, abs=0.01)
    assert parts["NPU"]["share"] == pytest.approx(0.25, abs=0.01)
    assert all(p["share_recorded"] for p in parts.values())
