/* pipeprof/arrow.h — the tables of a trace model and of a report as Apache
 * Arrow record batches, through the Arrow C Data Interface.
 *
 * The C Data Interface (arrow.apache.org/docs/format/CDataInterface.html)
 * is an ABI of two structs, declared below exactly as the specification
 * gives them; pipeprof fills them itself and links no Arrow library. Any
 * Arrow implementation imports them without a copy: pyarrow
 * (RecordBatch._import_from_c), DuckDB, Polars, nanoarrow, Arrow C++.
 *
 * One export is one table, a struct array whose children are the columns
 * (a record batch). Its schema carries the metadata "pipeprof.table" (the
 * table's name) and "pipeprof.schema_version" (PP_ARROW_SCHEMA_VERSION).
 * docs/tables.md lists every column of every table: name, Arrow type, unit,
 * and when it is null.
 *
 * What is shared and what is made:
 *  - The event columns the model stores as plain arrays are handed out
 *    as they are, pointing at the model's memory: name (dictionary indices,
 *    uint32), kind, role and phase (dictionary indices, uint8), id (uint64)
 *    and value (double). The export holds the model (pp_model_retain) until
 *    the consumer releases the last of its arrays, so freeing the model
 *    first is safe; while it is held the model takes no more events.
 *  - ts_ns, dur_ns, batch, hw_ns, xfer_ns, track and stage are stored
 *    narrow (32 or 16 bits from a base, values too wide in a side table:
 *    docs/analysis.md, "Memory"), and a narrowed name column is 1 or 2
 *    bytes a slot: each is decoded once per export into a buffer of its
 *    documented type, freed with the export. So is every validity bitmap.
 *  - Strings are dictionary-encoded: a string column's indices are the
 *    model's string ids, and its dictionary is the model's string table
 *    (id i is the dictionary's entry i), copied once per export into one
 *    utf8 array that every string column of that export shares.
 *  - The track_info, threads and annotations tables and every report table are copied
 *    from their rows (arrays of structs) into columns: no table there is
 *    stored column by column.
 *
 * Release: the consumer calls schema->release and array->release when done
 * (an importer such as pyarrow does it). A child or dictionary array moved
 * out of its parent may be released on its own; the memory of the export
 * goes when the last of them is released. */
#ifndef PIPEPROF_ARROW_H
#define PIPEPROF_ARROW_H

#include <stdint.h>

#include "pipeprof/common.h"
#include "pipeprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The report of pipeprof/analyze.h (declared here too, so that the model
 * layer's export does not need the analyzer's header). */
typedef struct pp_report pp_report;

/* The Arrow C Data Interface, as the specification defines it (shared with
 * any other header that defines it: the guard is the specification's). */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

/* The version of the tables' schema (docs/tables.md): raised when a column
 * is renamed, removed or changes type; adding a column keeps it. */
#define PP_ARROW_SCHEMA_VERSION 1

/* Exports one table of the model m: "events", "track_info", "annotations",
 * "strings" or "threads". `columns` names the columns wanted, comma
 * separated ("ts_ns,dur_ns,name"), in the table's order whatever their
 * order here; NULL or "" for all of them. Only the columns wanted are
 * decoded or copied. On success *schema and *array are the consumer's to
 * release. PP_EINVAL for an unknown table or column (err names it and the
 * known ones), PP_ENOMEM, PP_EFULL when the string table passes the 2 GiB
 * of a utf8 array; on failure both are left untouched. */
int pp_arrow_export_model(const pp_model *m, const char *table, const char *columns,
                          struct ArrowSchema *schema, struct ArrowArray *array, pp_error *err);

/* Exports one table of the report r: "stages", "stage_times", "batches",
 * "cycles", "devices", "tracks", "execs", "decomposition", "data_parallel",
 * "dp_devices", "ops" or "op_types". The rows are copied: the export does
 * not hold the report, which may be freed at once. "execs" needs the model
 * r was built from, still alive (pp_report_exec_parts): PP_ESTATE for a
 * report of pp_report_build_owned. `columns` and the errors as for
 * pp_arrow_export_model. Not from two threads at once on one report (the
 * first call of some accessors fills the report: pipeprof/analyze.h). */
int pp_arrow_export_report(const pp_report *r, const char *table, const char *columns,
                           struct ArrowSchema *schema, struct ArrowArray *array, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
