"""bench_python — what one span recorded from Python through pipeprof costs,
beside a pure-Python recorder of the kind profilers written in Python use (a
dataclass per span appended to a list, timed with time.perf_counter_ns: the
local stand-in for torch.profiler.record_function when torch is absent).
Prints BENCH lines (ratio = value / baseline, below 1: pipeprof is cheaper):

  python_span_ns        `with prof.span(name):` (pp_push / pp_pop)
                        vs `with recorder.record(name):`
  python_add_span_ns    prof.add_span(...) with stage, role, batch, hw
                        vs appending the same fields as a dataclass
  python_paused_span_ns `with prof.span(name):` while paused
                        vs the same recorder, recording

Each figure is the best of ROUNDS rounds of N spans, rounds of the two
sides taken in turn. Run from bench/run,
which points it at the build's library; alone:
  PYTHONPATH=python PIPEPROF_LIBRARY=build/libpipeprof.so .venv/bin/python bench/bench_python.py
"""
import dataclasses
import time

import pipeprof

N = 200_000
ROUNDS = 7


@dataclasses.dataclass
class Event:
    name: str
    ts_ns: int
    dur_ns: int
    stage: str = ""
    batch: int = -1
    hw_ns: int = 0


class PyRecorder:
    """A minimal pure-Python recorder: one dataclass per span in a list."""

    def __init__(self):
        self.events = []

    def record(self, name):
        return _PyRange(self.events, name)


class _PyRange:
    __slots__ = ("events", "name", "start")

    def __init__(self, events, name):
        self.events, self.name = events, name

    def __enter__(self):
        self.start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        end = time.perf_counter_ns()
        self.events.append(Event(self.name, self.start, end - self.start))
        return False


def best_ns(fn, baseline_fn):
    """Best per-span times of ROUNDS rounds of fn and baseline_fn, taken in
    turn so that both see the same load on a shared machine; each returns
    the ns its loop of n spans took (setup and teardown are not timed)."""
    value = baseline = float("inf")
    for _ in range(ROUNDS):
        value = min(value, fn(N) / N)
        baseline = min(baseline, baseline_fn(N) / N)
    return value, baseline


def fresh_profiler():
    return pipeprof.Profiler(None, max_records=N * 2).start()


def pipeprof_spans(n, paused=False):
    prof = fresh_profiler()
    if paused:
        prof.pause()
    span = prof.span
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with span("step"):
            pass
    elapsed = time.perf_counter_ns() - t0
    prof.close()
    return elapsed


def pipeprof_paused_spans(n):
    return pipeprof_spans(n, paused=True)


def python_spans(n):
    record = PyRecorder().record
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with record("step"):
            pass
    return time.perf_counter_ns() - t0


def pipeprof_add_spans(n):
    prof = fresh_profiler()
    add, now = prof.add_span, pipeprof.now
    track = prof.device_track("CPU", 0)
    t0 = time.perf_counter_ns()
    for b in range(n):
        start = now()
        add("infer", start, now() - start, track=track, stage="embed",
            role=pipeprof.Role.EXEC, batch=b, hw_ns=1000)
    elapsed = time.perf_counter_ns() - t0
    prof.close()
    return elapsed


def python_add_spans(n):
    events, clock = [], time.perf_counter_ns
    t0 = clock()
    for b in range(n):
        start = clock()
        events.append(Event("infer", start, clock() - start, "embed", b, 1000))
    return clock() - t0


def bench(name, fn, baseline_name, baseline_fn):
    value, baseline = best_ns(fn, baseline_fn)
    print(f"BENCH {name} value={value:.1f} unit=ns baseline={baseline_name}:{baseline:.1f} "
          f"ratio={value / baseline:.2f}", flush=True)


if __name__ == "__main__":
    bench("python_span_ns", pipeprof_spans, "python_dataclass_recorder", python_spans)
    bench("python_add_span_ns", pipeprof_add_spans, "python_dataclass_append", python_add_spans)
    bench("python_paused_span_ns", pipeprof_paused_spans, "python_dataclass_recorder",
          python_spans)
