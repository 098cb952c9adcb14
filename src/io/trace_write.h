/* trace_write.h — writing a trace in pieces (not public): a head from one
 * model (its strings, tracks, threads and meta), then events in chunks,
 * each chunk a model with the head's strings and tracks whose annotations
 * number its own events from 0. pp_trace_convert (io/convert.c) writes a
 * .pptrace read in chunks this way, holding one chunk at a time;
 * pp_chrome_write and pp_pptrace_write are trace_writer_write, the whole
 * model as head and as the one chunk, so both give the same bytes. */
#ifndef PP_IO_TRACE_WRITE_H
#define PP_IO_TRACE_WRITE_H

#include "core/error.h"
#include "pipeprof/io.h"

/* A format's writer. open writes the head into a temporary file beside
 * `path` and makes *file (the head model must outlive it); events appends
 * a chunk; close finishes the file and renames it into place (commit) or
 * removes it, and frees *file either way. Each names `path` in err. */
typedef struct trace_writer {
    int (*open)(void **file, const pp_model *head, const char *path, pp_error *err);
    int (*events)(void *file, const pp_model *chunk, pp_error *err);
    int (*close)(void *file, int commit, pp_error *err);
} trace_writer;

extern const trace_writer chrome_writer;  /* Chrome JSON (chrome_write.c) */
extern const trace_writer pptrace_writer; /* .pptrace (pptrace_write.c) */

/* Writes the whole model m: open, one chunk, close (trace_io.c). */
int trace_writer_write(const trace_writer *w, const pp_model *m, const char *path, pp_error *err);

/* pp_trace_convert with chunks of at least chunk_events (it uses 65536, one
 * full EVENTS block); the fuzz harness makes every EVENTS block a chunk. */
int pp_trace_convert_chunks(const char *in, const char *out, size_t chunk_events,
                            const pp_convert_options *opt, pp_convert_info *info, pp_error *err);

#endif
