/* trace_write.h — writing a trace in pieces (not public): a head from one
 * model (its strings, tracks, threads and meta), then events in chunks,
 * each chunk a model with the head's strings and tracks whose annotations
 * number its own events from 0. pp_trace_convert (io/convert.c) writes a
 * .pptrace read in chunks this way, holding one chunk at a time;
 * pp_chrome_write and pp_pptrace_write are the same calls with the whole
 * model as head and as the one chunk, so both give the same bytes.
 *
 * open writes the head, events appends a chunk (the head model must outlive
 * the file), close finishes the file and renames it into place (commit) or
 * removes it, and frees the writer either way. Each names `path` in err. */
#ifndef PP_IO_TRACE_WRITE_H
#define PP_IO_TRACE_WRITE_H

#include "core/error.h"
#include "pipeprof/io.h"

typedef struct chrome_file chrome_file;
int chrome_file_open(chrome_file **out, const pp_model *head, const char *path, pp_error *err);
int chrome_file_events(chrome_file *f, const pp_model *chunk, pp_error *err);
int chrome_file_close(chrome_file *f, int commit, pp_error *err);

typedef struct pptrace_file pptrace_file;
int pptrace_file_open(pptrace_file **out, const pp_model *head, const char *path, pp_error *err);
int pptrace_file_events(pptrace_file *f, const pp_model *chunk, pp_error *err);
int pptrace_file_close(pptrace_file *f, int commit, pp_error *err);

/* pp_trace_convert with chunks of at least chunk_events (it uses 65536, one
 * full EVENTS block); the fuzz harness makes every EVENTS block a chunk. */
int pp_trace_convert_chunks(const char *in, const char *out, size_t chunk_events,
                            pp_convert_info *info, pp_error *err);

#endif
