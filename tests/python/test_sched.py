"""Scheduler figures from Python: host stage spans (Profiler.span with a
stage, a Pipeline's callable stages) carry their thread's on-CPU, run-queue
and context-switch figures at level >= 1; two threads that run Python in
turn hold the GIL alternately, so each spends a share of its spans blocked
waiting for it; the parts add up to the wall exactly; level 0 records none
and the report says so."""
import sys
import threading
import time

import pipeprof

SPANS = 6


def python_spin(n):
    """Pure Python work: holds the GIL except when the interpreter hands it over."""
    x = 0
    for i in range(n):
        x += i
    return x


def sched_rows(prof):
    return prof.trace().to_dataframe("sched")


def check_exact_sums(df):
    assert ((df.cpu_ns + df.wait_ns + df.blocked_ns) == df.wall_ns).all()
    assert (df[["cpu_ns", "wait_ns", "blocked_ns"]] >= 0).all().all()


def test_two_threads_holding_the_gil_in_turn_are_blocked_a_share_of_their_spans(tmp_path):
    if hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled():
        import pytest
        pytest.skip("this Python runs without the GIL: nothing to wait for")
    # calibrate a spin of ~20 ms alone, so that each span is several switch intervals
    t0 = time.perf_counter()
    python_spin(200_000)
    n = max(200_000, int(200_000 * 0.02 / max(time.perf_counter() - t0, 1e-6)))
    start = threading.Barrier(2)
    with pipeprof.Profiler(str(tmp_path / "gil.pptrace")) as prof:
        def worker(name):
            start.wait()
            for b in range(SPANS):
                with prof.span(name, stage=name, batch=b):
                    python_spin(n)
        threads = [threading.Thread(target=worker, args=(f"Py{k}",)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    df = sched_rows(prof)
    stages = df[df.span == "stage"]
    assert sorted(stages.stage) == ["Py0", "Py1"]
    assert (stages.spans == SPANS).all()
    check_exact_sums(stages)
    # One GIL, two threads that both want it the whole time: only one runs
    # Python at a time, so together they are on a CPU for about half of
    # their spans' wall; the rest each sleeps on the GIL (blocked) or, once
    # woken, waits for a core (on a busy machine). Off CPU for a quarter is
    # far below the half the construction gives.
    off_cpu = stages.wait_ns.sum() + stages.blocked_ns.sum()
    assert off_cpu >= 0.25 * stages.wall_ns.sum()
    # and at least one of them slept on the GIL: a voluntary switch, time blocked
    assert stages.blocked_ns.sum() > 0
    assert stages.voluntary.sum() >= 1


def test_a_pipeline_host_stage_carries_its_split(tmp_path):
    def prep(x):
        time.sleep(0.005)
        return x

    def work(x):
        python_spin(20_000)
        return x

    with pipeprof.Profiler(str(tmp_path / "p.pptrace")) as prof:
        pipeprof.Pipeline([prep, work]).run(range(4))
    df = sched_rows(prof)
    check_exact_sums(df)
    prep_row = df[(df.stage == "prep") & (df.span == "stage")].iloc[0]
    assert prep_row.spans == 4
    assert prep_row.blocked_ns >= 4 * 4_000_000  # it slept 5 ms a batch
    assert prep_row.method in ("schedstat", "cputime")
    assert set(df.stage) >= {"prep", "work"}


def test_level_0_records_none_and_the_report_says_so(tmp_path):
    with pipeprof.Profiler(str(tmp_path / "l0.pptrace"), level=0) as prof:
        with prof.span("x", stage="S", batch=0):
            time.sleep(0.001)
    tr = prof.trace()
    assert len(tr.to_dataframe("sched")) == 0
    assert tr.summary()["sched"]["method"] is None
    assert "Scheduler split: none" in tr.table()


def test_a_host_stage_beside_openvino_cpu_on_two_cores_waits_for_a_core(tmp_path):
    # The process is pinned to two cores; OpenVINO's CPU plugin runs its
    # inference on a thread per core, while the host stage spins in Python
    # (its batches overlap the next stage's, streaming). Three runnable
    # threads on two cores: the host stage must wait for a core at times.
    import os

    import numpy as np
    import pytest
    if os.environ.get("PP_SANITIZE") == "address":
        pytest.skip("OpenVINO cannot run under AddressSanitizer (see test_openvino.py)")
    pytest.importorskip("openvino", reason="openvino is not installed (run scripts/setup)")
    from pipeprof import workloads
    from pipeprof.openvino import StageExecutor
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("this process may use one CPU: no second core to share")
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, allowed[:2])
    try:
        def host(x):
            python_spin(300_000)
            return x

        ov = StageExecutor(workloads.matmul(2048, 256, 256, layers=8).to_openvino(), "CPU")
        with pipeprof.Profiler(str(tmp_path / "ov.pptrace")) as prof:
            pipeprof.Pipeline([host, ("infer", ov)]).run(
                np.random.default_rng(0).random((8, 2048, 256), dtype=np.float32))
    finally:
        os.sched_setaffinity(0, before)
    df = sched_rows(prof)
    check_exact_sums(df)
    row = df[(df.stage == "host") & (df.span == "stage")].iloc[0]
    assert row.spans == 8
    if row.method != "schedstat":
        pytest.skip("no schedstat on this kernel: no run-queue figure")
    assert row.wait_ns > 0


def test_the_sampler_from_python_records_thread_counters_and_the_cpus(tmp_path):
    import pytest
    with pytest.raises(pipeprof.PipeprofError, match="sched_sample_ms \"0\""):
        pipeprof.Profiler(collect="spans,sched,threads", sched_sample_ms=0)
    with pytest.raises(pipeprof.PipeprofError, match="unknown item \"thread\""):
        pipeprof.Profiler(collect="spans,thread")
    with pipeprof.Profiler(str(tmp_path / "s.pptrace"), collect="spans,sched,threads",
                           sched_sample_ms=2) as prof:
        with prof.span("Busy", stage="Busy", batch=0):
            python_spin(400_000)
    tr = prof.trace()
    process = tr.summary()["sched"]["process"]
    if tr.summary()["sched"]["method"] != "schedstat":
        pytest.skip("no schedstat on this kernel: the sampler records only its marks")
    assert process["period_ns"] == 2_000_000
    import os
    assert process["cpus_allowed"] == len(os.sched_getaffinity(0))
    ev = tr.to_dataframe("events")
    counters = set(ev[ev.kind == "counter"].name)
    assert any(n.startswith("cpu% ") for n in counters)
    assert any(n.startswith("runq% ") for n in counters)
