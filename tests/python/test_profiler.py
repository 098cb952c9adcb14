"""Recording from Python: the Profiler context, regions, spans, pause/resume,
marks, counters, ranges, env activation and the errors a user can meet."""
import os
import subprocess
import sys
import threading

import pytest

import pipeprof
from pipeprof import PipeprofError, Role


def events(trace, **where):
    df = trace.to_dataframe()
    for column, value in where.items():
        df = df[df[column] == value]
    return df


@pytest.mark.parametrize("ext", ["pptrace", "json"])
def test_context_manager_writes_the_trace(tmp_path, ext):
    path = tmp_path / f"trace.{ext}"
    with pipeprof.Profiler(path, level=1) as prof:
        with prof.span("preprocess"):
            pass
        assert prof.level == 1
    assert path.exists()
    trace = pipeprof.load(path)
    spans = events(trace, kind="span")
    assert list(spans["name"]) == ["preprocess"]
    assert spans["dur_ns"].iloc[0] >= 0
    assert trace.meta()["level"] == 1


def test_regions_label_sections_and_select_the_window(tmp_path):
    path = tmp_path / "regions.pptrace"
    with pipeprof.Profiler(path) as prof:
        track = prof.device_track("NPU", 0, "req 0", simulated=True)
        with prof.record("warm up"):
            prof.add_span("embed", pipeprof.now(), 1000, track=track, stage="embed",
                          role=Role.EXEC, batch=0, hw_ns=900)
        with prof.record("measure"):
            for b in (1, 2):
                prof.add_span("embed", pipeprof.now(), 2000, track=track, stage="embed",
                              role=Role.EXEC, batch=b, hw_ns=1500, xfer_ns=300)
    trace = pipeprof.load(path)
    regions = events(trace, kind="region")
    assert list(regions["name"]) == ["warm up", "measure"]
    assert set(regions["track_name"]) == {regions["track_name"].iloc[0]}
    whole = trace.summary()
    measured = trace.summary(exclude_region="warm up")
    assert whole["devices"][0]["execs"] == 3
    assert measured["devices"][0]["execs"] == 2
    assert measured["devices"][0]["simulated"] is True
    assert measured["stages"][0]["hw_ns"] == 3000
    assert measured["stages"][0]["xfer_ns"] == 600
    assert measured["window"]["start_ns"] == regions["ts_ns"].iloc[0] + regions["dur_ns"].iloc[0]


def test_nothing_is_recorded_while_paused():
    prof = pipeprof.Profiler(None).start()
    track = prof.device_track("CPU", 0)
    with prof.span("before"):
        pass
    recorded = prof.stats()["recorded"]
    prof.pause()
    with prof.span("paused span"):
        pass
    with prof.record("paused region"):
        pass
    prof.add_span("paused exec", pipeprof.now(), 10, track=track, role=Role.EXEC, batch=0)
    prof.mark("paused mark")
    prof.counter("paused counter", 1.0)
    rid = prof.range_start("paused range")
    prof.range_stop(rid)
    assert prof.stats()["recorded"] == recorded
    prof.resume()
    with prof.span("after"):
        pass
    prof.stop()
    names = list(prof.trace().to_dataframe()["name"])
    assert names == ["before", "after"]
    prof.close()


def test_pause_and_resume_out_of_order_raise():
    prof = pipeprof.Profiler(None)
    with pytest.raises(PipeprofError) as e:
        prof.pause()
    assert e.value.code == -2 and "not recording" in str(e.value)
    prof.start()
    with pytest.raises(PipeprofError, match="not paused"):
        prof.resume()
    prof.stop()
    with pytest.raises(PipeprofError):
        prof.stop()
    prof.close()


def test_marks_counters_flows_annotations_and_cross_thread_ranges():
    prof = pipeprof.Profiler(None, level=0).start()
    with prof.span("stage A"):
        prof.flow("batch 7", 8, pipeprof.FlowPhase.BEGIN)
    prof.mark("checkpoint", ts_ns=pipeprof.now())
    prof.counter("queue depth", 3.5)
    prof.add_span("custom", pipeprof.now(), 500, stage="A", batch=7,
                  annotations={"rows": 128, "ratio": 0.25, "device": "NPU"})
    rid = prof.range_start("request 1")
    worker = threading.Thread(target=prof.range_stop, args=(rid,))
    worker.start()
    worker.join()
    prof.stop()
    trace = prof.trace()
    df = trace.to_dataframe()
    assert set(df["kind"]) == {"span", "instant", "counter", "flow", "range"}
    assert df[df["kind"] == "counter"]["value"].iloc[0] == 3.5
    flow = df[df["kind"] == "flow"].iloc[0]
    assert (flow["id"], flow["phase"]) == (8, "begin")
    custom = df[df["name"] == "custom"].iloc[0]
    assert (custom["dur_ns"], custom["stage"], custom["batch"]) == (500, "A", 7)
    assert custom["role"] == "user"
    notes = trace.to_dataframe("annotations")
    mine = notes[notes["event"] == custom.name]
    assert dict(zip(mine["key"], mine["value"])) == {"rows": 128, "ratio": 0.25,
                                                     "device": "NPU"}
    rng = df[df["kind"] == "range"].iloc[0]
    assert rng["name"] == "request 1" and rng["dur_ns"] >= 0
    assert trace.meta()["level"] == 0
    prof.close()


def test_env_activation_records_a_python_program(tmp_path):
    out = tmp_path / "env.json"
    program = ("import pipeprof\n"
               "prof = pipeprof.default_profiler()\n"
               "with prof.span('from env'):\n"
               "    pass\n")
    env = dict(os.environ, PIPEPROF_OUTPUT=str(out), PIPEPROF_LEVEL="0")
    subprocess.run([sys.executable, "-c", program], env=env, check=True)
    trace = pipeprof.load(out)
    assert "from env" in set(trace.to_dataframe()["name"])
    assert trace.meta()["level"] == 0
    env.pop("PIPEPROF_OUTPUT")
    check = subprocess.run([sys.executable, "-c",
                            "import pipeprof; print(pipeprof.default_profiler())"],
                           env=env, check=True, capture_output=True, text=True)
    assert check.stdout.strip() == "None"


def test_bad_level_and_bad_output_are_refused():
    with pytest.raises(PipeprofError, match=r"level=5: must be 0, 1 or 2"):
        pipeprof.Profiler(None, level=5)
    with pytest.raises(PipeprofError, match=r"level='2'"):
        pipeprof.Profiler(None, level="2")
    with pytest.raises(PipeprofError, match=r"trace\.txt: unknown trace format"):
        pipeprof.Profiler("trace.txt")
    with pytest.raises(PipeprofError, match="overflow='keep'"):
        pipeprof.Profiler(None, overflow="keep")


def test_a_failed_write_carries_the_c_message(tmp_path):
    path = tmp_path / "no such dir" / "trace.pptrace"
    prof = pipeprof.Profiler(path)
    with pytest.raises(PipeprofError) as e:
        with prof:
            with prof.span("x"):
                pass
    assert str(path.parent) in str(e.value)
    assert e.value.code == -5
    assert not path.exists()
    prof.close()


def test_any_output_format_passes_through_to_the_c_writers(tmp_path):
    """.pftrace goes to the C library as is: written when the build has the
    Perfetto writer, else refused at stop with its message and no file."""
    path = tmp_path / "trace.pftrace"
    prof = pipeprof.Profiler(path, level=1)
    try:
        with prof:
            with prof.span("x"):
                pass
    except PipeprofError as e:
        assert e.code == -9, str(e)  # PP_EUNSUPPORTED
        assert not path.exists()
    else:
        assert path.stat().st_size > 0
    prof.close()
