"""Profiler.subscribe: live spans from Python, as an iterator and through a
callback, equal to what the session records; bad roles are refused."""
import threading

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
