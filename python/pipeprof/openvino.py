"""OpenVINO helpers: the seeds' StageExecutor and DataParallelStage, recording
through libpipeprof with the fields, roles and tracks of the C pipeline
runtime (include/pipeprof/pipeline.h), so that a Python pipeline's trace
and report read like `pipeprof run`'s:

  exec       one span per request on its device row ("CPU/req 0"), named
             after the stage, role exec, with stage, batch, hw_ns, xfer_ns;
             wall = right before start_async to the completion callback
  op         at level 2, one span per EXECUTED op inside its exec, with
             "type", "exec_type" and "cpu_ns" annotations
  partition, merge, stage
             on the host thread that runs the stage; the stage span carries
             partition_ns, max_device_ns, merge_ns and total_ns

Hardware time comes from request.profiling_info (compile with
PERF_COUNT=YES): hw_ns = the sum of real_time over EXECUTED ops, xfer_ns =
the part of it spent in ops that move or convert data rather than compute
(TRANSFER_TYPES: Reorder, Convert, and the Parameter / Result marshalling of
the request's tensors) — the rule of the C openvino backend
(docs/backends.md). OpenVINO reports no per-op start time, so op spans are
laid end to end from the exec's start, in reported order, clipped to the
exec's end.
"""
import threading

import numpy as np
import openvino as ov

from .devices import Device, DeviceExecutor, reserve_streams
from .profiler import Profiler, Role, current_profiler, now
from .workloads import Workload

TRANSFER_TYPES = frozenset(("Reorder", "Convert", "Parameter", "Result"))
_EXECUTED = ov.ProfilingInfo.Status.EXECUTED


def _ns(delta):
    """A datetime.timedelta (profiling_info times) in integer nanoseconds."""
    return ((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000


def _perf_count_on(compiled):
    # The property reads back as a bool or as "YES" / "NO", by version.
    value = compiled.get_property("PERF_COUNT")
    return value is True or str(value).upper() in ("YES", "TRUE")


def request_profile(profiling_info):
    """(hw_ns, xfer_ns, executed ops) of one request's profiling_info."""
    hw = xfer = 0
    ops = []
    for info in profiling_info:
        if info.status != _EXECUTED:
            continue
        real = _ns(info.real_time)
        hw += real
        if info.node_type in TRANSFER_TYPES:
            xfer += real
        ops.append(info)
    return hw, xfer, ops


def hw_is_running_mean(device):
    """Whether OpenVINO reports this device's per-op real_time as a running
    mean over the runs so far rather than each run's own: its CPU plugin
    does, and AUTO may run on the CPU. The same rule as the C openvino
    backend's (src/device/openvino/ov_device.c), so that a Python pipeline's
    report labels its hardware figures as the C runtime's does."""
    return "CPU" in device or device == "AUTO"


def _no_profiler_first(cls, first):
    if first is None or isinstance(first, Profiler):
        raise TypeError(f"{cls}: the profiler is the keyword argument profiler= now (default: "
                        "the current profiler when it runs), e.g. "
                        f"{cls}(model, 'CPU', profiler=prof)")


class StageExecutor:
    """One device, `requests` requests in flight (an AsyncInferQueue); one
    exec span per request on the row of its request slot.

    `model` is an ov.Model (compiled here on `device` with PERF_COUNT=YES),
    an ov.CompiledModel (compiled with PERF_COUNT=YES), or an
    ov.AsyncInferQueue (then `device` names its device and `requests` is its
    size; the executor sets the queue's callback). On a built-in device
    (`device=pipeprof.device("sim:NPU")`, "cpu", "openvino:CPU") `model` is
    a pipeprof.workloads model and the executor is the C one
    (pipeprof.devices.DeviceExecutor), with the same methods. `stage` names the stage
    of its execs: by default the DataParallelStage it joins, else the
    model's name. `profiler`: where to record; by default the current
    profiler (pipeprof.current_profiler()) when a request starts, and
    nothing when there is none.
    """

    def __new__(cls, model=None, device="CPU", stage=None, requests=1, core=None,
                profiler=None):
        # A built-in device (pipeprof.device("sim:NPU")) stands where an
        # OpenVINO device does: the executor is then the C one.
        if isinstance(device, Device):
            if not isinstance(model, Workload):
                raise TypeError(f"StageExecutor on {device.label}: a built-in device runs a "
                                "pipeprof.workloads model (matmul, sage), not "
                                f"{type(model).__name__}")
            return DeviceExecutor(model, device, stage, requests, profiler)
        return super().__new__(cls)

    def __init__(self, model, device="CPU", stage=None, requests=1, core=None, profiler=None):
        _no_profiler_first("StageExecutor", model)
        if isinstance(model, ov.AsyncInferQueue):
            self.queue = model
            default_name = "infer"
            self._perf_count = True   # the queue's compile is the caller's; its profile says
        else:
            if isinstance(model, ov.Model):
                default_name = model.friendly_name
                model = (core or ov.Core()).compile_model(model, device, {"PERF_COUNT": "YES"})
            else:
                default_name = model.get_runtime_model().friendly_name
            self._perf_count = _perf_count_on(model)
            if profiler is not None and profiler.level >= 1 and not self._perf_count:
                raise ValueError(f"StageExecutor {stage or ''}: the model on {device} was "
                                 "compiled without PERF_COUNT=YES: no hardware time to record")
            self.queue = ov.AsyncInferQueue(model, requests)
        self.profiler = profiler
        self.device = device
        self.stage = stage
        self._default_name = default_name or "infer"
        self.requests = len(self.queue)
        self._results = {}
        self._errors = []
        self._window = None
        self._lock = threading.Lock()
        self._next_key = 0
        self._tracks_of = (None, [])   # (profiler, its device tracks of this executor's slots)
        self.queue.set_callback(self._done)

    @property
    def name(self):
        """The stage name its execs carry."""
        return self.stage or self._default_name

    def _tracks(self, prof):
        owner, tracks = self._tracks_of
        if owner is not prof:
            first = reserve_streams(prof, self.device, self.requests)
            tracks = [prof.device_track(self.device, first + i, f"req {first + i}",
                                        hw_mean=hw_is_running_mean(self.device))
                      for i in range(self.requests)]
            self._tracks_of = (prof, tracks)
        return tracks

    def start(self, inputs, batch=-1, share=None, part=None):
        """Starts one request on `inputs` (what start_async takes) for
        `batch`; returns the key of its result (result(key) after wait).
        `share`: the part of the batch's work this request does (0..1),
        recorded as the exec's "share" annotation, from which the analyzer
        computes data-parallel rates and the balanced split. `part`: which
        executor of a data-parallel stage this is (0, 1, ...), recorded as
        the "part" annotation, so that two executors on one device are two
        parts of the stage (docs/analysis.md, "Stages, cycles, batches")."""
        prof = self.profiler or current_profiler()
        tracks = self._tracks(prof) if prof is not None else None
        slot = self.queue.get_idle_request_id()
        key = self._next_key
        self._next_key += 1
        notes = {} if share is None else {"share": float(share)}
        if part is not None:
            notes["part"] = int(part)
        self.queue.start_async(inputs, (key, slot, batch, notes or None, prof, tracks, now()))
        return key

    def _done(self, request, userdata):
        end = now()
        key, slot, batch, notes, prof, tracks, start = userdata
        try:
            if prof is not None and not prof.closed:
                self._record(prof, tracks[slot], request, batch, notes, start, end)
            self._results[key] = [t.data.copy() for t in request.output_tensors]
        except Exception as e:  # surfaced by wait_all on the caller's thread
            self._errors.append(e)
        with self._lock:
            w = self._window
            self._window = (start, end) if w is None else (min(w[0], start), max(w[1], end))

    def _record(self, prof, track, request, batch, notes, start, end):
        level = prof.level
        hw = xfer = 0
        ops = []
        if level >= 1 and self._perf_count:
            hw, xfer, ops = request_profile(request.profiling_info)
        kept = prof.add_span(self.name, start, end - start, track=track, stage=self.name,
                             role=Role.EXEC, batch=batch, hw_ns=hw, xfer_ns=xfer,
                             annotations=notes)
        if not kept or level < 2:
            return
        t = start
        for info in ops:
            real = min(_ns(info.real_time), max(end - t, 0))
            annotations = {"type": info.node_type, "exec_type": info.exec_type}
            cpu = _ns(info.cpu_time)
            if cpu:
                annotations["cpu_ns"] = cpu
            prof.add_span(info.node_name, t, real, track=track, stage=self.name, role=Role.OP,
                          batch=batch, hw_ns=real,
                          xfer_ns=real if info.node_type in TRANSFER_TYPES else 0,
                          annotations=annotations)
            t += real

    def wait_all(self):
        """Waits for every request in flight; returns (first start, last end)
        of the requests finished since the previous wait (None if none).
        Raises the first error a completion callback met."""
        self.queue.wait_all()
        if self._errors:
            error, self._errors = self._errors[0], []
            raise error
        with self._lock:
            window, self._window = self._window, None
        return window

    def result(self, key):
        """The output arrays of a finished request (once)."""
        return self._results.pop(key)

    def run(self, inputs, batch=-1):
        """One request, start to wait: its output arrays."""
        key = self.start(inputs, batch)
        self.wait_all()
        return self.result(key)


def _split_rows(data, shares):
    bounds = np.rint(np.cumsum(shares) / np.sum(shares) * len(data)).astype(int)
    return np.split(data, bounds[:-1])


class DataParallelStage:
    """One stage run by K executors for one batch at a time: partition the
    batch's rows on the host (by `split` shares, equal by default; each
    device's rows evenly over its requests), start every request, wait for
    all, merge the outputs (concatenated rows). Recorded as the C
    pp_stage_run records it: partition and merge spans when there is more
    than one request slot, and a stage span with partition_ns,
    max_device_ns, merge_ns and total_ns (= partition + max device wall +
    merge; with one slot, the stage span's wall); each exec carries its
    "share" of the batch's rows, so the report's rates and suggested split
    follow the split actually used. One executor makes a
    plain single-device stage. `partition(data) -> [rows per device]` and
    `merge([output per request]) -> output` replace the defaults. Executors
    without a stage name take this stage's; `profiler` (default: the current
    one when a batch runs) is theirs too unless they name one.
    """
    records_stage = True  # a Pipeline adds no stage span of its own

    def __init__(self, name, executors, split=None, partition=None, merge=None, profiler=None):
        _no_profiler_first("DataParallelStage", name)
        if not executors:
            raise ValueError(f"DataParallelStage {name}: needs at least one executor")
        if split is not None and (len(split) != len(executors) or min(split) < 0 or
                                  sum(split) <= 0):
            raise ValueError(f"DataParallelStage {name}: split {list(split)} must have one "
                             f"non-negative share per executor ({len(executors)}), not all 0")
        self.profiler = profiler
        self.name = name
        self.executors = list(executors)
        for ex in self.executors:
            ex.stage = ex.stage or name
            ex.profiler = ex.profiler or profiler
        self.split = list(split) if split is not None else [1] * len(executors)
        self._partition = partition or (lambda data: _split_rows(data, self.split))
        self._merge = merge or (lambda outputs: np.concatenate(outputs, axis=0))
        self.slots = sum(ex.requests for ex in self.executors)
        self.last_timing = None

    def run(self, data, batch):
        """Runs one batch; returns the merged output. last_timing holds
        start_ns, end_ns, partition_ns, device_ns (per executor),
        max_device_ns, merge_ns and total_ns."""
        prof = self.profiler or current_profiler()
        track = prof.thread_track(self.name) if prof is not None else None
        marks = []  # the scheduler samples at the four bounds, when collected

        def mark():
            at = prof.sched_start() if prof is not None else None
            marks.append(at)
            return now() if at is None else at.ts_ns
        start = mark()
        chunks = [[c for c in np.array_split(part, ex.requests) if len(c)]
                  for ex, part in zip(self.executors, self._partition(data))]
        partitioned = mark()
        rows = max(len(data), 1)
        several = len(self.executors) > 1
        keys = [[ex.start({0: c}, batch, share=len(c) / rows, part=i if several else None)
                 for c in cs] for i, (ex, cs) in enumerate(zip(self.executors, chunks))]
        device_ns = []
        for ex in self.executors:
            window = ex.wait_all()
            device_ns.append(window[1] - window[0] if window else 0)
        merge_start = mark()
        out = self._merge([ex.result(k)[0] for ex, ks in zip(self.executors, keys) for k in ks])
        end = mark()
        t = {"start_ns": start, "end_ns": end, "partition_ns": 0, "merge_ns": 0,
             "device_ns": device_ns, "max_device_ns": max(device_ns), "total_ns": end - start}
        if self.slots > 1:
            t["partition_ns"] = partitioned - start
            t["merge_ns"] = end - merge_start
            t["total_ns"] = t["partition_ns"] + t["max_device_ns"] + t["merge_ns"]
        if prof is not None:
            self._record(prof, track, batch, t, partitioned, merge_start,
                         marks if None not in marks else None)
        self.last_timing = t
        return out

    def _record(self, prof, track, batch, t, partitioned, merge_start, marks):
        """The spans of one batch; `marks`: the scheduler samples at start,
        partition end, merge start and end (None: not collected), whose
        figures go onto the spans they bound."""
        if self.slots > 1:
            if prof.add_span("partition", t["start_ns"], partitioned - t["start_ns"],
                             track=track, stage=self.name, role=Role.PARTITION,
                             batch=batch) and marks:
                prof.annotate_sched(marks[0], marks[1])
            if prof.add_span("merge", merge_start, t["end_ns"] - merge_start, track=track,
                             stage=self.name, role=Role.MERGE, batch=batch) and marks:
                prof.annotate_sched(marks[2], marks[3])
        if prof.add_span(self.name, t["start_ns"], t["end_ns"] - t["start_ns"], track=track,
                         stage=self.name, role=Role.STAGE, batch=batch,
                         annotations={k: t[k] for k in ("partition_ns", "max_device_ns",
                                                        "merge_ns", "total_ns")}) and marks:
            prof.annotate_sched(marks[0], marks[3])
