"""Pipeline: stages joined by bounded queues, one thread per stage, batches
streaming through, so that different batches overlap across stages — the C
runtime's streaming runner (src/pipeline/run.c) with the same records:

  - each stage runs on a thread of its own, whose row is named after it
  - a stage span (role stage) per stage and batch on that row: recorded by
    a Stage or DataParallelStage itself, by the runner around anything else
    (an OpenVINO StageExecutor, a plain callable: host work)
  - a flow "batch" (id batch + 1) through the stage spans of each batch
  - the first `warmup` batches inside a "warm up" region, closed when the
    last of them has left the last stage, before any measured batch enters
  - a counter "queue_depth" with the queues' depth at the first batch

The runner is Python on the C recording API rather than the C runner
(pp_pipeline_run) driven through ctypes, because its stages are Python
objects: OpenVINO's Python API and plain callables take and return any
Python value, which the C runner's float-buffer host functions cannot carry.
Device stages still run in C (Stage is pp_stage_run, with the GIL released),
so the overlap is real. docs/python.md gives the measured cost per batch.
"""
import queue
import threading

from . import _lib
from .profiler import Role, current_profiler, now

_DONE = object()


def _stage_name(stage):
    if isinstance(stage, tuple):
        return stage[0]
    name = getattr(stage, "name", None)
    if isinstance(name, str):
        return name
    return getattr(stage, "__name__", None) or type(stage).__name__


class _Step:
    """One stage as the runner calls it: run(prof, data, batch) -> (output,
    start_ns of its stage span)."""

    def __init__(self, stage):
        self.name = _stage_name(stage)
        fn = stage[1] if isinstance(stage, tuple) else stage
        self.records_stage = getattr(fn, "records_stage", False)
        if hasattr(fn, "run"):
            if getattr(fn, "stage", "") is None:
                fn.stage = self.name  # an executor's execs carry the stage it is
            self.call = fn.run
            self.unwrap = not self.records_stage  # StageExecutor.run returns [outputs]
            self.stage = fn
        elif callable(fn):
            self.call = lambda data, batch: fn(data)
            self.unwrap = False
            self.stage = fn
        else:
            raise _lib.PipeprofError(_lib.PP_EINVAL, f"Pipeline: stage {self.name!r} is neither "
                                     "a stage (with run(data, batch)) nor a callable")

    def run(self, prof, track, data, batch):
        if self.records_stage:
            out = self.call(data, batch)
            return out, self.stage.last_timing["start_ns"]
        at = prof.sched_start() if prof is not None else None
        start = now() if at is None else at.ts_ns
        out = self.call(data, batch)
        if at is not None:  # the end time and the scheduler counters read together
            prof.end_span_sched(self.name, at, track=track, stage=self.name, role=Role.STAGE,
                                batch=batch)
        else:
            end = now()
            if prof is not None:
                prof.add_span(self.name, start, end - start, track=track, stage=self.name,
                              role=Role.STAGE, batch=batch)
        if self.unwrap and isinstance(out, list) and len(out) == 1:
            out = out[0]
        return out, start


class Pipeline:
    """Stages in order; each takes the previous one's output. A stage is a
    pipeprof.Stage (built-in devices, simulated ones included), a
    pipeprof.openvino StageExecutor or DataParallelStage, a plain callable
    (data -> output; host work, named by its __name__), or a (name, stage)
    pair. `queue_depth` batches wait between two stages at most. Records
    into `profiler`, else the current profiler when run() starts."""

    def __init__(self, stages, queue_depth=2, profiler=None):
        if not stages:
            raise _lib.PipeprofError(_lib.PP_EINVAL, "Pipeline: no stages")
        if not 1 <= queue_depth <= 64:
            raise _lib.PipeprofError(_lib.PP_EINVAL,
                                     f"Pipeline: queue_depth {queue_depth} (expected 1..64)")
        self.steps = [_Step(s) for s in stages]
        names = [s.name for s in self.steps]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise _lib.PipeprofError(_lib.PP_EINVAL, f"Pipeline: stages[{i}] is named "
                                         f"{name!r} like stages[{names.index(name)}]")
        self.queue_depth = queue_depth
        self.profiler = profiler
        self.last_run = None

    def run(self, inputs, warmup=0):
        """Streams every batch of `inputs` (an iterable: batch b is its b-th
        item) through the stages; returns the last stage's outputs in batch
        order. The first `warmup` batches are the warm-up. last_run holds
        batches, wall_ns and batches_per_s over the measured ones (first
        entering the first stage to last leaving the last). The first error
        a stage raises stops the run and is raised here, with a note naming
        the stage and the batch."""
        return _Run(self, self.profiler or current_profiler(), warmup).go(iter(inputs))


class _Run:
    def __init__(self, pipeline, prof, warmup):
        self.steps = pipeline.steps
        self.pipeline = pipeline
        self.prof = prof
        self.warmup = warmup
        n = len(self.steps)
        self.queues = [queue.Queue(maxsize=pipeline.queue_depth) for _ in range(n)]
        self.outputs = {}
        self.cond = threading.Condition()
        self.finished = 0
        self.error = None
        self.first_in = self.last_out = None

    def fail(self, step, batch, exc):
        with self.cond:
            if self.error is None:
                self.error = (step.name, batch, exc)
            self.cond.notify_all()

    def stop(self):
        """Makes every stage drain its queue without running the batches."""
        with self.cond:
            if self.error is None:
                self.error = ("(the caller)", self.fed, None)
            self.cond.notify_all()

    def stage_main(self, k):
        step, prof = self.steps[k], self.prof
        last = k + 1 == len(self.steps)
        track = prof.thread_track(step.name) if prof is not None else None
        linked = len(self.steps) > 1 and prof is not None
        phase = 0 if k == 0 else 2 if last else 1
        inbox, outbox = self.queues[k], None if last else self.queues[k + 1]
        while True:
            item = inbox.get()
            if item is _DONE:
                break
            if self.error is not None:
                continue  # drain, so that the stages upstream never block
            batch, data = item
            try:
                out, start = step.run(prof, track, data, batch)
                if linked:
                    prof.flow("batch", batch + 1, phase, ts_ns=start, track=track)
                if k == 0 and batch == 0 and prof is not None:
                    # the queues' depth, once, as the C runner records it (a
                    # model of the run reads it: docs/whatif.md)
                    prof.counter("queue_depth", self.pipeline.queue_depth, ts_ns=start,
                                 track=track)
            except BaseException as e:  # noqa: BLE001 - raised again by run(), on the caller's thread
                # BaseException too: a stage's SystemExit or KeyboardInterrupt
                # once killed its thread and left the feeder blocked forever.
                self.fail(step, batch, e)
                continue
            if k == 0 and batch == self.warmup:
                self.first_in = start
            if last:
                with self.cond:
                    self.outputs[batch] = out
                    self.finished += 1
                    self.last_out = now()
                    self.cond.notify_all()
            else:
                outbox.put((batch, out))
        if outbox is not None:
            outbox.put(_DONE)

    def feed(self, inputs, count):
        """Puts up to `count` batches (None: all) into the first queue."""
        fed = 0
        while count is None or fed < count:
            if self.error is not None:
                return
            try:
                data = next(inputs)
            except StopIteration:
                return
            self.queues[0].put((self.fed, data))
            self.fed += 1
            fed += 1

    def go(self, inputs):
        prof = self.prof
        self.fed = 0
        threads = [threading.Thread(target=self.stage_main, args=(k,), name=step.name[:15],
                                    daemon=True) for k, step in enumerate(self.steps)]
        for t in threads:
            t.start()
        try:
            if self.warmup > 0:
                region = prof.record("warm up") if prof is not None else None
                if region is not None:
                    region.__enter__()
                self.feed(inputs, self.warmup)
                with self.cond:
                    self.cond.wait_for(lambda: self.finished >= self.fed or self.error)
                if region is not None:
                    region.__exit__(None, None, None)
            self.feed(inputs, None)
        except BaseException:
            # Ctrl-C (or an error of the inputs) on the caller's thread: the
            # stages drop what is queued instead of running it, so the run
            # ends after the batches they are on, and the caller sees it.
            self.stop()
            raise
        finally:
            self.queues[0].put(_DONE)
            for t in threads:
                t.join()
        if self.error is not None:
            name, batch, exc = self.error
            exc.add_note(f"pipeprof.Pipeline: raised by stage {name!r} on batch {batch}")
            raise exc
        measured = self.fed - min(self.warmup, self.fed)
        wall = (self.last_out - self.first_in) if measured and self.first_in else 0
        self.pipeline.last_run = {"batches": measured, "wall_ns": wall,
                                  "batches_per_s": measured * 1e9 / wall if wall else 0.0}
        return [self.outputs[b] for b in range(self.fed)]
