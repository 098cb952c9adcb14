"""A Python pipeline stops on any exception, of any stage, and on Ctrl-C:
Pipeline.run once never returned when a stage raised SystemExit or
KeyboardInterrupt (the stage's thread died, `except Exception` missed it,
and the feeder blocked on a full queue), and Ctrl-C had to finish every
queued batch first. Each case runs in a child Python so that a hang fails
the test (the child is killed after 120 s) instead of hanging the suite."""
import os
import signal
import subprocess
import sys

import pytest

HANG_GUARD_S = int(os.environ.get("PP_HANG_GUARD_S", "120"))


def run_child(body, send_sigint_after_line=None):
    env = dict(os.environ)
    code = "import sys, threading, time\nimport pipeprof\n" + body
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        if send_sigint_after_line is not None:
            line = p.stdout.readline()
            assert line.strip() == send_sigint_after_line, (line, p.stderr.read())
            p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"the pipeline did not return: {out}\n{err}")
    return p.returncode, out, err


@pytest.mark.parametrize("exc", ["SystemExit(7)", "KeyboardInterrupt()", "GeneratorExit()",
                                 "ValueError('bad batch')"])
@pytest.mark.parametrize("where", [0, 1, 2])
def test_any_exception_of_any_stage_ends_the_run(exc, where):
    body = f"""
def stage(k):
    def run(x):
        if k == {where} and x == 3:
            raise {exc}
        return x
    return (f"s{{k}}", run)
pipe = pipeprof.Pipeline([stage(0), stage(1), stage(2)], queue_depth=1)
try:
    pipe.run(range(1000))
except BaseException as e:
    print("raised", type(e).__name__, getattr(e, "__notes__", []))
    sys.exit(0)
print("returned")
"""
    rc, out, err = run_child(body)
    name = exc.split("(")[0]
    assert rc == 0, err
    assert f"raised {name}" in out
    assert f"raised by stage 's{where}' on batch 3" in out


def test_ctrl_c_stops_the_run_and_is_raised_in_the_caller():
    # every stage takes 50 ms a batch: finishing 10 000 queued-up batches
    # would take minutes; stopping at once takes one batch per stage.
    body = """
started = threading.Event()
def slow(x):
    started.set()
    time.sleep(0.05)
    return x
done = []
def count(x):
    done.append(x)
    return x
def announce():
    started.wait()
    print("started", flush=True)
threading.Thread(target=announce, daemon=True).start()
pipe = pipeprof.Pipeline([("a", slow), ("b", slow), ("c", count)], queue_depth=4)
try:
    pipe.run(range(10000))
except KeyboardInterrupt:
    print("interrupted after", len(done), flush=True)
    sys.exit(3)
print("returned")
"""
    rc, out, err = run_child(body, send_sigint_after_line="started")
    assert rc == 3, (out, err)
    done = int(out.split("interrupted after")[1])
    assert done < 10000  # it stopped, it did not run every batch
