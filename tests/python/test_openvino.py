"""The OpenVINO helpers on the CPU device, with models built in the test
from OpenVINO's Python opset: what they compute, and what they record."""
import os

import numpy as np
import pytest

import pipeprof

if os.environ.get("PP_SANITIZE") == "address":
    pytest.skip("OpenVINO's TBB dlopens a library with RTLD_DEEPBIND, which AddressSanitizer "
                "cannot run (google/sanitizers#611); the plain suite runs these tests",
                allow_module_level=True)
ov = pytest.importorskip("openvino", reason="openvino is not installed (run scripts/setup)")
from openvino import opset13 as ops  # noqa: E402

from pipeprof.openvino import (TRANSFER_TYPES, DataParallelStage, StageExecutor,  # noqa: E402
                               request_profile)


def dense_relu(weights):
    """relu(x @ weights) for any number of rows x."""
    x = ops.parameter(ov.PartialShape([-1, weights.shape[0]]), np.float32, "x")
    y = ops.relu(ops.matmul(x, ops.constant(weights), False, False))
    return ov.Model([ops.result(y)], [x], "dense_relu")


@pytest.fixture(scope="module")
def core():
    return ov.Core()


@pytest.fixture
def weights():
    rng = np.random.default_rng(1)
    return rng.standard_normal((16, 8)).astype(np.float32)


def expected(x, w):
    return np.maximum(x @ w, 0)


def assert_close(got, x, w):
    # The CPU plugin may compute in bf16 (3 significant digits).
    np.testing.assert_allclose(got, expected(x, w), rtol=2e-2, atol=0.1)


def us(delta):
    """A timedelta in whole microseconds, exactly (total_seconds() * 1e6 is
    a float, and int() of 3993.9999 is 3993)."""
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def test_executor_records_one_exec_per_request_with_hw_time(core, weights):
    prof = pipeprof.Profiler(None, level=1).start()
    ex = StageExecutor(dense_relu(weights), "CPU", stage="embed", requests=2, core=core, profiler=prof)
    x = np.random.default_rng(2).standard_normal((32, 16)).astype(np.float32)
    keys = [ex.start({0: x}, batch=b) for b in range(4)]
    window = ex.wait_all()
    outs = [ex.result(k)[0] for k in keys]
    for out in outs:
        assert_close(out, x, weights)
    prof.stop()
    df = prof.trace().to_dataframe()
    execs = df[df["role"] == "exec"]
    assert sorted(execs["batch"]) == [0, 1, 2, 3]
    assert set(execs["name"]) == {"embed"} and set(execs["stage"]) == {"embed"}
    assert set(execs["track_name"]) <= {"CPU/req 0", "CPU/req 1"}
    assert (execs["hw_ns"] > 0).all()
    assert (execs["xfer_ns"] <= execs["hw_ns"]).all()
    assert window[0] == execs["ts_ns"].min()
    assert window[1] == (execs["ts_ns"] + execs["dur_ns"]).max()
    prof.close()


def test_cpu_hardware_times_are_labeled_running_means(core, weights):
    """OpenVINO's CPU plugin reports running means: recorded through Python,
    the device carries the running_mean quality as through the C runtime,
    and the bottleneck finding does not split its wall into compute and
    penalty (the issue saw "5% compute ... 94% penalty")."""
    prof = pipeprof.Profiler(None, level=1).start()
    ex = StageExecutor(dense_relu(weights), "CPU", stage="embed", core=core, profiler=prof)
    for b in range(4):
        ex.run({0: np.ones((8, 16), np.float32)}, batch=b)
    prof.stop()
    report = prof.trace().summary()
    cpu = [d for d in report["devices"] if d["name"] == "CPU"][0]
    assert "running_mean" in cpu["hw_quality"]
    kinds = [f["kind"] for f in report["finding_records"]]
    assert "hw_quality" in kinds
    hw = [f for f in report["finding_records"] if f["kind"] == "hw_quality"][0]
    assert hw["device"] == "CPU"
    prof.close()


def test_hw_and_transfer_follow_the_rule(core, weights):
    compiled = core.compile_model(dense_relu(weights), "CPU", {"PERF_COUNT": "YES"})
    request = compiled.create_infer_request()
    request.infer({0: np.ones((4, 16), np.float32)})
    info = request.profiling_info
    hw, xfer, ops_run = request_profile(info)
    executed = [i for i in info if i.status == ov.ProfilingInfo.Status.EXECUTED]
    assert hw == sum(us(i.real_time) * 1000 for i in executed)
    assert xfer == sum(us(i.real_time) * 1000 for i in executed
                       if i.node_type in TRANSFER_TYPES)
    assert [i.node_name for i in ops_run] == [i.node_name for i in executed]


def test_level_2_records_op_spans_inside_each_exec(core, weights):
    prof = pipeprof.Profiler(None, level=2).start()
    ex = StageExecutor(dense_relu(weights), "CPU", stage="embed", core=core, profiler=prof)
    ex.run({0: np.ones((8, 16), np.float32)}, batch=0)
    prof.stop()
    trace = prof.trace()
    df = trace.to_dataframe()
    exec_row = df[df["role"] == "exec"].iloc[0]
    op_rows = df[df["role"] == "op"]
    assert len(op_rows) > 0
    assert (op_rows["ts_ns"] >= exec_row["ts_ns"]).all()
    assert ((op_rows["ts_ns"] + op_rows["dur_ns"]) <= exec_row["ts_ns"] + exec_row["dur_ns"]).all()
    assert op_rows["hw_ns"].sum() <= exec_row["hw_ns"]
    notes = trace.to_dataframe("annotations")
    types = notes[(notes["event"].isin(op_rows.index)) & (notes["key"] == "type")]
    assert len(types) == len(op_rows)
    op_table = trace.to_dataframe("op_types")
    assert set(op_table["type"]) == set(types["value"])


def test_data_parallel_stage_records_as_the_c_pipeline(core, weights):
    """Two devices: OpenVINO's CPU plugin and its AUTO plugin over the CPU
    (the only hardware here), so the stage is data parallel in the report.
    The executors name neither the profiler (the current one records) nor
    the stage (they take the DataParallelStage's)."""
    prof = pipeprof.Profiler(None, level=1).start()
    cpu = StageExecutor(dense_relu(weights), "CPU", requests=2, core=core)
    auto = StageExecutor(core.compile_model(dense_relu(weights), "AUTO:CPU",
                                            {"PERF_COUNT": "YES"}), "AUTO:CPU", core=core)
    stage = DataParallelStage("embed", [cpu, auto], split=[3, 1])
    rng = np.random.default_rng(3)
    for batch in range(3):
        x = rng.standard_normal((40, 16)).astype(np.float32)
        assert_close(stage.run(x, batch), x, weights)
        t = stage.last_timing
        assert t["total_ns"] == t["partition_ns"] + t["max_device_ns"] + t["merge_ns"]
    prof.stop()
    trace = prof.trace()
    df = trace.to_dataframe()
    host = df[df["role"].isin(["partition", "merge", "stage"])]
    assert set(host["track_name"]) == {host["track_name"].iloc[0]}
    assert not host["track_name"].iloc[0].startswith(("CPU/", "AUTO:CPU/"))
    for role in ("partition", "merge", "stage"):
        assert sorted(df[df["role"] == role]["batch"]) == [0, 1, 2]
    # level 1: the host spans carry their thread's scheduler split, exact sums
    sched = trace.to_dataframe("sched")
    split = sched[sched.stage == "embed"].set_index("span")
    assert set(split.index) == {"stage", "partition", "merge"} and (split.spans == 3).all()
    assert ((split.cpu_ns + split.wait_ns + split.blocked_ns) == split.wall_ns).all()
    execs = df[df["role"] == "exec"]
    assert len(execs) == 9  # per batch: 2 requests on CPU, 1 on AUTO:CPU
    assert set(execs["track_name"]) == {"CPU/req 0", "CPU/req 1", "AUTO:CPU/req 0"}
    assert set(execs["stage"]) == {"embed"}
    report = trace.summary()
    (dp,) = report["data_parallel"]
    assert dp["stage"] == "embed" and dp["batches"] == 3
    shares = {d["device"]: d["share"] for d in dp["devices"]}
    assert shares == {"CPU": 0.75, "AUTO:CPU": 0.25}  # split=[3, 1] of 40 rows
    notes = trace.to_dataframe("annotations")
    stage_spans = df[df["role"] == "stage"]
    totals = notes[notes["event"].isin(stage_spans.index) & (notes["key"] == "total_ns")]
    assert len(totals) == 3


def test_two_executors_on_one_device_are_data_parallel(core, weights):
    """CPU + CPU: both executors on OpenVINO's CPU device, the first with two
    requests. Each exec records which executor ran it ("part"), so the
    report takes the stage as data parallel over the two executors (it
    dropped the partition and merge from the stage's time before), with
    partition + slowest executor + merge as its stage time, an executor's
    wall being the hull of its requests."""
    prof = pipeprof.Profiler(None, level=1).start()
    a = StageExecutor(dense_relu(weights), "CPU", requests=2, core=core)
    b = StageExecutor(dense_relu(weights), "CPU", core=core)
    stage = DataParallelStage("embed", [a, b], profiler=prof)
    rng = np.random.default_rng(4)
    for batch in range(4):
        x = rng.standard_normal((32, 16)).astype(np.float32)
        assert_close(stage.run(x, batch), x, weights)
    prof.stop()
    trace = prof.trace()
    df = trace.to_dataframe()
    notes = trace.to_dataframe("annotations")
    report = trace.summary()
    (dp,) = report["data_parallel"]
    assert dp["stage"] == "embed" and dp["batches"] == 4
    assert sorted(d["track"] for d in dp["devices"]) == ["CPU/req 0", "CPU/req 2"]
    assert sorted(d["share"] for d in dp["devices"]) == [0.5, 0.5]
    execs = df[df["role"] == "exec"].copy()
    part = notes[notes["key"] == "part"].set_index("event")["value"]
    execs["part"] = part.reindex(execs.index).values
    times = {t["batch"]: t["time_ns"] for t in report["stage_times"]}
    for batch in range(4):
        p = df[(df["role"] == "partition") & (df["batch"] == batch)].iloc[0]
        m = df[(df["role"] == "merge") & (df["batch"] == batch)].iloc[0]
        e = execs[execs["batch"] == batch]
        walls = [(g["ts_ns"] + g["dur_ns"]).max() - g["ts_ns"].min() for _, g in e.groupby("part")]
        assert len(walls) == 2
        assert times[batch] == p["dur_ns"] + max(walls) + m["dur_ns"]
    prof.close()


def test_single_executor_stage_has_no_partition_or_merge(core, weights):
    prof = pipeprof.Profiler(None).start()
    stage = DataParallelStage("classify", [StageExecutor(dense_relu(weights), "CPU", core=core)],
                              profiler=prof)
    stage.run(np.ones((5, 16), np.float32), 0)
    prof.stop()
    roles = set(prof.trace().to_dataframe()["role"])
    assert roles == {"exec", "stage"}
    assert stage.last_timing["partition_ns"] == 0
    prof.close()


def test_model_compiled_without_perf_count_is_refused(core, weights):
    prof = pipeprof.Profiler(None).start()
    compiled = core.compile_model(dense_relu(weights), "CPU")
    with pytest.raises(ValueError, match="without PERF_COUNT=YES"):
        StageExecutor(compiled, "CPU", stage="embed", profiler=prof)
    with pytest.raises(ValueError, match="one non-negative share per executor"):
        DataParallelStage("embed", [StageExecutor(compiled, "CPU")], split=[1, 1])
    prof.stop()
    prof.close()


def test_executor_wraps_an_existing_async_infer_queue(core, weights):
    prof = pipeprof.Profiler(None).start()
    compiled = core.compile_model(dense_relu(weights), "CPU", {"PERF_COUNT": "YES"})
    ex = StageExecutor(ov.AsyncInferQueue(compiled, 3), "CPU", stage="q")
    assert ex.requests == 3
    x = np.ones((6, 16), np.float32)
    assert_close(ex.run({0: x}, batch=9)[0], x, weights)
    prof.stop()
    execs = prof.trace().to_dataframe()
    execs = execs[execs["role"] == "exec"]
    assert execs[["stage", "batch"]].values.tolist() == [["q", 9]]
    assert len(prof.trace().to_dataframe("track_info").query("device == 'CPU'")) == 3
    prof.close()


def test_single_executor_is_a_stage_named_after_its_model(core, weights):
    # No DataParallelStage and no stage=: the execs carry the model's name
    # as their stage, so the report has the stage and its execs.
    with pipeprof.Profiler(None) as prof:
        ex = StageExecutor(dense_relu(weights), "CPU", core=core)
        for batch in range(3):
            ex.run({0: np.ones((4, 16), np.float32)}, batch)
    report = prof.trace().summary()
    assert [s["name"] for s in report["stages"]] == ["dense_relu"]
    assert [s["execs"] for s in report["stages"]] == [3]


def test_profiler_as_first_argument_says_it_is_a_keyword_now(core, weights):
    prof = pipeprof.Profiler(None)
    with pytest.raises(TypeError, match="profiler= now"):
        StageExecutor(prof, dense_relu(weights), "CPU")
    with pytest.raises(TypeError, match="profiler= now"):
        DataParallelStage(prof, "embed", [])


def test_simulated_device_stands_where_an_openvino_device_does(core):
    # The document's CPU -> NPU data-parallel stage on a CPU-only machine:
    # OpenVINO's CPU beside a simulated NPU, in one DataParallelStage.
    w = pipeprof.workloads.matmul(nodes=20, in_dim=16, out_dim=8)
    with pipeprof.Profiler(None) as prof:
        npu = StageExecutor(w, pipeprof.device("sim:NPU"))
        stage = DataParallelStage("embed", [StageExecutor(w.to_openvino(), "CPU", core=core), npu])
        for batch in range(3):
            out = stage.run(np.ones((40, 16), np.float32), batch)
            assert out.shape == (40, 8)
    assert isinstance(npu, pipeprof.devices.DeviceExecutor) and npu.name == "embed"
    report = prof.trace().summary()
    (dp,) = report["data_parallel"]
    assert dp["stage"] == "embed" and dp["batches"] == 3
    assert {d["name"]: d["simulated"] for d in report["devices"]} == {"CPU": False, "NPU": True}
    assert {t["name"] for t in report["tracks"]} == {"CPU/req 0", "NPU (simulated)/req 0"}
    with pytest.raises(TypeError, match="runs a pipeprof.workloads model"):
        StageExecutor(w.to_openvino(), pipeprof.device("sim:NPU"))
    with pytest.raises(pipeprof.PipeprofError, match=r"input of shape \(21, 16\), expected 1..20"):
        npu.run(np.ones((21, 16), np.float32))
