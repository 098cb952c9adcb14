"""Many traces on a Dask cluster (docs/fleet.md).

analyze(paths) analyzes each trace in a Dask task on a worker that can read
its file: the worker loads it and runs the C analyzer (one trace a task),
and sends back the report (the JSON text of `pipeprof analyze --json`) and
the report's tables as Arrow tables (pickled as Arrow IPC). The client
stacks each table over all traces with a `trace` column and computes the
fleet-wide figures; a trace that fails is reported by name and the others
go on.

client=None starts a local cluster of 2 worker processes for the call (no
set-up, closed after); a dask.distributed.Client of an existing scheduler
runs the same tasks on its workers, wherever they are.
"""
import ctypes
import json
import os

from . import _lib

# The report tables each task sends back (docs/tables.md).
TABLES = ("stages", "stage_times", "batches", "cycles", "devices", "tracks", "data_parallel",
          "ops")
LOCAL_WORKERS = 2


def _dask():
    try:
        import dask.distributed as dd
    except ImportError as e:
        raise ImportError("pipeprof.fleet needs dask[distributed] and pyarrow "
                          "(pip install \"pipeprof[fleet]\", or scripts/setup)") from e
    return dd


def analyze_one(path, options):
    """One task: the report of the trace at `path` (as a worker sees it).
    Returns {"path", "report": JSON text, "tables": {name: Arrow table}} or
    {"path", "error": message}; never raises, so that one bad trace does not
    fail the others."""
    from . import reports, tables
    from .trace import load
    try:
        trace = load(path)
        held = trace._live("fleet.analyze")
        with reports.built(held.ptr, trace.source, **options) as report:
            text = reports.as_json(report, trace.source)
            out = {}
            for name in TABLES:
                out[name] = tables._imported(lambda s, a, e, n=name: _lib.pp_arrow_export_report(
                    report, n.encode(), None, s, a, e), f"fleet: {path}: table {name}")
        trace.close()
        return {"path": path, "report": text, "tables": out}
    except Exception as e:  # reported by name: PipeprofError, OSError, a missing extra
        return {"path": path, "error": f"{type(e).__name__}: {e}"}


class Result:
    """What fleet.analyze returns.

    reports     {path: the report dict (`pipeprof analyze --json`)}
    errors      {path: why the trace could not be analyzed}
    tables      {name: pandas DataFrame of that report table over every
                 trace analyzed, with a first column `trace` (its path)}
    stages      fleet-wide stage latency: per stage, the summary (n, min,
                mean, p50 ... max, total, ns) of its stage time over every
                batch of every trace: exact, computed by the C library's
                pp_summary_compute over all the values
    throughput  per trace: measured throughput (batches/s) and its bound
    bottleneck  the stage that was the bottleneck of the most cycles over
                all traces (None without stages)
    """

    def __init__(self, reports, errors, tables):
        self.reports, self.errors, self.tables = reports, errors, tables
        self.stages = _fleet_stages(tables["stage_times"])
        cycles = tables["cycles"]
        self.throughput = cycles[["trace", "throughput_measured", "throughput_bound"]] \
            if len(cycles) else cycles
        counts = tables["stages"].groupby("stage", observed=True)["bottleneck_count"].sum() \
            if len(tables["stages"]) else None
        self.bottleneck = counts.idxmax() if counts is not None and counts.max() > 0 else None

    def __repr__(self):
        return (f"<pipeprof.fleet.Result: {len(self.reports)} traces analyzed, "
                f"{len(self.errors)} failed, bottleneck stage {self.bottleneck!r}>")


_SUMMARY = ("n", "min", "mean", "p50", "p90", "p95", "p97", "p99", "p999", "max", "total")


class _Summary(ctypes.Structure):
    _fields_ = [("n", ctypes.c_uint64)] + [(k, ctypes.c_int64) for k in _SUMMARY[1:]]


_summary_compute = _lib._proto("pp_summary_compute", None, ctypes.c_void_p, ctypes.c_size_t,
                               ctypes.POINTER(_Summary))


def summarize(values_ns):
    """The C analyzer's summary (pp_summary_compute: nearest-rank
    percentiles, floor mean) of int64 values, as a dict."""
    import numpy as np
    v = np.ascontiguousarray(values_ns, dtype=np.int64).copy()  # it sorts in place
    out = _Summary()
    _summary_compute(v.ctypes.data, len(v), ctypes.byref(out))
    return {k: getattr(out, k) for k in _SUMMARY}


def _fleet_stages(stage_times):
    import pandas as pd
    rows = []
    if len(stage_times):
        for stage, group in stage_times.groupby("stage", observed=True, sort=False):
            rows.append(dict(stage=stage, traces=group["trace"].nunique(),
                             **summarize(group["time_ns"].to_numpy())))
    return pd.DataFrame(rows, columns=["stage", "traces", *_SUMMARY])


def _local_client():
    dd = _dask()
    cluster = dd.LocalCluster(n_workers=LOCAL_WORKERS, threads_per_worker=1, processes=True,
                              dashboard_address=None)
    return dd.Client(cluster), cluster


def analyze(paths, client=None, **analyze_options):
    """Analyzes every trace of `paths` in a Dask task of its own and returns
    a Result. analyze_options are those of Trace.summary (region=,
    exclude_region=, from_ns=, to_ns=, batch_pattern=, stage_pattern=).
    client: a dask.distributed.Client; None runs a local cluster of 2
    worker processes for this call."""
    from . import query, tables
    paths = [os.fspath(p) for p in paths]
    owned = None
    if client is None:
        client, owned = _local_client()
    try:
        futures = [client.submit(analyze_one, p, analyze_options, pure=False,
                                 key=f"pipeprof-analyze-{i}-{os.path.basename(p)}")
                   for i, p in enumerate(paths)]
        results = client.gather(futures)
    finally:
        if owned is not None:
            client.close()
            owned.close()
    reports, errors, per_table = {}, {}, {name: ([], []) for name in TABLES}
    for r in results:
        if "error" in r:
            errors[r["path"]] = r["error"]
            continue
        reports[r["path"]] = json.loads(r["report"])
        for name, table in r["tables"].items():
            per_table[name][0].append(table)
            per_table[name][1].append(r["path"])
    frames = {}
    for name, (arrow_tables, labels) in per_table.items():
        frames[name] = tables.to_pandas(query.labeled(arrow_tables, labels)) if arrow_tables \
            else _empty(name)
    return Result(reports, errors, frames)


def _empty(name):
    import pandas as pd
    columns = {"stage_times": ["trace", "stage", "batch", "time_ns", "measured_ns"],
               "stages": ["trace", "stage", "bottleneck_count"],
               "cycles": ["trace", "throughput_measured", "throughput_bound"]}
    return pd.DataFrame(columns=columns.get(name, ["trace"]))
