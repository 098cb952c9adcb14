"""Profiler.subscribe: live spans from Python, as an iterator and through a
callback, equal to what the session records; bad roles are refused; a close
from the callback is refused and a forked child closes without hanging."""
import os
import signal
import threading
import time
import warnings

import pytest

import pipeprof
from pipeprof.subscribe import decode


def record_execs(prof, n, device="NPU"):
    track = prof.device_track(device, 0)
    t0 = pipeprof.now()
    for i in range(n):
        prof.add_span("infer", t0 + 100 * i, 50, track=track, stage="Embed",
                      role=pipeprof.Role.EXEC, batch=i, hw_ns=40)


def test_iterator_yields_every_span_once_in_order():
    with pipeprof.Profiler() as prof:
        sub = prof.subscribe(roles=("exec",))
        got = []
        reader = threading.Thread(target=lambda: got.extend(sub))
        reader.start()
        record_execs(prof, 500)
    totals = sub.close()
    reader.join()
    assert [r.batch for r in got] == list(range(500))
    assert [r.seq for r in got] == list(range(500))
    first = got[0]
    assert (first.name, first.device, first.stage, first.role) == ("infer", "NPU", "Embed",
                                                                   pipeprof.Role.EXEC)
    assert (first.duration_ns, first.end_ns - first.start_ns, first.hw_ns) == (50, 50, 40)
    assert totals == {"delivered": 500, "lost": 0, "session_dropped": 0}
    assert sub.lost == 0
    prof.close()


def test_callback_gets_only_the_filtered_device():
    seen = []
    with pipeprof.Profiler() as prof:
        sub = prof.subscribe(roles=("exec",), device="GPU", callback=seen.append)
        record_execs(prof, 30, device="NPU")
        record_execs(prof, 20, device="GPU")
    sub.close()
    assert len(seen) == 20
    assert {r.device for r in seen} == {"GPU"}
    with pytest.raises(pipeprof.PipeprofError, match="callback"):
        iter(sub).__next__()
    prof.close()


def test_profiler_close_closes_its_subscriptions():
    prof = pipeprof.Profiler().start()
    sub = prof.subscribe()
    record_execs(prof, 3)
    prof.stop()
    prof.close()
    # the session's close drained the subscription first: all three are there
    assert [r.batch for r in sub.close_and_drain()] == [0, 1, 2]
    assert sub.stats()["delivered"] == 3


def test_bad_role_and_ring_session_are_refused():
    with pipeprof.Profiler() as prof:
        with pytest.raises(pipeprof.PipeprofError, match="role 'kernel'"):
            prof.subscribe(roles=("kernel",))
    prof.close()
    ring = pipeprof.Profiler(overflow="ring")
    with pytest.raises(pipeprof.PipeprofError, match="ring overflow"):
        ring.subscribe()
    ring.close()


def test_decode_refuses_foreign_bytes():
    with pytest.raises(ValueError, match="not a pipeprof subscription record"):
        decode(bytes(256))


def test_close_from_its_own_callback_raises_and_changes_nothing():
    """The consumer thread cannot wait for itself: close() from the callback
    raises PipeprofError (before, the C close freed the queue the callback
    was being handed: a use after free); close() from the program's thread
    then ends the subscription with every span delivered."""
    errors, seen, holder = [], [], []

    def on_record(rec):
        seen.append(rec)
        if not errors:
            try:
                holder[0].close()
            except pipeprof.PipeprofError as e:
                errors.append(str(e))
            else:
                errors.append("no error")

    prof = pipeprof.Profiler().start()
    holder.append(prof.subscribe(roles=("exec",), callback=on_record))
    record_execs(prof, 10)
    prof.stop()
    assert holder[0].close() == {"delivered": 10, "lost": 0, "session_dropped": 0}
    assert len(errors) == 1 and "own callback" in errors[0]
    assert len(seen) == 10
    prof.close()


def wait_child(pid, seconds=30):
    """The child's exit status; None when it had to be killed (a hang)."""
    for _ in range(seconds * 100):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


@pytest.mark.parametrize("closing", ["subscription", "profiler"])
def test_forked_child_closes_without_hanging(closing):
    """A child forked while a subscription is open closes it (sub.close(), or
    Profiler.close(), which closes its subscriptions) and exits at once;
    before, it waited for ever for a consumer thread that stayed in the
    parent. The parent's subscription still gets every span."""
    prof = pipeprof.Profiler().start()
    sub = prof.subscribe(roles=("exec",))
    statuses = []
    for k in range(5):  # forks at different points of the consumer's period
        record_execs(prof, 2)
        time.sleep(0.003 * k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads: the point
            pid = os.fork()
        if pid == 0:
            signal.alarm(10)  # a hang ends as SIGALRM
            try:
                if closing == "subscription":
                    sub.close()
                else:
                    prof.close()
            finally:
                os._exit(0)
        statuses.append(wait_child(pid))
    assert statuses == [0] * 5
    prof.stop()
    assert len(sub.close_and_drain()) == 10
    prof.close()
