"""Comparing two runs from Python: pipeprof.diff(base, new) is `pipeprof
diff` through the library (pipeprof/diff.h, docs/diff.md). Every figure,
interval and verdict is the C comparison's, parsed from its JSON; this
module only turns it into DataFrames.
"""
import ctypes
import json
from ctypes import POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint, c_uint64, c_void_p

from . import _lib, reports
from ._lib import check


class _Map(Structure):
    _fields_ = [("base", c_char_p), ("new_name", c_char_p)]


class _Options(Structure):
    _fields_ = [("map", POINTER(_Map)), ("nmap", c_size_t), ("alpha", c_double),
                ("reps", c_uint), ("seed", c_uint64), ("min_change", c_double)]


_ERR = POINTER(_lib.Error)
_is_file = _lib._proto("pp_diff_summary_is_file", c_int, c_char_p)
_load = _lib._proto("pp_diff_summary_load", c_int, c_char_p, POINTER(c_void_p), _ERR)
_build = _lib._proto("pp_diff_summary_build", c_int, c_void_p, c_void_p, POINTER(c_void_p), _ERR)
_save = _lib._proto("pp_diff_summary_save", c_int, c_void_p, c_char_p, _ERR)
_free_summary = _lib._proto("pp_diff_summary_free", None, c_void_p)
_options_init = _lib._proto("pp_diff_options_init", None, POINTER(_Options))
_compare = _lib._proto("pp_diff_compare", c_int, c_void_p, c_void_p, POINTER(_Options),
                       POINTER(c_void_p), _ERR)
_free_diff = _lib._proto("pp_diff_free", None, c_void_p)
_json = _lib._proto("pp_diff_json", c_int, c_void_p, POINTER(c_void_p), POINTER(c_size_t))


class Diff:
    """The comparison of two runs (docs/diff.md).

    figures: a DataFrame, one row per figure: key, label, kind, stat,
      stage, device, op, unit, base, new, abs, rel, ci_lo, ci_hi, n_base,
      n_new, tested, p, significant, in.
    findings, within_noise: the plain statements, in order.
    json: the whole `pipeprof diff --json` document as a dict.
    """

    def __init__(self, doc):
        import pandas as pd
        self.json = doc
        self.findings = list(doc["findings"])
        self.within_noise = list(doc["within_noise"])
        rows = []
        for f in doc["figures"]:
            row = {k: v for k, v in f.items() if k != "ci"}
            row["ci_lo"], row["ci_hi"] = f["ci"]
            rows.append(row)
        self.figures = pd.DataFrame(rows)

    def figure(self, key):
        """The row of figure `key` ("stage:Embedding.p95") as a dict."""
        match = [f for f in self.json["figures"] if f["key"] == key]
        if not match:
            raise KeyError(key)
        return match[0]

    def __repr__(self):
        return (f"<pipeprof.Diff {self.json['base']['source']} -> {self.json['new']['source']}: "
                f"{len(self.findings)} findings>")


def _summary(path, window):
    """A saved baseline read, or a trace analyzed over the window."""
    out, err = c_void_p(), _lib.Error()
    if _is_file(_lib.encode(path)):
        check(_load(_lib.encode(path), ctypes.byref(out), ctypes.byref(err)), f"diff {path}", err)
        return out
    from .trace import load
    with load(path) as trace:
        model = trace._live("diff").ptr
        with reports.built(model, str(path), **window) as report:
            check(_build(report, model, ctypes.byref(out), ctypes.byref(err)), f"diff {path}", err)
    return out


def save_baseline(trace_path, baseline_path, **window):
    """Saves the summary of a trace (its samples and figures) as a baseline
    that diff() and `pipeprof gate` take in place of the trace."""
    s = _summary(trace_path, window)
    try:
        err = _lib.Error()
        check(_save(s, _lib.encode(baseline_path), ctypes.byref(err)), f"save {baseline_path}", err)
    finally:
        _free_summary(s)


def diff(base, new, map=None, min_change=0.01, base_window=None, new_window=None, **window):
    """Compares run `new` with run `base` (each a trace or a saved baseline).

    window: region, exclude_region, from_ns, to_ns, batch_pattern,
    stage_pattern, applied to both traces; base_window / new_window: a dict
    of the same for one run only, over `window` (as --base-X / --new-X).
    map: {"NPU": "GPU"} pairs base device NPU with new device GPU.
    min_change: the smallest relative change that can be significant (0.01
    = 1%).
    """
    s = [None, None]
    d = c_void_p()
    try:
        s[0] = _summary(base, {**window, **(base_window or {})})
        s[1] = _summary(new, {**window, **(new_window or {})})
        opt = _Options()
        _options_init(ctypes.byref(opt))
        opt.min_change = min_change
        pairs = list((map or {}).items())
        maps = (_Map * max(1, len(pairs)))(*[(_lib.encode(a), _lib.encode(b)) for a, b in pairs])
        opt.map, opt.nmap = (maps if pairs else None), len(pairs)
        err = _lib.Error()
        check(_compare(s[0], s[1], ctypes.byref(opt), ctypes.byref(d), ctypes.byref(err)),
              f"diff {base} {new}", err)
        text, size = c_void_p(), c_size_t()
        check(_json(d, ctypes.byref(text), ctypes.byref(size)), f"diff {base} {new}")
        try:
            doc = json.loads(ctypes.string_at(text, size.value).decode())
        finally:
            _lib.pp_report_json_free(text)
        return Diff(doc)
    finally:
        _free_diff(d)
        for x in s:
            if x:
                _free_summary(x)
