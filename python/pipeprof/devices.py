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
        self._ptr = handle
        self.name = _lib.pp_device_name(handle).decode()     # "NPU": the device on tracks
        self.label = _lib.pp_device_label(handle).decode()   # "NPU (simulated)"
        self.simulated = bool(_lib.pp_device_flags(handle) & _lib.TRACK_SIMULATED)
        _open_by_name[self.name] = self

    def __del__(self, _close=_lib.pp_device_close):
        if getattr(self, "_ptr", None):
            _close(self._ptr)

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

    def _free(self):
        if self._stage:
            _lib.pp_stage_free(self._stage)
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
