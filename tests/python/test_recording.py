"""The recording shape of the package: record_function on the current
profiler (context manager and decorator, nested, from threads), spans that
carry a stage and a batch, and Profiler.trace() at any time."""
import threading

import pandas as pd
import pytest

import pipeprof
from pipeprof import Role


def spans(trace):
    ev = trace.to_dataframe("events")
    return ev[ev["kind"] == "span"]


@pipeprof.record_function("inner")
def inner():
    return 1


@pipeprof.record_function("outer")
def outer():
    return inner() + inner()


def test_record_function_nests_on_the_current_profiler():
    # Decorated functions calling each other: one span per call, the inner
    # ones inside the outer one, on the calling thread's track.
    with pipeprof.Profiler() as prof:
        assert pipeprof.current_profiler() is prof
        assert outer() == 2
        with pipeprof.record_function("block"):
            pass
    ev = spans(prof.trace())
    assert sorted(ev["name"]) == ["block", "inner", "inner", "outer"]
    out = ev[ev["name"] == "outer"].iloc[0]
    for _, span in ev[ev["name"] == "inner"].iterrows():
        assert out["ts_ns"] <= span["ts_ns"]
        assert span["ts_ns"] + span["dur_ns"] <= out["ts_ns"] + out["dur_ns"]
    assert ev["track"].nunique() == 1


def test_record_function_from_threads_records_on_each_threads_track():
    # Threads a program starts record into the current profiler too (it is
    # process-wide, as torch.profiler's is), each on a row of its own.
    def work():
        for _ in range(5):
            inner()
    with pipeprof.Profiler() as prof:
        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    ev = spans(prof.trace())
    assert len(ev) == 15
    assert ev["track"].nunique() == 3
    assert set(ev.groupby("track").size()) == {5}


def test_record_function_without_a_profiler_records_nothing():
    assert pipeprof.current_profiler() is None
    assert outer() == 2


def test_the_last_started_profiler_is_current_until_it_stops():
    a = pipeprof.Profiler().start()
    b = pipeprof.Profiler().start()
    assert pipeprof.current_profiler() is b
    b.stop()
    assert pipeprof.current_profiler() is a
    a.close()
    assert pipeprof.current_profiler() is None


def test_span_with_stage_and_batch_is_a_stage_instance():
    # prof.span(name, stage=, batch=) and record_function(stage=, batch=)
    # record what the analyzer takes as a stage instance: role stage, the
    # stage's name, the batch; a batch alone makes a user span of it.
    with pipeprof.Profiler() as prof:
        for b in range(3):
            with prof.span("tokenize", stage="Tokenize", batch=b):
                pass
            with pipeprof.record_function("prep", stage="Prep", batch=b):
                pass
        with prof.span("note", batch=7):
            pass
    ev = spans(prof.trace())
    tok = ev[ev["name"] == "tokenize"]
    assert list(tok["batch"]) == [0, 1, 2]
    assert set(tok["stage"]) == {"Tokenize"} and set(tok["role"]) == {"stage"}
    prep = ev[ev["name"] == "prep"]
    assert list(prep["batch"]) == [0, 1, 2] and set(prep["role"]) == {"stage"}
    note = ev[ev["name"] == "note"].iloc[0]
    # no stage is null (docs/tables.md): NaN in the categorical
    assert note["batch"] == 7 and note["role"] == "user" and pd.isna(note["stage"])


def test_trace_while_recording_is_a_snapshot():
    # Another thread keeps recording; each snapshot holds what was recorded
    # so far (never less than the previous one), and the session goes on.
    prof = pipeprof.Profiler().start()
    go, done = threading.Event(), threading.Event()

    def record():
        n = 0
        while not done.is_set():
            prof.add_span("step", pipeprof.now(), 10, stage="s", role=Role.EXEC, batch=n)
            n += 1
            if n == 100:
                go.set()
    t = threading.Thread(target=record)
    t.start()
    go.wait()
    first = len(spans(prof.trace()))
    second = len(spans(prof.trace()))
    done.set()
    t.join()
    prof.stop()
    total = len(spans(prof.trace()))
    assert 100 <= first <= second <= total
    batches = sorted(spans(prof.trace())["batch"])
    assert batches == list(range(total))


def test_trace_while_recording_in_ring_mode_says_to_pause():
    prof = pipeprof.Profiler(overflow="ring").start()
    with pytest.raises(pipeprof.PipeprofError, match="pause"):
        prof.trace()
    prof.pause()
    assert len(prof.trace().to_dataframe()) == 0


def test_span_batch_must_be_an_integer():
    import numpy as np
    with pipeprof.Profiler() as prof:
        with prof.span("x", batch=np.int64(4)):
            pass
        with pytest.raises(pipeprof.PipeprofError, match="batch='one': expected an integer"):
            prof.span("x", batch="one")
    assert list(spans(prof.trace())["batch"]) == [4]
