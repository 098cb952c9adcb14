"""The user's earlier profiling framework, as its design document
(shared/seeds/000_c96be60d208c54db.txt) writes it: a PipelineProfiler that
logs one Chrome complete event per inference ("{stage}_Batch{n}", cat = the
device, one tid per device stream, ts/dur in float microseconds from the
profiler's start, args batch_id / hw_time_ms / sw_overhead_ms), a
StageExecutor around an OpenVINO InferRequest compiled with PERF_COUNT
(hardware time from profiling_info), and a DataParallelStage that logs
"Partition" and "Merge" on the CPU around two executors.

Three stages of a dummy MatMul model, run for real on OpenVINO's CPU plugin
(the only device here; the document falls back to CPU the same way):
Stage1_GraphPrep, Stage2_Embedding data parallel over two CPU streams,
Stage3_Classifier. Writes the framework's trace; prints nothing else.

usage: seed_pipeline.py OUT.json BATCHES"""
import json
import sys
import time
from dataclasses import asdict, dataclass
from typing import Dict

import numpy as np
import openvino as ov
from openvino import opset10 as ops


@dataclass
class TraceEvent:
    name: str
    cat: str
    ph: str
    ts: float
    dur: float
    pid: int
    tid: int
    args: Dict


class PipelineProfiler:
    def __init__(self):
        self.events = []
        self.start_time_ref = time.perf_counter_ns()

    def log_execution(self, stage_name, device, batch_id, wall_start_ns, wall_end_ns,
                      hw_duration_ms, stream=0):
        start_us = (wall_start_ns - self.start_time_ref) / 1000
        duration_us = (wall_end_ns - wall_start_ns) / 1000
        self.events.append(TraceEvent(
            name=f"{stage_name}_Batch{batch_id}", cat=device, ph="X", ts=start_us,
            dur=duration_us, pid=1, tid=self._get_tid_for_device(device, stream),
            args={"batch_id": batch_id, "hw_time_ms": hw_duration_ms,
                  "sw_overhead_ms": (duration_us / 1000) - hw_duration_ms}))

    def log_event(self, name, device, batch_id, t0_ns, t1_ns):
        """Partition / Merge: CPU work with no hardware time of its own."""
        start_us = (t0_ns - self.start_time_ref) / 1000
        duration_us = (t1_ns - t0_ns) / 1000
        self.events.append(TraceEvent(
            name=name, cat=device, ph="X", ts=start_us, dur=duration_us, pid=1,
            tid=self._get_tid_for_device(device), args={"batch_id": batch_id,
                                                         "hw_time_ms": 0.0,
                                                         "sw_overhead_ms": duration_us / 1000}))

    def _get_tid_for_device(self, device, stream=0):
        # one row per device, and per stream of a device (the document's
        # suggested refinement for data-parallel executors)
        return {"CPU": 1, "GPU": 2, "NPU": 3}.get(device, 0) + 10 * stream

    def export_chrome_trace(self, filename):
        with open(filename, "w") as f:
            json.dump([asdict(e) for e in self.events], f)


def dummy_model():
    param = ops.parameter([1, 128], np.float32, "input")
    const = ops.constant(np.random.default_rng(0).random((128, 128)).astype(np.float32))
    return ov.Model([ops.result(ops.matmul(param, const, False, False))], [param], "dummy_matmul")


class StageExecutor:
    def __init__(self, core, device, stage_name, profiler, stream=0):
        self.profiler, self.device, self.stage_name, self.stream = profiler, device, stage_name, stream
        compiled = core.compile_model(dummy_model(), device, config={"PERF_COUNT": "YES"})
        self.request = compiled.create_infer_request()

    def start_async(self, data):
        self.start_ns = time.perf_counter_ns()
        self.request.start_async({0: data})

    def wait(self, batch_id):
        self.request.wait()
        end_ns = time.perf_counter_ns()
        # the document picks list(Status)[1], which is OPTIMIZED_OUT in this
        # OpenVINO: EXECUTED by name
        hw_time_ms = sum(info.real_time.total_seconds() * 1000.0
                         for info in self.request.profiling_info
                         if info.status == ov.ProfilingInfo.Status.EXECUTED)
        self.profiler.log_execution(self.stage_name, self.device, batch_id, self.start_ns,
                                    end_ns, hw_time_ms, self.stream)
        return self.request.get_output_tensor(0).data.copy()

    def run(self, data, batch_id):
        self.start_async(data)
        return self.wait(batch_id)


class DataParallelStage:
    def __init__(self, name, executors):
        self.name, self.executors = name, executors

    def run(self, input_data, batch_id, profiler):
        t0 = time.perf_counter_ns()
        inputs = [input_data.copy() for _ in self.executors]  # each device takes the row
        t1 = time.perf_counter_ns()
        profiler.log_event("Partition", "CPU", batch_id, t0, t1)
        for exc, x in zip(self.executors, inputs):
            exc.start_async(x)
        results = [exc.wait(batch_id) for exc in self.executors]
        t2 = time.perf_counter_ns()
        merged = np.mean(results, axis=0)
        t3 = time.perf_counter_ns()
        profiler.log_event("Merge", "CPU", batch_id, t2, t3)
        return merged


def main():
    out, batches = sys.argv[1], int(sys.argv[2])
    core = ov.Core()
    profiler = PipelineProfiler()
    stage1 = StageExecutor(core, "CPU", "Stage1_GraphPrep", profiler)
    stage2 = DataParallelStage("Stage2_Embedding",
                               [StageExecutor(core, "CPU", "Stage2_Embedding", profiler, stream=1),
                                StageExecutor(core, "CPU", "Stage2_Embedding", profiler, stream=2)])
    stage3 = StageExecutor(core, "CPU", "Stage3_Classifier", profiler, stream=3)
    x = np.random.default_rng(1).random((1, 128)).astype(np.float32)
    for i in range(batches):
        out1 = stage1.run(x, batch_id=i)
        out2 = stage2.run(out1 / 128.0, i, profiler)
        stage3.run(out2 / 128.0, batch_id=i)
        time.sleep(0.002)  # the document's gap between cycles
    profiler.export_chrome_trace(out)


if __name__ == "__main__":
    main()
