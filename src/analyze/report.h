/* report.h — the report's layout and the steps that fill it.
 *
 * pp_report_build (report.c) runs the steps in order: window, exec view,
 * foreign labels, stage order, devices and tracks, op statistics, wall
 * decomposition, bandwidth sums, stage times, data-parallel breakdown,
 * cycles, contention, bandwidth rates, findings. Each step reads what
 * earlier ones filled in. pp_report_build_owned, which takes the model,
 * narrows its columns first (pp_model_narrow) and drops its annotations
 * as soon as no later step reads them: the op spans' once the exec step has
 * gathered them, the rest but the shares before the stage step, and those
 * after it (pp_model_anns_drop, pp_model_anns_keep).
 *
 * The device step runs on a thread of its own beside the steps from the op
 * statistics to the contention (beside.c), which neither read what it
 * writes nor write what it reads.
 *
 * Speed: a 10M-event trace is analyzed in a few linear passes over the
 * model's columns. Grouping uses counting sorts over dense indexes (tracks,
 * batches, stages, devices) or a small hash (decomposition cells), sorting
 * uses radix sorts, a device's streams are united by a k-way merge of
 * their sorted runs, and the large scratch arrays are reused by the steps
 * of a group (devices; stages, data-parallel and cycles; the rest) and
 * freed between groups, so that they never sit beside the next group's
 * tables (bench/bench_analyze.c measures it). Tables are made once at their
 * final size where a count can say it (the exec step's pass counts the
 * execs, the self-labeled host spans and the op spans). The stage step
 * reads each of a batch's items from the model once, into a buffer the
 * size of the largest batch, and times every cell of the batch from there.
 *
 * Memory: the analysis's own tables refer to the model rather than copy it:
 * an exec (8 bytes) and a host span (16) keep their event index and read
 * their times, track and batch from the model's columns; stage cells hold
 * 4-byte references (4 bytes a batch), a stage time is 16 bytes (an_time)
 * and 20 for its start, end and track (an_time_at, r->time_track),
 * a data-parallel row 16 and a bit of its stage time; a device bubble is
 * two varints (gaps.c) and a decomposed exec its 4-byte cell. docs/analysis.md ("Memory") gives the
 * bytes per event. */
#ifndef PP_ANALYZE_REPORT_H
#define PP_ANALYZE_REPORT_H

#include <regex.h>

#include "model/ann_table.h"
#include "model/columns.h"
#include "pipeprof/analyze.h"

#define AN_NONE UINT32_MAX

/* An estimate with its 95% interval (stats/stats.h's pp_interval, which
 * this header does not include). */
typedef struct pp_interval_3 {
    double est, lo, hi;
} pp_interval_3;

/* Large tables (memory.c): malloc / calloc of n items of `size` bytes,
 * advised into huge pages when large; NULL on no memory or overflow. Free
 * them with free(). */
void *an_alloc(size_t n, size_t size);
void *an_calloc(size_t n, size_t size);

/* A buffer reused by the steps; an_buf_get grows it (contents are not kept)
 * and returns NULL on no memory. */
typedef struct an_buf {
    void *p;
    size_t cap;
} an_buf;
void *an_buf_get(an_buf *b, size_t bytes);

/* One exec span as the analysis sees it: its model event and stage (a
 * report stage index, AN_NONE when unlabeled; the user's patterns may give
 * it). Everything else is read from the model's columns at `event`, not
 * copied: its times (an_start, an_end) and so whether it lies inside W
 * (an_exec_inside), hw_ns and xfer_ns, its track and so its device
 * (an_exec_track, an_exec_device) and its batch (an_exec_batch;
 * r->exec_batch holds the batches only once a pattern or a host span gave
 * some exec a batch other than its own field). 8 bytes an exec: the
 * analysis takes models of fewer than 2^32 - 1 events (pp_report_build).
 * A host exec (an_exec_is_host) is a stage instance span with no exec of
 * its (stage, batch): host work on its thread's track, device "CPU (host)";
 * the host execs follow the spans of role exec in r->execs. */
typedef struct an_exec {
    uint32_t event;
    uint32_t stage;
} an_exec;

/* A host span of the stage analysis: a partition, merge or stage span
 * (pipeprof's roles, a span whose args name a stage and a batch, or a name
 * the user's patterns label), or with role PP_ROLE_NONE a span that only
 * gives a batch to what it encloses (ProfilerStep#N). Its stage is a report
 * stage index, AN_NONE for a partition or merge not yet attributed to the
 * data-parallel stage it brackets; from_pattern: labeled by the user's
 * patterns (a foreign trace) rather than by its own fields. Stage, role and
 * from_pattern share `bits` (an_host_make, an_host_stage, an_host_role,
 * an_host_from_pattern); its times, track and whether it lies inside W
 * (an_host_inside) are the model's at `event`. 16 bytes a span. */
typedef struct an_host {
    int64_t batch;
    uint32_t event;
    uint32_t bits; /* stage: 28 bits (all ones: none), role: 3, from_pattern: 1 */
} an_host;
/* Report stages fit the 28 bits: there are fewer than AN_HOST_NO_STAGE
 * (pp_report_build checks the model's strings, which bound them). */
#define AN_HOST_NO_STAGE ((UINT32_C(1) << 28) - 1)

/* One op span (a level-2 layer or kernel) of the op step (ops.c), 16
 * bytes. First its annotations, gathered as the exec view is made: its
 * type and exec type (string ids, 0 when absent; the strings are fewer
 * than 2^28: pp_report_build) and its CPU time, AN_OP_HAS_CPU set in
 * `exec` when it has one. Then, for an op the tables count, its duration
 * and its group in each table, written over the gathered ones in place. */
typedef union an_op {
    struct {
        uint32_t type, exec;
        int64_t cpu;
    } ann;
    struct {
        int64_t dur;
        uint32_t by_name, by_type;
    } item;
} an_op;
#define AN_OP_HAS_CPU (UINT32_C(1) << 31)

/* A compiled name pattern (patterns.c): the group numbers of stage and
 * batch, 0 when the pattern has none. */
typedef struct an_pattern {
    regex_t re;
    int compiled, named;
    int stage_group, batch_group;
    size_t ngroups;
} an_pattern;

/* What a pattern captured from one name: the stage as a substring, the
 * batch number (-1 when none). */
typedef struct an_capture {
    int has_stage;
    size_t stage_at, stage_len;
    int64_t batch;
} an_capture;

/* kind: 'b' batch pattern (stage and batch, or a batch alone), 's' stage
 * pattern (stage, maybe batch), 'r' partition / merge pattern. `option`
 * names it in errors. */
int an_pattern_compile(an_pattern *p, char kind, const char *option, const char *text,
                       pp_error *err);
void an_pattern_free(an_pattern *p);
/* 1 when `name` matches (out filled), else 0. */
int an_pattern_match(const an_pattern *p, const char *name, an_capture *out);

/* One bubble of a device: [start, end). */
typedef struct an_gap {
    int64_t start, end;
} an_gap;

/* Reads the bubbles of one device in time order (gaps.c):
 *     an_gap_cursor c = an_gaps_of(r, d);
 *     for (an_gap g; an_gap_next(&c, &g);) ... */
typedef struct an_gap_cursor {
    const uint8_t *at, *end;
    int64_t last; /* the end of the bubble read last (W's start before the first) */
} an_gap_cursor;
an_gap_cursor an_gaps_of(const pp_report *r, uint32_t d);
int an_gap_next(an_gap_cursor *c, an_gap *g);

/* A stage time as the report keeps it (16 bytes, and 20 for its start, end
 * and track in r->time_at and r->time_track; the public pp_stage_time is
 * 56): its stage, its batch as an index in r->bmap (which the report keeps)
 * and its time. measured_ns, which only a data-parallel cell with
 * both a partition and a merge has, is kept apart: r->dp_measured holds it
 * for each data-parallel time (a time marked in r->dp_time), by the time's
 * rank among the marked ones. an_stage_time gives the public struct. */
typedef struct an_time {
    uint32_t stage, batch;
    int64_t time_ns;
} an_time;
/* A stage time's first event start and last event end (flow.c): kept beside
 * r->times, with its track (4 bytes more), for an_stage_time's start_ns,
 * end_ns and track. */
typedef struct an_time_at {
    int64_t start_ns, end_ns;
} an_time_at;
pp_stage_time an_stage_time(const pp_report *r, size_t t);

/* A batch is kept as where its stage times start in r->times
 * (r->batch_time; they end where the next batch's start) and its
 * end-to-end latency (r->batch_e2e): 12 bytes, where the public
 * pp_batch_stats is 40. Its cycle latency, bottleneck and stage count are
 * read from its times again: an_batch_stats gives the public struct
 * (cycles.c). */
pp_batch_stats an_batch_stats(const pp_report *r, size_t i);

/* A data-parallel (stage, batch): what its summaries need beside its stage
 * time (16 bytes). Its time (r->times[t], marked in r->dp_time) gives the
 * stage and the formula time, r->dp_measured the measured one; the max
 * device wall is the formula time less the partition and the merge. */
typedef struct an_dp_row {
    int64_t partition_ns, merge_ns;
} an_dp_row;

/* What a data-parallel stage's batches add up to, as the stage step finds
 * them (in batch order): its parts (a device, or a track of the one
 * device) with their batches, wall and share sums, and the sums of the
 * batches' max and mean part walls. No per-batch part is kept. */
typedef struct an_dp_wall { /* one part's wall in one batch */
    uint32_t part;
    int64_t wall;
} an_dp_wall;
typedef struct an_dp_sums {
    pp_dp_device *parts;
    size_t nparts, cap;
    size_t rows;               /* its batches: rows of the stage */
    int64_t sum_max;
    double sum_mean;
    /* for the sign test (dp.c): the current batch's part walls, and per
     * pair of parts (a, b) in how many batches a took longer than b,
     * pair[a * dim + b], for the first AN_DP_PAIR_PARTS parts */
    an_dp_wall *walls;
    size_t nwalls, wall_cap;
    uint64_t *pair;
    size_t dim;
    /* per batch, for the imbalance's interval: its max and mean part wall */
    double *bmax, *bmean;
    size_t nb, bcap;
} an_dp_sums;
/* Parts beyond this many (threads that change from batch to batch) are
 * not compared pairwise: no split applies to them anyway. */
#define AN_DP_PAIR_PARTS 64

/* Adds one part of a data-parallel batch of stage s to its sums: device,
 * model track (AN_NONE for a whole device), its wall, its share of the
 * batch's work and whether that share was recorded (dp.c). */
int an_dp_part_add(pp_report *r, uint32_t s, uint32_t device, uint32_t track, int64_t wall,
                   double share, int recorded);
/* Between a stage's batches (flow.c): an_flow_start before the cells are
 * timed (room for ntimes_bound stage times), an_flow_cell after each cell
 * of stage s in batch index b is timed (its first and last event, and the
 * model track of its first exec), in (batch,
 * stage) order; an_flow_finish fills each stage's blocked_ns, starved_ns
 * and hold summary and frees the state but the kept r->time_at and
 * r->time_track (an_flow_free on a failure; pp_report_free frees those). */
int an_flow_start(pp_report *r, size_t ntimes_bound);
void an_flow_cell(pp_report *r, uint32_t s, size_t b, int64_t start, int64_t end,
                  uint32_t track);
int an_flow_finish(pp_report *r);
void an_flow_free(pp_report *r);

/* Ends a batch of stage s: its largest part wall and mean part wall (dp.c). */
int an_dp_batch_end(pp_report *r, uint32_t s, int64_t max_wall, double mean_wall);
void an_dp_sums_free(pp_report *r);

/* Batch numbers -> 0..count-1 in ascending order: a direct offset when the
 * numbers are dense (the usual 0..N-1), else a search in the sorted distinct
 * numbers. */
typedef struct an_batch_map {
    int64_t base;              /* dense: index = batch - base */
    size_t count;
    int64_t *sorted;           /* sparse: the distinct numbers; NULL when dense */
} an_batch_map;
#define AN_NO_BATCH SIZE_MAX
/* A dense map of [lo, hi] when that range is at most 4x the number of
 * things numbered (+1024), or an empty one for none; else returns 0, and the
 * caller hands the numbers to an_batch_map_sparse, which sorts them in place
 * and keeps the distinct ones. */
int an_batch_map_dense(an_batch_map *bm, int64_t lo, int64_t hi, size_t nitems);
int an_batch_map_sparse(pp_report *r, an_batch_map *bm, int64_t *values, size_t n);
/* r->bmap: the map of the batches of everything labeled inside W (stages.c,
 * called by an_stage_order). */
int an_batch_map_build(pp_report *r);
/* Index of `batch`, or AN_NO_BATCH when it is not in the map: an offset
 * here for the usual dense map (the steps look up every item), a binary
 * search in batchmap.c for a sparse one. */
size_t an_batch_index_sparse(const an_batch_map *bm, int64_t batch);
static inline size_t an_batch_index(const an_batch_map *bm, int64_t batch) {
    if (bm->sorted)
        return an_batch_index_sparse(bm, batch);
    uint64_t off = (uint64_t)batch - (uint64_t)bm->base;
    return batch >= bm->base && off < bm->count ? (size_t)off : AN_NO_BATCH;
}
/* The batch number of index i. */
static inline int64_t an_batch_number(const an_batch_map *bm, size_t i) {
    return bm->sorted ? bm->sorted[i] : bm->base + (int64_t)i;
}

struct pp_report {
    pp_window window;
    uint8_t *bookkeeping;      /* per track: PP_TRACK_BOOKKEEPING; NULL when no track is */
    char *how, *source;
    char *alignment;           /* a merged trace's clock alignment (meta), or NULL */
    pp_model_meta meta;

    an_exec *execs;
    size_t nexecs, nreal;      /* execs[0..nreal) are spans of role exec, the rest host execs */
    size_t exec_cap;           /* room in execs (and exec_batch) */
    int64_t *exec_batch;       /* each exec's batch, or NULL: every one is its event's */
    an_host *host;             /* after an_stage_order: only those later steps read */
    size_t nhost;
    size_t nfield_hosts;       /* spans labeled by their own fields (an_execs_collect) */
    an_op *op;                 /* one per span of role op, in event order (an_execs_collect) */
    size_t nop_spans;
    int patterns;              /* the user gave --batch-pattern or --stage-pattern */
    const char *unmatched;
    pp_framework_stats *framework; /* framework.c */
    size_t nframework;     /* "--stage-pattern" (or batch) when it matched no span; NULL */
    char *hint;                /* a pattern that would label the trace's annotations, or NULL */
    uint32_t *track_device;    /* model track -> device index, AN_NONE */
    uint32_t *stage_of_string; /* model string id -> stage index, AN_NONE */
    /* how many things inside W have a stage and a batch, and their batch range */
    size_t nlabeled;
    int64_t label_lo, label_hi;

    pp_device_stats *devices;
    size_t ndevices;
    pp_track_stats *tracks;
    size_t ntracks;
    uint8_t *gap_bytes;        /* every device bubble, device by device (gaps.c): */
    size_t ngaps, *gap_at;     /* device d's are gap_bytes[gap_at[d] .. gap_at[d+1]) */

    char **stage_names;        /* owned; stages[i].name points here */
    int64_t *stage_first;      /* first appearance in time, for the order */
    uint8_t *stage_inside;     /* 1 when something of the stage lies inside W */
    size_t stage_cap;
    pp_stage_stats *stages;
    size_t nstages;
    an_time *times;            /* sorted by (batch, stage) */
    /* flow.c, during the stage step only: per stage, its last batch index
     * timed (SIZE_MAX: none) and that cell's first and last event, its
     * blocked and starved sums */
    size_t *flow_last_b;
    int64_t *flow_last_start, *flow_last_end, *flow_prev_end, *flow_blocked, *flow_starved;
    an_time_at *time_at;       /* per time: its first event start, last event end (kept) */
    uint32_t *time_track;      /* per time: the model track of its first exec (kept) */
    pp_interval_3 *handoff;    /* per stage: mean hand-off a batch (hold - stage time), 95% interval */
    size_t ntimes;
    pp_stage_time *times_public; /* pp_report_stage_times' copy, made on its first call */
    an_dp_row *dp_rows;        /* in (batch, stage) order: those of the marked times */
    size_t ndp_rows;
    uint64_t *dp_time;         /* a bit a time: it is data parallel (kept with the report) */
    uint32_t *dp_rank;         /* per word of dp_time: the marked times before it */
    int64_t *dp_measured;      /* per marked time, in order: its measured_ns, or -1 */
    an_dp_sums *dp_sums;       /* per stage, nstages of them (NULL: none is data parallel) */
    uint32_t *batch_time;      /* per batch, its first time; [nbatches] = ntimes */
    int64_t *batch_e2e;        /* per batch, its end-to-end latency */
    size_t nbatches;
    uint32_t stages_timed;     /* stages with a time: a batch with all of them is complete */
    pp_batch_stats *batches_public; /* pp_report_batches' copy, made on its first call */
    pp_cycle_stats cycles;
    pp_dp_stats *dp;
    size_t ndp;
    pp_dp_device *dp_devices;  /* dp[i].devices point here */
    pp_op_stats *ops, *op_types;
    size_t nops, nop_types;
    pp_stage_op_stats *stage_ops; /* stage_ops.c */
    size_t nstage_ops;
    char **texts;              /* owned strings of the op and clock tables */
    size_t ntexts, captexts;
    pp_finding *finding_list;  /* finding_list.c; their owned strings and shares */
    char **findings;           /* each one's rendered line (an_findings_render) */
    size_t nfindings;
    pp_bandwidth *bw_sums;     /* bandwidth.c: per device, track, then stage, until the rates */
    pp_contention_stats *contention;
    size_t ncontention;
    int has_contention;        /* isolated times were given: the renderers show the table */
    /* decompose.c: the cell of each device exec inside W, in event order
     * (they are the model's spans of role exec inside W), each cell's
     * isolated hw_ns (0: none), and the per-exec parts that
     * pp_report_exec_parts computes from `model` on its first call */
    uint32_t *part_cells;
    size_t npart_cells;
    int64_t *decomp_iso;
    const pp_model *model;     /* the model the report was built from */
    pp_exec_parts *exec_parts;
    size_t nexec_parts;
    pp_decomp_stats *decomp;
    size_t ndecomp;
    pp_clock_stats *clocks;
    size_t nclocks;
    pp_sched_stats *sched;     /* sched.c: the scheduler split of host spans */
    size_t nsched;
    const char *sched_method;  /* in texts; NULL: the trace carries no scheduler figures */
    pp_sched_process sched_process;
    int has_sched_process;     /* the sampler's start mark was seen */

    an_batch_map bmap;         /* the batches labeled inside W: the times' batch indexes */

    /* Valid only while pp_report_build runs: the model, its columns and the
     * reused scratch buffers. */
    const pp_model *m;
    pp_cols c;
    an_buf sort_tmp, values, spans, spans2, index, hist;
};

/* Start and end of model event i: the times of execs and host spans, which
 * are read from the model's columns rather than copied (during the build). */
static inline int64_t an_start(const pp_report *r, size_t i) {
    return pp_cols_ts(&r->c, i);
}
static inline int64_t an_end(const pp_report *r, size_t i) {
    return pp_cols_end(&r->c, i);
}

/* The model track, the device and the batch of exec x (in r->execs). */
static inline uint32_t an_exec_track(const pp_report *r, const an_exec *x) {
    return pp_cols_track(&r->c, x->event);
}
static inline uint32_t an_exec_device(const pp_report *r, const an_exec *x) {
    return r->track_device[pp_cols_track(&r->c, x->event)];
}
static inline int64_t an_exec_batch(const pp_report *r, const an_exec *x) {
    return r->exec_batch ? r->exec_batch[x - r->execs] : pp_cols_batch(&r->c, x->event);
}

/* 1 for an event of a profiler's bookkeeping (a track marked
 * PP_TRACK_BOOKKEEPING): outside W and every figure, whatever its time. */
static inline int an_bookkeeping(const pp_report *r, size_t i) {
    return r->bookkeeping && r->bookkeeping[pp_cols_track(&r->c, i)];
}

/* 1 when the event [ts, ts+dur) lies entirely inside W. */
static inline int an_inside(const pp_report *r, int64_t ts, int64_t dur) {
    return ts >= r->window.start_ns && ts + dur <= r->window.end_ns;
}

static inline an_host an_host_make(int64_t batch, size_t event, uint32_t stage, uint8_t role,
                                   int from_pattern) {
    uint32_t s = stage == AN_NONE ? AN_HOST_NO_STAGE : stage;
    return (an_host){.batch = batch, .event = (uint32_t)event,
                     .bits = s | (uint32_t)(role & 7) << 28 | (uint32_t)(from_pattern != 0) << 31};
}
static inline uint32_t an_host_stage(const an_host *h) {
    uint32_t s = h->bits & AN_HOST_NO_STAGE;
    return s == AN_HOST_NO_STAGE ? AN_NONE : s;
}
static inline void an_host_set_stage(an_host *h, uint32_t stage) {
    h->bits = (h->bits & ~AN_HOST_NO_STAGE) | (stage == AN_NONE ? AN_HOST_NO_STAGE : stage);
}
static inline uint8_t an_host_role(const an_host *h) {
    return (uint8_t)(h->bits >> 28 & 7);
}
static inline int an_host_from_pattern(const an_host *h) {
    return (int)(h->bits >> 31);
}
/* 1 when model event i lies entirely inside W. */
static inline int an_event_inside(const pp_report *r, size_t i) {
    return an_inside(r, pp_cols_ts(&r->c, i), pp_cols_dur(&r->c, i));
}
static inline int an_host_inside(const pp_report *r, const an_host *h) {
    return an_event_inside(r, h->event);
}

/* 1 when exec x lies entirely inside W; 1 when it is host work. */
static inline int an_exec_inside(const pp_report *r, const an_exec *x) {
    return an_event_inside(r, x->event);
}
static inline int an_exec_is_host(const pp_report *r, const an_exec *x) {
    return (size_t)(x - r->execs) >= r->nreal;
}

/* A span whose own fields already label it: partition, merge and stage
 * roles with a stage, or any non-exec span whose args name stage and batch
 * (label.c; an_execs_collect counts them in its pass). */
static inline int an_labeled_by_fields(const pp_cols *c, size_t i) {
    uint8_t role = c->role[i];
    int stage = pp_cols_stage(c, i) != 0, batch = pp_cols_batch(c, i) >= 0;
    return (c->kind[i] == PP_EV_SPAN) & stage & batch & (role != PP_ROLE_EXEC) &
           (role != PP_ROLE_OP);
}

/* A partition or merge span with a batch but no stage in its fields (the
 * PipelineProfiler dialect's "Partition" / "Merge"): the stage it brackets
 * is found as for one a pattern named (host_execs.c). */
static inline int an_bracket_by_fields(const pp_cols *c, size_t i) {
    uint8_t role = c->role[i];
    return c->kind[i] == PP_EV_SPAN && (role == PP_ROLE_PARTITION || role == PP_ROLE_MERGE) &&
           pp_cols_stage(c, i) == 0 && pp_cols_batch(c, i) >= 0;
}

/* A span of role op (an op of ops.c, whatever its track and time). */
static inline int an_is_op_span(const pp_cols *c, size_t i) {
    return (c->kind[i] == PP_EV_SPAN) & (c->role[i] == PP_ROLE_OP);
}

/* Steps, in order. Each returns 0 or a PP_E* code with err filled. */
int an_window_select(pp_report *r, const pp_analyze_options *o, pp_error *err);
int an_execs_collect(pp_report *r, pp_error *err);
int an_labels_collect(pp_report *r, const pp_analyze_options *o, pp_error *err);
int an_host_execs(pp_report *r, pp_error *err);
int an_stage_order(pp_report *r, pp_error *err);
/* The track rows of r->tracks (a model track with execs each, in track
 * order, its figures zero), which the device step fills in. */
int an_tracks_list(pp_report *r, pp_error *err);
/* The PipelineProfiler figures (framework.c): after the track rows, while
 * the partitions and merges are still in r->host. */
int an_framework_compute(pp_report *r, pp_error *err);
int an_devices_compute(pp_report *r, pp_error *err);
/* The device step beside the others (beside.c): an_devices_start runs it
 * on a thread of its own where it can, an_devices_join waits for it (or
 * runs it there) and takes its tables (bubbles) into r; a
 * start must always be joined, also after a failure. */
typedef struct an_beside an_beside;
int an_devices_start(pp_report *r, an_beside **out, pp_error *err);
int an_devices_join(pp_report *r, an_beside *b, pp_error *err);
/* Frees the scratch buffers, or forgets them in a copy of a report whose
 * scratch belongs to the original (report.c). */
void an_scratch_free(pp_report *r);
void an_scratch_forget(pp_report *r);
int an_stages_compute(pp_report *r, pp_error *err);
/* The string id of "share", the key of the annotations the stage step reads
 * (a data-parallel exec's part of its batch); 0 when the model has none. */
static inline uint32_t an_share_key(const pp_model *m) {
    return pp_model_find_string(m, "share");
}
/* The string id of "part", the other key it reads: which executor of a
 * data-parallel stage ran an exec (an integer), so that two executors on
 * one device are two parts; 0 when the model has none. */
static inline uint32_t an_part_key(const pp_model *m) {
    return pp_model_find_string(m, "part");
}
int an_cycles_compute(pp_report *r, pp_error *err);
int an_dp_compute(pp_report *r, pp_error *err);
/* The op step in two: an_execs_collect gathers the annotations of every
 * op span into r->op in its pass over the events (an_op_gather), so that
 * pp_report_build_owned drops an owned model's before the other views are
 * made; an_ops_compute makes the op tables from them. */
typedef struct an_op_keys { /* the keys' string ids, 0 for one the model lacks */
    uint32_t type, exec, cpu;
} an_op_keys;
an_op_keys an_op_keys_of(const pp_model *m);
typedef struct an_op_gatherer {
    const pp_ann *ann; /* the model's annotations, sorted by event */
    size_t nann, cursor;
    an_op_keys keys;
} an_op_gatherer;
void an_op_gather_start(const pp_report *r, an_op_gatherer *g);
/* The annotations of op span `event` into *op; op spans come in event order. */
void an_op_gather(an_op_gatherer *g, size_t event, an_op *op);
int an_ops_compute(pp_report *r, pp_error *err);
/* The ops inside host stages (stage_ops.c): after the host execs and the
 * stage order; reads the model's columns, the execs and the host spans. */
int an_stage_ops_compute(pp_report *r, pp_error *err);
int an_findings_compute(pp_report *r, pp_error *err);
/* The scheduler split of host spans from their sched_* annotations
 * (sched.c); before the stage step, which drops them from an owned model. */
int an_sched_compute(pp_report *r, pp_error *err);
/* The other threads that ran during each host stage's spans, from the
 * sampler's counters (sched_rivals.c); after an_sched_compute. */
int an_sched_rivals(pp_report *r, pp_error *err);
/* The finding naming where a host stage's time goes when it is not on a
 * CPU (findings_sched.c); called by an_findings_compute. */
int an_sched_findings(pp_report *r);
int an_contention_compute(pp_report *r, const pp_analyze_options *o, pp_error *err);
int an_decompose_compute(pp_report *r, const pp_analyze_options *o, pp_error *err);
/* Bandwidth in two steps: the bytes of each device, track and stage, summed
 * before the stage step (while the model still has every annotation:
 * pp_report_build_owned), into r->bw_sums; the rates over busy time once the
 * device step has joined. */
int an_bandwidth_sums(pp_report *r, pp_error *err);
int an_bandwidth_rates(pp_report *r, pp_error *err);
/* The finding naming the largest non-device part of a (stage, device)
 * where it dominates (decompose.c); called by an_findings_compute. */
int an_decompose_findings(pp_report *r);
/* Whether device d runs on the host's CPU cores: not simulated, and named
 * "CPU..." (the cpu backend, "CPU (host)" threads, OpenVINO's CPU device)
 * or "...:CPU" ("openvino:CPU", "AUTO:CPU"). findings.c. */
int an_device_on_host_cpu(const pp_report *r, uint32_t d);
/* The combined demand of those devices on the host's cores: Σ busy of
 * their tracks (threads, request slots) / |W|, in cores busy on average;
 * *ndevices of them. */
double an_host_cpu_demand(const pp_report *r, size_t *ndevices);

/* 95% bootstrap intervals across batches (uncertainty.c): of Σ num / Σ den
 * and of the mean of v, over n batches; beyond AN_BOOT_UNITS batches, runs
 * of consecutive batches are resampled. PP_ENOMEM or 0. */
#define AN_BOOT_UNITS 1024
int an_ratio_interval(const double *num, const double *den, size_t n, pp_interval_3 *out);
int an_mean_interval(const double *v, size_t n, pp_interval_3 *out);

/* Appends a finding of `kind` naming stage and device (AN_NONE: none)
 * with its sentence, which it takes (finding_list.c); NULL on no memory
 * (also for a NULL sentence). The pointer is valid until the next add: set
 * the figure, significance and action through it. */
pp_finding *an_finding_add(pp_report *r, pp_finding_kind kind, uint32_t stage, uint32_t device,
                           char *sentence);
pp_finding *an_finding_add_text(pp_report *r, pp_finding_kind kind, char *sentence);
void an_finding_figure(pp_finding *f, const char *name, const char *unit, double est, double lo,
                       double hi);
/* Makes every finding's line once all are added; PP_ENOMEM. */
int an_findings_render(pp_report *r);
void an_findings_free(pp_report *r);

/* Helpers shared by the steps. */

/* Room for `more` execs after the last (execs.c). */
int an_execs_grow(pp_report *r, size_t more);
/* Sets the batch of exec i; the first batch other than the event's own
 * makes r->exec_batch. PP_ENOMEM when that cannot be had. */
int an_exec_batch_set(pp_report *r, size_t i, int64_t batch);

/* A suggestion of patterns that would label the trace's annotations, kept
 * in r->hint (hint.c); nothing when none is seen. Called only where a
 * report will say it (a pass over every event): with no pattern given, or
 * with patterns that labeled nothing. */
int an_pattern_hint(pp_report *r);
/* The report device index of `name`, added when new (flags: the track's,
 * PP_TRACK_SIMULATED makes it simulated); AN_NONE on no memory. */
uint32_t an_device_intern(pp_report *r, const char *name, uint32_t flags);
/* The stage index of model string `id` (AN_NONE for 0 or no memory):
 * known ids are a table lookup, new ones are interned (execs.c). */
uint32_t an_stage_of_new_string(pp_report *r, uint32_t id);
static inline uint32_t an_stage_of_string(pp_report *r, uint32_t id) {
    if (id == 0)
        return AN_NONE;
    uint32_t s = r->stage_of_string[id];
    return s != AN_NONE ? s : an_stage_of_new_string(r, id);
}
/* Interned stage index of `name`, added when new; AN_NONE on no memory. */
uint32_t an_stage_intern(pp_report *r, const char *name, size_t len);
/* The stage / device index of a name (a device by its track name: "NPU");
 * AN_NONE when absent (contention.c). */
uint32_t an_find_stage(const pp_report *r, const char *name);
uint32_t an_find_device(const pp_report *r, const char *name);
/* Keeps a malloc'd string in the report (freed with it); NULL on no memory. */
const char *an_keep_text(pp_report *r, const char *text);

/* Summarizes values[0..n), which it reorders and may overwrite (scratch from
 * r; percentiles by selection for large sets). */
int an_summary(pp_report *r, int64_t *values, size_t n, pp_summary *out);

typedef struct an_span {
    int64_t start, end;
} an_span;
/* Clips `n` intervals to [w0, w1), sorts them by start and merges those
 * that touch or overlap, in place; returns the merged count and the busy
 * length in *busy. */
int an_intervals_merge(pp_report *r, an_span *iv, size_t n, int64_t w0, int64_t w1,
                       size_t *merged, int64_t *busy);
/* A sorted run of merged intervals: [at, end). */
typedef struct an_run {
    const an_span *at, *end;
} an_run;
/* The union of k runs (each sorted and merged, as an_intervals_merge leaves
 * them) into out (room for all their intervals): a k-way merge, so the
 * union of a device's streams needs no sort. The runs are consumed. */
void an_runs_union(an_run *runs, size_t k, an_span *out, size_t *merged, int64_t *busy);
/* Keeps the bubbles between the n merged busy intervals of device d, the
 * devices in order, in r->gap_bytes (room for 20 bytes a bubble; gaps.c). */
void an_gaps_keep(pp_report *r, uint32_t d, const an_span *merged, size_t n);
/* Time of W outside every stage's execs, partitions and merges, and the
 * stage that most often starts right after such a gap, by gap time
 * (outside.c, for the findings). */
int an_outside_stages(pp_report *r, int64_t *outside, uint32_t *before);
/* Bubbles of `n` merged intervals inside [w0, w1). */
int an_gaps_summarize(pp_report *r, const an_span *merged, size_t n, int64_t w0, int64_t w1,
                      pp_gap_stats *out);

/* An open-addressing index of items 0..n-1 (index.c): a slot holds an
 * item + 1, 0 is empty; nslot is a power of two and a key's search starts
 * at its hash & (nslot - 1) and probes on linearly. */
typedef struct an_index {
    uint32_t *slot;
    size_t nslot;
} an_index;
/* Rebuilds x at nslot slots over items 0..n-1, hash_of giving each one's
 * hash; 0, or PP_ENOMEM with x as it was. */
int an_index_rebuild(an_index *x, size_t nslot, size_t n,
                     size_t (*hash_of)(const void *items, size_t i), const void *items);

/* A 64-bit sort key with a payload (an index). */
typedef struct an_kv {
    uint64_t key, val;
} an_kv;
/* Stable radix sorts; `tmp` holds n records. */
void an_kv_sort(an_kv *a, size_t n, an_kv *tmp);
void an_span_sort(an_span *a, size_t n, an_span *tmp);
void an_i64_sort(int64_t *a, size_t n, int64_t *tmp);
/* The first of the records [lo, hi) (`size` bytes each, sorted by the
 * unsigned key of `width` bytes, 4 or 8, at byte `at`) whose key is not
 * below v, searched outward from index `from` (hi: from nowhere, a binary
 * search): lookups that come in nearly ascending order cost a few steps
 * each. */
size_t an_lower_bound_near(const void *records, size_t size, size_t at, size_t width, size_t lo,
                           size_t hi, size_t from, uint64_t v);
/* The unsigned key that sorts like the signed value. */
uint64_t an_key_i64(int64_t v);

/* Formatted, malloc'd string (NULL on no memory). */
char *an_strdupf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* "NPU (simulated)" or "GPU": how every output names device d. Like
 * snprintf: writes at most `len` bytes (none with buf NULL and len 0) and
 * returns the label's whole length, so a caller can make room for it. */
size_t an_device_label(const pp_report *r, uint32_t d, char *buf, size_t len);
/* For people: what a device's PP_HW_* flags mean ("" and 0 when its
 * hardware times are per-run measurements, or it has none). */
int an_hw_quality_text(unsigned flags, char *buf, size_t len);
/* For machines: the flags as words ("running_mean", "above_wall",
 * "is_wall", "host") joined by `sep`; "" for none (per-run hardware times). */
void an_hw_quality_words(unsigned flags, char sep, char *buf, size_t len);
/* "NPU (simulated)", or "CPU (host)/thread 12" for a part that is a track;
 * writes and returns like an_device_label. */
size_t an_dp_part_label(const pp_report *r, const pp_dp_device *part, char *buf, size_t len);
/* A byte count for people, in decimal units: "812 B", "12.35 kB", "1.23 MB",
 * "2.50 GB" (bandwidth.c). */
void an_format_bytes(uint64_t bytes, char *buf, size_t len);
/* A duration for people: "812 ns", "12.345 us", "1.234 ms", "2.500 s". */
void an_format_ns(int64_t ns, char *buf, size_t len);
/* a + b, saturated at the int64 range: sums of hardware times that the
 * input may make arbitrarily large never wrap. */
static inline int64_t an_sat_add(int64_t a, int64_t b) {
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}
/* A recorded hw_ns / xfer_ns as a signed time, saturated. */
static inline int64_t an_hw_of(uint64_t hw) {
    return hw > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)hw;
}
/* The hardware time of exec x: 0 for host work, which has none. */
static inline int64_t an_exec_hw(const pp_report *r, const an_exec *x) {
    return an_exec_is_host(r, x) ? 0 : an_hw_of(pp_cols_hw(&r->c, x->event));
}
/* num / den as a double (0 when den is 0), for ratios. */
double an_ratio(int64_t num, int64_t den);

#endif
