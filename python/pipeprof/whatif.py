"""What-if from Python: pipeprof.whatif(trace, ...) is `pipeprof whatif
--json` (pp_whatif_json: the C library's pipeline model of the trace, its
replay, the predicted scenarios and the causal profile, docs/whatif.md)
parsed into pandas DataFrames. No figure is computed here.

    r = pipeprof.whatif("out/trace.pptrace", exclude_region="warm up",
                        speedup={"GraphPrep": 2}, split={"Embedding": {"CPU": 0.7, "NPU": 0.3}})
    r.replay["error"]        # replayed / measured throughput - 1
    r.scenarios              # one row per change: throughput mean, lo, hi, gain, ...
    r.causal                 # one row per stage and device: gain at 1.1x .. 2x
"""
import ctypes
import json
import os
from ctypes import POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint, c_uint64, c_void_p

from . import _lib, reports
from ._lib import check


class _Options(Structure):  # pp_whatif_options
    _fields_ = [("seed", c_uint64), ("seeds", c_uint), ("batches", c_uint64),
                ("threshold", c_double)]


_options_init = _lib._proto("pp_whatif_options_init", None, POINTER(_Options))
_json = _lib._proto("pp_whatif_json", c_int, _lib.R, _lib.M, POINTER(c_char_p), POINTER(c_char_p),
                    c_size_t, c_int, c_int, POINTER(_Options), POINTER(c_void_p),
                    POINTER(c_size_t), _lib.ERR)
_json_free = _lib._proto("pp_whatif_json_free", None, c_void_p)


def _changes(speedup, split, requests, queue_depth):
    """(kind, text) pairs as the CLI spells them, from dicts or CLI strings."""
    def items(value):
        if value is None:
            return []
        if isinstance(value, dict):
            return list(value.items())
        if isinstance(value, str):
            return [value]
        return list(value)
    out = []
    for v in items(speedup):
        out.append(("speedup", v if isinstance(v, str) else f"{v[0]}={v[1]:g}"))
    for v in items(split):
        if isinstance(v, str):
            out.append(("split", v))
        else:
            stage, shares = v
            out.append(("split", stage + "=" + ",".join(f"{d}:{s:g}" for d, s in shares.items())))
    for v in items(requests):
        out.append(("requests", v if isinstance(v, str) else f"{v[0]}={int(v[1])}"))
    depths = [] if queue_depth is None else (
        [queue_depth] if isinstance(queue_depth, int) else list(queue_depth))
    out.extend(("queue-depth", str(int(d))) for d in depths)
    return out


class WhatIf:
    """The result of pipeprof.whatif: the parsed JSON (`raw`, the keys of
    docs/whatif.md) and DataFrames of it.

    model: one row per stage and part (device, share, requests, servers);
    measured: the measured figures (a dict); replay: throughput_per_s,
    error, cycle_error, refused, reason; scenarios: one row per scenario
    (changes, throughput mean/lo/hi, gain mean/lo/hi, cycle and end-to-end
    figures), empty when the replay was refused; causal: one row per stage
    and device, the throughput gain at each speed-up (columns "1.1x" ..)."""

    def __init__(self, raw):
        import pandas as pd
        self.raw = raw
        self.measured = raw["measured"]
        self.replay = {k: v for k, v in raw["replay"].items() if k != "result"}
        self.notes = list(raw["model"]["notes"])
        self.model = pd.DataFrame(
            [{"stage": s["name"], "device": p["device"], "share": p["share"],
              "requests": p["requests"], "servers": s["servers"],
              "servers_inferred": s["servers_inferred"], "data_parallel": s["data_parallel"]}
             for s in raw["model"]["stages"] for p in s["parts"]])
        self.scenarios = pd.DataFrame(
            [{"changes": ", ".join(s["changes"]),
              "throughput_per_s": s["throughput_per_s"]["mean"],
              "throughput_lo": s["throughput_per_s"]["lo"],
              "throughput_hi": s["throughput_per_s"]["hi"],
              "gain": s["gain"]["mean"], "gain_lo": s["gain"]["lo"], "gain_hi": s["gain"]["hi"],
              "cycle_mean_ns": s["cycle_ns"]["mean"]["mean"],
              "cycle_p95_ns": s["cycle_ns"]["p95"]["mean"],
              "e2e_p50_ns": s["e2e_ns"]["p50"], "e2e_p95_ns": s["e2e_ns"]["p95"]}
             for s in raw["scenarios"]],
            columns=["changes", "throughput_per_s", "throughput_lo", "throughput_hi", "gain",
                     "gain_lo", "gain_hi", "cycle_mean_ns", "cycle_p95_ns", "e2e_p50_ns",
                     "e2e_p95_ns"])
        self.causal = pd.DataFrame(
            [dict({"kind": r["kind"], "name": r["name"]},
                  **{f"{g['speedup']:g}x": g["gain"]["mean"] for g in r["gains"]})
             for r in raw["causal"]])

    def __repr__(self):
        r = self.replay
        state = f"refused: {r['reason']}" if r["refused"] else f"{len(self.scenarios)} scenarios"
        return f"<pipeprof.WhatIf replay error {100 * r['error']:+.1f}%, {state}>"


def whatif(trace, speedup=None, split=None, requests=None, queue_depth=None, combine=False,
           causal=True, seeds=None, seed=None, batches=None, **window):
    """Models `trace` (a path or a pipeprof.Trace), replays the model and
    predicts each change, as `pipeprof whatif --json` does.

    speedup={"Stage": 2, "Stage@DEVICE": 1.5, "@DEVICE": 2} (or CLI strings
    "Stage=2"), split={"Stage": {"DEV": 0.7, "DEV2": 0.3}},
    requests={"DEVICE": 2}, queue_depth=N (or a list): each a scenario of
    its own, all one with combine=True. seeds, seed, batches as the CLI's
    --seeds, --seed, --batches. window: the options of Trace.summary
    (exclude_region="warm up", batch_pattern=...). A stage moved to another
    device needs a sweep's table: `pipeprof whatif --move --lookup`.
    Returns a WhatIf; bad changes raise PipeprofError naming them."""
    from .trace import Trace, load
    owned = not isinstance(trace, Trace)
    t = load(os.fspath(trace)) if owned else trace
    try:
        held = t._live("whatif")
        pairs = _changes(speedup, split, requests, queue_depth)
        kinds = (c_char_p * max(1, len(pairs)))(*[k.encode() for k, _ in pairs])
        texts = (c_char_p * max(1, len(pairs)))(*[v.encode() for _, v in pairs])
        opt = _Options()
        _options_init(ctypes.byref(opt))
        if seeds is not None:
            opt.seeds = int(seeds)
        if seed is not None:
            opt.seed = int(seed)
        if batches is not None:
            opt.batches = int(batches)
        text, size, err = c_void_p(), c_size_t(), _lib.Error()
        with reports.built(held.ptr, t.source, **window) as report:
            check(_json(report, held.ptr, kinds, texts, len(pairs), int(combine), int(causal),
                        ctypes.byref(opt), ctypes.byref(text), ctypes.byref(size),
                        ctypes.byref(err)), f"whatif {t.source}", err)
        try:
            raw = json.loads(ctypes.string_at(text, size.value).decode())
        finally:
            _json_free(text)
        return WhatIf(raw)
    finally:
        if owned:
            t.close()
