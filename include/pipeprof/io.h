/* pipeprof/io.h — reading and writing trace files.
 *
 * Formats are chosen by extension (docs/cli.md, `pipeprof convert`):
 *   .pptrace   native: versioned, little-endian, block-framed (read + write)
 *   .json      Chrome Trace Event JSON (read + write); .json.gz read
 *   .pftrace   Perfetto protobuf trace (write; docs/format-perfetto.md)
 *
 * Writers never leave a partial file that looks complete: they write to a
 * temporary file beside the target and rename it into place on success.
 * Readers name the file, the byte offset (and line:column for JSON) and the
 * problem in `err` and return PP_EFORMAT; a .pptrace cut short returns
 * PP_ETRUNCATED together with a model of every complete block and
 * meta.truncated_bytes set. */
#ifndef PIPEPROF_IO_H
#define PIPEPROF_IO_H

#include "pipeprof/common.h"
#include "pipeprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pp_format {
    PP_FORMAT_UNKNOWN = 0,
    PP_FORMAT_PPTRACE = 1,
    PP_FORMAT_CHROME_JSON = 2,
    PP_FORMAT_CHROME_JSON_GZ = 3,
    PP_FORMAT_PERFETTO = 4,
    PP_FORMAT_CSV = 5,
    PP_FORMAT_HTML = 6
} pp_format;

/* The format a path's extension names (PP_FORMAT_UNKNOWN if none). */
pp_format pp_format_from_path(const char *path);
const char *pp_format_name(pp_format f);

/* Reads any readable format (chosen by content: pptrace magic, gzip magic,
 * else JSON). On PP_ETRUNCATED *out is set as well. PP_EUNSUPPORTED for a
 * .pftrace, which pipeprof writes only. */
int pp_trace_read(const char *path, pp_model **out, pp_error *err);

/* How a Chrome JSON trace's events are read (docs/format-chrome-json.md,
 * "Dialects"): AUTO detects the dialect from the first complete event;
 * CHROME reads every file as plain Trace Event JSON; PIPELINE_PROFILER
 * reads the trace of the PipelineProfiler framework (cat = device, one tid
 * per device stream, "{stage}_Batch{n}", Partition / Merge, args batch_id
 * and hw_time_ms) as device execs with their stage, batch and hardware time. */
typedef enum pp_json_dialect {
    PP_DIALECT_AUTO = 0,
    PP_DIALECT_CHROME = 1,
    PP_DIALECT_PIPELINE_PROFILER = 2
} pp_json_dialect;

/* The dialect a --dialect value names ("auto", "chrome",
 * "pipelineprofiler"); -1 for anything else. */
int pp_json_dialect_from_name(const char *name);

/* pp_trace_read with the dialect a JSON trace is read in (a .pptrace is
 * read as it is, whatever `dialect` says). */
int pp_trace_read_dialect(const char *path, pp_json_dialect dialect, pp_model **out,
                          pp_error *err);
/* Writes `m` in the format `path`'s extension names; PP_EUNSUPPORTED for an
 * extension with no writer. */
int pp_trace_write(const pp_model *m, const char *path, pp_error *err);

/* What pp_trace_convert keeps; zero-initialized (or NULL): everything. A
 * window keeps the events that overlap [from_ns, to_ns) in trace
 * nanoseconds (a span that starts before to_ns and ends after from_ns; an
 * event of no duration at from_ns <= ts < to_ns) with their annotations,
 * and every string, track, thread and the metadata. */
typedef struct pp_convert_options {
    int has_from, has_to;
    int64_t from_ns, to_ns;
} pp_convert_options;

/* What pp_trace_convert did. */
typedef struct pp_convert_info {
    uint64_t events;          /* events written (inside the window, when one was given) */
    uint64_t truncated_bytes; /* the output's meta.truncated_bytes: input lost to a cut */
    uint64_t chunks;          /* pieces read and written one at a time (65536 events or
                                 more each, the last maybe fewer; after a failure, those
                                 written before it); 0: it read the whole trace first */
} pp_convert_info;

/* Reads the trace `in` and writes it to `out` in the format out's
 * extension names: the same bytes as pp_trace_read, then pp_trace_write.
 * A .pptrace file written as .json or .pptrace goes chunk by chunk, so that
 * memory stays a few MB whatever the trace's size; every other pair reads
 * the whole trace first (docs/cli.md, `pipeprof convert`). On PP_ETRUNCATED
 * (`in` was cut short) every complete part was converted, `out` is written,
 * and err says what was lost. `opt` and `info` may be NULL. */
int pp_trace_convert(const char *in, const char *out, const pp_convert_options *opt,
                     pp_convert_info *info, pp_error *err);

int pp_pptrace_write(const pp_model *m, const char *path, pp_error *err);
int pp_pptrace_read(const char *path, pp_model **out, pp_error *err);

int pp_chrome_write(const pp_model *m, const char *path, pp_error *err);
/* Reads Chrome JSON, object or bare-array form, plain or gzip. */
int pp_chrome_read(const char *path, pp_model **out, pp_error *err);

/* Writes a Perfetto protobuf trace (TracePackets: track descriptors, track
 * events with interned names, flows, counters). PP_EINVAL for an event before
 * time 0: Perfetto timestamps are unsigned. */
int pp_perfetto_write(const pp_model *m, const char *path, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
