"""Traces as Arrow tables (docs/tables.md): every table imports into pyarrow
with the documented types and nulls, the columns the model stores as plain
arrays are its memory (no copy), the export keeps the model alive, SQL
answers equal the report's, and a Parquet dataset reloads into a trace that
analyzes identically."""
import ctypes
import gc
import json
import os
import subprocess

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (pipeprof[sql])")

import pipeprof  # noqa: E402
from pipeprof import _lib, dataset, reports, tables  # noqa: E402

S = 1_000_000_000


def build(events, tracks, annotations=(), meta=None):
    """A Trace made from rows through the C library's appends: what the
    tests expect is what they put in."""
    def table(rows, names):
        return pa.table({n: [r[n] for r in rows] for n in names})
    read = {
        "events": pa.table({
            **{n: pa.array([e.get(n, d) for e in events], t) for n, t, d in (
                ("ts_ns", pa.int64(), 0), ("dur_ns", pa.int64(), 0), ("kind", pa.string(), "span"),
                ("name", pa.string(), ""), ("track", pa.uint32(), 0),
                ("stage", pa.string(), None), ("role", pa.string(), "none"),
                ("batch", pa.int64(), None), ("hw_ns", pa.uint64(), None),
                ("xfer_ns", pa.uint64(), 0), ("id", pa.uint64(), 0),
                ("value", pa.float64(), 0.0), ("phase", pa.string(), None))}}),
        "track_info": table(tracks, ["track", "kind", "process", "name", "device", "stream",
                                     "pid", "tid", "sort_index", "flags"]),
        "annotations": pa.table({
            "event": pa.array([a[0] for a in annotations], pa.uint32()),
            "key": pa.array([a[1] for a in annotations], pa.string()),
            "type": pa.array([{int: "int", float: "double", str: "str"}[type(a[2])]
                              for a in annotations], pa.string()),
            "value_int": pa.array([a[2] if type(a[2]) is int else None for a in annotations],
                                  pa.int64()),
            "value_double": pa.array([a[2] if type(a[2]) is float else None
                                      for a in annotations], pa.float64()),
            "value_str": pa.array([a[2] if type(a[2]) is str else None for a in annotations],
                                  pa.string())}),
    }
    return dataset.from_tables(read, meta or {"level": 1}, source="built")


TRACKS = [
    {"track": 0, "kind": "device", "process": "GPU.0", "name": "stream 0", "device": "GPU.0",
     "stream": 0, "pid": 7, "tid": 0, "sort_index": 0, "flags": 1},
    {"track": 1, "kind": "thread", "process": "app", "name": "main", "device": None,
     "stream": None, "pid": 7, "tid": 70, "sort_index": 1, "flags": 0},
]
# Values that take every path of the model's narrow columns: a start 3 s
# past the first (past the 2.1 s of a page's 32-bit offsets), a duration of
# 5 s (past 4.29 s), a batch 40000 past another (past 16 bits), hw unknown.
EVENTS = [
    {"ts_ns": 1 * S, "dur_ns": 2000, "name": "conv", "track": 0, "stage": "embed",
     "role": "exec", "batch": 0, "hw_ns": 1500, "xfer_ns": 300},
    {"ts_ns": 1 * S + 5000, "dur_ns": 5 * S, "name": "conv", "track": 0, "stage": "embed",
     "role": "exec", "batch": 40000},
    {"ts_ns": 4 * S, "kind": "flow", "name": "batch", "track": 1, "id": 9, "phase": "end"},
    {"ts_ns": 4 * S + 1, "kind": "counter", "name": "queue depth", "track": 1, "value": 2.5},
]


@pytest.fixture
def built():
    return build(EVENTS, TRACKS, annotations=[(0, "bytes_in", 4096), (0, "share", 0.5),
                                              (1, "device", "NPU")])


def test_events_have_the_documented_types_values_and_nulls(built):
    t = built.to_arrow("events")
    assert t.schema.metadata[b"pipeprof.schema_version"] == str(tables.SCHEMA_VERSION).encode()
    strings = pa.dictionary(pa.uint32(), pa.string())
    enum = pa.dictionary(pa.uint8(), pa.string())
    expected = [("ts_ns", pa.int64(), False), ("dur_ns", pa.int64(), False),
                ("kind", enum, False), ("name", strings, False), ("track", pa.uint32(), False),
                ("stage", strings, True), ("role", enum, False), ("batch", pa.int64(), True),
                ("hw_ns", pa.uint64(), True), ("xfer_ns", pa.uint64(), False),
                ("id", pa.uint64(), False), ("value", pa.float64(), False),
                ("phase", enum, True)]
    assert [(f.name, f.type, f.nullable) for f in t.schema] == expected
    rows = t.to_pylist()
    for row, ev in zip(rows, EVENTS):
        assert row["ts_ns"] == ev["ts_ns"] and row["dur_ns"] == ev.get("dur_ns", 0)
        assert row["kind"] == ev.get("kind", "span") and row["name"] == ev["name"]
        assert row["stage"] == ev.get("stage") and row["batch"] == ev.get("batch")
        assert row["hw_ns"] == ev.get("hw_ns")  # unknown hardware time is null, not 0
        assert row["phase"] == ev.get("phase")  # a phase is a flow's only
        assert row["value"] == ev.get("value", 0.0) and row["id"] == ev.get("id", 0)
    assert t.column("hw_ns").null_count == 3 and t.column("batch").null_count == 2


def test_named_columns_only_and_an_unknown_one_is_named(built):
    assert built.to_arrow("events", columns=["name", "ts_ns"]).column_names == ["ts_ns", "name"]
    with pytest.raises(pipeprof.PipeprofError, match='no column "nope".*have: ts_ns'):
        built.to_arrow("events", columns=["nope"])
    with pytest.raises(ValueError, match="unknown table"):
        built.to_arrow("nope")


def test_plain_columns_are_the_models_memory(built):
    c = _lib.EventColumns()
    _lib.check(_lib.pp_model_columns(built._held.ptr, ctypes.byref(c)), "columns")
    t = built.to_arrow("events")

    def address(name):
        arr = t.column(name).chunk(0)
        return (arr.indices if pa.types.is_dictionary(arr.type) else arr).buffers()[1].address
    for name in ("name", "kind", "role", "phase", "id", "value"):
        assert address(name) == getattr(c, name), name


def test_the_export_keeps_the_model_alive_and_read_only(built):
    t = built.to_arrow("events")
    other = built.to_arrow("events", columns=["ts_ns"])
    model = built._held.ptr
    one = _lib.EventColumns(count=1)
    cols = [np.zeros(1, d) for d in ("i8", "i8", "i8", "u8", "u8", "u8", "f8", "u4", "u4",
                                     "u4", "u1", "u1", "u1")]
    for (field, _), arr in zip(_lib.EventColumns._fields_[1:], cols):
        setattr(one, field, arr.ctypes.data)
    assert _lib.pp_model_add_events(model, ctypes.byref(one), None) == _lib.PP_ESTATE
    built.close()
    del built, other
    gc.collect()
    assert t.column("name").to_pylist() == [e["name"] for e in EVENTS]  # still readable


def test_other_model_tables(built):
    tr = built.to_arrow("track_info").to_pylist()
    assert [r["track_name"] for r in tr] == ["GPU.0/stream 0", "app/main"]
    assert [r["device"] for r in tr] == ["GPU.0", None] and [r["stream"] for r in tr] == [0, None]
    assert [r["simulated"] for r in tr] == [True, False]
    ann = built.to_arrow("annotations").to_pylist()
    assert [(a["event"], a["key"], a["type"]) for a in ann] == \
        [(0, "bytes_in", "int"), (0, "share", "double"), (1, "device", "str")]
    assert [(a["value_int"], a["value_double"], a["value_str"]) for a in ann] == \
        [(4096, None, None), (None, 0.5, None), (None, None, "NPU")]
    strings = built.to_arrow("strings").to_pylist()
    assert strings[0] == {"id": 0, "text": ""}
    assert {"conv", "embed", "GPU.0", "bytes_in"} <= {s["text"] for s in strings}
    assert all(s["id"] == i for i, s in enumerate(strings))


def test_to_dataframe_holds_what_the_model_holds(built):
    import pandas as pd
    df = built.to_dataframe("events")
    for i, row in df.iterrows():
        ev = EVENTS[i]
        assert row["ts_ns"] == ev["ts_ns"] and row["name"] == ev["name"]
        assert row["track_name"] == ("GPU.0/stream 0", "app/main")[ev["track"]]
        assert (row["device"] == "GPU.0") if ev["track"] == 0 else row["device"] != row["device"]
        assert pd.isna(row["batch"]) if ev.get("batch") is None else row["batch"] == ev["batch"]
    assert str(df["batch"].dtype) == "Int64" and str(df["name"].dtype) == "category"
    notes = built.to_dataframe("annotations")
    assert list(notes["value"]) == [4096, 0.5, "NPU"]


def test_polars_reads_the_same_table(built):
    pl = pytest.importorskip("polars", reason="polars is not installed")
    df = built.to_polars("events", columns=["ts_ns", "name"])
    assert df["name"].to_list() == [e["name"] for e in EVENTS]
    assert isinstance(df, pl.DataFrame)


# ---- the report's tables, SQL and Parquet, on the demo pipeline's trace ----

@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory):
    cli = os.environ.get("PP_CLI")
    if not cli:
        pytest.skip("PP_CLI is not set (run through ctest)")
    out = tmp_path_factory.mktemp("demo")
    subprocess.run([cli, "demo", "--out", str(out), "--batches", "24"], check=True,
                   capture_output=True)
    return str(out / "trace.pptrace")


def test_report_tables_are_the_reports_rows(demo_trace, analyze_json):
    report = analyze_json(demo_trace)
    trace = pipeprof.load(demo_trace)
    times = trace.to_arrow("stage_times").to_pylist()
    assert [(r["stage"], r["batch"], r["time_ns"]) for r in times] == \
        [(r["stage"], r["batch"], r["time_ns"]) for r in report["stage_times"]]
    assert [r["measured_ns"] for r in times] == \
        [None if r["measured_ns"] == -1 else r["measured_ns"] for r in report["stage_times"]]
    stages = trace.to_arrow("stages").to_pylist()
    assert [(s["stage"], s["time_p95_ns"], s["bottleneck_count"]) for s in stages] == \
        [(s["name"], s["time_ns"]["p95"], s["bottleneck_count"]) for s in report["stages"]]
    for name in tables.REPORT_TABLES:  # every one imports, with its version
        assert trace.to_arrow(name).schema.metadata[b"pipeprof.table"] == name.encode()


# Nearest rank (docs/analysis.md): the value at rank ceil(q * n), here in
# integers as pp_percentile computes it; the mean is the floor of the mean.
STAGE_SQL = """
WITH ranked AS (
  SELECT stage, time_ns,
         row_number() OVER (PARTITION BY stage ORDER BY time_ns) AS k,
         count(*) OVER (PARTITION BY stage) AS n
  FROM stage_times)
SELECT stage, sum(time_ns) // count(*) AS mean_ns,
       max(CASE WHEN k = (95000 * n + 99999) // 100000 THEN time_ns END) AS p95_ns
FROM ranked GROUP BY stage ORDER BY stage
"""


def test_sql_per_stage_mean_and_p95_are_the_reports(demo_trace, analyze_json):
    pytest.importorskip("duckdb", reason="duckdb is not installed (pipeprof[sql])")
    report = analyze_json(demo_trace)
    got = pipeprof.sql(STAGE_SQL, demo_trace)
    expected = sorted((s["name"], s["time_ns"]["mean"], s["time_ns"]["p95"])
                      for s in report["stages"])
    assert [tuple(r) for r in got.itertuples(index=False)] == expected


def test_sql_over_several_traces_labels_each(demo_trace, tmp_path):
    pytest.importorskip("duckdb", reason="duckdb is not installed (pipeprof[sql])")
    n = len(pipeprof.load(demo_trace).to_arrow("events"))
    got = pipeprof.sql("SELECT trace, count(*) AS n FROM events GROUP BY trace ORDER BY trace",
                       demo_trace, pipeprof.load(demo_trace))
    assert list(got["trace"]) == [demo_trace, demo_trace + "#2"] and list(got["n"]) == [n, n]


def test_parquet_dataset_reloads_and_analyzes_byte_identically(demo_trace, tmp_path):
    pytest.importorskip("pyarrow.parquet", reason="pyarrow has no Parquet support")
    import pyarrow.parquet as pq
    trace = pipeprof.load(demo_trace)
    out = tmp_path / "ds"
    dataset.export_parquet(trace, out)
    assert {p.name for p in out.iterdir()} == {f"{n}.parquet" for n in tables.ARROW_TABLES}
    meta = pq.read_schema(out / "stages.parquet").metadata
    assert meta[b"pipeprof.schema_version"] == str(tables.SCHEMA_VERSION).encode()
    again = pipeprof.load(str(out))

    def report_json(t):
        with reports.built(t._held.ptr, demo_trace) as r:
            return reports.as_json(r, demo_trace)
    assert report_json(again) == report_json(trace)
    assert again.meta() == trace.meta()


def test_python_m_pipeprof_sql_and_export(demo_trace, tmp_path, cli):
    pytest.importorskip("duckdb", reason="duckdb is not installed (pipeprof[sql])")
    env = dict(os.environ, PIPEPROF_PYTHON=os.environ.get("PP_PYTHON", "python3"))
    q = "SELECT count(*) AS n FROM stage_times"
    n = len(pipeprof.load(demo_trace).to_arrow("stage_times"))
    for argv in ([env["PIPEPROF_PYTHON"], "-m", "pipeprof", "sql", demo_trace, q, "--csv"],
                 [os.environ["PP_CLI"], "sql", demo_trace, q, "--csv"]):
        p = subprocess.run(argv, capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        assert p.stdout.split() == ["n", str(n)]
    p = subprocess.run([os.environ["PP_CLI"], "sql", demo_trace, "SELEC"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 2 and "syntax error" in p.stderr
    p = subprocess.run([os.environ["PP_CLI"], "export", demo_trace, "--to", "parquet", "-o",
                        str(tmp_path / "d")], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert json.dumps(pipeprof.load(str(tmp_path / "d")).summary()) == \
        json.dumps(pipeprof.load(demo_trace).summary())
    p = subprocess.run([os.environ["PP_CLI"], "sql", demo_trace, q], capture_output=True,
                       text=True, env=dict(env, PIPEPROF_PYTHON="/nonexistent/python"))
    assert p.returncode == 1 and 'pip install "pipeprof[sql]"' in p.stderr
