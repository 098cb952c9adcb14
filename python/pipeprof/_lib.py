"""ctypes binding of libpipeprof: finding the library, the C structs the
package passes, the prototypes, and turning status codes into exceptions.

Nothing here records or computes: every figure comes from the C library.
The library is loaded when the package is imported, so that a program run
with PIPEPROF_OUTPUT set gets the library's default session (env
activation, docs/recording.md) exactly as a C program does.

Where the library comes from, first match wins:
  1. $PIPEPROF_LIBRARY (a path; tests point it at a build tree)
  2. libpipeprof.so shipped inside this package (pip install, wheels)
  3. the system's libpipeprof (ctypes.util.find_library)
"""
import ctypes
import ctypes.util
import os
import struct
from ctypes import (POINTER, Structure, Union, c_char, c_char_p, c_double, c_int, c_int64, c_uint,
                    c_size_t, c_uint8, c_uint32, c_uint64, c_void_p)


class PipeprofError(Exception):
    """A pipeprof call failed. `code` is the C status (PP_E*, negative),
    `name` its pp_strerror text; str() is the C library's message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.name = strerror(code)


def _find_library():
    explicit = os.environ.get("PIPEPROF_LIBRARY")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    shipped = os.path.join(here, "libpipeprof.so")
    if os.path.exists(shipped):
        return shipped
    found = ctypes.util.find_library("pipeprof")
    if found:
        return found
    raise ImportError("pipeprof: libpipeprof.so not found: not shipped in " + here +
                      ", not on the system, and PIPEPROF_LIBRARY is not set "
                      "(install with `pip install ./python`, see docs/python.md)")


LIBRARY_PATH = _find_library()
try:
    lib = ctypes.CDLL(LIBRARY_PATH)
except OSError as e:
    raise ImportError(f"pipeprof: cannot load {LIBRARY_PATH}: {e}") from e

# ---- status codes (pipeprof/common.h) ----
PP_OK = 0
PP_EINVAL = -1
PP_ESTATE = -2
PP_ENOMEM = -3
PP_EFULL = -4
PP_EIO = -5
PP_EFORMAT = -6
PP_ETRUNCATED = -7
PP_ENOTFOUND = -8
PP_EUNSUPPORTED = -9


class Error(Structure):
    _fields_ = [("msg", c_char * 512)]


class SessionConfig(Structure):
    _fields_ = [("output", c_char_p), ("level", c_int), ("max_records", c_uint64),
                ("overflow", c_int), ("process_name", c_char_p), ("collect", c_uint),
                ("devices", c_char_p)]


class SpanRec(Structure):
    _fields_ = [("track", c_uint32), ("name", c_uint32), ("stage", c_uint32), ("role", c_int),
                ("ts_ns", c_int64), ("dur_ns", c_int64), ("batch", c_int64),
                ("hw_ns", c_uint64), ("xfer_ns", c_uint64)]


class SchedSample(Structure):
    """pp_sched_sample (pipeprof/sched.h): a thread's scheduler counters."""
    _fields_ = [("cpu_ns", c_int64), ("wait_ns", c_int64), ("voluntary", c_int64),
                ("involuntary", c_int64), ("ts_ns", c_int64)]


COLLECT_SCHED = 1 << 5  # PP_COLLECT_SCHED


class SessionStats(Structure):
    _fields_ = [("recorded", c_uint64), ("dropped", c_uint64), ("threads", c_uint32)]


class EventColumns(Structure):
    _fields_ = [("count", c_size_t),
                ("ts_ns", c_void_p), ("dur_ns", c_void_p), ("batch", c_void_p),
                ("hw_ns", c_void_p), ("xfer_ns", c_void_p), ("id", c_void_p),
                ("value", c_void_p),
                ("name", c_void_p), ("stage", c_void_p), ("track", c_void_p),
                ("kind", c_void_p), ("role", c_void_p), ("phase", c_void_p)]


class TrackInfo(Structure):
    _fields_ = [("kind", c_uint8), ("flags", c_uint32), ("process", c_uint32),
                ("name", c_uint32), ("device", c_uint32), ("stream", ctypes.c_int32),
                ("pid", c_int64), ("tid", c_int64), ("sort_index", ctypes.c_int32)]


class ThreadInfo(Structure):
    _fields_ = [("tid", c_int64), ("name", c_uint32), ("recorded", c_uint64),
                ("dropped", c_uint64)]


class ModelMeta(Structure):
    _fields_ = [("level", c_int), ("process_name", c_uint32), ("dropped_records", c_uint64),
                ("truncated_bytes", c_uint64), ("ignored_events", c_uint64),
                ("unmatched_ends", c_uint64), ("clock", c_uint32), ("host", c_uint32),
                ("boot_id", c_uint32), ("alignment", c_uint32), ("alignment_error_ns", c_int64)]


class _AnnotationValue(Union):
    _fields_ = [("i", c_int64), ("d", c_double), ("s", c_uint32)]


class Annotation(Structure):
    _fields_ = [("event", c_uint64), ("key", c_uint32), ("type", c_uint8),
                ("v", _AnnotationValue)]


class AnalyzeOptions(Structure):
    _fields_ = [("region", c_char_p), ("exclude_region", c_char_p),
                ("has_from", c_int), ("has_to", c_int), ("from_ns", c_int64), ("to_ns", c_int64),
                ("batch_pattern", c_char_p), ("source", c_char_p),
                ("isolated", c_void_p), ("nisolated", c_size_t),
                ("stage_pattern", c_char_p), ("partition_pattern", c_char_p),
                ("merge_pattern", c_char_p)]


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


S = c_void_p   # pp_session *
M = c_void_p   # pp_model *
R = c_void_p   # pp_report *
ERR = POINTER(Error)

pp_strerror = _proto("pp_strerror", c_char_p, c_int)
pp_version = _proto("pp_version", c_char_p)
pp_features = _proto("pp_features", c_char_p)

pp_session_config_init = _proto("pp_session_config_init", None, POINTER(SessionConfig))
pp_session_open = _proto("pp_session_open", c_int, POINTER(SessionConfig), POINTER(S))
pp_session_start = _proto("pp_session_start", c_int, S)
pp_session_pause = _proto("pp_session_pause", c_int, S)
pp_session_resume = _proto("pp_session_resume", c_int, S)
pp_session_stop = _proto("pp_session_stop", c_int, S, ERR)
pp_session_write = _proto("pp_session_write", c_int, S, c_char_p, ERR)
pp_session_close = _proto("pp_session_close", c_int, S)
pp_session_level = _proto("pp_session_level", c_int, S)
pp_session_collect = _proto("pp_session_collect", c_uint, S)
pp_session_set_config = _proto("pp_session_set_config", c_int, S, c_char_p, c_char_p, ERR)
pp_sched_read = _proto("pp_sched_read", c_int, POINTER(SchedSample))
pp_annotate_sched = _proto("pp_annotate_sched", c_int, S, POINTER(SchedSample))
pp_annotate_sched_between = _proto("pp_annotate_sched_between", c_int, S, POINTER(SchedSample),
                                   POINTER(SchedSample))
# pp_span_sched takes the same packed pp_span_rec buffer as hot_span
pp_span_sched = _proto("pp_span_sched", c_int, S, c_void_p, POINTER(SchedSample))
pp_default_session = _proto("pp_default_session", S)
pp_session_stats_get = _proto("pp_session_stats_get", c_int, S, POINTER(SessionStats))
pp_now = _proto("pp_now", c_int64)
pp_intern = _proto("pp_intern", c_uint32, c_char_p)

pp_track_device = _proto("pp_track_device", c_int, S, c_char_p, c_int, c_char_p, c_uint32,
                         POINTER(c_uint32))
pp_track_thread = _proto("pp_track_thread", c_int, S, c_char_p, POINTER(c_uint32))
pp_track_regions = _proto("pp_track_regions", c_int, S, POINTER(c_uint32))
pp_thread_name_set = _proto("pp_thread_name_set", c_int, c_int64, c_char_p)

pp_span = _proto("pp_span", c_int, S, POINTER(SpanRec))
pp_mark = _proto("pp_mark", c_int, S, c_uint32, c_uint32, c_int64)
pp_counter = _proto("pp_counter", c_int, S, c_uint32, c_uint32, c_int64, c_double)
pp_flow = _proto("pp_flow", c_int, S, c_uint32, c_uint32, c_int64, c_uint64, c_int)
pp_push = _proto("pp_push", c_int, S, c_uint32, c_uint32)
pp_pop = _proto("pp_pop", c_int, S)
pp_range_start = _proto("pp_range_start", c_int, S, c_uint32, POINTER(c_uint64))
pp_range_stop = _proto("pp_range_stop", c_int, S, c_uint64)
pp_region_begin = _proto("pp_region_begin", c_int, S, c_uint32, POINTER(c_uint64))
pp_region_end = _proto("pp_region_end", c_int, S, c_uint64)
pp_annotate_int = _proto("pp_annotate_int", c_int, S, c_uint32, c_int64)
pp_annotate_double = _proto("pp_annotate_double", c_int, S, c_uint32, c_double)
pp_annotate_str = _proto("pp_annotate_str", c_int, S, c_uint32, c_uint32)

pp_format_from_path = _proto("pp_format_from_path", c_int, c_char_p)
pp_trace_read = _proto("pp_trace_read", c_int, c_char_p, POINTER(M), ERR)
pp_model_from_session = _proto("pp_model_from_session", c_int, S, POINTER(M))
pp_model_free = _proto("pp_model_free", None, M)
pp_model_string = _proto("pp_model_string", c_char_p, M, c_uint32)
pp_model_string_count = _proto("pp_model_string_count", c_size_t, M)
pp_model_track_count = _proto("pp_model_track_count", c_size_t, M)
pp_model_track = _proto("pp_model_track", POINTER(TrackInfo), M, c_uint32)
pp_model_columns = _proto("pp_model_columns", c_int, M, POINTER(EventColumns))
pp_model_annotations = _proto("pp_model_annotations", POINTER(Annotation), M, POINTER(c_size_t))
pp_model_meta_get = _proto("pp_model_meta_get", POINTER(ModelMeta), M)

# Arrow C Data Interface export (pipeprof/arrow.h): the structs are the
# consumer's memory (pyarrow imports them by address, tables.py).
pp_arrow_export_model = _proto("pp_arrow_export_model", c_int, M, c_char_p, c_char_p, c_void_p,
                               c_void_p, ERR)
pp_arrow_export_report = _proto("pp_arrow_export_report", c_int, c_void_p, c_char_p, c_char_p,
                                c_void_p, c_void_p, ERR)
pp_model_create = _proto("pp_model_create", c_int, POINTER(M))
pp_model_intern = _proto("pp_model_intern", c_int, M, c_char_p, c_size_t, POINTER(c_uint32))
pp_model_add_track = _proto("pp_model_add_track", c_int, M, POINTER(TrackInfo),
                            POINTER(c_uint32))
pp_model_add_thread = _proto("pp_model_add_thread", c_int, M, POINTER(ThreadInfo))
pp_model_add_events = _proto("pp_model_add_events", c_int, M, POINTER(EventColumns),
                             POINTER(c_size_t))
pp_model_add_annotations = _proto("pp_model_add_annotations", c_int, M, POINTER(Annotation),
                                  c_size_t, POINTER(c_size_t))
pp_model_meta_mut = _proto("pp_model_meta_mut", POINTER(ModelMeta), M)

pp_analyze_options_init = _proto("pp_analyze_options_init", None, POINTER(AnalyzeOptions))
pp_report_build = _proto("pp_report_build", c_int, M, POINTER(AnalyzeOptions), POINTER(R), ERR)
pp_report_free = _proto("pp_report_free", None, R)
# the what-if model's prediction of each finding's advice (NULL options: defaults)
pp_whatif_advise = _proto("pp_whatif_advise", c_int, R, M, c_void_p, ERR)
pp_report_json = _proto("pp_report_json", c_int, R, POINTER(c_void_p), POINTER(c_size_t))
pp_report_json_free = _proto("pp_report_json_free", None, c_void_p)


# The span hot path (Profiler.span) calls through a second handle of the same
# library whose functions have no prototypes: ctypes then skips the argtypes
# conversion, which is ~40% of a call's cost (bench/bench_python.py). Only for
# calls whose arguments are a c_void_p session and ints that fit a C int
# (track indices, string ids), and that return int.
_unprototyped = ctypes.CDLL(LIBRARY_PATH)
hot_push = _unprototyped.pp_push
hot_pop = _unprototyped.pp_pop
# pp_span takes its pp_span_rec from a buffer packed with SPAN_LAYOUT: packing
# is a quarter of the cost of building a SpanRec (a ctypes Structure).
hot_span = _unprototyped.pp_span
SPAN_LAYOUT = struct.Struct("=IIIiqqqQQ")
assert SPAN_LAYOUT.size == ctypes.sizeof(SpanRec)


class Handle:
    """One C object that Python owns, freed by `free` once the Python object
    is collected and no C object made on it uses it any more. A C object
    made on others (a stage on its devices and session) pins them and
    unpins them once it is freed itself: finalizers run in any order — as
    the garbage collector runs them over a reference cycle — still free the
    dependents first. `free` None: the library owns the object."""
    __slots__ = ("ptr", "free", "pins", "dead")

    def __init__(self, ptr, free):
        self.ptr, self.free, self.pins, self.dead = ptr, free, 0, False

    def pin(self):
        self.pins += 1

    def unpin(self):
        self.pins -= 1
        if self.dead and self.pins == 0:
            self._release()

    def _release(self):
        free, self.free = self.free, None
        if free is not None:
            free(self.ptr)

    def __del__(self):
        self.dead = True
        if self.pins == 0:
            self._release()


def strerror(code):
    return pp_strerror(code).decode()


def check(code, what, err=None):
    """Raises PipeprofError for a failed status: the C message when the call
    filled one, else `what` and the status name."""
    if code == PP_OK:
        return
    msg = err.msg.decode(errors="replace") if err is not None and err.msg else ""
    raise PipeprofError(code, msg or f"{what}: {strerror(code)}")


def encode(text):
    """A str or path as bytes for C (None stays NULL)."""
    return None if text is None else os.fsencode(text)


# ---- devices and stages (pipeprof/device.h, pipeprof/pipeline.h) ----
STAGE_MAX_DEVICES = 8
TRACK_SIMULATED = 1
TRACK_HW_MEAN = 2      # PP_TRACK_HW_MEAN: hw_ns is a running mean, not each run's own


class Workload(Structure):
    """pp_workload (include/pipeprof/device.h); the model-file inputs stay
    empty from Python (ninputs 0: one nodes x in_dim input)."""
    _fields_ = [("kind", c_int), ("nodes", c_int64), ("edges", c_int64), ("in_dim", c_int64),
                ("out_dim", c_int64), ("layers", c_int), ("seed", c_uint64),
                ("model_path", c_char_p), ("ninputs", c_size_t), ("inputs", c_void_p)]


HOST_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int64, c_void_p, c_void_p, c_int64, c_int64,
                           c_int64)


class StageConfig(Structure):
    _fields_ = [("name", c_char_p), ("ndevices", c_int),
                ("devices", c_void_p * STAGE_MAX_DEVICES),
                ("split", c_double * STAGE_MAX_DEVICES), ("requests", c_int),
                ("workload", Workload), ("host", HOST_FN), ("host_ctx", c_void_p)]


class StageTiming(Structure):
    _fields_ = [("start_ns", c_int64), ("end_ns", c_int64), ("partition_ns", c_int64),
                ("merge_ns", c_int64), ("device_ns", c_int64 * STAGE_MAX_DEVICES),
                ("max_device_ns", c_int64), ("total_ns", c_int64)]


D = c_void_p   # pp_device *
ST = c_void_p  # pp_stage *
pp_workload_init = _proto("pp_workload_init", None, POINTER(Workload))
pp_workload_check = _proto("pp_workload_check", c_int, POINTER(Workload), ERR)
pp_device_open = _proto("pp_device_open", c_int, c_char_p, c_void_p, POINTER(D), ERR)
pp_device_close = _proto("pp_device_close", None, D)
pp_device_label = _proto("pp_device_label", c_char_p, D)
pp_device_flags = _proto("pp_device_flags", ctypes.c_uint, D)
pp_device_name = _proto("pp_device_name", c_char_p, D)
pp_device_reserve_streams = _proto("pp_device_reserve_streams", c_int, D, c_int)
pp_stage_create = _proto("pp_stage_create", c_int, S, POINTER(StageConfig), POINTER(ST), ERR)
pp_stage_free = _proto("pp_stage_free", None, ST)
pp_stage_run = _proto("pp_stage_run", c_int, ST, c_int64, c_void_p, c_void_p,
                      POINTER(StageTiming), ERR)

# ---- report renderers (pipeprof/analyze.h) and the libc calls they need ----
pp_report_write_text = _proto("pp_report_write_text", c_int, R, c_void_p)
pp_report_write_html = _proto("pp_report_write_html", c_int, R, M, c_char_p, ERR)
pp_report_write_csv = _proto("pp_report_write_csv", c_int, R, c_char_p, ERR)
pp_trace_write = _proto("pp_trace_write", c_int, M, c_char_p, ERR)
_libc = ctypes.CDLL(None)
open_memstream = _libc.open_memstream
open_memstream.restype = c_void_p
open_memstream.argtypes = [POINTER(c_void_p), POINTER(c_size_t)]
fclose = _libc.fclose
fclose.restype = c_int
fclose.argtypes = [c_void_p]
libc_free = _libc.free
libc_free.restype = None
libc_free.argtypes = [c_void_p]


class ExecutorConfig(Structure):
    _fields_ = [("device", c_void_p), ("workload", Workload), ("requests", c_int),
                ("stage", c_char_p)]


class ExecWindow(Structure):
    _fields_ = [("count", c_int), ("start_ns", c_int64), ("end_ns", c_int64)]


EX = c_void_p   # pp_executor *
RQ = c_void_p   # pp_request *
pp_executor_create = _proto("pp_executor_create", c_int, S, POINTER(ExecutorConfig), POINTER(EX),
                            ERR)
pp_executor_free = _proto("pp_executor_free", None, EX)
pp_executor_acquire = _proto("pp_executor_acquire", RQ, EX)
pp_executor_start = _proto("pp_executor_start", c_int, EX, RQ, c_int64, c_void_p, c_void_p)
pp_executor_set_share = _proto("pp_executor_set_share", None, EX, RQ, c_double)
pp_executor_set_part = _proto("pp_executor_set_part", None, EX, RQ, ctypes.c_int64)
pp_executor_release = _proto("pp_executor_release", None, EX, RQ)
pp_executor_wait_all = _proto("pp_executor_wait_all", c_int, EX, POINTER(ExecWindow), ERR)
pp_request_input = _proto("pp_request_input", c_void_p, RQ)
pp_request_output = _proto("pp_request_output", c_void_p, RQ)


# ---- the mirrors above against the library's own sizes ----
pp_struct_size = _proto("pp_struct_size", c_size_t, c_char_p)
MIRRORS = {"pp_error": Error, "pp_session_config": SessionConfig, "pp_span_rec": SpanRec,
           "pp_session_stats": SessionStats, "pp_event_columns": EventColumns,
           "pp_track_info": TrackInfo, "pp_model_meta": ModelMeta, "pp_annotation": Annotation,
           "pp_analyze_options": AnalyzeOptions, "pp_workload": Workload,
           "pp_stage_config": StageConfig, "pp_stage_timing": StageTiming,
           "pp_executor_config": ExecutorConfig, "pp_exec_window": ExecWindow}


def check_mirrors(mirrors):
    """Raises ImportError naming every ctypes mirror whose size is not the
    library's sizeof of its C struct: a mirror that drifted from its header
    would make every call that passes it read or write the wrong bytes."""
    wrong = []
    for name, mirror in mirrors.items():
        size = pp_struct_size(name.encode())
        if size != ctypes.sizeof(mirror):
            wrong.append(f"{name}: {ctypes.sizeof(mirror)} bytes here, "
                         + (f"{size} in the library" if size else "unknown to the library"))
    if wrong:
        raise ImportError(f"pipeprof: the Python package does not match {lib._name}: "
                          + "; ".join(wrong) + " (install the package and library together)")


check_mirrors(MIRRORS)
