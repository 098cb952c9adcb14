"""bench_python_pipeline — what recording a Python pipeline costs. Prints
BENCH lines (ratio = value / baseline; below 1: pipeprof is cheaper):

  python_record_function_ns      `with pipeprof.record_function(name):` on the
                                 current profiler, per span
    vs torch_record_function     torch.profiler.record_function inside an
                                 active torch.profiler.profile (CPU activity),
                                 when torch can be imported (PP_TORCH_PATH)
    vs python_dataclass_recorder a pure-Python recorder (bench_python.py)
  python_stage_span_ns           `with prof.span(name, stage=, batch=):`
                                 vs the pure-Python recorder
  python_pipeline_batch_ns       pipeprof.Pipeline, recording, per batch of
                                 three cheap callable stages
                                 vs the same stages on plain threads and
                                 queues, recording nothing
  python_pipeline_c_stages_batch_ns
                                 pipeprof.Pipeline over three C stages (cpu,
                                 sim:NPU, sim:GPU), recording, per batch
                                 vs the C runner (`pipeprof run`) on the same
                                 pipeline file, from its own batches/s line

Each span figure is the best of ROUNDS rounds taken in turn with its
baseline; pipeline figures are the best of PIPE_ROUNDS runs. Run from
bench/run; alone:
  PYTHONPATH=python PIPEPROF_LIBRARY=build/libpipeprof.so PP_CLI=build/pipeprof \\
    .venv/bin/python bench/bench_python_pipeline.py
"""
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import pipeprof
from bench_python import PyRecorder

N = 100_000
N_TORCH = 20_000
ROUNDS = 5
BATCHES = 2000
PIPE_ROUNDS = 3


def spans_per_ns(fn, n):
    best = float("inf")
    for _ in range(ROUNDS):
        best = min(best, fn(n) / n)
    return best


def record_function_spans(n):
    with pipeprof.Profiler(None, max_records=2 * n):
        rf = pipeprof.record_function
        t0 = time.perf_counter_ns()
        for _ in range(n):
            with rf("step"):
                pass
        return time.perf_counter_ns() - t0


def stage_spans(n):
    with pipeprof.Profiler(None, max_records=2 * n) as prof:
        span = prof.span
        t0 = time.perf_counter_ns()
        for b in range(n):
            with span("prep", stage="Prep", batch=b):
                pass
        return time.perf_counter_ns() - t0


def python_spans(n):
    record = PyRecorder().record
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with record("step"):
            pass
    return time.perf_counter_ns() - t0


def torch_spans(n):
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU]):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            with record_function("step"):
                pass
        return time.perf_counter_ns() - t0
    del torch


def import_torch():
    """torch from its own target folder (bench/run installs it there),
    never from the project venv's required packages; None and why if not."""
    path = os.environ.get("PP_TORCH_PATH")
    if path:
        sys.path.insert(0, path)
    try:
        import torch
        return torch, None
    except ImportError as e:
        return None, f"torch not importable ({e}); bench/run installs torch==2.13.0 into " \
                     ".cache/torch-2.13.0"


# ---- pipelines ----

def cheap(x):
    return x + 1.0


STAGES = [("a", cheap), ("b", cheap), ("c", cheap)]


def run_pipeline(batches, record):
    data = [np.zeros(16, np.float32)] * batches
    prof = pipeprof.Profiler(None, max_records=20 * batches).start() if record else None
    pipe = pipeprof.Pipeline(STAGES, profiler=prof)
    t0 = time.perf_counter_ns()
    pipe.run(data)
    elapsed = time.perf_counter_ns() - t0
    if prof is not None:
        prof.close()
    return elapsed / batches


def run_plain_threads(batches):
    """The same stages on one thread each, joined by bounded queues, with no
    recording: what a user writes by hand."""
    done = object()
    queues = [queue.Queue(maxsize=2) for _ in STAGES] + [queue.Queue()]

    def worker(k):
        fn = STAGES[k][1]
        while True:
            item = queues[k].get()
            if item is done:
                queues[k + 1].put(done)
                return
            queues[k + 1].put(fn(item))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(STAGES))]
    t0 = time.perf_counter_ns()
    for t in threads:
        t.start()
    for _ in range(batches):
        queues[0].put(np.zeros(16, np.float32))
    queues[0].put(done)
    out = []
    while (item := queues[-1].get()) is not done:
        out.append(item)
    for t in threads:
        t.join()
    return (time.perf_counter_ns() - t0) / batches


PIPELINE_FILE = {
    "name": "bench", "nodes": 256, "edges": 1024, "features": 16, "batches": 400, "warmup": 0,
    "queue_depth": 2, "seed": 1,
    "stages": [{"name": "Prep", "device": "cpu", "model": "matmul", "out_dim": 16},
               {"name": "Embed", "device": "sim:NPU", "model": "matmul", "out_dim": 16},
               {"name": "Classify", "device": "sim:GPU", "model": "matmul", "out_dim": 8}]}


def python_c_stages():
    spec = PIPELINE_FILE
    w = pipeprof.workloads
    n, f = spec["nodes"], spec["features"]
    with pipeprof.Profiler(None) as prof:
        pipe = pipeprof.Pipeline([
            pipeprof.Stage("Prep", "cpu", w.matmul(n, f, 16, seed=1)),
            pipeprof.Stage("Embed", "sim:NPU", w.matmul(n, 16, 16, seed=2)),
            pipeprof.Stage("Classify", "sim:GPU", w.matmul(n, 16, 8, seed=3))], profiler=prof)
        pipe.run([np.zeros((n, f), np.float32)] * spec["batches"])
    prof.close()
    return 1e9 / pipe.last_run["batches_per_s"]


def c_runner(cli):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pipeline.json")
        with open(path, "w") as f:
            json.dump(PIPELINE_FILE, f)
        out = subprocess.run([cli, "run", path, "--out", os.path.join(tmp, "out")],
                             capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"\(([0-9.]+) batches/s\)", out).group(1))
    return 1e9 / rate


def line(name, value, baseline_name, baseline):
    print(f"BENCH {name} value={value:.1f} unit=ns baseline={baseline_name}:{baseline:.1f} "
          f"ratio={value / baseline:.2f}", flush=True)


def main():
    torch, why = import_torch()
    rf = spans_per_ns(record_function_spans, N)
    py = spans_per_ns(python_spans, N)
    if torch is not None:
        line("python_record_function_ns", rf, "torch_record_function",
             spans_per_ns(torch_spans, N_TORCH))
    else:
        print(f"bench_python_pipeline: no torch baseline: {why}", file=sys.stderr)
    line("python_record_function_ns", rf, "python_dataclass_recorder", py)
    line("python_stage_span_ns", spans_per_ns(stage_spans, N), "python_dataclass_recorder", py)

    recorded = min(run_pipeline(BATCHES, True) for _ in range(PIPE_ROUNDS))
    plain = min(run_plain_threads(BATCHES) for _ in range(PIPE_ROUNDS))
    line("python_pipeline_batch_ns", recorded, "plain_threads_unrecorded", plain)

    cli = os.environ.get("PP_CLI")
    if cli:
        py_c = min(python_c_stages() for _ in range(PIPE_ROUNDS))
        c = min(c_runner(cli) for _ in range(PIPE_ROUNDS))
        line("python_pipeline_c_stages_batch_ns", py_c, "c_runner_pipeprof_run", c)
    else:
        print("bench_python_pipeline: PP_CLI not set: no C-runner comparison", file=sys.stderr)


if __name__ == "__main__":
    main()
