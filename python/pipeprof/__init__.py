"""pipeprof: a profiler for multi-stage inference pipelines, from Python.

A thin layer over libpipeprof (docs/python.md):

    import pipeprof
    with pipeprof.Profiler("trace.pptrace", level=1) as prof:
        with prof.record("warm up"):
            ...
        with prof.span("preprocess"):
            ...
    trace = pipeprof.load("trace.pptrace")
    trace.summary()["cycles"]            # the numbers of `pipeprof analyze`
    trace.to_dataframe("stages")         # pandas
    trace.to_arrow("events")             # pyarrow, zero copy (docs/tables.md)
    pipeprof.sql("SELECT ... FROM stage_times", "a.pptrace", "b.pptrace")  # DuckDB
    pipeprof.fleet.analyze(paths)        # many traces on Dask (docs/fleet.md)

Importing the package loads the library; with PIPEPROF_OUTPUT set that
starts the default session (default_profiler()), written at exit.
OpenVINO helpers: pipeprof.openvino (StageExecutor, DataParallelStage).
"""
from ._lib import LIBRARY_PATH, PipeprofError
from ._lib import pp_features as _features
from ._lib import pp_version as _version
from .profiler import FlowPhase, Profiler, Role, current_profiler, default_profiler, intern, now
from . import workloads
from .devices import Device, Stage, device
from .pipeline import Pipeline
from .record import record_function
from .trace import TABLES, Trace, load
from .diff import Diff, diff, save_baseline
from .query import sql
from . import fleet
from .whatif import WhatIf, whatif

__version__ = _version().decode()
features = _features().decode()

__all__ = ["Pipeline", "Stage", "Device", "device", "workloads", "Profiler", "Role", "FlowPhase", "PipeprofError", "Trace", "TABLES", "load",
           "default_profiler", "current_profiler", "record_function", "intern", "now", "LIBRARY_PATH", "features",
           "Diff", "diff", "save_baseline", "sql", "fleet", "whatif", "WhatIf"]
