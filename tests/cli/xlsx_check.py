"""Reads the workbook `pipeprof report` wrote with openpyxl and checks it
against the JSON report of the same trace and window (test_report.sh).

    xlsx_check.py REPORT.xlsx REPORT.json

Checks: the sheets (Overview, a sheet per device and per stage, Ops, Op
types); every sheet's header row frozen and an autofilter on its table;
durations stored as numbers with a ms or µs number format; the overview's
window, findings and per-device busy time and bandwidth; each device
sheet's tracks and one row per bubble; each stage sheet's time per batch.
Prints one line per check; exit 1 on a failure, 77 when openpyxl is
missing."""
import json
import sys

try:
    import openpyxl
except ImportError:
    print("skipped: openpyxl is not installed (run scripts/setup)")
    sys.exit(77)

failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL: ") + what + ("" if ok else ": " + str(detail)))
    failures += not ok


def label(d):
    return d["name"] + (" (simulated)" if d["simulated"] else "")


def rows(ws):
    """The rows below the header as lists of cells (values and formats)."""
    return [list(r) for r in ws.iter_rows(min_row=2)]


def near(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def main():
    wb = openpyxl.load_workbook(sys.argv[1])
    rep = json.load(open(sys.argv[2]))
    devices, stages = rep["devices"], rep["stages"]
    want = (["Overview"] + ["Device " + label(d) for d in devices] +
            ["Stage " + s["name"] for s in stages] + ["Ops", "Op types"])
    check("a sheet per device and stage, overview first, op tables last",
          wb.sheetnames == want, wb.sheetnames)
    for ws in wb.worksheets:
        check(f"{ws.title}: header row frozen, table filtered",
              ws.freeze_panes == "A2" and bool(ws.auto_filter.ref), (ws.freeze_panes, ws.auto_filter.ref))

    ov = wb["Overview"]
    fields = {r[0].value: r[1].value for r in ov.iter_rows(min_row=2, max_row=10)}
    w = rep["window"]
    check("overview: the window", fields["window"] == w["how"] and
          fields["window start (ns)"] == w["start_ns"] and fields["window end (ns)"] == w["end_ns"],
          fields)
    loss = rep["data_loss"]
    check("overview: data loss", fields["dropped records"] == loss["dropped_records"] and
          fields["truncated bytes"] == loss["truncated_bytes"], fields)
    cells = [r for r in ov.iter_rows() if r[0].value is not None]
    texts = [r[1].value for r in cells if isinstance(r[0].value, str) and r[0].value.endswith(".")
             and r[0].value[:-1].isdigit()]
    check("overview: the findings, in order", texts == rep["findings"] and texts, texts)
    head = next(i for i, r in enumerate(cells) if r[0].value == "device")
    names = [c.value for c in cells[head]]
    for k, d in enumerate(devices):
        r = cells[head + 1 + k]
        busy = r[names.index("busy")]
        check(f"overview: {label(d)} busy in ms", r[0].value == label(d) and
              near(busy.value, d["busy_ns"] / 1e6) and "ms" in busy.number_format,
              (r[0].value, busy.value, busy.number_format))
        bw = d["bandwidth"]
        got = r[names.index("total GB/s")].value
        check(f"overview: {label(d)} bandwidth",
              (got is None and bw["execs"] == 0) or near(got, bw["total_gbps"]), (got, bw))

    for d in devices:
        ws = wb["Device " + label(d)]
        head = [c.value for c in ws[1]]
        tracks = [r for r in rows(ws) if r[0].value is not None]
        want_tracks = [t["name"] for t in rep["tracks"] if t["device"] == d["name"]]
        check(f"{ws.title}: its tracks", [r[0].value for r in tracks] == want_tracks,
              [r[0].value for r in tracks])
        g = head.index("bubble")
        gaps = [r[g] for r in rows(ws) if r[g].value is not None]
        check(f"{ws.title}: a row per bubble, in µs",
              len(gaps) == d["bubbles"]["count"] and all("µs" in c.number_format for c in gaps) and
              near(sum(c.value for c in gaps), d["bubbles"]["total"] / 1e3),
              (len(gaps), d["bubbles"]))

    for s in stages:
        ws = wb["Stage " + s["name"]]
        got = [(r[0].value, r[1].value) for r in rows(ws) if r[0].value is not None]
        want_t = [(t["batch"], t["time_ns"] / 1e6) for t in rep["stage_times"]
                  if t["stage"] == s["name"]]
        check(f"{ws.title}: its time per batch in ms",
              len(got) == len(want_t) and all(a == c and near(b, e) for (a, b), (c, e) in zip(got, want_t))
              and all("ms" in r[1].number_format for r in rows(ws) if r[1].value is not None),
              got[:3])
    ops = rows(wb["Ops"])
    check("Ops: a row per op of the report", len(ops) == len(rep["ops"]), len(ops))
    print(f"{'FAILED' if failures else 'ok'}: {sys.argv[1]}")
    sys.exit(1 if failures else 0)


main()
