"""Live spans of a recording session, while it records (docs/python.md,
"Live subscriptions"): Profiler.subscribe() returns a Subscription.

    with pipeprof.Profiler(level=2) as prof:
        sub = prof.subscribe(roles=("exec", "op"))
        ...                                   # record, or run a pipeline
    for rec in sub.close_and_drain():         # or iterate from another thread
        print(rec.device, rec.name, rec.duration_ns)

The C library's consumer thread collects what the recording threads
published (pipeprof/subscribe.h) and hands it to this module through a
ctypes callback, which decodes each fixed-size record (the layout of
docs/recording.md) into a SpanRecord. With `callback=fn`, fn(record) runs
on that thread; without, records wait in a queue for the iterator. Either
way the recording threads never wait for Python; the callback holds the
GIL while it runs, so keep it short.
"""
import ctypes
import queue
import struct
from collections import namedtuple

from . import _lib
from ._lib import PipeprofError, check

RECORD_SIZE = 256
# size, kind, role, flags, version, start, end, batch, hw, xfer, seq, stream,
# reserved, name, type, device, stage, track: docs/recording.md
_LAYOUT = struct.Struct("<IBBBBqqqQQQiI64s32s32s32s32s")
assert _LAYOUT.size == RECORD_SIZE
_SPAN, _STATUS = 1, 2
_SIMULATED, _HOST = 1, 2

_ROLES = {"exec": 1, "partition": 2, "merge": 3, "stage": 4, "op": 5, "user": 6}

SpanRecord = namedtuple("SpanRecord", [
    "name", "type", "device", "stage", "track", "role", "stream", "start_ns", "end_ns",
    "duration_ns", "batch", "hw_ns", "xfer_ns", "seq", "simulated", "host"])
SpanRecord.__doc__ = """One span that ended, as a subscription delivers it.
role is the pipeprof.Role value; type is an op's type ("MatMul"); device is
"" for host rows; seq numbers the subscription's spans (a lost one's number
is skipped)."""


class _Subscription(ctypes.Structure):
    _fields_ = [("roles", ctypes.c_uint), ("device", ctypes.c_char_p),
                ("stage", ctypes.c_char_p), ("fd", ctypes.c_int),
                ("callback", ctypes.c_void_p), ("ctx", ctypes.c_void_p),
                ("period_ms", ctypes.c_int), ("queue_records", ctypes.c_size_t),
                ("args_wait_ms", ctypes.c_int)]


class _Stats(ctypes.Structure):
    _fields_ = [("delivered", ctypes.c_uint64), ("lost", ctypes.c_uint64),
                ("session_dropped", ctypes.c_uint64)]


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_open = _lib._proto("pp_subscription_open", ctypes.c_int, _lib.S, ctypes.POINTER(_Subscription),
                    ctypes.POINTER(ctypes.c_void_p), _lib.ERR)
_close = _lib._proto("pp_subscription_close", ctypes.c_int, ctypes.c_void_p,
                     ctypes.POINTER(_Stats))
_stats = _lib._proto("pp_subscription_stats_get", ctypes.c_int, ctypes.c_void_p,
                     ctypes.POINTER(_Stats))
_init = _lib._proto("pp_subscription_config_init", None, ctypes.POINTER(_Subscription))
assert _lib._proto("pp_subrec_size", ctypes.c_size_t)() == RECORD_SIZE


def _text(raw):
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def decode(buf, i=0):
    """Record i of a bytes-like buffer of subscription records: a SpanRecord,
    or None for a STATUS record. ValueError for bytes that are not one."""
    (size, kind, role, flags, version, start, end, batch, hw, xfer, seq, stream, _,
     name, typ, device, stage, track) = _LAYOUT.unpack_from(buf, i * RECORD_SIZE)
    if size != RECORD_SIZE or version != 1 or kind not in (_SPAN, _STATUS):
        raise ValueError(f"record {i}: not a pipeprof subscription record "
                         f"(size field {size}, version {version}, kind {kind})")
    if kind == _STATUS:
        return None
    return SpanRecord(_text(name), _text(typ), _text(device), _text(stage), _text(track), role,
                      stream, start, end, end - start, batch, hw, xfer, seq,
                      bool(flags & _SIMULATED), bool(flags & _HOST))


class Subscription:
    """Spans of one session as they end; made by Profiler.subscribe().

    Iterate it (records until close), or pass callback=fn. close() sends
    what the session published up to then, ends the iteration and returns
    the totals {"delivered", "lost", "session_dropped"}; lost counts spans
    this subscriber could not keep up with (queue_records of them wait),
    session_dropped those the session itself dropped. Close it before the
    Profiler (Profiler.close() closes its subscriptions).
    """

    _END = object()

    def __init__(self, session, roles=("exec", "op"), device=None, stage=None, callback=None,
                 period_ms=0, queue_records=0):
        bits = 0
        for r in roles:
            if r not in _ROLES:
                raise PipeprofError(_lib.PP_EINVAL, f"subscribe: role {r!r}: must be one of "
                                    + ", ".join(_ROLES))
            bits |= 1 << _ROLES[r]
        self._user_callback = callback
        self._queue = None if callback else queue.SimpleQueue()
        self.lost = 0
        self.session_dropped = 0
        self._closed = False
        self._final = None
        self._c_callback = _CALLBACK(self._on_records)  # kept alive as long as the subscription
        cfg = _Subscription()
        _init(ctypes.byref(cfg))
        cfg.roles = bits
        cfg.device = _lib.encode(device)
        cfg.stage = _lib.encode(stage)
        cfg.callback = ctypes.cast(self._c_callback, ctypes.c_void_p)
        cfg.period_ms = period_ms
        cfg.queue_records = queue_records
        handle = ctypes.c_void_p()
        err = _lib.Error()
        check(_open(session, ctypes.byref(cfg), ctypes.byref(handle), ctypes.byref(err)),
              "subscribe", err)
        self._handle = handle

    def _on_records(self, ctx, records, count):
        buf = ctypes.string_at(records, count * RECORD_SIZE)
        for i in range(count):
            rec = decode(buf, i)
            if rec is None:
                (_, _, _, _, _, _, _, _, self.lost, self.session_dropped, *_rest) = \
                    _LAYOUT.unpack_from(buf, i * RECORD_SIZE)
            elif self._queue is not None:
                self._queue.put(rec)
            else:
                self._user_callback(rec)

    def stats(self):
        """Totals so far: {"delivered", "lost", "session_dropped"}."""
        if self._closed:
            return dict(self._final)
        st = _Stats()
        check(_stats(self._handle, ctypes.byref(st)), "Subscription.stats")
        return {"delivered": st.delivered, "lost": st.lost,
                "session_dropped": st.session_dropped}

    def close(self):
        """Sends the rest, ends the iteration; returns the final totals.
        Takes at most a few seconds whatever the consumer does: what it
        did not take by then counts as lost (pipeprof/subscribe.h). From
        the subscription's own callback: PipeprofError (close it from
        another thread). In a child forked while it was open: frees the
        child's copy at once."""
        if not self._closed:
            st = _Stats()
            rc = _close(self._handle, ctypes.byref(st))  # ctypes releases the GIL meanwhile
            if rc == _lib.PP_ESTATE:
                raise PipeprofError(rc, "Subscription.close: called from its own callback; "
                                        "close it from another thread")
            check(rc, "Subscription.close")
            self._closed = True
            self._final = {"delivered": st.delivered, "lost": st.lost,
                           "session_dropped": st.session_dropped}
            if self._queue is not None:
                self._queue.put(self._END)
        return dict(self._final)

    def __iter__(self):
        if self._queue is None:
            raise PipeprofError(_lib.PP_EINVAL,
                                "Subscription: records go to its callback; there is nothing to iterate")
        while True:
            rec = self._queue.get()
            if rec is self._END:
                self._queue.put(self._END)  # a second iteration ends at once too
                return
            yield rec

    def close_and_drain(self):
        """close(), then every record not yet iterated, as a list."""
        self.close()
        return list(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
