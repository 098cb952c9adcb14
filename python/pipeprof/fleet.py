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

sweep(config, client, out) runs a calibration sweep's shards (docs/sweep.md)
as Dask tasks, each on a worker that can open every device of the config,
and merges them with the C library's shard merge (pp_sweep_merge).
"""
import ctypes
import json
import os

from . import _lib

# The report tables a task sends back by default (docs/tables.md); the fleet
# figures need the first three, which every task sends.
TABLES = ("stages", "stage_times", "cycles", "batches", "devices", "tracks", "data_parallel",
          "ops")
NEEDED = TABLES[:3]
LOCAL_WORKERS = 2


def _dask():
    try:
        import dask.distributed as dd
    except ImportError as e:
        raise ImportError("pipeprof.fleet needs dask[distributed] and pyarrow "
                          "(pip install \"pipeprof[fleet]\", or scripts/setup)") from e
    return dd


def analyze_one(path, options, names=TABLES):
    """One task: the report of the trace at `path` (as a worker sees it).
    Returns {"path", "report": JSON text, "tables": {name: Arrow table} for
    the report tables `names`} or {"path", "error": message}; never raises,
    so that one bad trace does not fail the others."""
    from . import reports, tables
    from .trace import load
    try:
        trace = load(path)
        held = trace._live("fleet.analyze")
        with reports.built(held.ptr, trace.source, **options) as report:
            text = reports.as_json(report, trace.source)
            out = {}
            for name in names:
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


def analyze(paths, client=None, tables=TABLES, **analyze_options):
    """Analyzes every trace of `paths` in a Dask task of its own and returns
    a Result. analyze_options are those of Trace.summary (region=,
    exclude_region=, from_ns=, to_ns=, batch_pattern=, stage_pattern=).
    client: a dask.distributed.Client; None runs a local cluster of 2
    worker processes for this call. tables: the report tables to bring
    back (docs/tables.md; stages, stage_times and cycles always come)."""
    from . import query
    from . import tables as arrow
    names = tuple(dict.fromkeys(NEEDED + tuple(tables)))
    paths = [os.fspath(p) for p in paths]
    owned = None
    if client is None:
        client, owned = _local_client()
    try:
        futures = [client.submit(analyze_one, p, analyze_options, names, pure=False,
                                 key=f"pipeprof-analyze-{i}-{os.path.basename(p)}")
                   for i, p in enumerate(paths)]
        results = client.gather(futures)
    finally:
        if owned is not None:
            client.close()
            owned.close()
    reports, errors, per_table = {}, {}, {name: ([], []) for name in names}
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
        frames[name] = arrow.to_pandas(query.labeled(arrow_tables, labels)) if arrow_tables \
            else _empty(name)
    return Result(reports, errors, frames)


def _empty(name):
    import pandas as pd
    columns = {"stage_times": ["trace", "stage", "batch", "time_ns", "measured_ns"],
               "stages": ["trace", "stage", "bottleneck_count"],
               "cycles": ["trace", "throughput_measured", "throughput_bound"]}
    return pd.DataFrame(columns=columns.get(name, ["trace"]))


# ---- sweeps ----

class _SweepOptions(ctypes.Structure):
    _fields_ = [("resume", ctypes.c_int), ("shard", ctypes.c_int), ("shards", ctypes.c_int),
                ("limit", ctypes.c_size_t), ("co_run", ctypes.c_int),
                ("progress", ctypes.c_void_p), ("progress_ctx", ctypes.c_void_p)]


class _SweepResult(ctypes.Structure):
    _fields_ = [("total", ctypes.c_size_t), ("done", ctypes.c_size_t),
                ("resumed", ctypes.c_size_t), ("failed", ctypes.c_size_t),
                ("complete", ctypes.c_int), ("co_runs", ctypes.c_size_t)]


_config_load = _lib._proto("pp_sweep_config_load", ctypes.c_int, ctypes.c_char_p,
                           ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_lib.Error))
_config_free = _lib._proto("pp_sweep_config_free", None, ctypes.c_void_p)
_sweep_run = _lib._proto("pp_sweep_run", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                         ctypes.POINTER(_SweepOptions), ctypes.POINTER(_SweepResult),
                         ctypes.POINTER(_lib.Error))
_sweep_merge = _lib._proto("pp_sweep_merge", ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                           ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(_lib.Error))


def config_devices(config):
    """The device specs of a sweep config file (its "devices" list)."""
    with open(config) as f:
        devices = json.load(f).get("devices", [])
    return [d["spec"] if isinstance(d, dict) else d for d in devices]


def sweep_shard(config, out, shard, shards):
    """One task: shard `shard` of `shards` of the sweep `config` into the
    directory `out`, on this worker. Returns {"dir", "done", "failed"}, or
    {"error"} when a device of the config cannot be opened here (the worker
    does not match the config) or the sweep fails."""
    import socket
    from .devices import Device
    from ._lib import PipeprofError
    for spec in config_devices(config):
        try:
            Device(spec)
        except PipeprofError as e:
            return {"error": f"shard {shard}/{shards} on {socket.gethostname()}: device "
                             f"{spec!r} is not here ({e})"}
    cfg, err = ctypes.c_void_p(), _lib.Error()
    try:
        os.makedirs(os.path.dirname(out), exist_ok=True)  # pp_sweep_run makes `out` only
        _lib.check(_config_load(_lib.encode(config), ctypes.byref(cfg), ctypes.byref(err)),
                   f"sweep {config}", err)
        opt = _SweepOptions(shard=shard, shards=shards)
        res = _SweepResult()
        _lib.check(_sweep_run(cfg, _lib.encode(out), ctypes.byref(opt), ctypes.byref(res),
                              ctypes.byref(err)), f"sweep {config} shard {shard}/{shards}", err)
        return {"dir": out, "done": res.done, "failed": res.failed}
    except (PipeprofError, OSError) as e:
        return {"error": str(e)}
    finally:
        _config_free(cfg)


def sweep(config, client=None, out="calib", shards=None, workers=None):
    """Runs the sweep `config` (a JSON file, docs/sweep.md) as `shards` Dask
    tasks (default: one a worker), shard i into OUT.shards/i-of-N, and
    merges them into `out` with pp_sweep_merge: the directory an unsharded
    `pipeprof sweep config --out OUT` writes. The shard directories must be
    reachable from here (a shared file system across machines). `workers`
    (addresses) restricts the tasks to workers with the config's devices;
    a task on a worker without one fails with its name. Returns `out`."""
    from ._lib import PipeprofError
    owned = None
    if client is None:
        client, owned = _local_client()
    try:
        n = shards or max(1, len(client.scheduler_info().get("workers", {})))
        base = os.path.abspath(os.fspath(out)) + ".shards"
        dirs = [os.path.join(base, f"{i}-of-{n}") for i in range(1, n + 1)]
        futures = [client.submit(sweep_shard, os.path.abspath(config), d, i, n, pure=False,
                                 workers=workers, key=f"pipeprof-sweep-{i}-of-{n}")
                   for i, d in enumerate(dirs, start=1)]
        results = client.gather(futures)
    finally:
        if owned is not None:
            client.close()
            owned.close()
    failed = [r["error"] for r in results if "error" in r]
    if failed:
        raise PipeprofError(_lib.PP_EINVAL, "fleet.sweep: " + "; ".join(failed))
    err = _lib.Error()
    names = (ctypes.c_char_p * n)(*[_lib.encode(d) for d in dirs])
    _lib.check(_sweep_merge(names, n, _lib.encode(os.fspath(out)), ctypes.byref(err)),
               f"fleet.sweep: merging {base}", err)
    return os.fspath(out)
