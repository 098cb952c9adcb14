"""Analysis from Python: a Trace is one C trace model (pp_model).

summary() is the C analyzer's JSON report (pp_report_json, the bytes
`pipeprof analyze --json` prints, schema in docs/report-json.md) parsed
into a dict; every metric table of to_dataframe() is built from it. The
model's tables (events, annotations, track_info) and to_arrow() are the C
library's Arrow export (tables.py, docs/tables.md). No figure is computed
here.
"""
import ctypes
import html
import json
import warnings

from . import _lib, dataset, reports, tables
from ._lib import PipeprofError, check

# Report tables: the JSON key of each list of rows (docs/report-json.md).
REPORT_TABLES = ("devices", "tracks", "stages", "stage_times", "batches", "data_parallel",
                 "decomposition", "clocks", "ops", "op_types", "stage_ops")
# Tables derived from the report: one-row cycles, the data-parallel devices
# with their stage, the findings in rank order, the scheduler split with its
# method.
DERIVED_TABLES = ("cycles", "dp_devices", "findings", "sched")
TABLES = ("events", "annotations", "track_info") + REPORT_TABLES + DERIVED_TABLES


def load(path):
    """Reads any trace pipeprof reads (.pptrace, Chrome JSON, .json.gz), or
    a Parquet dataset directory that `python -m pipeprof export --to
    parquet` wrote (dataset.py, needs pyarrow). A truncated .pptrace loads
    every complete block and warns; anything unreadable raises
    PipeprofError with the reader's message (file, offset, problem)."""
    if dataset.is_dataset(path):
        return dataset.load_parquet(path)
    model = ctypes.c_void_p()
    err = _lib.Error()
    rc = _lib.pp_trace_read(_lib.encode(path), ctypes.byref(model), ctypes.byref(err))
    if rc == _lib.PP_ETRUNCATED and model:
        warnings.warn(f"{err.msg.decode(errors='replace')} (analyzing the rest; the report "
                      "states the loss)", stacklevel=2)
    else:
        if rc != _lib.PP_OK:
            _lib.pp_model_free(model)
        check(rc, f"load {path}", err)
    return Trace(model, source=str(path))


class _Model:
    """Owns one C trace model: freed when the Trace and every reader that
    holds it are gone."""
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self, _free=_lib.pp_model_free):
        _free(self.ptr)


def _string(model, sid):
    return _lib.pp_model_string(model, sid).decode(errors="replace")


class Trace:
    """A loaded trace: its events and the C analyzer's report over a window.

    Window options, taken by summary(), findings() and to_dataframe() for
    report tables, as `pipeprof analyze` takes them: region="warm up" (W =
    hull of those regions), exclude_region="warm up", from_ns / to_ns, and
    batch_pattern and stage_pattern (regexes labeling foreign traces' stages
    and batches, docs/analysis.md)."""

    def __init__(self, model, source):
        self._held = _Model(model)
        self.source = source
        self._reports = {}

    def close(self):
        """Frees the model; every method raises PipeprofError from now on.
        Closing twice is harmless."""
        self._held = None
        self._reports = {}

    @property
    def closed(self):
        return self._held is None

    def _live(self, what):
        """The model, held by the caller for as long as it reads it."""
        held = self._held
        if held is None:
            raise PipeprofError(_lib.PP_ESTATE, f"Trace.{what}: the trace is closed")
        return held

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- the report ----

    def summary(self, region=None, exclude_region=None, from_ns=None, to_ns=None,
                batch_pattern=None, stage_pattern=None):
        """The report as a dict: window, data_loss, findings, devices, tracks,
        stages, stage_times, batches, cycles, data_parallel, ops, op_types —
        the numbers of `pipeprof analyze --json` for the same options."""
        key = (region, exclude_region, from_ns, to_ns, batch_pattern, stage_pattern)
        held = self._live("summary")  # a closed trace raises, cached report or not
        if key not in self._reports:
            self._reports[key] = self._report_json(held.ptr, *key)
        return json.loads(self._reports[key])  # a fresh dict: the caller may change it

    def findings(self, **window):
        """The ranked findings as their rendered lines, data loss first."""
        return list(self.summary(**window)["findings"])

    def finding_records(self, **window):
        """The ranked findings as data (docs/report-json.md,
        "finding_records"): kind, stage, device, significant, figure {name,
        unit, est, lo, hi}, text, sentence, and for advice its action and
        predicted effect."""
        return list(self.summary(**window)["finding_records"])

    @staticmethod
    def _findings_frame(findings, pd):
        rows = []
        for rank, f in enumerate(findings, 1):
            fig, act, pred = f["figure"] or {}, f["action"] or {}, f["prediction"] or {}
            rows.append({"rank": rank, "kind": f["kind"], "stage": f["stage"],
                         "device": f["device"], "significant": f["significant"],
                         "figure": fig.get("name"), "unit": fig.get("unit"),
                         "est": fig.get("est"), "lo": fig.get("lo"), "hi": fig.get("hi"),
                         "finding": f["text"], "action": act.get("kind", "none"),
                         "prediction_state": pred.get("state"),
                         "change_pct": pred.get("change_pct"), "lo_pct": pred.get("lo_pct"),
                         "hi_pct": pred.get("hi_pct")})
        return pd.DataFrame(rows, columns=["rank", "kind", "stage", "device", "significant",
                                           "figure", "unit", "est", "lo", "hi", "finding",
                                           "action", "prediction_state", "change_pct",
                                           "lo_pct", "hi_pct"])

    def _report_json(self, model, *window):
        with reports.built(model, self.source, *window) as report:
            return reports.as_json(report, self.source)

    def table(self, by=None, row_limit=None, **window):
        """The report as text: by=None, the text report of `pipeprof
        analyze` (findings first); by="stages", "devices" or "ops", a
        torch-style table of those rows (key_averages().table())."""
        held = self._live("table")
        if by is None:
            with reports.built(held.ptr, self.source, **window) as report:
                return reports.as_text(report, self.source)
        return reports.table(self.summary(**window), by, row_limit)

    def to_html(self, path, **window):
        """Writes the self-contained HTML report (docs/report-html.md) to
        `path`, atomically; returns the path."""
        held = self._live("to_html")
        with reports.built(held.ptr, self.source, **window) as report:
            reports.write_html(report, held.ptr, path)
        return path

    def report(self, directory, **window):
        """Writes summary.txt, report.json, report.html, the CSV tables and
        trace.pptrace into `directory` (made if missing); returns the names
        of the files there."""
        held = self._live("report")
        with reports.built(held.ptr, self.source, **window) as report:
            return reports.write_dir(report, held.ptr, self.source, directory)

    def _repr_html_(self):
        """Jupyter's view of a trace: a compact summary (the report over
        the whole trace), or why there is none."""
        try:
            return reports.repr_html(self.summary(), self.source)
        except PipeprofError as e:
            return f"<div><b>pipeprof trace</b> {html.escape(self.source)}: " \
                   f"{html.escape(str(e))}</div>"

    # ---- the model ----

    def meta(self):
        """Recording level (-1: foreign), what was lost on the way, and the clock
        the timestamps are on (docs/merging.md)."""
        held = self._live("meta")
        m = _lib.pp_model_meta_get(held.ptr).contents
        return {"level": m.level, "process_name": _string(held.ptr, m.process_name),
                "dropped_records": m.dropped_records, "truncated_bytes": m.truncated_bytes,
                "ignored_events": m.ignored_events, "unmatched_ends": m.unmatched_ends,
                "clock": _string(held.ptr, m.clock), "host": _string(held.ptr, m.host),
                "boot_id": _string(held.ptr, m.boot_id),
                "alignment": _string(held.ptr, m.alignment),
                "alignment_error_ns": m.alignment_error_ns}

    # ---- DataFrames ----

    def to_arrow(self, table="events", columns=None, **window):
        """A pyarrow Table of one table of docs/tables.md (tables.ARROW_TABLES):
        the model's events, track_info, annotations, strings, threads, and
        the report's stages, stage_times, batches, cycles, devices, tracks,
        execs, decomposition, data_parallel, dp_devices, ops, op_types (those
        take the window options of summary()). `columns`: the names wanted
        (only those are made). The event columns the model stores as plain
        arrays are its memory, not a copy; the table keeps the model alive
        after close()."""
        held = self._live("to_arrow")
        return tables.table_of(held.ptr, self.source, table, columns, **window)

    def to_polars(self, table="events", columns=None, **window):
        """A Polars DataFrame of to_arrow(table) (needs polars)."""
        import polars
        return polars.from_arrow(self.to_arrow(table, columns, **window))

    def to_dataframe(self, table="events", **window):
        """A pandas DataFrame of one table (TABLES):
          events       one row per event (to_arrow("events"), strings as
                       categoricals, nullable integers <NA> where null), with
                       the track's track_name and device
          annotations  to_arrow("annotations") and `value` (any type)
          track_info   the model's tracks (to_arrow("track_info"))
          devices, tracks, stages, stage_times, batches, data_parallel,
          decomposition, clocks, ops, op_types,
          stage_ops    the report's tables; nested summaries are flattened
                       ("time_ns" -> time_ns_min, time_ns_p50, ...)
          cycles       one row: the cycle figures
          dp_devices   the data-parallel devices, with their stage
          findings     rank, kind, stage, device, significant, the figure
                       (figure, unit, est, lo, hi), the text ("finding"),
                       action and predicted effect (prediction_state,
                       change_pct, lo_pct, hi_pct)
          sched        the scheduler split of host spans: stage, span, method,
                       spans, no_wait, wall_ns, cpu_ns, wait_ns, blocked_ns,
                       voluntary, involuntary, rival, rival_cpu_ns (no rows:
                       the trace has none)
        Report tables take the window options of summary()."""
        import pandas as pd
        held = self._live("to_dataframe")
        if table not in TABLES:
            raise ValueError(f"to_dataframe: unknown table {table!r}; one of {', '.join(TABLES)}")
        if table == "events":
            return tables.events_frame(held.ptr)
        if table == "annotations":
            return tables.annotations_frame(held.ptr)
        if table == "track_info":
            return tables.to_pandas(tables.model_table(held.ptr, "track_info"))
        report = self.summary(**window)
        if table == "cycles":
            return pd.json_normalize(report["cycles"], sep="_")
        if table == "findings":
            return self._findings_frame(report["finding_records"], pd)
        if table == "dp_devices":
            rows = [dict(d, stage=dp["stage"]) for dp in report["data_parallel"]
                    for d in dp["devices"]]
            return pd.DataFrame(rows, columns=["stage", "device", "track", "batches",
                                               "share_recorded", "wall_ns", "share",
                                               "rate_per_s", "suggested_share", "slowest"])
        if table == "sched":
            method = report["sched"]["method"]
            return pd.DataFrame([dict(r, method=method) for r in report["sched"]["rows"]],
                                columns=["stage", "span", "method", "spans", "no_wait", "wall_ns",
                                         "cpu_ns", "wait_ns", "blocked_ns", "voluntary",
                                         "involuntary", "rival", "rival_cpu_ns"])
        rows = report[table]
        if table == "data_parallel":
            rows = [{k: v for k, v in dp.items() if k != "devices"} for dp in rows]
        return pd.json_normalize(rows, sep="_") if rows else pd.DataFrame()
