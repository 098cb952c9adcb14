"""record_function: torch.profiler's shape of annotation, on pipeprof.

    @pipeprof.record_function("tokenize")
    def tokenize(text): ...

    with pipeprof.record_function("prep", stage="GraphPrep", batch=b):
        ...

Records into the current profiler (current_profiler(): the most recently
started Profiler still recording, else the env default session) from any
thread; with none, it records nothing and costs one lookup. A stage makes
the span that stage's work on the batch (role stage): host work that the
analyzer times like a device's exec when the (stage, batch) has no exec.
"""
import functools

from .profiler import current_profiler


class record_function:  # noqa: N801 — named as torch.profiler.record_function
    """A context manager and decorator recording one span per use (per
    call, as a decorator) on the calling thread's track."""
    __slots__ = ("name", "stage", "batch", "span")

    def __init__(self, name, stage=None, batch=None):
        self.name, self.stage, self.batch = name, stage, batch
        self.span = None

    def __enter__(self):
        prof = current_profiler()
        if prof is not None:
            span = prof.span(self.name, stage=self.stage, batch=self.batch)
            span.__enter__()
            self.span = span
        return self

    def __exit__(self, *exc):
        span, self.span = self.span, None
        if span is not None:
            span.__exit__(*exc)
        return False

    def __call__(self, fn):
        name, stage, batch = self.name, self.stage, self.batch

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            with record_function(name, stage, batch):
                return fn(*args, **kwargs)
        return recorded
