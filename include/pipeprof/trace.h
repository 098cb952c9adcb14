/* pipeprof/trace.h — recording spans, marks, counters, flows and ranges into
 * a session.
 *
 * A session owns one buffer per recording thread. Recording calls (pp_span,
 * pp_mark, pp_counter, pp_flow, pp_push/pp_pop, pp_range_*, pp_region_*,
 * pp_annotate_*) never lock, allocate or format: they write one fixed-size
 * record into the calling thread's buffer. The first call on a new thread and
 * every few thousand records take a slow path that allocates the next chunk.
 *
 * Names are interned once (pp_intern) and passed as integers afterwards;
 * tracks are created once (pp_track_*) and passed as integers.
 *
 * Lifecycle: pp_session_open -> pp_session_start -> [pause/resume]* ->
 * pp_session_stop (writes cfg.output) -> pp_session_close. Calls out of this
 * order return PP_ESTATE. Records made while paused are ignored (return 0),
 * with one exception that keeps ranges whole: a range (pp_push, pp_range_*,
 * pp_region_*) begun while recording is recorded with its end even when the
 * end comes while paused. A range begun while paused is not recorded; when
 * its end comes while recording it is counted dropped
 * (pp_session_stats.dropped), never an unmatched end.
 *
 * With PIPEPROF_OUTPUT=FILE in the environment, a program linked with
 * libpipeprof gets a default session (pp_default_session()) that runs from
 * load to exit and is written to FILE on exit, SIGINT, SIGTERM, SIGHUP or SIGQUIT; see
 * docs/recording.md. Every recording call accepts a NULL session and then
 * does nothing, so instrumented code can pass pp_default_session() as is.
 *
 * Define PIPEPROF_DISABLE before including this header to compile every
 * recording call to nothing. */
#ifndef PIPEPROF_TRACE_H
#define PIPEPROF_TRACE_H

#include "pipeprof/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_session pp_session;
typedef uint32_t pp_str;   /* interned string id; 0 is the empty string ("none") */
typedef uint32_t pp_track; /* track index within a session */

/* What a span is, for the analyzer (docs/architecture.md §3.1). */
typedef enum pp_role {
    PP_ROLE_NONE = 0,
    PP_ROLE_EXEC = 1,      /* one inference request on a device stream */
    PP_ROLE_PARTITION = 2, /* host-side split of a data-parallel stage */
    PP_ROLE_MERGE = 3,     /* host-side merge of a data-parallel stage */
    PP_ROLE_STAGE = 4,     /* a whole stage for one batch */
    PP_ROLE_OP = 5,        /* one layer / kernel inside an exec (level 2) */
    PP_ROLE_USER = 6       /* anything else the user recorded */
} pp_role;

typedef enum pp_overflow {
    PP_OVERFLOW_DROP = 0, /* when max_records is reached, drop new records */
    PP_OVERFLOW_RING = 1  /* overwrite the thread's oldest records (flight recorder);
                           * every thread keeps at least one chunk (docs/recording.md) */
} pp_overflow;

#define PP_DEFAULT_MAX_RECORDS ((uint64_t)1 << 24)

/* What pipeprof's own instrumentation (executors and stages, pipeprof/pipeline.h)
 * records: bits of a session's `collect` setting. The levels are presets of
 * it (pp_collect_preset). A program's own pp_span calls are recorded as
 * made; it may ask pp_session_collect() what the user wants. */
typedef enum pp_collect {
    PP_COLLECT_SPANS = 1u << 0,     /* stage, exec, partition and merge spans (wall times) */
    PP_COLLECT_HW = 1u << 1,        /* hardware totals: an exec's hw_ns */
    PP_COLLECT_OPS = 1u << 2,       /* one span per layer / kernel of an exec */
    PP_COLLECT_TRANSFERS = 1u << 3, /* data movement: xfer_ns, transfer ops among the ops, an exec's tensor bytes */
    PP_COLLECT_API = 1u << 4,       /* host API calls: a span per request start and per wait */
    PP_COLLECT_SCHED = 1u << 5,     /* scheduler figures of host spans (stage, partition, merge,
                                     * host work, API): on-CPU, run-queue wait, context switches
                                     * (pipeprof/sched.h); never per op */
    PP_COLLECT_THREADS = 1u << 6    /* a sampler thread: every thread's on-CPU and run-queue
                                     * shares as counters every sched_sample_ms, and the
                                     * process's CPUs and affinity; in no level's preset */
} pp_collect;
#define PP_COLLECT_ALL 0x7fu

typedef struct pp_session_config {
    const char *output;       /* written at stop, format by extension; NULL: none */
    int level;                /* 0: wall times, 1: + hw totals, 2: + per-op spans */
    uint64_t max_records;     /* record budget over all threads; 0: PP_DEFAULT_MAX_RECORDS */
    pp_overflow overflow;     /* what happens when the budget is spent */
    const char *process_name; /* name of the host process group; NULL: program name */
    unsigned collect;         /* PP_COLLECT_* bits; 0: the preset of `level` */
    const char *devices;      /* devices to record, comma separated ("NPU,GPU.0");
                               * NULL or "": every device */
} pp_session_config;

/* The collect bits of a level: 0 spans; 1 + hw, transfers and sched; 2 + ops. */
unsigned pp_collect_preset(int level);
/* Parses a collect list: names from spans, hw, ops, transfers, api, sched, threads joined by
 * ',' or '+', or "all". PP_EINVAL with a message naming the bad word. */
int pp_collect_parse(const char *text, unsigned *out, pp_error *err);

/* Expands an output name pattern into `out` (`cap` bytes): %p the process
 * id, %n `session_no`, %h the host name, %% a percent sign; other text is
 * copied. A session whose output holds a pattern is written, at stop, to
 * its expansion with this process's next session number (0, 1, ...), so
 * several processes and sessions never overwrite each other
 * (docs/recording.md). PP_EINVAL with a message for an unknown %x, a lone
 * % at the end, or a result longer than cap - 1. */
int pp_output_expand(const char *pattern, unsigned session_no, char *out, size_t cap,
                     pp_error *err);

/* Fills `cfg` with the defaults: no output, level 1, default budget, drop. */
void pp_session_config_init(pp_session_config *cfg);

/* Creates a session (not yet recording). The config strings are copied.
 * PP_EINVAL for a level outside 0..2 or an unknown overflow policy. */
int pp_session_open(const pp_session_config *cfg, pp_session **out);
int pp_session_start(pp_session *s);
int pp_session_pause(pp_session *s);
int pp_session_resume(pp_session *s);
/* Ends recording and, when the config named an output, writes it; `err`
 * (may be NULL) says why a write failed. A failed write leaves no file. The
 * records stay readable (pp_model_from_session) until pp_session_close. */
int pp_session_stop(pp_session *s, pp_error *err);
/* Writes the session's records to `path` (format by extension) after stop. */
int pp_session_write(pp_session *s, const char *path, pp_error *err);
/* Frees the session; accepts NULL. Stops it first if it is still running.
 * PP_ESTATE, and nothing done, while a subscription to it is open
 * (pipeprof/subscribe.h): close those first. */
int pp_session_close(pp_session *s);

/* Changes one setting by name before the session starts (PP_ESTATE after,
 * with a message). Keys and values, as text:
 *   level         0, 1 or 2: sets `collect` to that level's preset
 *   collect       a collect list (pp_collect_parse), e.g. "spans,hw,api"
 *   devices       device names, comma separated; "" or "all": every device
 *   max_records   a positive integer
 *   overflow      drop or ring
 *   output        the file written at stop ("" for none)
 *   process_name  the host process group's name
 *   sched_sample_ms  the sampler's period (PP_COLLECT_THREADS), 1..10000;
 *                 default 10
 * PP_EINVAL with a message for an unknown key or a bad value. */
int pp_session_set_config(pp_session *s, const char *key, const char *value, pp_error *err);
/* The level the collect bits amount to (what devices profile): 2 with ops,
 * 1 with hw or transfers, else 0. */
int pp_session_level(const pp_session *s);
/* The session's PP_COLLECT_* bits (0 for a NULL session). */
unsigned pp_session_collect(const pp_session *s);
/* 1 when the session records work on device `name` (its devices setting). */
int pp_session_records_device(const pp_session *s, const char *name);
/* The env-activated session (PIPEPROF_OUTPUT), or NULL when there is none. */
pp_session *pp_default_session(void);

/* Totals so far: records kept and records dropped over all threads. */
typedef struct pp_session_stats {
    uint64_t recorded;
    uint64_t dropped;
    uint32_t threads;
} pp_session_stats;
int pp_session_stats_get(pp_session *s, pp_session_stats *out);

/* Session clock: CLOCK_MONOTONIC in nanoseconds. */
int64_t pp_now(void);

/* The longest name a trace keeps, in bytes (1 MiB). */
#define PP_NAME_MAX_BYTES ((size_t)1 << 20)

/* Interns a NUL-terminated string process-wide; same text, same id, in every
 * session. Slow path (takes a lock): call it once per name, not per event.
 * Returns 0 only for "" or on allocation failure. A text longer than
 * PP_NAME_MAX_BYTES is cut to fit, on a UTF-8 character boundary, and ends
 * in "...[cut from N bytes]"; the bytes cut are counted in the trace's data
 * loss (meta.truncated_bytes), so that one hostile name cannot make a trace
 * that no format holds. */
pp_str pp_intern(const char *text);
/* The text of an interned id ("" for unknown ids). */
const char *pp_str_text(pp_str id);

/* ---- tracks (slow path: call once, keep the pp_track) ---- */

#define PP_TRACK_SIMULATED 1u /* the device is simulated: every output says so */
/* The device's hw_ns is a running mean over its runs, not the time of one
 * run (OpenVINO's CPU plugin): reports label its hardware figures averages. */
#define PP_TRACK_HW_MEAN 2u
/* The track holds a profiler's own bookkeeping, not the program's work (a
 * foreign trace's start and end markers and pseudo-processes: Kineto's
 * "Record Window End", "PyTorch Profiler (0)", its "Spans" and "Traces"
 * rows, CUPTI's overhead events). Kept and converted like any track; the
 * analysis leaves its events out of the window and every figure. */
#define PP_TRACK_BOOKKEEPING 4u

typedef enum pp_track_kind {
    PP_TRACK_KIND_DEVICE = 0,  /* one stream / request slot of a device */
    PP_TRACK_KIND_THREAD = 1,  /* one host thread */
    PP_TRACK_KIND_REGIONS = 2, /* labeled regions */
    PP_TRACK_KIND_ASYNC = 3    /* cross-thread ranges */
} pp_track_kind;


/* A device stream row: `device` "GPU.0", `stream` 1. `row` names the row
 * ("req 0"); NULL names it "stream <stream>". The same (device, stream)
 * returns the same track. */
int pp_track_device(pp_session *s, const char *device, int stream, const char *row,
                    unsigned flags, pp_track *out);
/* The calling thread's host track; `name` NULL uses the OS thread name. */
int pp_track_thread(pp_session *s, const char *name, pp_track *out);
/* The host track of OS thread `tid` (gettid), for a tool that learns of a
 * thread's work on another thread (CUPTI's API records); the same track
 * pp_track_thread gives that thread. `name` NULL or "" names a new track
 * "thread <tid>". */
int pp_track_thread_id(pp_session *s, int64_t tid, const char *name, pp_track *out);
/* Names OS thread `tid` (gettid; 0: the calling thread) as the user named it (a Python thread's
 * threading name, ITT's __itt_thread_set_name, NVTX's nvtxNameOsThread):
 * its host tracks and thread entries in every open session take the name
 * now, and those made later take it at the thread's first record, before
 * its OS name. The last name given wins. PP_EINVAL for tid <= 0 or an empty
 * name. Safe from any thread. */
int pp_thread_name_set(int64_t tid, const char *name);
/* The session's regions track (labeled sections such as "warm up"). */
int pp_track_regions(pp_session *s, pp_track *out);

/* ---- events (hot path) ---- */

/* One finished span. ts_ns/dur_ns are session nanoseconds (pp_now()). */
typedef struct pp_span_rec {
    pp_track track;
    pp_str name;
    pp_str stage;     /* 0 = none */
    pp_role role;
    int64_t ts_ns;
    int64_t dur_ns;
    int64_t batch;    /* -1 = none */
    uint64_t hw_ns;   /* device-reported execution time; 0 = unknown */
    uint64_t xfer_ns; /* data-movement part of hw_ns */
} pp_span_rec;

typedef enum pp_flow_phase {
    PP_FLOW_BEGIN = 0, /* first step of a flow (Chrome 's') */
    PP_FLOW_STEP = 1,  /* an intermediate step ('t') */
    PP_FLOW_END = 2    /* last step ('f') */
} pp_flow_phase;

#ifndef PIPEPROF_DISABLE

/* Sets role USER, batch -1 and every other field 0. */
void pp_span_rec_init(pp_span_rec *rec);
/* Records a span. PP_EFULL when the budget is spent under the drop policy
 * (the drop is counted and reported); PP_ESTATE before start or after stop;
 * PP_EINVAL for a negative duration or an end past INT64_MAX. */
int pp_span(pp_session *s, const pp_span_rec *rec);
/* An instant mark at ts_ns on `track`. */
int pp_mark(pp_session *s, pp_track track, pp_str name, int64_t ts_ns);
/* A counter sample: `name` has `value` from ts_ns on, drawn with `track`'s
 * process. */
int pp_counter(pp_session *s, pp_track track, pp_str name, int64_t ts_ns, double value);
/* One step of flow `flow_id` (e.g. a batch id + 1), bound to the span
 * enclosing ts_ns on `track`. A flow links one batch across stages. */
int pp_flow(pp_session *s, pp_track track, pp_str name, int64_t ts_ns, uint64_t flow_id,
            pp_flow_phase phase);
/* Opens a range on the calling thread (ts = now); pp_pop closes the innermost
 * one and records it as a span on `track`. At most 64 open per thread. */
int pp_push(pp_session *s, pp_track track, pp_str name);
int pp_pop(pp_session *s);
/* A range that may end on another thread: start returns an id, stop with it
 * from any thread. Drawn on a track of its own, never on a thread's row. */
int pp_range_start(pp_session *s, pp_str name, uint64_t *id);
int pp_range_stop(pp_session *s, uint64_t id);
/* A labeled region ("warm up") on the regions track, same id protocol. */
int pp_region_begin(pp_session *s, pp_str name, uint64_t *id);
int pp_region_end(pp_session *s, uint64_t id);
/* Key/value annotations attached to the calling thread's last record. */
int pp_annotate_int(pp_session *s, pp_str key, int64_t value);
int pp_annotate_double(pp_session *s, pp_str key, double value);
int pp_annotate_str(pp_session *s, pp_str key, pp_str value);

#else /* PIPEPROF_DISABLE: every recording call compiles to nothing. */

static inline void pp_span_rec_init(pp_span_rec *rec) { (void)rec; }
static inline int pp_span(pp_session *s, const pp_span_rec *r) { (void)s; (void)r; return 0; }
static inline int pp_mark(pp_session *s, pp_track t, pp_str n, int64_t ts) {
    (void)s; (void)t; (void)n; (void)ts; return 0; }
static inline int pp_counter(pp_session *s, pp_track t, pp_str n, int64_t ts, double v) {
    (void)s; (void)t; (void)n; (void)ts; (void)v; return 0; }
static inline int pp_flow(pp_session *s, pp_track t, pp_str n, int64_t ts, uint64_t id,
                          pp_flow_phase p) { (void)s; (void)t; (void)n; (void)ts; (void)id; (void)p; return 0; }
static inline int pp_push(pp_session *s, pp_track t, pp_str n) { (void)s; (void)t; (void)n; return 0; }
static inline int pp_pop(pp_session *s) { (void)s; return 0; }
static inline int pp_range_start(pp_session *s, pp_str n, uint64_t *id) { (void)s; (void)n; *id = 0; return 0; }
static inline int pp_range_stop(pp_session *s, uint64_t id) { (void)s; (void)id; return 0; }
static inline int pp_region_begin(pp_session *s, pp_str n, uint64_t *id) { (void)s; (void)n; *id = 0; return 0; }
static inline int pp_region_end(pp_session *s, uint64_t id) { (void)s; (void)id; return 0; }
static inline int pp_annotate_int(pp_session *s, pp_str k, int64_t v) { (void)s; (void)k; (void)v; return 0; }
static inline int pp_annotate_double(pp_session *s, pp_str k, double v) { (void)s; (void)k; (void)v; return 0; }
static inline int pp_annotate_str(pp_session *s, pp_str k, pp_str v) { (void)s; (void)k; (void)v; return 0; }

#endif

#ifdef __cplusplus
}
#endif
#endif
