"""Traces as Arrow tables (docs/tables.md): the C library's Arrow C Data
Interface export (pipeprof/arrow.h) imported by pyarrow without a copy, and
the pandas and Polars frames made from it.

The model's tables lend the columns it stores as plain arrays (event name,
kind, role, phase, id, value) and decode the narrow ones once; the report's
tables are copied from its rows. Strings are dictionary columns over the
model's string table, which pandas turns into categoricals. Every figure
comes from the C library; nothing here computes one.
"""
import ctypes

from . import _lib, reports
from ._lib import check

SCHEMA_VERSION = 1
MODEL_TABLES = ("events", "track_info", "annotations", "strings", "threads")
REPORT_TABLES = ("stages", "stage_times", "batches", "cycles", "devices", "tracks", "execs",
                 "decomposition", "data_parallel", "dp_devices", "ops", "op_types")
ARROW_TABLES = MODEL_TABLES + REPORT_TABLES

# sizeof(struct ArrowSchema) and sizeof(struct ArrowArray) on 64-bit targets.
_SCHEMA_BYTES, _ARRAY_BYTES = 72, 80


def pyarrow():
    """The pyarrow module, or an ImportError that says how to get it."""
    try:
        import pyarrow as pa
    except ImportError as e:
        raise ImportError("pipeprof: Arrow tables need pyarrow "
                          "(pip install \"pipeprof[sql]\", or scripts/setup)") from e
    return pa


def _imported(export, what):
    """Runs export(schema_address, array_address, err) and imports the
    record batch it fills as a one-chunk pyarrow Table (pyarrow takes over
    the structs: their release frees the export)."""
    pa = pyarrow()
    schema = (ctypes.c_byte * _SCHEMA_BYTES)()
    array = (ctypes.c_byte * _ARRAY_BYTES)()
    err = _lib.Error()
    check(export(ctypes.addressof(schema), ctypes.addressof(array), ctypes.byref(err)), what, err)
    batch = pa.RecordBatch._import_from_c(ctypes.addressof(array), ctypes.addressof(schema))
    return pa.Table.from_batches([batch])


def _columns_arg(columns):
    return _lib.encode(",".join(columns)) if columns else None


def model_table(model, table, columns=None):
    """Table `table` of MODEL_TABLES of the C model at `model`."""
    return _imported(lambda s, a, e: _lib.pp_arrow_export_model(
        model, table.encode(), _columns_arg(columns), s, a, e), f"to_arrow({table!r})")


def report_table(model, source, table, columns=None, **window):
    """Table `table` of REPORT_TABLES of the report of `model` over a window."""
    with reports.built(model, source, **window) as report:
        return _imported(lambda s, a, e: _lib.pp_arrow_export_report(
            report, table.encode(), _columns_arg(columns), s, a, e), f"to_arrow({table!r})")


def table_of(model, source, table, columns=None, **window):
    if table in MODEL_TABLES:
        if window:
            raise ValueError(f"to_arrow({table!r}): the model's tables take no window "
                             f"(got {', '.join(window)})")
        return model_table(model, table, columns)
    if table in REPORT_TABLES:
        return report_table(model, source, table, columns, **window)
    raise ValueError(f"to_arrow: unknown table {table!r}; one of {', '.join(ARROW_TABLES)}")


def to_pandas(table):
    """A pandas DataFrame of an Arrow table of docs/tables.md: dictionary
    columns as categoricals, nullable integer columns as pandas' nullable
    integers (<NA> where Arrow has null), the others as NumPy columns."""
    import pandas as pd
    pa = pyarrow()
    nullable = {pa.int64(): pd.Int64Dtype(), pa.uint64(): pd.UInt64Dtype(),
                pa.int32(): pd.Int32Dtype(), pa.uint32(): pd.UInt32Dtype()}
    columns = {}
    for field, col in zip(table.schema, table.columns):
        mapper = nullable.get if field.nullable and pa.types.is_integer(field.type) else None
        columns[field.name] = col.to_pandas(types_mapper=mapper)
    return pd.DataFrame(columns, copy=False)


def _per_track(events, tracks, column):
    """A categorical of the events' track's `column` (track_info), one row an
    event: codes taken per track, so no string is made an event."""
    import numpy as np
    import pandas as pd
    values = tracks.column(column).to_pylist()
    categories = sorted({v for v in values if v is not None})
    code_of = {v: i for i, v in enumerate(categories)}
    per_track = np.array([code_of.get(v, -1) for v in values] or [-1], dtype=np.int32)
    track = events.column("track").to_numpy()
    return pd.Categorical.from_codes(per_track[track] if len(values) else
                                     np.zeros(0, np.int32), categories)


def events_frame(model):
    """to_dataframe("events"): the events table, plus the track's
    track_name and device beside its index."""
    events = model_table(model, "events")
    tracks = model_table(model, "track_info", ("track_name", "device"))
    df = to_pandas(events)
    at = df.columns.get_loc("track") + 1
    df.insert(at, "track_name", _per_track(events, tracks, "track_name"))
    df.insert(at + 1, "device", _per_track(events, tracks, "device"))
    return df


def annotations_frame(model):
    """to_dataframe("annotations"): the annotations table, plus `value`,
    each row's value whatever its type (int, float or str)."""
    import numpy as np
    df = to_pandas(model_table(model, "annotations"))
    value = np.empty(len(df), dtype=object)
    for kind, column in (("int", "value_int"), ("double", "value_double"), ("str", "value_str")):
        rows = (df["type"] == kind).to_numpy()
        value[rows] = np.asarray(df[column].astype(object))[rows]
    df["value"] = value
    return df
