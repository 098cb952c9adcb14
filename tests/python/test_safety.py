"""Python can never crash the interpreter: spans and traces keep alive what
they record into or read, and every method of a closed Profiler or Trace
raises PipeprofError instead of handing a freed (or NULL) handle to C.

Each misuse runs in a child interpreter of its own, so that a crash shows as
a failed test with the child's stderr rather than killing pytest; in the
ASan build (run_pytest.sh preloads its runtime, inherited by the child) a
use-after-free is reported even where a plain build happens to survive it.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import pipeprof


def run_child(code):
    """Runs `code` in a fresh interpreter (same library, same sanitizer
    runtime); returns its stdout. Fails the test on a crash or a sanitizer
    report, with what the child printed."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=os.environ, timeout=120)
    report = f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert p.returncode == 0, report
    assert "Sanitizer" not in p.stderr, report
    return p.stdout


def test_span_of_a_temporary_profiler_records_safely():
    # The Profiler is collected as span() returns; the span keeps its session.
    out = run_child("""
        import gc, pipeprof
        with pipeprof.Profiler().start().span("x"):
            gc.collect()
            pipeprof.Profiler().start()    # reuses freed memory if any was freed
        print("done")
    """)
    assert out.strip() == "done"


def test_trace_of_a_temporary_profiler_is_readable():
    out = run_child("""
        import gc, pipeprof
        prof = pipeprof.Profiler().start()
        with prof.span("kept"):
            pass
        trace = prof.trace()
        del prof
        gc.collect()
        print(list(trace.to_dataframe("events")["name"]))
    """)
    assert out.strip() == "['kept']"


def test_close_inside_a_span_is_safe():
    out = run_child("""
        import gc, pipeprof
        prof = pipeprof.Profiler().start()
        with prof.span("outer"):
            prof.close()
            gc.collect()
        print("done")
    """)
    assert out.strip() == "done"


def test_close_while_another_thread_records_is_safe():
    # The recording thread ends with the clear error, never with a crash.
    out = run_child("""
        import threading, time, pipeprof
        prof = pipeprof.Profiler().start()
        started, seen = threading.Event(), []
        def record():
            try:
                while True:
                    with prof.span("loop"):
                        started.set()
                    prof.add_span("finished", pipeprof.now(), 1, stage="s", batch=1)
            except pipeprof.PipeprofError as e:
                seen.append(str(e))
        t = threading.Thread(target=record)
        t.start()
        started.wait()
        time.sleep(0.05)
        prof.close()
        t.join()
        print(seen[0])
    """)
    assert "closed" in out


# Every public method of a closed Profiler, with arguments it would take.
PROFILER_CALLS = {
    "start": "()", "pause": "()", "resume": "()", "stop": "()", "write": "('x.json')",
    "stats": "()", "trace": "()", "device_track": "('GPU', 0)", "reserve_streams": "('GPU', 1)",
    "thread_track": "()", "regions_track": "()", "span": "('x')", "add_span": "('x', 0, 1)",
    "annotate": "('k', 1)", "mark": "('m')", "counter": "('c', 1.0)",
    "flow": "('f', 1, pipeprof.FlowPhase.BEGIN)", "range_start": "('r')",
    "range_stop": "(1)", "record": "('warm up').__enter__()", "level": None,
}
TRACE_CALLS = ["summary()", "findings()", "meta()", "to_dataframe()", "to_dataframe('stages')",
               "table()", "table('stages')", "to_html('x.html')", "report('out')",
               "to_arrow()", "to_arrow('stages')"]


def test_every_profiler_method_after_close_raises():
    out = run_child(f"""
        import json, pipeprof
        calls = {PROFILER_CALLS!r}
        prof = pipeprof.Profiler().start()
        prof.close()
        prof.close()                       # twice is fine
        result = {{}}
        for name, args in calls.items():
            try:
                eval("prof." + name + (args or ""))
                result[name] = "no error"
            except pipeprof.PipeprofError as e:
                result[name] = str(e)
        print(json.dumps(result))
    """)
    for name, message in json.loads(out).items():
        assert "closed" in message, f"{name}: {message}"


def test_every_trace_method_after_close_raises():
    out = run_child(f"""
        import json, pipeprof
        prof = pipeprof.Profiler().start()
        prof.add_span("x", pipeprof.now(), 1000, stage="s", role=pipeprof.Role.EXEC, batch=0)
        trace = prof.trace()
        trace.summary()                    # cached reports are not kept past close
        trace.close()
        trace.close()
        result = {{}}
        for call in {TRACE_CALLS!r}:
            try:
                eval("trace." + call)
                result[call] = "no error"
            except pipeprof.PipeprofError as e:
                result[call] = str(e)
        print(json.dumps(result))
    """)
    for name, message in json.loads(out).items():
        assert "closed" in message, f"{name}: {message}"


def test_with_block_that_closes_the_profiler_exits_cleanly():
    prof = pipeprof.Profiler()
    with prof:
        prof.close()
    with pytest.raises(pipeprof.PipeprofError, match="closed"):
        prof.start()


def test_garbage_cycle_frees_stages_before_their_devices_and_session():
    # The collector runs the finalizers of a reference cycle in any order;
    # a C stage or executor pins its devices and session, so they are freed
    # after it whatever runs first.
    out = run_child("""
        import gc, numpy as np, pipeprof
        from pipeprof.devices import DeviceExecutor
        w = pipeprof.workloads.matmul(nodes=8, in_dim=4, out_dim=4)
        for _ in range(3):
            prof = pipeprof.Profiler().start()
            stage = pipeprof.Stage("s", [pipeprof.device("sim:NPU"), "cpu"], w, profiler=prof)
            stage.run(np.zeros((8, 4), np.float32), 0)
            ex = DeviceExecutor(w, pipeprof.device("sim:GPU"), profiler=prof)
            ex.run(np.zeros((8, 4), np.float32), 0)
            cycle = [prof, ex.device_obj, stage.devices]
            stage.cycle = ex.cycle = cycle
            cycle += [stage, ex, cycle]
            del prof, stage, ex, cycle
            gc.collect()
        print("done")
    """)
    assert out.strip() == "done"
