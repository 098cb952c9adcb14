"""Parquet datasets of traces (docs/tables.md, "Parquet datasets"): one
Parquet file per table of a trace, written from the C library's Arrow
tables, and a trace model built back from such a directory (or from any
Arrow tables of the documented schema) that analyzes as the original does.

The model is rebuilt through the C library's appends (pp_model_add_events,
pp_model_add_annotations), which check every row as a reader's are checked;
strings are interned anew, so string ids may differ from the original's,
while every string, and so every figure of the report, is the same.
"""
import ctypes
import json
import os

from . import _lib, tables
from ._lib import PipeprofError, check

# The tables a dataset needs to rebuild the model; the report's tables are
# written beside them for other readers (DuckDB, Spark) and recomputed on load.
MODEL_FILES = ("events", "track_info", "annotations", "threads")
KINDS = ("span", "instant", "counter", "flow", "range", "region")
ROLES = ("none", "exec", "partition", "merge", "stage", "op", "user")
PHASES = ("begin", "step", "end")
TRACK_KINDS = ("device", "thread", "regions", "async")
VALUE_TYPES = ("int", "double", "str")
META_KEY = b"pipeprof.meta"


def _parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ImportError("pipeprof: Parquet datasets need pyarrow "
                          "(pip install \"pipeprof[sql]\", or scripts/setup)") from e
    return pq


def export_parquet(trace, directory, **window):
    """Writes TABLE.parquet for every table of tables.ARROW_TABLES (the
    report's over the window options of Trace.summary) into `directory`
    (made if missing); the schema version, the table's name and, in
    events.parquet, the trace's meta are in each file's metadata. Returns
    the paths written."""
    pq = _parquet()
    os.makedirs(directory, exist_ok=True)
    meta = json.dumps(dict(trace.meta(), source=trace.source)).encode()
    written = []
    for name in tables.ARROW_TABLES:
        table = trace.to_arrow(name, **(window if name in tables.REPORT_TABLES else {}))
        if name == "events":
            table = table.replace_schema_metadata({**table.schema.metadata, META_KEY: meta})
        path = os.path.join(directory, f"{name}.parquet")
        tmp = f"{path}.tmp.{os.getpid()}"
        pq.write_table(table, tmp)
        os.replace(tmp, path)  # a reader never sees half a file
        written.append(path)
    return written


def is_dataset(path):
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "events.parquet"))


def load_parquet(directory):
    """The trace a dataset of export_parquet holds, as a Trace."""
    pq = _parquet()
    read = {}
    for name in MODEL_FILES:
        path = os.path.join(directory, f"{name}.parquet")
        if not os.path.exists(path):
            raise PipeprofError(_lib.PP_ENOTFOUND, f"{directory}: no {name}.parquet "
                                "(a dataset of `python -m pipeprof export --to parquet`)")
        read[name] = pq.read_table(path)
    metadata = read["events"].schema.metadata or {}
    version = int(metadata.get(b"pipeprof.schema_version", b"0"))
    if version != tables.SCHEMA_VERSION:
        raise PipeprofError(_lib.PP_EFORMAT, f"{directory}: schema version {version}, this "
                            f"pipeprof reads version {tables.SCHEMA_VERSION} (docs/tables.md)")
    meta = json.loads(metadata.get(META_KEY, b"{}"))
    return from_tables(read, meta, source=meta.get("source", str(directory)))


class _Strings:
    """Interns texts into the model being built, each text once."""

    def __init__(self, model):
        self.model, self.ids = model, {"": 0}

    def id(self, text):
        if text is None:
            return 0
        got = self.ids.get(text)
        if got is None:
            raw = text.encode()
            sid = ctypes.c_uint32()
            check(_lib.pp_model_intern(self.model, raw, len(raw), ctypes.byref(sid)), "load")
            got = self.ids[text] = sid.value
        return got

    def column(self, col):
        """String ids of a string or dictionary column (null -> 0)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if not pa.types.is_dictionary(arr.type):
            arr = pc.dictionary_encode(arr)
        ids = np.array([self.id(s) for s in arr.dictionary.to_pylist()] or [0], dtype=np.uint32)
        idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        out = ids[idx] if len(arr.dictionary) else np.zeros(len(arr), np.uint32)
        out[arr.is_null().to_numpy(zero_copy_only=False)] = 0
        return out


def _codes(col, names):
    """Enum codes of a dictionary or string column of `names` (null -> 0)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    try:
        code_of = np.array([names.index(v) for v in arr.dictionary.to_pylist()] or [0], np.uint8)
    except ValueError as e:
        raise PipeprofError(_lib.PP_EFORMAT, f"load: {e} (have: {', '.join(names)})") from None
    idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    out = code_of[idx] if len(arr.dictionary) else np.zeros(len(arr), np.uint8)
    out[arr.is_null().to_numpy(zero_copy_only=False)] = 0
    return np.ascontiguousarray(out)


def _ints(col, dtype, null):
    import numpy as np
    return np.ascontiguousarray(col.fill_null(null).to_numpy(zero_copy_only=False).astype(dtype))


def _add_tracks(m, strings, track_info):
    rows = track_info.to_pylist()
    for i, r in enumerate(sorted(rows, key=lambda r: r["track"])):
        if r["track"] != i:
            raise PipeprofError(_lib.PP_EFORMAT, f"load: track_info: track {r['track']} "
                                f"where {i} was expected (tracks are 0..n-1)")
        t = _lib.TrackInfo(kind=TRACK_KINDS.index(r["kind"]), flags=r["flags"],
                           process=strings.id(r["process"]), name=strings.id(r["name"]),
                           device=strings.id(r["device"]),
                           stream=-1 if r["stream"] is None else r["stream"],
                           pid=r["pid"], tid=r["tid"], sort_index=r["sort_index"])
        check(_lib.pp_model_add_track(m, ctypes.byref(t), ctypes.byref(ctypes.c_uint32())),
              f"load: track {i}")


def _add_events(m, strings, ev):
    import numpy as np
    cols = {
        "ts_ns": _ints(ev.column("ts_ns"), np.int64, 0),
        "dur_ns": _ints(ev.column("dur_ns"), np.int64, 0),
        "batch": _ints(ev.column("batch"), np.int64, -1),
        "hw_ns": _ints(ev.column("hw_ns"), np.uint64, 0),
        "xfer_ns": _ints(ev.column("xfer_ns"), np.uint64, 0),
        "id": _ints(ev.column("id"), np.uint64, 0),
        "value": np.ascontiguousarray(ev.column("value").to_numpy(), dtype=np.float64),
        "name": strings.column(ev.column("name")),
        "stage": strings.column(ev.column("stage")),
        "track": _ints(ev.column("track"), np.uint32, 0),
        "kind": _codes(ev.column("kind"), KINDS),
        "role": _codes(ev.column("role"), ROLES),
        "phase": _codes(ev.column("phase"), PHASES),
    }
    c = _lib.EventColumns(count=ev.num_rows)
    for key, arr in cols.items():
        setattr(c, key, arr.ctypes.data)
    added = ctypes.c_size_t()
    check(_lib.pp_model_add_events(m, ctypes.byref(c), ctypes.byref(added)),
          f"load: event {added.value}")


def _add_annotations(m, strings, ann):
    import numpy as np
    n = ann.num_rows
    rows = np.zeros(n, dtype=np.dtype({"names": ["event", "key", "type", "v"],
                                       "formats": ["<u8", "<u4", "u1", "<i8"],
                                       "offsets": [0, 8, 12, 16], "itemsize": 24}))
    rows["event"] = _ints(ann.column("event"), np.uint64, 0)
    rows["key"] = strings.column(ann.column("key"))
    kind = _codes(ann.column("type"), VALUE_TYPES)
    rows["type"] = kind
    ints = _ints(ann.column("value_int"), np.int64, 0)
    doubles = np.ascontiguousarray(ann.column("value_double").fill_null(0.0).to_numpy(),
                                   dtype=np.float64).view(np.int64)
    strs = strings.column(ann.column("value_str")).astype(np.int64)  # the union's low 4 bytes
    rows["v"] = np.where(kind == 0, ints, np.where(kind == 1, doubles, strs))
    added = ctypes.c_size_t()
    check(_lib.pp_model_add_annotations(m, rows.ctypes.data_as(ctypes.POINTER(_lib.Annotation)),
                                        n, ctypes.byref(added)),
          f"load: annotation {added.value}")


def _set_meta(m, strings, meta):
    mm = _lib.pp_model_meta_mut(m).contents
    for key in ("level", "dropped_records", "truncated_bytes", "ignored_events",
                "unmatched_ends", "alignment_error_ns"):
        if key in meta:
            setattr(mm, key, meta[key])
    for key in ("process_name", "clock", "host", "boot_id", "alignment"):
        if meta.get(key):
            setattr(mm, key, strings.id(meta[key]))


def from_tables(read, meta, source):
    """A Trace of Arrow tables of docs/tables.md: read["events"],
    ["track_info"], and optionally ["annotations"], ["threads"]; `meta` as
    Trace.meta() gives it."""
    from .trace import Trace
    model = ctypes.c_void_p()
    check(_lib.pp_model_create(ctypes.byref(model)), "load")
    trace = Trace(model, source=source)  # owns the model from here, on failure too
    strings = _Strings(model)
    _add_tracks(model, strings, read["track_info"])
    for r in read["threads"].to_pylist() if "threads" in read else []:
        t = _lib.ThreadInfo(tid=r["tid"], name=strings.id(r["name"]), recorded=r["recorded"],
                            dropped=r["dropped"])
        check(_lib.pp_model_add_thread(model, ctypes.byref(t)), "load: thread")
    _add_events(model, strings, read["events"])
    if "annotations" in read:
        _add_annotations(model, strings, read["annotations"])
    _set_meta(model, strings, meta)
    return trace
