"""bench_tables — traces as columnar tables (docs/tables.md, docs/fleet.md),
each figure against a baseline measured in the same run. Prints BENCH lines
(ratio = value / baseline; below 1, the Arrow path is cheaper):

  tables_to_dataframe_s    to_dataframe("events") of N events (default 10M):
                           seconds, vs the implementation before Arrow
                           (pp_model_columns' 64-bit copies, a NumPy copy of
                           each, a Python string object an event for name,
                           stage, track name and device), kept here as the
                           baseline
  tables_to_dataframe_mb   the same, peak memory it added (MB), each side in a
                           process of its own after building the model
  tables_sql_groupby_s     count and sum of dur_ns per (stage, device) over
                           the N events: DuckDB over to_arrow(), vs pandas'
                           groupby over to_dataframe()'s frame (conversion
                           counted on both sides)
  tables_fleet_s           200 traces (windows of the demo pipeline's trace)
                           analyzed on a local cluster of 2 worker processes
                           (each task sending back the report and the tables
                           the fleet figures need), vs one after another in
                           this process; the line
                           says the per-task overhead (worker seconds a task
                           costs beyond its serial time) and the cluster's
                           start-up with the workers' first imports, which is
                           not in the figure

The model is built in the process (dataset.from_tables) from columns whose
values follow from the event index: 4 stages, 8 device tracks, a batch
every 40 events. Run from bench/run; alone:
  PYTHONPATH=python PIPEPROF_LIBRARY=build/libpipeprof.so PP_CLI=build/pipeprof \\
      .venv/bin/python bench/bench_tables.py [--events N] [--traces N]
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import pipeprof
from pipeprof import _lib, dataset, fleet, tables

STAGES = ("decode", "preprocess", "embed", "classify")
DEVICES = ("CPU", "GPU.0", "NPU", "GPU.1")


def build_trace(n):
    """A Trace of n events: span i on track i % 8 (two a device), stage
    i % 4, batch i // 40, 1 µs apart, 800 ns long, hw known on odd events."""
    import pyarrow as pa
    i = np.arange(n, dtype=np.int64)
    strings = pa.array(list(STAGES) + ["exec"])
    tracks = [{"track": k, "kind": "device", "process": DEVICES[k // 2], "name": f"req {k % 2}",
               "device": DEVICES[k // 2], "stream": k % 2, "pid": 1, "tid": 0,
               "sort_index": k, "flags": 0} for k in range(8)]
    events = pa.table({
        "ts_ns": i * 1000, "dur_ns": np.full(n, 800, np.int64),
        "kind": pa.DictionaryArray.from_arrays(np.zeros(n, np.int8), pa.array(["span"])),
        "name": pa.DictionaryArray.from_arrays(np.full(n, 4, np.int32), strings),
        "track": (i % 8).astype(np.uint32),
        "stage": pa.DictionaryArray.from_arrays((i % 4).astype(np.int32), strings),
        "role": pa.DictionaryArray.from_arrays(np.zeros(n, np.int8), pa.array(["exec"])),
        "batch": i // 40, "hw_ns": np.where(i % 2 == 1, 700, 0).astype(np.uint64),
        "xfer_ns": np.zeros(n, np.uint64), "id": np.zeros(n, np.uint64),
        "value": np.zeros(n), "phase": pa.nulls(n, pa.dictionary(pa.int8(), pa.string())),
    })
    return dataset.from_tables({"events": events, "track_info": pa.Table.from_pylist(tracks)},
                               {"level": 1}, source=f"bench-{n}")


def old_to_dataframe(trace):
    """to_dataframe("events") as it was before the Arrow tables: the
    baseline (copied from python/pipeprof/trace.py of that version)."""
    import pandas as pd
    m = trace._held.ptr
    c = _lib.EventColumns()
    _lib.check(_lib.pp_model_columns(m, ctypes.byref(c)), "to_dataframe")
    n = c.count

    def column(ptr, ctype):
        return np.ctypeslib.as_array((ctype * n).from_address(ptr)).copy()

    def string(sid):
        return _lib.pp_model_string(m, sid).decode(errors="replace")
    strings = np.array([string(i) for i in range(_lib.pp_model_string_count(m))], dtype=object)
    names, devices = [], []
    for k in range(_lib.pp_model_track_count(m)):
        t = _lib.pp_model_track(m, k).contents
        process, name = string(t.process), string(t.name)
        names.append(f"{process}/{name}" if process else name)
        devices.append(string(t.device))
    track = column(c.track, ctypes.c_uint32)
    kinds = ("span", "instant", "counter", "flow", "range", "region")
    roles = ("none", "exec", "partition", "merge", "stage", "op", "user")
    return pd.DataFrame({
        "kind": pd.Categorical.from_codes(column(c.kind, ctypes.c_uint8), kinds),
        "name": strings[column(c.name, ctypes.c_uint32)],
        "ts_ns": column(c.ts_ns, ctypes.c_int64), "dur_ns": column(c.dur_ns, ctypes.c_int64),
        "track": track, "track_name": np.array(names, dtype=object)[track],
        "device": np.array(devices, dtype=object)[track],
        "role": pd.Categorical.from_codes(column(c.role, ctypes.c_uint8), roles),
        "stage": strings[column(c.stage, ctypes.c_uint32)],
        "batch": column(c.batch, ctypes.c_int64), "hw_ns": column(c.hw_ns, ctypes.c_uint64),
        "xfer_ns": column(c.xfer_ns, ctypes.c_uint64), "id": column(c.id, ctypes.c_uint64),
        "value": column(c.value, ctypes.c_double), "phase": column(c.phase, ctypes.c_uint8),
    })


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def measure_one(which, n):
    """In a child process: build the model, reset the peak RSS, convert
    once; prints {"s": seconds, "mb": peak RSS added}."""
    trace = build_trace(n)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    before = _status_kb("VmRSS")
    t0 = time.perf_counter()
    df = trace.to_dataframe("events") if which == "arrow" else old_to_dataframe(trace)
    seconds = time.perf_counter() - t0
    assert len(df) == n
    print(json.dumps({"s": seconds, "mb": (_status_kb("VmHWM") - before) / 1024}))


def in_child(which, n):
    p = subprocess.run([sys.executable, __file__, "--child", which, "--events", str(n)],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def bench(name, value, unit, baseline_name, baseline, note=""):
    print(f"BENCH {name} value={value:.3f} unit={unit} baseline={baseline_name}:{baseline:.3f} "
          f"ratio={value / baseline:.3f}{' ' + note if note else ''}", flush=True)


def bench_to_dataframe(n):
    new, old = in_child("arrow", n), in_child("old", n)
    bench("tables_to_dataframe_s", new["s"], "s", "pre-arrow to_dataframe", old["s"],
          f"events={n}")
    bench("tables_to_dataframe_mb", new["mb"], "MB", "pre-arrow to_dataframe", old["mb"],
          f"events={n}")


def bench_groupby(n):
    import duckdb
    trace = build_trace(n)
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.register("events", trace.to_arrow("events", columns=["stage", "track", "dur_ns"]))
    con.register("track_info", trace.to_arrow("track_info", columns=["track", "device"]))
    sql = con.execute("SELECT e.stage, t.device, count(*) AS n, sum(e.dur_ns) AS dur "
                      "FROM events e JOIN track_info t USING (track) GROUP BY ALL").df()
    t_sql = time.perf_counter() - t0
    t0 = time.perf_counter()
    df = trace.to_dataframe("events")
    pd_result = df.groupby(["stage", "device"], observed=True)["dur_ns"].agg(["count", "sum"])
    t_pandas = time.perf_counter() - t0
    assert len(sql) == len(pd_result)
    assert int(sql["n"].sum()) == int(pd_result["count"].sum()) == n
    bench("tables_sql_groupby_s", t_sql, "s", "pandas groupby", t_pandas, f"events={n}")


def bench_fleet(count):
    cli = os.environ.get("PP_CLI")
    if not cli:
        print("bench_tables: PP_CLI is not set; tables_fleet_s skipped", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([cli, "demo", "--out", out, "--batches", "60"], check=True,
                       capture_output=True)
        whole = os.path.join(out, "trace.pptrace")
        ts = pipeprof.load(whole).to_arrow("events", columns=["ts_ns"]).column("ts_ns")
        start, span = ts.to_numpy().min(), ts.to_numpy().max() - ts.to_numpy().min()
        paths = []
        for i in range(count):
            lo = int(start + span * 4 * i // (10 * count))
            path = os.path.join(out, f"p{i:03d}.pptrace")
            subprocess.run([cli, "convert", whole, path, "--from", str(lo), "--to",
                            str(lo + int(span * 6 // 10))], check=True, capture_output=True)
            paths.append(path)
        t0 = time.perf_counter()
        serial = [fleet.analyze_one(p, {}, fleet.NEEDED) for p in paths]
        t_serial = time.perf_counter() - t0
        assert all("report" in r for r in serial)
        t0 = time.perf_counter()
        client, cluster = fleet._local_client()
        client.run(fleet.analyze_one, paths[0], {})  # each worker imports pipeprof, pyarrow
        t_start = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            result = fleet.analyze(paths, client=client, tables=fleet.NEEDED)
            t_cluster = time.perf_counter() - t0
        finally:
            client.close()
            cluster.close()
        assert not result.errors and len(result.reports) == count
        overhead_ms = (t_cluster * fleet.LOCAL_WORKERS - t_serial) / count * 1000
        bench("tables_fleet_s", t_cluster, "s", "serial", t_serial,
              f"traces={count} workers={fleet.LOCAL_WORKERS} speedup={t_serial / t_cluster:.2f} "
              f"overhead_ms_per_task={overhead_ms:.1f} cluster_start_s={t_start:.1f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--traces", type=int, default=200)
    p.add_argument("--child")
    args = p.parse_args()
    if args.child:
        measure_one(args.child, args.events)
        return
    try:
        tables.pyarrow()
    except ImportError as e:
        print(f"bench_tables: skipped: {e}", file=sys.stderr)
        return
    bench_to_dataframe(args.events)
    try:
        bench_groupby(args.events)
    except ImportError:
        print("bench_tables: duckdb is not installed; tables_sql_groupby_s skipped",
              file=sys.stderr)
    try:
        fleet._dask()
        bench_fleet(args.traces)
    except ImportError:
        print("bench_tables: dask is not installed; tables_fleet_s skipped", file=sys.stderr)


if __name__ == "__main__":
    main()
