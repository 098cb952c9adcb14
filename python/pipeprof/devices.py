"""Devices of the built-in backends from Python, and stages over them.

    npu = pipeprof.device("sim:NPU")          # simulated: labeled so everywhere
    stage = pipeprof.Stage("Embedding", ["cpu", npu], pipeprof.workloads.matmul())
    y = stage.run(x, batch=0)

A Stage is the C runtime's stage (pp_stage_run, include/pipeprof/pipeline.h)
driven through ctypes: the same executors, request slots, device rows,
partition / merge / stage spans and simulated labels as `pipeprof run`, and
the device work runs in C with the GIL released, so stages on different
threads overlap. Specs: "cpu", "sim:NPU", "sim:GPU", "openvino:CPU" (any
OpenVINO device, when pipeprof.features lists openvino); docs/backends.md
says what hardware time means on each.
"""
import ctypes
import threading
import weakref

import numpy as np

from . import _lib
from ._lib import PipeprofError, check
from .profiler import current_profiler


class Device:
    """One open device of a built-in backend. Opening a spec that is open
    already gives the same C device (two stages on "sim:NPU" share one NPU)."""

    def __init__(self, spec):
        self.spec = spec
        handle = ctypes.c_void_p()
        err = _lib.Error()
        check(_lib.pp_device_open(_lib.encode(spec), None, ctypes.byref(handle),
                                  ctypes.byref(err)), f"device {spec!r}", err)
        self._handle = _lib.Handle(handle, _lib.pp_device_close)
        self._ptr = handle
        self.name = _lib.pp_device_name(handle).decode()     # "NPU": the device on tracks
        self.label = _lib.pp_device_label(handle).decode()   # "NPU (simulated)"
        self.simulated = bool(_lib.pp_device_flags(handle) & _lib.TRACK_SIMULATED)
        _open_by_name[self.name] = self

    def __repr__(self):
        return f"pipeprof.device({self.spec!r})  # {self.label}"


# Open devices by track name, so that Python executors on a device of the
# same name ("CPU" of OpenVINO's Python API beside the cpu backend) take
# their rows from the device's own counter rather than reuse a row of it.
_open_by_name = weakref.WeakValueDictionary()


def reserve_streams(prof, device_name, n):
    """The first of `n` rows of `device_name` for an executor recording into
    `prof`: from the open built-in device of that name, else the profiler's."""
    d = _open_by_name.get(device_name)
    if d is not None:
        return _lib.pp_device_reserve_streams(d._ptr, n)
    return prof.reserve_streams(device_name, n)


def _pin(handles):
    """What a C object made on `handles` keeps alive until it is freed."""
    pinned = [h for h in handles if h is not None]
    for h in pinned:
        h.pin()
    return pinned


def _unpin(pinned):
    for h in pinned:
        h.unpin()


def device(spec):
    """The device a spec names: "cpu", "sim:NPU", "sim:GPU", "openvino:CPU".
    An unknown backend or device raises PipeprofError listing what exists."""
    return spec if isinstance(spec, Device) else Device(spec)


class Stage:
    """One pipeline stage on built-in devices: one device, or data parallel
    over several (rows split by `split` shares, equal by default; each
    device's rows evenly over its `requests` slots). `workload` describes the
    whole batch (pipeprof.workloads). run() records into `profiler`, else the
    current profiler (current_profiler()) at the time of the call; one
    thread at a time runs a stage, and its spans go on the first thread's
    row (a pipeline gives each stage a thread of its own)."""
    records_stage = True  # pp_stage_run records the stage span: a Pipeline adds none

    def __init__(self, name, devices, workload, split=None, requests=1, profiler=None):
        if isinstance(devices, (str, Device)):
            devices = [devices]
        if not 1 <= len(devices) <= _lib.STAGE_MAX_DEVICES:
            raise PipeprofError(_lib.PP_EINVAL, f"Stage {name}: {len(devices)} devices "
                                f"(expected 1..{_lib.STAGE_MAX_DEVICES})")
        if split is not None and len(split) != len(devices):
            raise PipeprofError(_lib.PP_EINVAL, f"Stage {name}: split {list(split)} has "
                                f"{len(split)} values for {len(devices)} devices")
        self.name = name
        self.devices = [device(d) for d in devices]
        self.workload = workload
        self.split = list(split) if split is not None else [0.0] * len(devices)
        self.requests = requests
        self.profiler = profiler
        self.last_timing = None
        self._lock = threading.Lock()
        self._stage = None     # the C stage, made for the session in _for
        self._for = None
        # Made now, so that a bad config is refused here, for the profiler
        # it will most likely record into (another one remakes it).
        prof = profiler or current_profiler()
        self._make(prof._live(f"Stage {name}") if prof is not None else None)

    def _make(self, session):
        cfg = _lib.StageConfig()
        cfg.name = self.name.encode()
        cfg.ndevices = len(self.devices)
        for i, d in enumerate(self.devices):
            cfg.devices[i] = d._ptr
            cfg.split[i] = self.split[i]
        cfg.requests = self.requests
        cfg.workload = self.workload.to_c()
        handle = ctypes.c_void_p()
        err = _lib.Error()
        check(_lib.pp_stage_create(session.ptr if session else None, ctypes.byref(cfg),
                                   ctypes.byref(handle), ctypes.byref(err)),
              f"Stage {self.name}", err)
        self._free()
        self._stage, self._for = handle, session
        self._pins = _pin([session] + [d._handle for d in self.devices])

    def _free(self):
        if self._stage:
            _lib.pp_stage_free(self._stage)
            _unpin(self._pins)
        self._stage = None

    def __del__(self):
        if getattr(self, "_stage", None):
            self._free()

    @property
    def labels(self):
        """The devices as people read them: ["CPU", "NPU (simulated)"]."""
        return [d.label for d in self.devices]

    def run(self, data, batch=-1):
        """Runs one batch (nodes x in_dim floats) and returns its output
        (nodes x out_dim float32). last_timing: start_ns, end_ns,
        partition_ns, merge_ns, device_ns (per device), max_device_ns,
        total_ns."""
        w = self.workload
        x = np.ascontiguousarray(data, dtype=np.float32)
        if x.shape != (w.nodes, w.in_dim):
            raise PipeprofError(_lib.PP_EINVAL, f"Stage {self.name}: input of shape {x.shape}, "
                                f"expected ({w.nodes}, {w.in_dim})")
        out = np.empty((w.nodes, w.out_dim), dtype=np.float32)
        prof = self.profiler or current_profiler()
        session = prof._live(f"Stage {self.name}") if prof is not None else None
        timing = _lib.StageTiming()
        err = _lib.Error()
        with self._lock:
            if session is not self._for:
                self._make(session)
            check(_lib.pp_stage_run(self._stage, batch, x.ctypes.data, out.ctypes.data,
                                    ctypes.byref(timing), ctypes.byref(err)),
                  f"Stage {self.name}: batch {batch}", err)
        n = len(self.devices)
        self.last_timing = {"start_ns": timing.start_ns, "end_ns": timing.end_ns,
                            "partition_ns": timing.partition_ns, "merge_ns": timing.merge_ns,
                            "device_ns": list(timing.device_ns[:n]),
                            "max_device_ns": timing.max_device_ns, "total_ns": timing.total_ns}
        return out


class DeviceExecutor:
    """A built-in device as an executor, with the interface of
    pipeprof.openvino.StageExecutor (start, wait_all, result, run), so a
    simulated NPU can join an OpenVINO DataParallelStage or a Pipeline. It
    is the C executor (pp_executor): one exec span per request on the row
    of its slot, hardware time from the backend. `workload` is one
    request's model: a request takes up to workload.nodes rows (a shorter
    input is padded with zeros; its output rows are returned). The
    executor is made, for the profiler it records into, when a request
    first starts."""

    def __init__(self, workload, device, stage=None, requests=1, profiler=None):
        self.workload = workload
        self.device_obj = device if isinstance(device, Device) else Device(device)
        self.device = self.device_obj.name
        self.stage = stage
        self.requests = requests
        self.profiler = profiler
        self._ex = None
        self._for = (None, None)    # (session, stage name) the C executor was made for
        self._pending = []          # (key, request, rows) started since the last wait
        self._results = {}
        self._next_key = 0

    @property
    def name(self):
        return self.stage or self.workload.kind

    def _executor(self):
        prof = self.profiler or current_profiler()
        session = prof._live(f"executor on {self.device}") if prof is not None else None
        if self._ex is None or self._for != (session, self.name):
            self._free()
            cfg = _lib.ExecutorConfig()
            cfg.device = self.device_obj._ptr
            cfg.workload = self.workload.to_c()
            cfg.requests = self.requests
            cfg.stage = self.name.encode()
            handle = ctypes.c_void_p()
            err = _lib.Error()
            check(_lib.pp_executor_create(session.ptr if session else None, ctypes.byref(cfg),
                                          ctypes.byref(handle), ctypes.byref(err)),
                  f"executor {self.name} on {self.device_obj.label}", err)
            self._ex, self._for = handle, (session, self.name)
            self._pins = _pin([session, self.device_obj._handle])
        return self._ex

    def _free(self):
        if self._ex:
            _lib.pp_executor_free(self._ex)   # waits for its requests
            _unpin(self._pins)
        self._ex = None

    def __del__(self):
        if getattr(self, "_ex", None):
            self._free()

    def start(self, inputs, batch=-1, share=None, part=None):
        """Starts one request on `inputs` (rows x in_dim, or {0: rows}) for
        `batch`; returns the key of its result. `share` (0..1, the part of
        the batch's work this request does) is recorded as the exec's "share"
        annotation, from which the analyzer starts its data-parallel split;
        `part` (which executor of a data-parallel stage this is) as "part"."""
        w = self.workload
        x = np.ascontiguousarray(inputs[0] if isinstance(inputs, dict) else inputs,
                                 dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != w.in_dim or not 0 < x.shape[0] <= w.nodes:
            raise PipeprofError(_lib.PP_EINVAL, f"executor {self.name} on "
                                f"{self.device_obj.label}: input of shape {x.shape}, expected "
                                f"1..{w.nodes} rows of {w.in_dim}")
        ex = self._executor()
        req = _lib.pp_executor_acquire(ex)
        buf = np.ctypeslib.as_array(
            (ctypes.c_float * (w.nodes * w.in_dim)).from_address(_lib.pp_request_input(req)))
        buf[:x.size] = x.ravel()
        buf[x.size:] = 0
        _lib.pp_executor_set_share(ex, req, -1.0 if share is None else float(share))
        _lib.pp_executor_set_part(ex, req, -1 if part is None else int(part))
        rc = _lib.pp_executor_start(ex, req, batch, None, None)
        check(rc, f"executor {self.name} on {self.device_obj.label}: batch {batch}")
        key = self._next_key
        self._next_key += 1
        self._pending.append((key, req, x.shape[0]))
        return key

    def wait_all(self):
        """Waits for every request in flight; returns (first start, last end)
        of the execs finished since the previous wait (None if none)."""
        if self._ex is None:
            return None
        win = _lib.ExecWindow()
        err = _lib.Error()
        rc = _lib.pp_executor_wait_all(self._ex, ctypes.byref(win), ctypes.byref(err))
        w = self.workload
        for key, req, rows in self._pending:
            out = np.ctypeslib.as_array((ctypes.c_float * (w.nodes * w.out_dim)).from_address(
                _lib.pp_request_output(req)))
            self._results[key] = [out[:rows * w.out_dim].reshape(rows, w.out_dim).copy()]
        self._pending = []
        check(rc, f"executor {self.name} on {self.device_obj.label}", err)
        return (win.start_ns, win.end_ns) if win.count else None

    def result(self, key):
        """The output arrays of a finished request (once)."""
        return self._results.pop(key)

    def run(self, inputs, batch=-1):
        key = self.start(inputs, batch)
        self.wait_all()
        return self.result(key)
