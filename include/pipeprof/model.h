/* pipeprof/model.h — the in-memory trace model.
 *
 * Every reader produces a pp_model and every analyzer and writer consumes one
 * (docs/architecture.md §2-§3). Events are stored column by column (one array
 * per field) so that an analysis touches only the fields it needs; tracks,
 * recording threads and annotations are small side tables; strings are
 * interned per model (ids are model-local, 0 is the empty string). The
 * sparse columns stage, phase, hw_ns, xfer_ns, id and value take memory
 * only once some event has a nonzero value in them, and ts_ns, dur_ns,
 * batch, hw_ns and xfer_ns take 4 bytes an event and track and stage 2
 * where their values fit (docs/analysis.md, "Memory").
 *
 * A model is built by appending (pp_model_add_*) and then only read. */
#ifndef PIPEPROF_MODEL_H
#define PIPEPROF_MODEL_H

#include "pipeprof/common.h"
#include "pipeprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_model pp_model;

typedef enum pp_event_kind {
    PP_EV_SPAN = 0,    /* complete span [ts, ts+dur) on a track */
    PP_EV_INSTANT = 1, /* mark at ts */
    PP_EV_COUNTER = 2, /* counter `name` = value from ts on */
    PP_EV_FLOW = 3,    /* one step (phase) of flow `id` at ts */
    PP_EV_RANGE = 4,   /* cross-thread range: a span with `id` on an async track */
    PP_EV_REGION = 5   /* labeled region ("warm up") on the regions track */
} pp_event_kind;

/* One event, as appended or read back. Times are integer nanoseconds. */
typedef struct pp_event {
    int64_t ts_ns;
    int64_t dur_ns;   /* 0 for instants, counters and flows */
    int64_t batch;    /* -1 = none */
    uint64_t hw_ns;   /* 0 = unknown */
    uint64_t xfer_ns;
    uint64_t id;      /* flow id (flows), range id (ranges, regions); 0 = none */
    double value;     /* counter value */
    uint32_t name;    /* model string id */
    uint32_t stage;   /* model string id, 0 = none */
    uint32_t track;   /* index into the track table */
    uint8_t kind;     /* pp_event_kind */
    uint8_t role;     /* pp_role (spans) */
    uint8_t phase;    /* pp_flow_phase (flows) */
} pp_event;

/* Read-only column view of every event; index i is the i-th event. */
typedef struct pp_event_columns {
    size_t count;
    const int64_t *ts_ns, *dur_ns, *batch;
    const uint64_t *hw_ns, *xfer_ns, *id;
    const double *value;
    const uint32_t *name, *stage, *track;
    const uint8_t *kind, *role, *phase;
} pp_event_columns;

typedef struct pp_track_info {
    uint8_t kind;        /* pp_track_kind */
    uint32_t flags;      /* PP_TRACK_SIMULATED */
    uint32_t process;    /* string: the group viewers draw it under ("GPU.0", "demo") */
    uint32_t name;       /* string: the row ("stream 1", "main") */
    uint32_t device;     /* string: device name for device tracks, else 0 */
    int32_t stream;      /* stream index for device tracks, else -1 */
    int64_t pid;         /* process id (recorded or read); groups tracks */
    int64_t tid;         /* OS thread id for thread tracks, else 0 */
    int32_t sort_index;  /* rows are shown in ascending order */
} pp_track_info;

/* One thread that recorded, with what it kept and what it lost. */
typedef struct pp_thread_info {
    int64_t tid;
    uint32_t name;       /* string */
    uint64_t recorded;
    uint64_t dropped;
} pp_thread_info;

typedef enum pp_value_type { PP_VALUE_INT = 0, PP_VALUE_DOUBLE = 1, PP_VALUE_STR = 2 } pp_value_type;

/* A key/value annotation of one event. Annotations are kept sorted by event. */
typedef struct pp_annotation {
    uint64_t event;      /* event index */
    uint32_t key;        /* string */
    uint8_t type;        /* pp_value_type */
    union {
        int64_t i;
        double d;
        uint32_t s;      /* string */
    } v;
} pp_annotation;

/* Where the model came from and what it lost on the way. */
typedef struct pp_model_meta {
    int level;                 /* recording level, -1 if unknown (foreign trace) */
    uint32_t process_name;     /* string */
    uint64_t dropped_records;  /* sum over threads of records lost to the budget */
    uint64_t truncated_bytes;  /* bytes of a truncated input that could not be read, and
                                  bytes cut from names over PP_NAME_MAX_BYTES (pp_intern) */
    uint64_t ignored_events;   /* foreign events of kinds the reader does not model */
    uint64_t unmatched_ends;   /* begin/end pairs that did not match (counted, dropped) */
    /* The clock of the timestamps (docs/merging.md): "CLOCK_MONOTONIC" for a
     * recorded session, 0 when unknown (a foreign trace). Two traces with
     * the same clock and the same boot id (the kernel's, for that boot of
     * that host) share one timeline; host names the machine in messages. */
    uint32_t clock;            /* string */
    uint32_t host;             /* string */
    uint32_t boot_id;          /* string */
    /* A merged trace (pp_model_merge): how its inputs were put on one clock
     * and the bound on that alignment's error in ns (-1: not known); 0 and
     * 0 for a trace that was not merged. */
    uint32_t alignment;        /* string */
    int64_t alignment_error_ns;
} pp_model_meta;

int pp_model_create(pp_model **out);
/* Releases the caller's hold on the model: the last holder frees it.
 * Accepts NULL. */
void pp_model_free(pp_model *m);
/* One more hold on the model, released by pp_model_free; returns m. An
 * Arrow export (pipeprof/arrow.h) holds the model whose columns it points
 * at. While a second holder exists the model is read-only: appending events
 * and pp_model_sort_by_time return PP_ESTATE, and its columns stay where
 * they are. Thread-safe. */
pp_model *pp_model_retain(const pp_model *m);

/* Interns `len` bytes (no NUL needed) and stores the id in *id. */
int pp_model_intern(pp_model *m, const char *text, size_t len, uint32_t *id);
/* The id of `text` if present, else 0. */
uint32_t pp_model_find_string(const pp_model *m, const char *text);
/* The NUL-terminated text of a string id ("" for 0 or an unknown id). */
const char *pp_model_string(const pp_model *m, uint32_t id);
size_t pp_model_string_count(const pp_model *m);

int pp_model_add_track(pp_model *m, const pp_track_info *t, uint32_t *index);
size_t pp_model_track_count(const pp_model *m);
const pp_track_info *pp_model_track(const pp_model *m, uint32_t index);
/* For readers that learn a track's kind or name after its first event. */
pp_track_info *pp_model_track_mut(pp_model *m, uint32_t index);
/* Sets defaults for a new track: kind thread, stream -1, everything else 0. */
void pp_track_info_init(pp_track_info *t);

/* Appends one event. PP_EINVAL when its track or strings are out of range,
 * dur_ns is negative, ts_ns is INT64_MIN (which has no text form: -ts_ns
 * does not exist), or ts_ns + dur_ns would pass INT64_MAX (so every
 * consumer may compute an event's end without overflow). */
int pp_model_add_event(pp_model *m, const pp_event *e);
/* Appends the c->count events of the columns, in order, each as
 * pp_model_add_event would (every column of *c must be set): a loader of a
 * columnar dataset (pipeprof.load of a Parquet directory). Stops at the
 * first refused one and returns its code; *added (unless NULL) says how
 * many were appended. */
int pp_model_add_events(pp_model *m, const pp_event_columns *c, size_t *added);
size_t pp_model_event_count(const pp_model *m);
void pp_model_event(const pp_model *m, size_t i, pp_event *out);
/* Fills *out with every event's columns: 0, or PP_ENOMEM with *out all
 * zero. The model stores ts_ns, dur_ns, batch, hw_ns and xfer_ns in 32
 * bits and track and stage in 16 (a wider value beside them:
 * docs/analysis.md, "Memory"), so the first call after a change makes
 * copies of those seven at the widths of pp_event_columns for *out: 48
 * bytes an event, kept until the model changes or is freed. pp_model_event
 * reads one event without them. */
int pp_model_columns(const pp_model *m, pp_event_columns *out);
/* Sets defaults for a new event: batch -1, everything else 0. */
void pp_event_init(pp_event *e);

/* Appends an annotation of event `a->event` (an existing event, not before
 * the last annotated one). PP_EINVAL also for an event index from
 * 2^32 - 1 or a key id from 2^30 - 1 on, which a model that fits in memory
 * never reaches. */
int pp_model_add_annotation(pp_model *m, const pp_annotation *a);
/* Appends n annotations in order, as pp_model_add_annotation does each, up
 * to the first refused (its code returned; *added says how many went in). */
int pp_model_add_annotations(pp_model *m, const pp_annotation *a, size_t n, size_t *added);
/* Every annotation, sorted by event. The model keeps them in 16 bytes each
 * (docs/analysis.md, "Memory"), so the first call after a change makes
 * this 24-byte copy, kept until the model changes or is freed; NULL with
 * *count 0 when there is no memory for it. pp_model_annotations_of finds
 * an event's without it. */
const pp_annotation *pp_model_annotations(const pp_model *m, size_t *count);
/* Removes every event and annotation, keeping strings, tracks, threads and
 * meta: a writer that streams events out in batches reuses one model. */
void pp_model_clear_events(pp_model *m);
/* The annotations of event `i`: *first is an index into the table, *n how many. */
void pp_model_annotations_of(const pp_model *m, size_t i, size_t *first, size_t *n);

int pp_model_add_thread(pp_model *m, const pp_thread_info *t);
size_t pp_model_thread_count(const pp_model *m);
const pp_thread_info *pp_model_thread(const pp_model *m, size_t i);

const pp_model_meta *pp_model_meta_get(const pp_model *m);
pp_model_meta *pp_model_meta_mut(pp_model *m);

/* Reorders events by start time (stable; ties keep their order) and carries
 * the annotations along. */
int pp_model_sort_by_time(pp_model *m);

/* Builds a model of everything a stopped (or paused) session recorded:
 * spans, marks, counters, flows; ranges and regions paired into spans;
 * push/pop ranges as spans; annotations; per-thread drop counts. A session
 * still recording under the drop policy gives a snapshot (each thread's
 * records so far; ranges still open are left out, not counted as
 * unmatched); a ring session recording is PP_ESTATE (pause it first). */
int pp_model_from_session(pp_session *s, pp_model **out);

#ifdef __cplusplus
}
#endif
#endif
