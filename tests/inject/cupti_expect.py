"""cupti_expect.py TRACE.json BATCHES STREAMS — checks the trace of
tests/inject/cuda_program.c recorded with the CUPTI collector
(tests/inject/test_cupti_gpu.sh). What must hold comes from what the
program does: per batch, inside the NVTX range "Stage1/batch<b>", each of
STREAMS streams gets a copy, a kernel "spin" and a memset.

Checks: BATCHES spin kernels, copies and memsets on each of STREAMS tracks
of GPU 0; every one carries a correlation shared with exactly one API call
on the launching thread's track, lying inside that batch's NVTX range
(within the clock bound, as CUPTI stamps the call and pipeprof the range); and
the clock alignment: each GPU track has a "clock alignment" mark whose
error bound covers every violation of causality (a kernel starting before
its launch call began). Prints the figures (kernels per stream, error
bound, drift, worst launch-to-start gap) for the closing note."""
import json
import sys
from collections import defaultdict


def check(what, cond, detail=""):
    if not cond:
        print(f"FAIL: {what} {detail}")
        sys.exit(1)
    print(f"ok   {what}")


def ns(us):
    return round(us * 1000)


def main():
    path, batches, streams = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ev = json.load(open(path))["traceEvents"]
    tracks = {}
    for e in ev:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            tracks[(e["pid"], e["tid"])] = e["args"].get("pipeprof_track", {})
    spans = [e for e in ev if e.get("ph") == "X"]

    def track(e):
        return tracks.get((e["pid"], e["tid"]), {})

    gpu = [e for e in spans if track(e).get("device") == "GPU 0"]
    per_stream = defaultdict(lambda: defaultdict(int))
    for e in gpu:
        per_stream[track(e)["stream"]][e["name"]] += 1
    check(f"{streams} streams of GPU 0 hold device work", len(per_stream) == streams,
          f"(found {dict(per_stream)})")
    for stream, names in sorted(per_stream.items()):
        print(f"     stream {stream}: {dict(names)}")
        for name in ("spin", "Memcpy HtoD", "Memset"):
            check(f'stream {stream}: {batches} x "{name}"', names[name] == batches, f"({names[name]})")
    check("every device op is an exec with its hardware time",
          all(e["args"].get("role") == "exec" and e["args"].get("hw_ns", 0) > 0 for e in gpu))

    calls = defaultdict(list)
    for e in spans:
        if track(e).get("kind") == "thread" and "correlation" in e.get("args", {}):
            calls[e["args"]["correlation"]].append(e)
    ranges = {e["name"]: e for e in spans if e["name"].startswith("Stage1/batch")}
    check(f"{batches} NVTX ranges", len(ranges) == batches, f"({sorted(ranges)})")

    marks = [e for e in ev if e.get("ph") in ("i", "I") and e["name"] == "clock alignment"
             and track(e).get("device") == "GPU 0"]
    check("a clock alignment mark on every GPU 0 stream", len(marks) == streams, f"({len(marks)})")
    bound = max(m["args"]["error_ns"] for m in marks)
    check("the marks name the method", all(m["args"]["method"] == "cuptiGetTimestamp" for m in marks))

    worst_early, worst_gap, unlinked, outside = 0, 0, [], []
    for e in gpu:
        corr = e["args"].get("correlation")
        if not calls.get(corr):
            unlinked.append(f'{e["name"]} (correlation {corr})')
            continue
        call = min(calls[corr], key=lambda c: c["dur"])  # the innermost (driver) call
        within = [r for r in ranges.values()
                  if (r["pid"], r["tid"]) == (call["pid"], call["tid"])
                  and ns(r["ts"]) - bound <= ns(call["ts"])
                  and ns(call["ts"] + call["dur"]) <= ns(r["ts"] + r["dur"]) + bound]
        if len(within) != 1:
            outside.append(f'{e["name"]} (correlation {corr})')
        worst_early = max(worst_early, ns(call["ts"]) - ns(e["ts"]))  # > 0: device before call
        worst_gap = max(worst_gap, ns(e["ts"]) - ns(call["ts"]))
    check("every device op has its launch call on a host thread", not unlinked, str(unlinked))
    check("every launch lies inside its batch's NVTX range (within the bound: the range is "
          "stamped by the session clock, the call by CUPTI's)", not outside, str(outside))
    check(f"no device op starts before its launch call by more than the bound ({bound} ns)",
          worst_early <= bound, f"(worst {worst_early} ns)")
    drift = max(abs(m["args"].get("drift_ns", 0)) for m in marks)
    print(f"FIGURES kernels_per_stream={batches} streams={len(per_stream)} error_bound_ns={bound} "
          f"drift_ns={drift} worst_launch_to_start_ns={worst_gap} worst_early_ns={worst_early}")


main()
