/* trace_read.h — the readers on an open descriptor (not public), so that
 * pp_trace_read opens a path once: a pipe or FIFO can be read only once, and
 * the format sniff must not use up what the reader needs. Each takes over
 * `fd` (closes it); `path` names the input in messages. */
#ifndef PP_IO_TRACE_READ_H
#define PP_IO_TRACE_READ_H

#include "pipeprof/io.h"

int pp_pptrace_read_fd(int fd, const char *path, pp_model **out, pp_error *err);
int pp_chrome_read_fd(int fd, const char *path, pp_model **out, pp_error *err);
int pp_chrome_read_fd_dialect(int fd, const char *path, pp_json_dialect dialect, pp_model **out,
                              pp_error *err);

/* 1 when `path` is a regular file that starts as a .pptrace does (a pipe
 * is not: it can be read only once). */
int pptrace_is_file(const char *path);

/* The events and annotations the END block of the .pptrace at `path`
 * states, read from its last bytes alone: 1, or 0 when it is no .pptrace or
 * does not end in a sound END block (a recording cut short). For a
 * caller that wants to know what a read will hold before it reads. */
int pptrace_peek_totals(const char *path, uint64_t *events, uint64_t *annotations);

/* Reading a .pptrace without holding all of its events, for a converter
 * that writes them as they come (io/convert.c), in two passes over the file.
 *
 * The skeleton read decodes everything but the events and annotations, whose
 * blocks it checks (checksum) and counts: *out gets a model of the strings,
 * tracks, threads, meta and clock, with no events, for a writer's head. It
 * returns what a whole read would for a file cut short (PP_ETRUNCATED, with
 * meta.truncated_bytes set), and fails on a bad checksum or layout anywhere
 * and on bad fields outside the rows of EVENTS and ANNOTATIONS blocks (a
 * bad row is found by the chunk read). `interleaved` is 1 when an
 * ANNOTATIONS block annotates an event of an EVENTS block before the last
 * one: such a file (valid, but not one pipeprof writes) cannot be read in
 * chunks. */
typedef struct pptrace_skeleton {
    pp_model *model; /* strings, tracks, threads, meta and clock; no events */
    uint64_t bytes;  /* the file's size when read */
    int interleaved;
} pptrace_skeleton;
int pptrace_read_skeleton(const char *path, pptrace_skeleton *out, pp_error *err);

/* Receives the next events, with their annotations (whose event indices are
 * into `chunk`), in file order; a nonzero return ends the read with it. */
typedef int (*pptrace_chunk_fn)(void *ctx, const pp_model *chunk);

/* The chunk read decodes and checks every block as a whole read does, with
 * the same messages, and hands the events on before an EVENTS block once
 * it holds at least chunk_events, and at the end (also of a file cut
 * short: PP_ETRUNCATED, after every complete block). Memory stays that of
 * one chunk and the string and track tables. It reads only the bytes the
 * skeleton read saw (a recording still being written has grown since), and
 * fails (PP_EFORMAT) when the file defines more strings or tracks than the
 * skeleton has (it was rewritten since): a chunk's ids are the skeleton's. */
int pptrace_read_chunks(const char *path, const pptrace_skeleton *skeleton, size_t chunk_events,
                        pptrace_chunk_fn chunk, void *ctx, pp_error *err);

#endif
