/* record.h — the fixed-size record every recording call writes (64 bytes),
 * and what the rest of the library may read of a session.
 *
 * Records are raw: ranges and regions are begin/end pairs, annotations are
 * ARG records that belong to the record before them on the same thread.
 * pp_model_from_session turns them into a model. */
#ifndef PP_CORE_RECORD_H
#define PP_CORE_RECORD_H

#include "pipeprof/trace.h"

typedef enum pp_record_kind {
    PP_REC_SPAN = 0,
    PP_REC_INSTANT = 1,
    PP_REC_COUNTER = 2,   /* u.value */
    PP_REC_FLOW = 3,      /* u.id, phase */
    PP_REC_RANGE_BEGIN = 4,
    PP_REC_RANGE_END = 5, /* u.id: the range; ts = end time */
    PP_REC_REGION_BEGIN = 6,
    PP_REC_REGION_END = 7,
    PP_REC_ARG_INT = 8,   /* name = key, u.ival */
    PP_REC_ARG_DOUBLE = 9,/* name = key, u.value */
    PP_REC_ARG_STR = 10   /* name = key, stage = value string */
} pp_record_kind;

typedef struct pp_record {
    int64_t ts_ns;
    int64_t dur_ns;
    int64_t batch;
    uint64_t hw_ns;
    uint64_t xfer_ns;
    union {
        uint64_t id;
        double value;
        int64_t ival;
    } u;
    uint32_t name;  /* pp_str */
    uint32_t stage; /* pp_str */
    uint32_t track;
    uint8_t kind;   /* pp_record_kind */
    uint8_t role;
    uint8_t phase;
    uint8_t pad;
} pp_record;

/* A track as the session defined it (names are pp_str ids). */
typedef struct pp_track_def {
    uint8_t kind;   /* pp_track_kind */
    unsigned flags; /* PP_TRACK_SIMULATED */
    pp_str device;  /* device tracks */
    pp_str name;    /* row name */
    int stream;     /* device tracks, else -1 */
    int64_t tid;    /* thread tracks */
} pp_track_def;

/* One recording thread as the session saw it. */
typedef struct pp_thread_meta {
    uint32_t index;    /* 0, 1, ... in visiting order */
    int64_t tid;
    pp_str name;
    uint64_t recorded; /* records kept in its buffer now */
    uint64_t dropped;  /* records lost to the budget (drop) or overwritten (ring) */
} pp_thread_meta;

/* Called once per contiguous run of a thread's records, oldest first; all
 * runs of one thread come before the next thread's, and a thread that kept
 * nothing is visited once with n = 0 (so its drops are seen). Return
 * non-zero to stop. */
typedef int (*pp_record_visit_fn)(void *ctx, const pp_thread_meta *thread,
                                  const pp_record *recs, size_t n);

/* Visits every thread's records: after stop, while paused, or, under the
 * drop policy, while the session records (a snapshot): chunks are then only
 * appended and each record is published by a release store, so a reader
 * sees complete records only. A ring session recycles its chunks while it
 * records: PP_ESTATE until it is paused or stopped. */
int pp_session_visit_records(pp_session *s, pp_record_visit_fn fn, void *ctx);
/* Whether the session is recording now (running, not paused or stopped). */
int pp_session_recording(const pp_session *s);
/* A copy of the session's tracks, indexed by pp_track, taken under the
 * session lock so that a track created meanwhile cannot move them; the
 * caller frees *out (NULL when there are none). PP_ENOMEM or PP_OK. */
int pp_session_tracks_copy(pp_session *s, pp_track_def **out, size_t *count);
const char *pp_session_process_name(const pp_session *s);
int64_t pp_session_pid(const pp_session *s);

#endif
