"""Reports from Python: the C analyzer's report (pp_report) built over a
window and rendered by the C renderers — text (what `pipeprof analyze`
prints), HTML (docs/report-html.md), CSV — plus torch-style tables of the
report's rows, formatted here from the JSON report (no figure is computed
here: every number is the analyzer's).
"""
import contextlib
import ctypes
import html
import os

from . import _lib
from ._lib import PipeprofError, check


@contextlib.contextmanager
def built(model, source, region=None, exclude_region=None, from_ns=None, to_ns=None,
          batch_pattern=None, stage_pattern=None):
    """The report of `model` over a window (the options of Trace.summary),
    freed when the block ends."""
    opt = _lib.AnalyzeOptions()
    _lib.pp_analyze_options_init(ctypes.byref(opt))
    opt.region = _lib.encode(region)
    opt.exclude_region = _lib.encode(exclude_region)
    opt.has_from, opt.from_ns = (from_ns is not None), from_ns or 0
    opt.has_to, opt.to_ns = (to_ns is not None), to_ns or 0
    opt.batch_pattern = _lib.encode(batch_pattern)
    opt.stage_pattern = _lib.encode(stage_pattern)
    opt.source = _lib.encode(source)
    report = ctypes.c_void_p()
    err = _lib.Error()
    check(_lib.pp_report_build(model, ctypes.byref(opt), ctypes.byref(report),
                               ctypes.byref(err)), f"analyze {source}", err)
    try:
        # advice with its predicted effect, as `pipeprof analyze` gives it
        check(_lib.pp_whatif_advise(report, model, None, ctypes.byref(err)),
              f"analyze {source}: predicting the advice's effect", err)
        yield report
    finally:
        _lib.pp_report_free(report)


def as_json(report, source):
    text = ctypes.c_void_p()
    size = ctypes.c_size_t()
    try:
        check(_lib.pp_report_json(report, ctypes.byref(text), ctypes.byref(size)),
              f"analyze {source}: rendering the report")
        return ctypes.string_at(text, size.value).decode()
    finally:
        _lib.pp_report_json_free(text)


def as_text(report, source):
    """The text report, rendered by pp_report_write_text into memory."""
    buf, size = ctypes.c_void_p(), ctypes.c_size_t()
    stream = _lib.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not stream:
        raise PipeprofError(_lib.PP_ENOMEM, f"analyze {source}: no memory for the text report")
    rc = _lib.pp_report_write_text(report, stream)
    _lib.fclose(stream)   # sets buf and size
    try:
        check(rc, f"analyze {source}: rendering the text report")
        return ctypes.string_at(buf, size.value).decode(errors="replace")
    finally:
        _lib.libc_free(buf)


def write_html(report, model, path):
    err = _lib.Error()
    check(_lib.pp_report_write_html(report, model, _lib.encode(path), ctypes.byref(err)),
          f"HTML report {path}", err)


def write_dir(report, model, source, directory):
    """summary.txt, report.json, report.html, the CSV tables and the trace
    itself (trace.pptrace) into `directory` (made if missing)."""
    os.makedirs(directory, exist_ok=True)
    files = {"summary.txt": as_text(report, source), "report.json": as_json(report, source)}
    for name, text in files.items():
        path = os.path.join(directory, name)
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    write_html(report, model, os.path.join(directory, "report.html"))
    err = _lib.Error()
    check(_lib.pp_report_write_csv(report, _lib.encode(directory), ctypes.byref(err)),
          f"CSV tables in {directory}", err)
    err = _lib.Error()
    trace_path = os.path.join(directory, "trace.pptrace")
    check(_lib.pp_trace_write(model, _lib.encode(trace_path), ctypes.byref(err)),
          f"trace {trace_path}", err)
    return sorted(os.listdir(directory))


# ---- torch-style tables ----

def _ms(ns):
    return f"{ns / 1e6:.3f}"


def _pct(x):
    return f"{100 * x:.1f}"


# Per table: the report's rows, then (header, value of a row) per column.
# Times in milliseconds, ratios in percent, as the text report shows them.
_TABLES = {
    "stages": ("stages", [
        ("Stage", lambda r: r["name"]),
        ("Kind", lambda r: "host" if r["exec_less"] else
         "data parallel" if r["data_parallel"] else "device"),
        ("Execs", lambda r: r["execs"]),
        ("Batches", lambda r: r["time_ns"]["n"]),
        ("Mean ms", lambda r: _ms(r["time_ns"]["mean"])),
        ("p50 ms", lambda r: _ms(r["time_ns"]["p50"])),
        ("p95 ms", lambda r: _ms(r["time_ns"]["p95"])),
        ("Max ms", lambda r: _ms(r["time_ns"]["max"])),
        ("Total ms", lambda r: _ms(r["time_ns"]["total"])),
        ("Bottleneck", lambda r: r["bottleneck_count"]),
    ]),
    "devices": ("devices", [
        ("Device", lambda r: r["name"] + (" (simulated)" if r["simulated"] else "")),
        ("Tracks", lambda r: r["tracks"]),
        ("Execs", lambda r: r["execs"]),
        ("Busy ms", lambda r: _ms(r["busy_ns"])),
        ("Idle ms", lambda r: _ms(r["idle_ns"])),
        ("Wall util %", lambda r: _pct(r["wall_util"])),
        ("HW util %", lambda r: _pct(r["hw_util"])),
        ("Bubbles", lambda r: r["bubbles"]["count"]),
        ("Bubble p95 ms", lambda r: _ms(r["bubbles"]["p95"])),
    ]),
    "ops": ("ops", [
        ("Name", lambda r: r["name"]),
        ("Type", lambda r: r["type"]),
        ("Device", lambda r: r["device_label"]),
        ("Count", lambda r: r["count"]),
        ("Total ms", lambda r: _ms(r["total_ns"])),
        ("Mean ms", lambda r: _ms(r["mean_ns"])),
        ("p95 ms", lambda r: _ms(r["p95_ns"])),
        ("Max ms", lambda r: _ms(r["max_ns"])),
    ]),
}
TABLE_KINDS = tuple(_TABLES)


def table(summary, by, row_limit=None):
    """One of TABLE_KINDS as aligned text, like torch.profiler's
    key_averages().table(): a header, a rule, a row per entry."""
    if by not in _TABLES:
        raise ValueError(f"table: by={by!r}: None (the text report) or one of "
                         f"{', '.join(TABLE_KINDS)}")
    key, columns = _TABLES[by]
    rows = summary[key][:row_limit] if row_limit else summary[key]
    simulated = {d["name"] for d in summary["devices"] if d["simulated"]}
    if by == "ops":
        rows = [dict(r, device_label=r["device"] + " (simulated)" * (r["device"] in simulated))
                for r in rows]
    cells = [[h for h, _ in columns]] + [[str(f(r)) for _, f in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    # the first column (a name) reads left-aligned, numbers right-aligned
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths))) for row in cells]
    rule = "-" * len(lines[0])
    return "\n".join([rule, lines[0], rule] + lines[1:] + [rule]) + "\n"


def repr_html(summary, source):
    """A compact summary for Jupyter: window, cycle figures, the top
    findings and the stage table."""
    c = summary["cycles"]
    w = summary["window"]
    head = (f"<b>pipeprof trace</b> {html.escape(source)}: window {_ms(w['duration_ns'])} ms "
            f"({html.escape(w['how'])}), {c['batches']} batches, cycle mean "
            f"{_ms(c['cycle_ns']['mean'])} ms, throughput {c['throughput_measured_per_s']:.1f}/s "
            f"(bound {c['throughput_bound_per_s']:.1f}/s)")
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in summary["findings"][:3])
    key, columns = _TABLES["stages"]
    header = "".join(f"<th>{html.escape(h)}</th>" for h, _ in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(f(r)))}</td>" for _, f in columns)
                   + "</tr>" for r in summary[key])
    return (f"<div>{head}<ol>{findings}</ol><table><thead><tr>{header}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")
