/* pptrace_blocks.h — encoding .pptrace blocks (docs/format-pptrace.md) onto
 * a byte sink. The model writer (pptrace_write.c) and the flight recorder,
 * which streams a recording out while it runs (capture/pptrace_stream.c),
 * both write through these, so a file is framed and encoded the same way
 * whoever wrote it and whenever. Not public. */
#ifndef PP_IO_PPTRACE_BLOCKS_H
#define PP_IO_PPTRACE_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "pipeprof/model.h"

/* Receives each encoded piece (the header, or one whole block: head,
 * payload, CRC) in one call; it remembers its own write errors. */
typedef void (*pptrace_sink_fn)(void *ctx, const void *data, size_t len);

typedef struct pptrace_enc {
    pptrace_sink_fn sink;
    void *ctx;
    unsigned char *buf; /* the block being encoded */
    size_t len, cap;
} pptrace_enc;

/* What the END block states: every table's total over the whole file. */
typedef struct pptrace_totals {
    uint64_t strings, tracks, threads, events, annotations;
} pptrace_totals;

void pptrace_enc_free(pptrace_enc *w);
void pptrace_put_header(pptrace_enc *w);
/* STRINGS blocks for the model's strings [first, count); first >= 1. */
int pptrace_put_strings(pptrace_enc *w, const pp_model *m, size_t first, const char *path,
                        pp_error *err);
int pptrace_put_meta(pptrace_enc *w, const pp_model *m);
/* The optional CLOCK block of the model's clock fields; nothing when it has
 * none. */
int pptrace_put_clock(pptrace_enc *w, const pp_model *m);
/* TRACKS / THREADS blocks for the model's rows [first, count). */
int pptrace_put_tracks(pptrace_enc *w, const pp_model *m, size_t first);
int pptrace_put_threads(pptrace_enc *w, const pp_model *m, size_t first);
/* Every event of the model in EVENTS blocks, each followed by the
 * ANNOTATIONS of its events; the file numbers the model's event 0 as
 * `event_base` (the events written before it). */
int pptrace_put_events(pptrace_enc *w, const pp_model *m, uint64_t event_base);
int pptrace_put_end(pptrace_enc *w, const pptrace_totals *t);

#endif
