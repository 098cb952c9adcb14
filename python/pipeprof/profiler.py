"""Recording from Python: a Profiler is one libpipeprof session.

Every call goes straight to the C recording API (include/pipeprof/trace.h)
with the same semantics: records made while paused are ignored, records
past the budget are dropped and counted (never raised), calls out of the
session's order raise PipeprofError with PP_ESTATE.

Ownership: the C session belongs to a handle (_lib.Handle) that every user
of it holds (the Profiler, each span, each executor) and that C objects
made on it pin; it is freed when the last of them is gone, so no call can
reach a freed session. close() lets go
of the Profiler's hold: its methods then raise PipeprofError, while a span
already open still ends into memory that is alive.
"""
import ctypes
import enum
import operator
import struct
import threading
import weakref
from contextlib import contextmanager

from . import _lib
from ._lib import PipeprofError, check

_OVERFLOW = {"drop": 0, "ring": 1}
_names = {}
_names_lock = threading.Lock()


class Role(enum.IntEnum):
    """What a span is, for the analyzer (pp_role)."""
    NONE = 0
    EXEC = 1
    PARTITION = 2
    MERGE = 3
    STAGE = 4
    OP = 5
    USER = 6


class FlowPhase(enum.IntEnum):
    BEGIN = 0
    STEP = 1
    END = 2


def intern(text):
    """The process-wide string id of `text` (pp_intern), cached on the Python
    side so that a hot loop pays for the C call once per name."""
    sid = _names.get(text)
    if sid is None:
        with _names_lock:
            sid = _lib.pp_intern(text.encode())
            if sid == 0 and text:
                raise PipeprofError(_lib.PP_ENOMEM, f"cannot intern {text!r}: out of memory")
            _names[text] = sid
    return sid


def now():
    """The session clock (CLOCK_MONOTONIC) in nanoseconds, as pp_now()."""
    return _lib.pp_now()


def _Session(ptr, owned):
    """The handle of one C session (for the env default session, owned by
    the library, which writes and frees it at exit)."""
    return _lib.Handle(ptr, _lib.pp_session_close if owned else None)


def _closed(what):
    return PipeprofError(_lib.PP_ESTATE, f"{what}: the Profiler is closed")


_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _recorded(code, what):
    # A drop (PP_EFULL) is counted by the session and shown in every output;
    # raising for it would turn a full budget into a crash of the program.
    if code != _lib.PP_OK and code != _lib.PP_EFULL:
        raise PipeprofError(code, f"{what}: {_lib.strerror(code)}")


class Profiler:
    """A recording session, usable as a context manager:

        with pipeprof.Profiler("trace.pptrace", level=1) as prof:
            with prof.record("warm up"):
                ...

    `output` is written at stop in the format its extension names (any
    format the C library writes); None keeps the records in memory only
    (read them with trace()). level: 0 wall times, 1 + hardware totals,
    2 + one span per layer. overflow: "drop" or "ring" (docs/recording.md).
    collect: a collect list instead of the level's preset ("spans,sched",
    "all"; "threads" adds the whole-process scheduler sampler), and
    sched_sample_ms its period (default 10).
    """

    def __init__(self, output=None, level=1, max_records=0, overflow="drop", process_name=None,
                 collect=None, sched_sample_ms=None):
        if overflow not in _OVERFLOW:
            raise PipeprofError(_lib.PP_EINVAL,
                                f"Profiler: overflow={overflow!r}: must be 'drop' or 'ring'")
        if not isinstance(level, int) or isinstance(level, bool):
            raise PipeprofError(_lib.PP_EINVAL, f"Profiler: level={level!r}: must be 0, 1 or 2")
        self._session = None
        self._output = None if output is None else str(output)
        if output is not None and _lib.pp_format_from_path(_lib.encode(output)) == 0:
            raise PipeprofError(_lib.PP_EINVAL,
                                f"{output}: unknown trace format: the extension names the "
                                "format (.pptrace, .json, ...)")
        cfg = _lib.SessionConfig()
        _lib.pp_session_config_init(ctypes.byref(cfg))
        cfg.output = _lib.encode(output)
        cfg.level = level
        cfg.max_records = max_records
        cfg.overflow = _OVERFLOW[overflow]
        cfg.process_name = _lib.encode(process_name)
        handle = ctypes.c_void_p()
        rc = _lib.pp_session_open(ctypes.byref(cfg), ctypes.byref(handle))
        if rc == _lib.PP_EINVAL and not 0 <= level <= 2:
            raise PipeprofError(rc, f"Profiler: level={level}: must be 0, 1 or 2")
        check(rc, "Profiler: cannot open the session")
        self._session = _Session(handle, owned=True)
        for key, value in (("collect", collect), ("sched_sample_ms", sched_sample_ms)):
            if value is None:
                continue
            err = _lib.Error()
            rc = _lib.pp_session_set_config(handle, key.encode(), str(value).encode(),
                                            ctypes.byref(err))
            if rc != _lib.PP_OK:
                self._session = None  # the handle frees the session
                check(rc, f"Profiler: {key}={value!r}", err)
        self._init_common()

    @classmethod
    def _wrap(cls, handle):
        self = cls.__new__(cls)
        self._session = _Session(ctypes.c_void_p(handle), owned=False)
        self._output = None
        self._init_common()
        return self

    def _init_common(self):
        # the sched bit (on at level >= 1): host stage spans carry their
        # thread's scheduler figures (docs/recording.md "Scheduler figures")
        self._sched = bool(_lib.pp_session_collect(self._session.ptr) & _lib.COLLECT_SCHED)
        self._local = threading.local()
        self._regions = None
        self._streams = {}
        self._streams_lock = threading.Lock()
        self._subscriptions = []

    def _live(self, what):
        """The session, held by the caller for the length of its C call."""
        s = self._session
        if s is None:
            raise _closed(what)
        return s

    @property
    def _handle(self):
        return self._live("Profiler").ptr

    # ---- lifecycle ----

    def start(self):
        """Starts recording; this profiler becomes the current one
        (current_profiler(), record_function) until it stops."""
        s = self._live("Profiler.start")
        check(_lib.pp_session_start(s.ptr), "Profiler.start")
        _make_current(self)
        return self

    def pause(self):
        """Stops recording until resume(): every recording call in between
        records nothing (and costs one C call that returns at once)."""
        s = self._live("Profiler.pause")
        check(_lib.pp_session_pause(s.ptr), "Profiler.pause: not recording")

    def resume(self):
        s = self._live("Profiler.resume")
        check(_lib.pp_session_resume(s.ptr), "Profiler.resume: not paused")

    def stop(self):
        """Ends recording and writes the output; PipeprofError with the C
        message when the write fails (no partial file is left)."""
        s = self._live("Profiler.stop")
        _drop_current(self)
        err = _lib.Error()
        check(_lib.pp_session_stop(s.ptr, ctypes.byref(err)), "Profiler.stop", err)

    def write(self, path):
        """Writes the records (after stop) to `path`, format by extension."""
        s = self._live("Profiler.write")
        err = _lib.Error()
        check(_lib.pp_session_write(s.ptr, _lib.encode(path), ctypes.byref(err)),
              f"Profiler.write {path}", err)

    def subscribe(self, roles=("exec", "op"), device=None, stage=None, callback=None, **options):
        """Live spans of this session as they end (pipeprof.subscribe.Subscription):
        an iterator, or callback(record) on the library's consumer thread.
        roles from "exec", "op", "stage", "partition", "merge", "user"."""
        from .subscribe import Subscription
        session = self._live("subscribe")
        sub = Subscription(session.ptr, roles, device, stage, callback, **options)
        sub._session = session  # the session outlives its subscription
        self._subscriptions.append(sub)
        return sub

    def close(self):
        """Closes its subscriptions and lets go of the session: every method
        raises PipeprofError from now on. The session stops (without writing)
        and is freed once the spans still open on it have ended. Closing twice
        is harmless."""
        for sub in getattr(self, "_subscriptions", ()):
            sub.close()
        _drop_current(self)
        self._session = None

    @property
    def closed(self):
        return self._session is None

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if self._session is None:
            return False
        if exc is None:
            self.stop()
            return False
        # The block's own exception is what the program must see; a stop
        # that fails too (a full disk, say) is told as a note on it.
        try:
            self.stop()
        except Exception as stop_error:  # noqa: BLE001 - any failure, told not raised
            if hasattr(exc, "add_note"):
                exc.add_note(f"and then Profiler.stop failed: {stop_error}")
        return False

    @property
    def level(self):
        return _lib.pp_session_level(self._live("Profiler.level").ptr)

    @property
    def output(self):
        return self._output

    def stats(self):
        """{"recorded", "dropped", "threads"} over all threads so far."""
        s = self._live("Profiler.stats")
        st = _lib.SessionStats()
        check(_lib.pp_session_stats_get(s.ptr, ctypes.byref(st)), "Profiler.stats")
        return {"recorded": st.recorded, "dropped": st.dropped, "threads": st.threads}

    def trace(self):
        """The records so far as a Trace (analysis, DataFrames), without a
        file: at any time, also while threads record (a snapshot; spans still
        open are not in it). A ring-mode profiler is read while paused or
        after stop, because it recycles its buffers while it records."""
        from .trace import Trace
        s = self._live("Profiler.trace")
        model = ctypes.c_void_p()
        rc = _lib.pp_model_from_session(s.ptr, ctypes.byref(model))
        if rc == _lib.PP_ESTATE:
            raise PipeprofError(rc, "Profiler.trace: a ring-mode profiler overwrites its oldest "
                                    "records while it records: pause() or stop() it first")
        check(rc, "Profiler.trace")
        return Trace(model, source="(session)")

    # ---- tracks ----

    def device_track(self, device, stream, row=None, simulated=False, hw_mean=False):
        """The track of one device stream ("GPU.0", 1): same arguments, same track.
        hw_mean: the hw_ns recorded on it are running means over the runs
        (OpenVINO's CPU plugin), which every report then labels."""
        s = self._live("Profiler.device_track")
        t = ctypes.c_uint32()
        flags = (_lib.TRACK_SIMULATED if simulated else 0) | (_lib.TRACK_HW_MEAN if hw_mean else 0)
        check(_lib.pp_track_device(s.ptr, device.encode(), stream, _lib.encode(row),
                                   flags, ctypes.byref(t)),
              f"device track {device}/{stream}")
        return t.value

    def reserve_streams(self, device, n):
        """The first of `n` stream numbers of `device` no one in this profiler
        used yet, so that two executors on one device get distinct rows."""
        self._live("Profiler.reserve_streams")
        with self._streams_lock:
            first = self._streams.get(device, 0)
            self._streams[device] = first + n
        return first

    def thread_track(self, name=None):
        """The calling thread's host track; `name` names it the first time."""
        s = self._live("Profiler.thread_track")
        track = getattr(self._local, "track", None)
        if track is None:
            t = ctypes.c_uint32()
            check(_lib.pp_track_thread(s.ptr, _lib.encode(name), ctypes.byref(t)),
                  "thread track")
            track = self._local.track = t.value
        return track

    def regions_track(self):
        s = self._live("Profiler.regions_track")
        if self._regions is None:
            t = ctypes.c_uint32()
            check(_lib.pp_track_regions(s.ptr, ctypes.byref(t)), "regions track")
            self._regions = t.value
        return self._regions

    # ---- recording ----

    @contextmanager
    def record(self, label):
        """A labeled region ("warm up") on the regions track; analyze a window
        with load(...).summary(region=...) or exclude_region=...."""
        s = self._live("Profiler.record")
        rid = ctypes.c_uint64()
        _recorded(_lib.pp_region_begin(s.ptr, intern(label), ctypes.byref(rid)),
                  f"region {label!r}")
        try:
            yield
        finally:
            _recorded(_lib.pp_region_end(s.ptr, rid.value), f"region {label!r}")

    def span(self, name, stage=None, batch=None, track=None):
        """A span on the calling thread's track (or `track`), as a context:
        `with prof.span("x"):`. Without stage or batch it is timed by the C
        library at enter and exit (pp_push / pp_pop). With a stage it is that
        stage's work on `batch` (role stage): host work the analyzer times
        like a device's exec when no exec of the (stage, batch) exists
        (docs/analysis.md); with a batch only, a user span of that batch."""
        s = self._session
        if s is None:
            raise _closed("Profiler.span")
        if track is None:
            track = getattr(self._local, "track", None)
            if track is None:
                track = self.thread_track()
        if stage is None and batch is None:
            return _Span(s, track, intern(name))
        return _BatchSpan(self, s, track, name, stage, -1 if batch is None else batch)

    def sched_start(self):
        """The calling thread's scheduler counters now (pp_sched_read), for
        a span starting at its ts_ns, when the session collects them (the
        sched bit, on at level >= 1); else None. End the span with
        end_span_sched, which reads the end time and the counters in one C
        call: every ctypes call gives the GIL up and may wait to take it
        back, and a wait between the span's end and the counters' read
        would count in its figures but not in its wall."""
        if not self._sched:
            return None
        at = _lib.SchedSample()
        return at if _lib.pp_sched_read(ctypes.byref(at)) == _lib.PP_OK else None

    def annotate_sched(self, start, end):
        """The scheduler figures between two sched_start() samples of this
        thread onto its last record (pp_annotate_sched_between): for a span
        recorded after later work, bounded by the samples' ts_ns."""
        s = self._live("Profiler.annotate_sched")
        _recorded(_lib.pp_annotate_sched_between(s.ptr, ctypes.byref(start), ctypes.byref(end)),
                  "scheduler figures")

    def end_span_sched(self, name, at, track=None, stage=None, role=Role.USER, batch=-1):
        """Records the span from at.ts_ns (at: a sched_start() of this
        thread) to now with its scheduler figures (pp_span_sched); returns
        False when the record was dropped because the budget is spent."""
        s = self._live("Profiler.end_span_sched")
        rec = self._rec()
        try:
            _lib.SPAN_LAYOUT.pack_into(rec, 0, self.thread_track() if track is None else track,
                                       intern(name), intern(stage) if stage else 0, role,
                                       at.ts_ns, 0, batch, 0, 0)
        except struct.error as e:
            raise PipeprofError(_lib.PP_EINVAL, f"span {name!r}: {e}") from None
        rc = _lib.pp_span_sched(s.ptr, rec, ctypes.byref(at))
        _recorded(rc, f"span {name!r}")
        return rc == _lib.PP_OK

    def add_span(self, name, ts_ns, dur_ns, track=None, stage=None, role=Role.USER, batch=-1,
                 hw_ns=0, xfer_ns=0, annotations=None):
        """One finished span with the pipeline fields (pp_span). Annotations
        ({key: int | float | str}) go onto this span. Returns False when the
        record was dropped because the budget is spent."""
        s = self._live("Profiler.add_span")
        rec = self._rec()
        try:
            _lib.SPAN_LAYOUT.pack_into(rec, 0, self.thread_track() if track is None else track,
                                       intern(name), intern(stage) if stage else 0, role, ts_ns,
                                       dur_ns, batch, hw_ns, xfer_ns)
        except struct.error as e:
            raise PipeprofError(_lib.PP_EINVAL, f"span {name!r}: {e}") from None
        rc = _lib.hot_span(s.ptr, rec)
        _recorded(rc, f"span {name!r}")
        if rc != _lib.PP_OK:
            return False
        if annotations:
            for key, value in annotations.items():
                self.annotate(key, value)
        return True

    def _rec(self):
        """The calling thread's buffer for one packed pp_span_rec."""
        rec = getattr(self._local, "rec", None)
        if rec is None:
            rec = self._local.rec = ctypes.create_string_buffer(_lib.SPAN_LAYOUT.size)
        return rec

    def annotate(self, key, value):
        """A key/value on the calling thread's last record."""
        s = self._live("Profiler.annotate")
        k = intern(key)
        if isinstance(value, str):
            rc = _lib.pp_annotate_str(s.ptr, k, intern(value))
        elif isinstance(value, float):
            rc = _lib.pp_annotate_double(s.ptr, k, value)
        else:
            value = int(value)
            if not _INT64_MIN <= value <= _INT64_MAX:  # ctypes would wrap it silently
                raise OverflowError(
                    f"Profiler.annotate {key!r}: {value} does not fit an int64 "
                    f"({_INT64_MIN} .. {_INT64_MAX}); pass str(value) to keep it as text")
            rc = _lib.pp_annotate_int(s.ptr, k, value)
        _recorded(rc, f"annotation {key!r}")

    def mark(self, name, ts_ns=None, track=None):
        s = self._live("Profiler.mark")
        _recorded(_lib.pp_mark(s.ptr, self.thread_track() if track is None else track,
                               intern(name), now() if ts_ns is None else ts_ns),
                  f"mark {name!r}")

    def counter(self, name, value, ts_ns=None, track=None):
        s = self._live("Profiler.counter")
        _recorded(_lib.pp_counter(s.ptr, self.thread_track() if track is None else track,
                                  intern(name), now() if ts_ns is None else ts_ns, value),
                  f"counter {name!r}")

    def flow(self, name, flow_id, phase, ts_ns=None, track=None):
        """One step of flow `flow_id`, bound to the span enclosing ts_ns."""
        s = self._live("Profiler.flow")
        _recorded(_lib.pp_flow(s.ptr, self.thread_track() if track is None else track,
                               intern(name), now() if ts_ns is None else ts_ns, flow_id,
                               int(phase)), f"flow {name!r}")

    def range_start(self, name):
        """A range that may end on another thread: returns its id for range_stop."""
        s = self._live("Profiler.range_start")
        rid = ctypes.c_uint64()
        _recorded(_lib.pp_range_start(s.ptr, intern(name), ctypes.byref(rid)),
                  f"range {name!r}")
        return rid.value

    def range_stop(self, range_id):
        s = self._live("Profiler.range_stop")
        _recorded(_lib.pp_range_stop(s.ptr, range_id), "range_stop")


class _Span:
    """The context manager of Profiler.span: a class rather than a generator,
    because this is the per-span hot path (bench/bench_python.py). It holds
    the session, so the session outlives the span whatever else is closed or
    collected meanwhile."""
    __slots__ = ("session", "track", "name")

    def __init__(self, session, track, name):
        self.session, self.track, self.name = session, track, name

    def __enter__(self):
        rc = _push(self.session.ptr, self.track, self.name)
        if rc:
            _recorded(rc, "span")
        return self

    def __exit__(self, *exc):
        rc = _pop(self.session.ptr)
        if rc:
            _recorded(rc, "span")
        return False


class _BatchSpan:
    """A span with a stage and / or a batch: timed here, recorded at exit as
    one finished span (pp_span), since pp_push carries neither field. It
    holds the session until it ends, like _Span; a span whose profiler was
    closed meanwhile still ends into live memory."""
    __slots__ = ("session", "rec", "track", "name", "stage", "role", "batch", "start", "prof",
                 "sched")

    def __init__(self, prof, session, track, name, stage, batch):
        try:
            self.batch = operator.index(batch)
        except TypeError:
            raise PipeprofError(_lib.PP_EINVAL, f"span {name!r}: batch={batch!r}: "
                                "expected an integer") from None
        self.session, self.track = session, track
        self.rec = prof._rec()
        self.name, self.stage = intern(name), intern(stage) if stage else 0
        self.role = Role.STAGE if stage is not None else Role.USER
        self.prof = prof if stage is not None else None  # a stage span: scheduler figures

    def __enter__(self):
        self.sched = self.prof.sched_start() if self.prof is not None else None
        self.start = _now() if self.sched is None else self.sched.ts_ns
        return self

    def __exit__(self, *exc):
        start = self.start
        _lib.SPAN_LAYOUT.pack_into(self.rec, 0, self.track, self.name, self.stage, self.role,
                                   start, 0 if self.sched else _now() - start, self.batch, 0, 0)
        if self.sched is None:
            rc = _lib.hot_span(self.session.ptr, self.rec)
        else:  # the end and the counters read in one call
            rc = _lib.pp_span_sched(self.session.ptr, self.rec, ctypes.byref(self.sched))
        if rc:
            _recorded(rc, "span")
        return False


_push, _pop, _now = _lib.hot_push, _lib.hot_pop, _lib.pp_now


def default_profiler():
    """The session env activation started (PIPEPROF_OUTPUT set when the
    package was imported), or None. It is written by the library at exit."""
    global _default
    if _default is None:
        handle = _lib.pp_default_session()
        _default = Profiler._wrap(handle) if handle else False
    return _default or None


_default = None
# Profilers started and not yet stopped or closed, most recent last (weak
# references: being current keeps no profiler alive). The last one alive is
# what record_function and executors without a profiler record into.
# Process-wide rather than per context, so that threads a program starts
# record into it too, as with torch.profiler.
_started = []
# Reentrant: a weakref callback (_forget) may run from a garbage collection
# that starts while this thread holds the lock.
_started_lock = threading.RLock()
_current = None   # the last of _started, read without the lock


def _set_started(refs):
    global _current
    _started[:] = refs
    _current = refs[-1] if refs else None


def _forget(dead_ref):
    with _started_lock:
        _set_started([r for r in _started if r is not dead_ref])


def _make_current(prof):
    with _started_lock:
        _set_started([r for r in _started if r() is not prof] + [weakref.ref(prof, _forget)])


def _drop_current(prof):
    with _started_lock:
        _set_started([r for r in _started if r() is not prof])


def current_profiler():
    """The profiler that recording calls without one go to: the most
    recently started Profiler not yet stopped or closed, else the env
    default session (default_profiler()), else None."""
    ref = _current
    prof = ref() if ref is not None else None
    if prof is None and _started:
        with _started_lock:
            prof = next((p for p in (r() for r in reversed(_started)) if p is not None), None)
    return prof if prof is not None else default_profiler()
