"""trace_expect.py TRACE.json CASE — checks what an annotated program's
trace must hold (tests/inject/test_*.sh). Each CASE names the program; the
expected events come from what that program does (see its source), never
from an earlier run. Prints one "ok" line per check, exits 1 on the first
failure."""
import json
import sys


def load(path):
    """A Chrome trace's events, or an analyze --json report as it is."""
    d = json.load(open(path))
    if isinstance(d, list):
        return d
    return d.get("traceEvents", d)


def check(what, cond, detail=""):
    if not cond:
        print(f"FAIL: {what} {detail}")
        sys.exit(1)
    print(f"ok   {what}")


def spans(ev, name):
    return [e for e in ev if e.get("ph") == "X" and e["name"] == name]


def one(ev, name):
    s = spans(ev, name)
    check(f'one span "{name}"', len(s) == 1, f"(found {len(s)})")
    return s[0]


def inside(a, b):
    """Span a lies within span b on the same row."""
    return a["tid"] == b["tid"] and a["ts"] >= b["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"]


def nvtx(ev):
    outer, inner = one(ev, "outer"), one(ev, "inner")
    check("inner nests in outer on one thread", inside(inner, outer))
    check("inner lasts the 50 us it spins", inner["dur"] >= 50)
    load = one(ev, "load")
    check("a named category and an int64 payload become annotations",
          load["args"].get("category") == "io" and load["args"].get("payload") == 42, load["args"])
    reg = one(ev, "registered")
    check("a registered string names the range; domain and its category are annotated",
          reg["args"].get("domain") == "pipeline" and reg["args"].get("category") == "compute",
          reg["args"])
    marks = {e["name"]: e for e in ev if e.get("ph") == "i"}
    check("nvtxMarkA is an instant on the main thread",
          "checkpoint" in marks and marks["checkpoint"]["tid"] == outer["tid"])
    check("a domain mark carries its domain",
          marks.get("registered", {}).get("args", {}).get("domain") == "pipeline")
    one(ev, "wide \u00fc")
    worker = one(ev, "worker")
    check("the worker thread has a row of its own", worker["tid"] != outer["tid"])
    b = [e for e in ev if e.get("ph") == "b" and e["name"] == "request"]
    e = [e for e in ev if e.get("ph") == "e" and e["name"] == "request"]
    check("the start/end range is one async pair", len(b) == 1 and len(e) == 1)
    check("on a row of its own, not the starting or ending thread's",
          b[0]["tid"] not in (outer["tid"], worker["tid"]))
    check("it ends inside the worker's range, which ended it",
          worker["ts"] <= e[0]["ts"] <= worker["ts"] + worker["dur"])
    names = [f"{s}/batch{n}" for n in range(4) for s in ("prep", "embed")]
    check("the pipeline's eight ranges are all there", all(len(spans(ev, n)) == 1 for n in names))


def nvtx_python(ev):
    outer, inner = one(ev, "outer"), one(ev, "inner")
    check("inner nests in outer on one thread", inside(inner, outer))
    load = one(ev, "load")
    check("domain, named category and payload become annotations",
          load["args"].get("domain") == "pipeline" and load["args"].get("category") == "io"
          and load["args"].get("payload") == 42, load["args"])
    worker = one(ev, "worker")
    check("a push/pop on another thread is on that thread's row", worker["tid"] != outer["tid"])
    b = [e for e in ev if e.get("ph") == "b" and e["name"] == "request"]
    e = [e for e in ev if e.get("ph") == "e" and e["name"] == "request"]
    check("start_range/end_range across threads is one async pair on a row of its own",
          len(b) == 1 and len(e) == 1 and b[0]["tid"] not in (outer["tid"], worker["tid"]))
    marks = [e for e in ev if e.get("ph") == "i" and e["name"] == "checkpoint"]
    check("a mark is an instant with its domain",
          len(marks) == 1 and marks[0]["args"].get("domain") == "pipeline")


def itt(ev):
    outer, inner = one(ev, "outer"), one(ev, "inner")
    check("inner nests in outer on one thread", inside(inner, outer))
    check("inner lasts the 200 us it spins", inner["dur"] >= 200)
    check("every task carries its domain",
          all(e["args"].get("domain") == "pipeline" for e in ev if e.get("ph") == "X"))
    worker = one(ev, "worker")
    check("the worker thread has a row of its own", worker["tid"] != outer["tid"])
    b = [e for e in ev if e.get("ph") == "b" and e["name"] == "request"]
    e = [e for e in ev if e.get("ph") == "e" and e["name"] == "request"]
    check("the overlapped task is one async pair", len(b) == 1 and len(e) == 1)
    check("on a row of its own, not the starting or ending thread's",
          b[0]["tid"] not in (outer["tid"], worker["tid"]))
    check("it ends inside the worker's task, which ended it",
          worker["ts"] <= e[0]["ts"] <= worker["ts"] + worker["dur"])
    check("nothing recorded while paused", not spans(ev, "hidden"))
    names = [f"{s}/batch{n}" for n in range(4) for s in ("prep", "embed")]
    check("the pipeline's eight tasks are all there", all(len(spans(ev, n)) == 1 for n in names))


def itt_abi(ev):
    early = one(ev, "early")
    check("handles made before the collector are named by their text",
          early["args"].get("domain") == "early domain")
    frame, work = one(ev, "pipeline"), one(ev, "work")
    check("a frame is a span named after its domain", frame["args"].get("itt") == "frame")
    check("the task inside it nests in it", inside(work, frame))
    tick = [e for e in ev if e.get("ph") == "i" and e["name"] == "tick"]
    check("a marker is an instant with its domain",
          len(tick) == 1 and tick[0]["args"].get("domain") == "pipeline")
    for stage in ("prep", "embed"):
        s = spans(ev, stage)
        check(f'metadata "stage" and "batch" make four {stage} stage instances',
              len(s) == 4 and all(e["args"].get("role") == "stage" and e["args"].get("stage") == stage
                                  for e in s)
              and sorted(e["args"].get("batch_id") for e in s) == [0, 1, 2, 3], s)
    check("a metadata string is cut at its given length (\"embed-and-more\", 5)",
          all(e["args"]["stage"] == "embed" for e in spans(ev, "embed")))
    check("other metadata stay annotations", all(e["args"].get("rows") == 128 for e in spans(ev, "embed")))
    shared = spans(ev, "shared")
    check("two threads' 100 tasks each, on their own rows",
          len(shared) == 200 and len({e["tid"] for e in shared}) == 2)
    for k in (1, 2):
        b = [e for e in ev if e.get("ph") == "b" and e["name"] == f"request {k}"]
        e = [e for e in ev if e.get("ph") == "e" and e["name"] == f"request {k}"]
        check(f"overlapped task {k}, ended by a worker, is one async pair",
              len(b) == 1 and len(e) == 1 and b[0]["id"] == e[0]["id"])


def torch(ev):
    outer, inner = one(ev, "outer"), one(ev, "inner")
    check("itt.range_push nests in itt.range on one thread", inside(inner, outer))
    check("PyTorch's ranges are in its domain", outer["args"].get("domain") == "PyTorch")
    for b in range(3):
        batch = one(ev, f"infer/batch{b}")
        # Sequential(Linear, ReLU, Linear): emit_itt makes one task per operator
        ops = [e["name"] for e in ev if e.get("ph") == "X" and e["name"].startswith("aten::")
               and inside(e, batch)]
        check(f"batch {b}'s operators nest in its record_function range",
              ops.count("aten::linear") == 2 and ops.count("aten::relu") == 1, ops)


def pipeline_report(rep):
    """`analyze --json` of a program whose two stages, prep (spins 200 us)
    and embed (400 us; 900 us in batch 2), ran one after the other for
    batches 0..3 on one thread. Wall times only have lower bounds on a
    shared machine, so each cycle is checked against the report's own stage
    times: the longer stage of the batch is its cycle and its bottleneck
    (a tie goes to the upstream stage, prep)."""
    stages = sorted(s["name"] for s in rep["stages"])
    check("the two stages are found", stages == ["embed", "prep"], stages)
    batches = rep["batches"]
    check("four complete batches", [b["batch"] for b in batches] == [0, 1, 2, 3]
          and all(b["complete"] and b["stages"] == 2 for b in batches), batches)
    times = {(t["stage"], t["batch"]): t["time_ns"] for t in rep["stage_times"]}
    check("each stage time covers its spin",
          all(times[("prep", b)] >= 200000 and times[("embed", b)] >= (900000 if b == 2 else 400000)
              for b in range(4)), times)
    for b in batches:
        prep, embed = times[("prep", b["batch"])], times[("embed", b["batch"])]
        check(f"batch {b['batch']}: the cycle is the longer stage, which is the bottleneck",
              b["cycle_ns"] == max(prep, embed)
              and b["bottleneck"] == ("embed" if embed > prep else "prep"), b)


CASES = {"nvtx": nvtx, "nvtx_python": nvtx_python, "itt": itt, "itt_abi": itt_abi, "torch": torch,
         "pipeline_report": pipeline_report}

if __name__ == "__main__":
    CASES[sys.argv[2]](load(sys.argv[1]))
