"""Recording from Python: a Profiler is one libpipeprof session.

Every call goes straight to the C recording API (include/pipeprof/trace.h)
with the same semantics: records made while paused are ignored, records
past the budget are dropped and counted (never raised), calls out of the
session's order raise PipeprofError with PP_ESTATE.
"""
import ctypes
import enum
import struct
import threading
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
    """

    def __init__(self, output=None, level=1, max_records=0, overflow="drop", process_name=None):
        if overflow not in _OVERFLOW:
            raise PipeprofError(_lib.PP_EINVAL,
                                f"Profiler: overflow={overflow!r}: must be 'drop' or 'ring'")
        if not isinstance(level, int) or isinstance(level, bool):
            raise PipeprofError(_lib.PP_EINVAL, f"Profiler: level={level!r}: must be 0, 1 or 2")
        self._owned = True
        self._handle = None
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
        self._handle = handle
        self._init_common()

    @classmethod
    def _wrap(cls, handle):
        self = cls.__new__(cls)
        self._owned = False
        self._handle = ctypes.c_void_p(handle)
        self._output = None
        self._init_common()
        return self

    def _init_common(self):
        self._local = threading.local()
        self._regions = None
        self._streams = {}
        self._streams_lock = threading.Lock()
        self._subscriptions = []

    # ---- lifecycle ----

    def start(self):
        check(_lib.pp_session_start(self._handle), "Profiler.start")
        return self

    def pause(self):
        """Stops recording until resume(): every recording call in between
        records nothing (and costs one C call that returns at once)."""
        check(_lib.pp_session_pause(self._handle), "Profiler.pause: not recording")

    def resume(self):
        check(_lib.pp_session_resume(self._handle), "Profiler.resume: not paused")

    def stop(self):
        """Ends recording and writes the output; PipeprofError with the C
        message when the write fails (no partial file is left)."""
        err = _lib.Error()
        check(_lib.pp_session_stop(self._handle, ctypes.byref(err)), "Profiler.stop", err)

    def write(self, path):
        """Writes the records (after stop) to `path`, format by extension."""
        err = _lib.Error()
        check(_lib.pp_session_write(self._handle, _lib.encode(path), ctypes.byref(err)),
              f"Profiler.write {path}", err)

    def subscribe(self, roles=("exec", "op"), device=None, stage=None, callback=None, **options):
        """Live spans of this session as they end (pipeprof.subscribe.Subscription):
        an iterator, or callback(record) on the library's consumer thread.
        roles from "exec", "op", "stage", "partition", "merge", "user"."""
        from .subscribe import Subscription
        sub = Subscription(self._handle, roles, device, stage, callback, **options)
        self._subscriptions.append(sub)
        return sub

    def close(self):
        """Frees the session (stopping it first, without raising), after
        closing its subscriptions."""
        for sub in getattr(self, "_subscriptions", ()):
            sub.close()
        if self._owned and self._handle:
            _lib.pp_session_close(self._handle)
        self._handle = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self.close()

    @property
    def level(self):
        return _lib.pp_session_level(self._handle)

    @property
    def output(self):
        return self._output

    def stats(self):
        """{"recorded", "dropped", "threads"} over all threads so far."""
        st = _lib.SessionStats()
        check(_lib.pp_session_stats_get(self._handle, ctypes.byref(st)), "Profiler.stats")
        return {"recorded": st.recorded, "dropped": st.dropped, "threads": st.threads}

    def trace(self):
        """The records so far as a Trace (analysis, DataFrames), without a file."""
        from .trace import Trace
        model = ctypes.c_void_p()
        check(_lib.pp_model_from_session(self._handle, ctypes.byref(model)), "Profiler.trace")
        return Trace(model, source="(session)")

    # ---- tracks ----

    def device_track(self, device, stream, row=None, simulated=False):
        """The track of one device stream ("GPU.0", 1): same arguments, same track."""
        t = ctypes.c_uint32()
        check(_lib.pp_track_device(self._handle, device.encode(), stream, _lib.encode(row),
                                   1 if simulated else 0, ctypes.byref(t)),
              f"device track {device}/{stream}")
        return t.value

    def reserve_streams(self, device, n):
        """The first of `n` stream numbers of `device` no one in this profiler
        used yet, so that two executors on one device get distinct rows."""
        with self._streams_lock:
            first = self._streams.get(device, 0)
            self._streams[device] = first + n
        return first

    def thread_track(self, name=None):
        """The calling thread's host track; `name` names it the first time."""
        track = getattr(self._local, "track", None)
        if track is None:
            t = ctypes.c_uint32()
            check(_lib.pp_track_thread(self._handle, _lib.encode(name), ctypes.byref(t)),
                  "thread track")
            track = self._local.track = t.value
        return track

    def regions_track(self):
        if self._regions is None:
            t = ctypes.c_uint32()
            check(_lib.pp_track_regions(self._handle, ctypes.byref(t)), "regions track")
            self._regions = t.value
        return self._regions

    # ---- recording ----

    @contextmanager
    def record(self, label):
        """A labeled region ("warm up") on the regions track; analyze a window
        with load(...).summary(region=...) or exclude_region=...."""
        rid = ctypes.c_uint64()
        _recorded(_lib.pp_region_begin(self._handle, intern(label), ctypes.byref(rid)),
                  f"region {label!r}")
        try:
            yield
        finally:
            _recorded(_lib.pp_region_end(self._handle, rid.value), f"region {label!r}")

    def span(self, name, track=None):
        """A span on the calling thread's track (or `track`), timed by the C
        library at enter and exit (pp_push / pp_pop): `with prof.span("x"):`."""
        return _Span(self._handle, self.thread_track() if track is None else track, intern(name))

    def add_span(self, name, ts_ns, dur_ns, track=None, stage=None, role=Role.USER, batch=-1,
                 hw_ns=0, xfer_ns=0, annotations=None):
        """One finished span with the pipeline fields (pp_span). Annotations
        ({key: int | float | str}) go onto this span. Returns False when the
        record was dropped because the budget is spent."""
        rec = getattr(self._local, "rec", None)
        if rec is None:
            rec = self._local.rec = ctypes.create_string_buffer(_lib.SPAN_LAYOUT.size)
        try:
            _lib.SPAN_LAYOUT.pack_into(rec, 0, self.thread_track() if track is None else track,
                                       intern(name), intern(stage) if stage else 0, role, ts_ns,
                                       dur_ns, batch, hw_ns, xfer_ns)
        except struct.error as e:
            raise PipeprofError(_lib.PP_EINVAL, f"span {name!r}: {e}") from None
        rc = _lib.hot_span(self._handle, rec)
        _recorded(rc, f"span {name!r}")
        if rc != _lib.PP_OK:
            return False
        if annotations:
            for key, value in annotations.items():
                self.annotate(key, value)
        return True

    def annotate(self, key, value):
        """A key/value on the calling thread's last record."""
        k = intern(key)
        if isinstance(value, str):
            rc = _lib.pp_annotate_str(self._handle, k, intern(value))
        elif isinstance(value, float):
            rc = _lib.pp_annotate_double(self._handle, k, value)
        else:
            rc = _lib.pp_annotate_int(self._handle, k, int(value))
        _recorded(rc, f"annotation {key!r}")

    def mark(self, name, ts_ns=None, track=None):
        _recorded(_lib.pp_mark(self._handle, self.thread_track() if track is None else track,
                               intern(name), now() if ts_ns is None else ts_ns),
                  f"mark {name!r}")

    def counter(self, name, value, ts_ns=None, track=None):
        _recorded(_lib.pp_counter(self._handle, self.thread_track() if track is None else track,
                                  intern(name), now() if ts_ns is None else ts_ns, value),
                  f"counter {name!r}")

    def flow(self, name, flow_id, phase, ts_ns=None, track=None):
        """One step of flow `flow_id`, bound to the span enclosing ts_ns."""
        _recorded(_lib.pp_flow(self._handle, self.thread_track() if track is None else track,
                               intern(name), now() if ts_ns is None else ts_ns, flow_id,
                               int(phase)), f"flow {name!r}")

    def range_start(self, name):
        """A range that may end on another thread: returns its id for range_stop."""
        rid = ctypes.c_uint64()
        _recorded(_lib.pp_range_start(self._handle, intern(name), ctypes.byref(rid)),
                  f"range {name!r}")
        return rid.value

    def range_stop(self, range_id):
        _recorded(_lib.pp_range_stop(self._handle, range_id), "range_stop")


class _Span:
    """The context manager of Profiler.span: a class rather than a generator,
    because this is the per-span hot path (bench/bench_python.py)."""
    __slots__ = ("handle", "track", "name")

    def __init__(self, handle, track, name):
        self.handle, self.track, self.name = handle, track, name

    def __enter__(self):
        rc = _push(self.handle, self.track, self.name)
        if rc:
            _recorded(rc, "span")
        return self

    def __exit__(self, *exc):
        rc = _pop(self.handle)
        if rc:
            _recorded(rc, "span")
        return False


_push, _pop = _lib.hot_push, _lib.hot_pop


def default_profiler():
    """The session env activation started (PIPEPROF_OUTPUT set when the
    package was imported), or None. It is written by the library at exit."""
    handle = _lib.pp_default_session()
    return Profiler._wrap(handle) if handle else None
