"""SQL over traces (docs/python.md, "SQL"): DuckDB runs a query over the
Arrow tables of one or several traces (docs/tables.md), registered under
their table names without a copy. With several traces each table is the
tables of all of them one after another, with a `trace` column naming the
trace each row came from.
"""
import os
import re

from . import tables


def duckdb():
    """The duckdb module, or an ImportError that says how to get it."""
    try:
        import duckdb as db
    except ImportError as e:
        raise ImportError("pipeprof: SQL needs duckdb and pyarrow "
                          "(pip install \"pipeprof[sql]\", or scripts/setup)") from e
    return db


def _traces(traces):
    from .trace import Trace, load
    return [t if isinstance(t, Trace) else load(os.fspath(t)) for t in traces]


def tables_named(query):
    """The tables of tables.ARROW_TABLES that the query names: only those
    are made (the others cost nothing)."""
    return [name for name in tables.ARROW_TABLES if re.search(rf"\b{name}\b", query)]


def labeled(per_trace, labels):
    """One Arrow table of several traces' same table: each gains a first
    column `trace` (its label), dictionary-encoded."""
    pa = tables.pyarrow()
    out = []
    for table, label in zip(per_trace, labels):
        column = pa.DictionaryArray.from_arrays(pa.array([0] * table.num_rows, pa.int32()),
                                                pa.array([label]))
        out.append(table.add_column(0, "trace", column))
    return pa.concat_tables(out)


def trace_labels(traces):
    """Each trace's source, or source#k where two traces share one."""
    seen, labels = {}, []
    for t in traces:
        k = seen[t.source] = seen.get(t.source, 0) + 1
        labels.append(t.source if k == 1 else f"{t.source}#{k}")
    return labels


def connect(*traces, query="", **window):
    """A DuckDB connection with the tables of `traces` (Trace objects or
    paths) that `query` names registered (every table for query=""); the
    report's tables over the window options of Trace.summary."""
    db = duckdb()
    traces = _traces(traces)
    if not traces:
        raise ValueError("pipeprof.sql: no trace given")
    con = db.connect()
    names = tables_named(query) if query else list(tables.ARROW_TABLES)
    labels = trace_labels(traces)
    for name in names:
        opts = window if name in tables.REPORT_TABLES else {}
        per_trace = [t.to_arrow(name, **opts) for t in traces]
        con.register(name, per_trace[0] if len(traces) == 1 else labeled(per_trace, labels))
    return con


def sql(query, *traces, **window):
    """Runs `query` (DuckDB SQL) over the tables of `traces` (Trace objects
    or paths; docs/tables.md) and returns a pandas DataFrame. The report's
    tables take the window options of Trace.summary (region=...,
    exclude_region=..., from_ns=, to_ns=). Example:
        pipeprof.sql("SELECT stage, avg(time_ns) FROM stage_times GROUP BY stage",
                     "a.pptrace", "b.pptrace")"""
    return connect(*traces, query=query, **window).execute(query).df()
