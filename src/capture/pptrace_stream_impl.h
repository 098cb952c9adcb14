/* pptrace_stream_impl.h — the flight recorder's state, shared by its two
 * files: pptrace_stream.c (the writer thread, the file, open and finish)
 * and pptrace_stream_records.c (records to events, tracks and ranges).
 * Only the writer thread touches a stream between open and finish. */
#ifndef PP_CAPTURE_PPTRACE_STREAM_IMPL_H
#define PP_CAPTURE_PPTRACE_STREAM_IMPL_H

#include <pthread.h>

#include "core/follow.h"
#include "io/pptrace_blocks.h"
#include "model/record_event.h"

typedef struct thread_state {
    int held;          /* its newest record was held back on the last poll */
    int has_event;     /* its last record is an event that takes annotations */
    uint64_t gen;      /* ... in the batch of this generation */
    size_t event;      /* ... at this index of the batch */
} thread_state;

typedef struct open_range {
    uint64_t id;
    int64_t ts_ns;
    uint32_t name; /* model id (begin), or unused (an end seen first) */
    int is_region;
} open_range;

typedef struct range_list {
    open_range *v;
    size_t n, cap;
} range_list;

typedef struct stream {
    pp_session *s;
    pp_follower *f;
    char *path;
    int fd;
    int write_errno;     /* of the first failed write; nothing is written after it */
    int rc;              /* first failure other than a write */
    pp_error err;
    pp_model *m;         /* the file's strings and tracks; the batch of events being built */
    pptrace_enc enc;
    pp_name_map names;
    size_t strings_out, tracks_out; /* rows of m's tables already in the file */
    uint64_t events_out, annotations_out;
    uint64_t gen;        /* batches written; a thread's event is in the batch of its gen */
    uint32_t process;
    int64_t pid;
    uint32_t *track_map; /* session track -> model track + 1 (0: not yet) */
    size_t track_cap;
    uint32_t regions_track; /* + 1; 0: not yet */
    int64_t *lane_end;
    uint32_t *lane_track;
    size_t nlanes, lane_cap, lane_track_cap;
    range_list begins, ends; /* ranges begun, not yet ended; ends whose begin is not yet seen */
    thread_state *threads;
    size_t nthreads;
    uint64_t unmatched, ignored, late_annotations;
    int final;           /* the session stopped: hold nothing back */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int quit;
} stream;

/* Keeps the first failure other than a write. */
void pp_stream_fail(stream *st, int rc);
/* Appends the new strings and tracks, then the batch of events with their
 * annotations, and starts an empty batch. */
void pp_stream_write_batch(stream *st);
/* The model's id of session string `id`, interned on first use. */
uint32_t pp_stream_map_name(stream *st, pp_str id);
/* The follower's callback (core/follow.h): a thread's newly published
 * records become events of the batch. */
int pp_stream_on_records(void *ctx, uint32_t thread, const pp_record *recs, size_t n,
                         size_t *consumed);

#endif
