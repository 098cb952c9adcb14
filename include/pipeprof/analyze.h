/* pipeprof/analyze.h — metrics, cycle analysis and findings of a trace model.
 *
 * pp_report_build() computes every figure of docs/architecture.md §4 (as
 * implemented: docs/analysis.md) from a model over one time window W, and
 * keeps them in an opaque pp_report. The tables are read through accessors
 * that return read-only arrays owned by the report; the renderers write the
 * same figures as text, JSON (docs/report-json.md) or CSV. Times are integer
 * nanoseconds; ratios are doubles computed from those integers at the end. */
#ifndef PIPEPROF_ANALYZE_H
#define PIPEPROF_ANALYZE_H

#include <stdio.h>

#include "pipeprof/common.h"
#include "pipeprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_report pp_report;

/* How to choose W and how to label foreign execs. Zero-initialize with
 * pp_analyze_options_init. `region` and `exclude_region` exclude each other. */
typedef struct pp_analyze_options {
    const char *region;         /* W = hull of the regions of this name */
    const char *exclude_region; /* W = end of the last such region .. trace end */
    int has_from, has_to;       /* clip W to [from_ns, to_ns] (trace ns) */
    int64_t from_ns, to_ns;
    /* Name patterns (docs/analysis.md, "Labeling foreign traces"): POSIX
     * extended regexes whose groups may be named (?<stage>...) and
     * (?<batch>...). batch_pattern: stage and batch from one name (unnamed:
     * group 1 = stage, 2 = batch), or a batch alone (one group) given to
     * everything nested in the span and launched from it (ProfilerStep#N).
     * stage_pattern: a stage (group 1), maybe a batch (group 2). With either,
     * names matching partition_pattern / merge_pattern (NULL: "^Partition",
     * "^Merge") are the partition and merge of the stage they bracket. */
    const char *batch_pattern;
    const char *source;         /* file name shown in the report header */
    /* Isolated hardware times per stage and device (from a sweep's lookup
     * table): the report adds the contention factor of each pair it has
     * execs of. NULL / 0: none. */
    const struct pp_isolated_hw *isolated;
    size_t nisolated;
    const char *stage_pattern;
    const char *partition_pattern, *merge_pattern;
} pp_analyze_options;

/* The mean hardware time of `stage` alone on the device named `device`
 * (its track name: "NPU"). */
typedef struct pp_isolated_hw {
    const char *stage, *device;
    int64_t hw_ns;
} pp_isolated_hw;

void pp_analyze_options_init(pp_analyze_options *o);

/* Builds the report. Errors (message in err): PP_ENOTFOUND for an unknown
 * region (the message lists those that exist), PP_EINVAL for an empty window,
 * a trace without execs, or a bad option; PP_EUNSUPPORTED for a model of
 * 2^32 - 1 events or more, or 2^28 - 1 strings or more (the analysis refers
 * to events by 32-bit index and to stages by 28-bit index: cut such a trace
 * into windows with pp_trace_convert's from_ns/to_ns); PP_ENOMEM. */
int pp_report_build(const pp_model *m, const pp_analyze_options *o, pp_report **out,
                    pp_error *err);
/* The same report from a model the caller gives up: m is freed, whatever
 * the result. The build first narrows the model's columns in place to the
 * fewest bytes its values need, and drops its annotations once no step
 * reads them again: for a pipeline trace it then holds less than the model
 * as read (docs/analysis.md, "Memory"). For a caller that needs the model
 * no more, as `pipeprof analyze`; pp_report_exec_parts then has nothing to
 * compute from. */
int pp_report_build_owned(pp_model *m, const pp_analyze_options *o, pp_report **out,
                          pp_error *err);
/* Accepts NULL. */
void pp_report_free(pp_report *r);

/* Nearest-rank percentile of `n` ascending values: the value at 1-based rank
 * ceil(q_milli * n / 100000), q_milli in thousandths of a percent (p99.9 =
 * 99900). Integer arithmetic only. 0 for n == 0. */
int64_t pp_percentile(const int64_t *sorted, size_t n, uint32_t q_milli);

/* min, mean (floor), p50, p90, p95, p97, p99, p99.9, max of n values. */
typedef struct pp_summary {
    uint64_t n;
    int64_t min, mean, p50, p90, p95, p97, p99, p999, max, total;
} pp_summary;

/* Sorts `values` in place and summarizes them (all zero for n == 0). */
void pp_summary_compute(int64_t *values, size_t n, pp_summary *out);

/* Gaps between merged busy intervals inside W (bubbles), plus the idle time
 * before the first and after the last interval, reported apart. */
typedef struct pp_gap_stats {
    uint64_t count;
    int64_t mean, p50, p95, max, total;
    int64_t leading_ns, trailing_ns;
} pp_gap_stats;

typedef struct pp_window {
    int64_t start_ns, end_ns;  /* W = [start, end) */
    const char *how;           /* "whole trace", "region \"warm up\"", ... */
} pp_window;

/* Hardware-time quality of a device (pp_device_stats.hw_quality), flags:
 * its hardware figures are not per-run measurements, and every output says
 * so. */
#define PP_HW_RUNNING_MEAN 1u  /* hw_ns is a running mean (OpenVINO CPU plugin) */
#define PP_HW_ABOVE_WALL 2u    /* some exec's hw_ns exceeds its wall (see hw_above_wall) */
#define PP_HW_IS_WALL 4u       /* every known hw_ns equals its wall: a foreign trace's
                                * kernel duration, not a separate measurement */
#define PP_HW_HOST 8u          /* host work (stage spans): no hardware time at all */

/* Bandwidth (docs/analysis.md, "Bandwidth"): the bytes moved by the execs
 * lying inside W that carry them (annotations bytes_in = read, bytes_out =
 * written; a foreign copy's `bytes` by its direction), over the busy time of
 * the device, track or stage and over those execs' transfer time. Rates are
 * in GB/s (GB = 10^9 bytes, so bytes per nanosecond); 0 where the time is 0. */
typedef struct pp_bandwidth {
    uint64_t execs;            /* execs inside W that carry bytes */
    uint64_t read_bytes, write_bytes;
    int64_t busy_ns;           /* busy time of the device, track or stage */
    int64_t xfer_ns;           /* sum of xfer_ns over the execs that carry bytes */
    double read_gbps, write_gbps, total_gbps; /* bytes / busy_ns */
    double xfer_gbps;          /* (read + written) / xfer_ns */
} pp_bandwidth;

typedef struct pp_device_stats {
    const char *name;
    int simulated;             /* every output names it "(simulated)" */
    unsigned hw_quality;       /* PP_HW_* flags; 0 = per-run hardware times */
    uint64_t hw_above_wall;    /* execs inside W whose hw_ns > wall */
    uint32_t tracks;           /* tracks with at least one exec in W */
    uint64_t execs;            /* execs lying entirely inside W */
    uint64_t hw_unknown;       /* of those, left out of hardware figures */
    int64_t busy_ns, idle_ns;
    double wall_util;          /* busy / |W| */
    double hw_util;            /* mean over tracks of sum hw / |W| */
    double hw_eff;             /* sum hw / sum wall, execs with known hw */
    double transfer_share;     /* sum xfer / sum hw, execs with known hw */
    pp_summary penalty;        /* wall - hw per exec with known hw */
    double penalty_pct_wall;   /* penalty total / sum exec wall (known hw) */
    pp_gap_stats bubbles;
    pp_bandwidth bandwidth;
} pp_device_stats;

typedef struct pp_track_stats {
    uint32_t track;            /* model track index */
    uint32_t device;           /* index into the device table */
    const char *name;          /* "GPU.0/stream 1" */
    uint64_t execs, hw_unknown;
    int64_t busy_ns;
    double hw_util;
    pp_gap_stats bubbles;
    pp_bandwidth bandwidth;
} pp_track_stats;

/* One stage, in order of first appearance in time. */
typedef struct pp_stage_stats {
    const char *name;
    int data_parallel;         /* some batch ran on more than one device */
    int exec_less;             /* timed by its stage spans (no execs) */
    pp_summary time;           /* stage time(s, b) over its batches */
    uint64_t bottleneck_count; /* cycles this stage was the bottleneck of */
    uint64_t execs, hw_unknown;
    int64_t hw_ns, xfer_ns;    /* sums over execs with known hw */
    pp_summary penalty;
    double penalty_pct_wall;   /* penalty total / sum exec wall (known hw) */
    pp_bandwidth bandwidth;    /* busy_ns: the union of its execs' intervals, clipped to W */
    /* Hold time per batch: the stage instance's first event to its last
     * (partition start to merge end for a data-parallel stage, the execs'
     * hull otherwise); beside stage time, which counts only the slowest
     * part: the difference is hand-off (dispatch, wake-up, waiting for a
     * worker). docs/analysis.md, "Hold time, hand-offs and back-pressure". */
    pp_summary hold;
    /* Its idle time between batches, summed over them: blocked, while its
     * next input was ready but the next stage had not yet taken its
     * previous output (back-pressure); starved, while its next input was
     * not ready (0 for the first stage, which has no upstream). */
    int64_t blocked_ns, starved_ns;
} pp_stage_stats;

/* stage time(s, b). measured_ns = partition start .. merge end for a
 * data-parallel stage with both spans, else -1. start_ns .. end_ns is the
 * stage instance itself: its first event's start to its last event's end
 * (partition and merge included; end - start is its hold time, which the
 * hand-off adds to time_ns), however its stage and batch were labeled (in
 * the events' own fields or by --stage-pattern / --batch-pattern), so the
 * instances of a pattern-labeled trace are placed in time too. track is
 * the model track (as pp_track_stats.track) of its first exec, in (device,
 * track) order: the one it ran on, unless it is data parallel. */
typedef struct pp_stage_time {
    uint32_t stage;
    int64_t batch;
    int64_t time_ns, measured_ns;
    int64_t start_ns, end_ns;
    uint32_t track;
} pp_stage_time;

typedef struct pp_batch_stats {
    int64_t batch;
    int complete;              /* has every stage of the trace */
    uint32_t stages;           /* how many it has */
    int64_t cycle_ns;          /* max stage time */
    uint32_t bottleneck;       /* stage index attaining it (upstream on ties) */
    int64_t e2e_ns;            /* last end - first start of its events */
} pp_batch_stats;

typedef struct pp_cycle_stats {
    uint64_t batches, complete;
    pp_summary cycle, cycle_complete, e2e;
    double throughput_bound;           /* 1/s: 1 / mean cycle latency */
    double throughput_bound_complete;
    double throughput_measured;        /* completed batches / |W| */
} pp_cycle_stats;

/* One part of a data-parallel stage: a device, or, when the stage ran on
 * several tracks of one device bracketed by partition and merge (two
 * streams of one GPU, two host threads), a track of it. */
typedef struct pp_dp_device {
    uint32_t device;           /* index into the device table */
    uint32_t track;            /* index into the track table, or UINT32_MAX: the whole device */
    uint64_t batches;          /* batches it took part in */
    int64_t wall_ns;           /* sum over those batches of its wall in the stage */
    double share;              /* share of the work it got (mean over its batches): its
                                * execs' "share" annotation (the configured split),
                                * else an even split */
    int share_recorded;        /* 1 when every batch recorded its share */
    double rate;               /* share / mean wall per batch, per second */
    double suggested_share;    /* rate / sum of rates; 0 when the parts change from
                                * batch to batch (new threads), where no split applies */
    uint64_t slowest;          /* batches in which it was the slowest part (ties: none) */
} pp_dp_device;

typedef struct pp_dp_stats {
    uint32_t stage;
    uint64_t batches;
    pp_summary partition, max_device, merge, formula, measured;
    double imbalance;          /* sum max wall / sum mean wall, over batches */
    double imbalance_lo, imbalance_hi; /* its 95% bootstrap interval across batches */
    /* The sign test of the part slowest on average against the fastest, over
     * the batches both ran (in how many the first was the slower), times the
     * number of part pairs (Bonferroni; at most 1): below PP_FINDING_ALPHA
     * the imbalance is more than per-batch noise (docs/analysis.md). */
    double parts_p;
    size_t ndevices;
    const pp_dp_device *devices;
} pp_dp_stats;

/* One row of an op table (level-2 op spans: layers, kernels). In the table
 * by name, `name` is the op's name and type / exec_type are its "type" and
 * "exec_type" annotations; in the table by type, `name` is "". Annotations
 * that are absent read as "". Real time is the span's duration; cpu time is
 * its "cpu_ns" annotation, summed over the cpu_count ops that report it. */
typedef struct pp_op_stats {
    uint32_t device;           /* index into the device table */
    const char *name, *type, *exec_type;
    uint64_t count;
    int64_t total, mean, p50, p95, max;
    uint64_t cpu_count;
    int64_t cpu_total;
} pp_op_stats;

/* The three figures of the PipelineProfiler framework (the user's earlier
 * profiler; docs/analysis.md "PipelineProfiler figures"), by its own
 * definitions, over the execs, partitions and merges inside W on each
 * device (a partition or merge counts on its track's device when that
 * track carries execs): one row per device (stage = UINT32_MAX), then one
 * per (device, stage) over that stage's execs. */
typedef struct pp_framework_stats {
    uint32_t device;           /* index into the device table */
    uint32_t stage;            /* index into the stage table; UINT32_MAX: the whole device */
    uint64_t tasks;            /* execs (and, for a device row, partitions and merges) */
    int64_t wall_ns, hw_ns;    /* sum of their walls, of their hw_ns (0 where unknown) */
    uint64_t hw_known;         /* tasks with a known hw_ns; with none (host work, a trace
                                * without hardware times) the two hw figures are undefined:
                                * every renderer shows them empty, never as 0% / all wall */
    double hw_utilization_pct; /* "HW Utilization %" = 100 * hw / wall */
    int64_t concurrency_penalty_ns; /* "Concurrency penalty" = wall - hw */
    uint64_t bubbles;          /* gaps > 0 from one task's end to the next one's start, in
                                  start order (the end of batch N to the start of N+1) */
    double bubble_mean_ns;     /* "Bubbles": their mean; 0 when there are none */
} pp_framework_stats;

const pp_framework_stats *pp_report_framework(const pp_report *r, size_t *n);

const pp_window *pp_report_window(const pp_report *r);
/* Data loss of the input: dropped records, truncated bytes. */
const pp_model_meta *pp_report_meta(const pp_report *r);
const char *pp_report_source(const pp_report *r);
const pp_device_stats *pp_report_devices(const pp_report *r, size_t *n);
const pp_track_stats *pp_report_tracks(const pp_report *r, size_t *n);
const pp_stage_stats *pp_report_stages(const pp_report *r, size_t *n);
/* The stage times, sorted by (batch, stage). The report keeps them in 36
 * bytes each; this public table of 56-byte rows is made on the first call
 * and lives until pp_report_free. That first call writes into the report:
 * not from two threads at once. NULL and *n = 0 on no memory (or none). */
const pp_stage_time *pp_report_stage_times(const pp_report *r, size_t *n);
/* The batches, sorted by batch: made on the first call from the report's
 * 12 bytes a batch, as pp_report_stage_times is. */
const pp_batch_stats *pp_report_batches(const pp_report *r, size_t *n);
const pp_cycle_stats *pp_report_cycles(const pp_report *r);
const pp_dp_stats *pp_report_dp(const pp_report *r, size_t *n);
/* Op statistics per device and op name (with its type and exec type), and
 * per device, op type and exec type; each sorted by total descending. */
const pp_op_stats *pp_report_ops(const pp_report *r, size_t *n);
const pp_op_stats *pp_report_op_types(const pp_report *r, size_t *n);

/* Ops inside host stages (docs/analysis.md, "Ops inside stages"): spans of
 * role none or user nested in a host stage instance on its own thread
 * (torch.profiler's cpu_op events, a user's spans), per stage and name:
 * count, total time (their durations) and self time (less their direct
 * children's). Sorted by stage, then self time descending. */
typedef struct pp_stage_op_stats {
    uint32_t stage;            /* index into the stage table */
    const char *name;
    uint64_t count;
    int64_t total_ns, self_ns;
} pp_stage_op_stats;
const pp_stage_op_stats *pp_report_stage_ops(const pp_report *r, size_t *n);
/* contention factor(s, d) = mean hw_ns of stage s's execs on d inside W /
 * its isolated hw_ns (docs/architecture.md §4), for each pp_analyze_options.isolated
 * entry that has execs with known hw_ns, in that order. */
typedef struct pp_contention_stats {
    uint32_t stage;            /* index into the stage table */
    uint32_t device;           /* index into the device table */
    uint64_t execs;            /* execs inside W with known hw_ns */
    int64_t mean_hw_ns;        /* their mean (floor) */
    int64_t isolated_hw_ns;
    double factor;             /* mean_hw_ns / isolated_hw_ns */
} pp_contention_stats;

const pp_contention_stats *pp_report_contention(const pp_report *r, size_t *n);

/* wall decomposition (docs/analysis.md): an exec's wall split into parts
 * that are each >= 0 and sum to wall exactly. device is hw_ns (xfer_ns of
 * it moves data; contention_ns of it is the excess over the isolated time
 * when pp_analyze_options.isolated gives one, else 0). submit, queue and
 * completion come from the exec's submit_ns / queue_ns / completion_ns
 * annotations where its backend reports device times; unattributed is the
 * rest (all of wall - hw where it does not; all of wall where hw is
 * unknown). */
typedef struct pp_wall_parts {
    int64_t wall_ns;
    int64_t submit_ns, queue_ns, device_ns, completion_ns, unattributed_ns;
    int64_t xfer_ns, contention_ns; /* parts of device_ns */
} pp_wall_parts;

/* One device exec inside W with its parts; grouped as pp_report_decomposition
 * lists its (stage, device) pairs, in event order within each. */
typedef struct pp_exec_parts {
    size_t event;              /* model event index */
    uint32_t stage, device;    /* report stage (AN_NONE-like UINT32_MAX: none) and device */
    pp_wall_parts parts;
} pp_exec_parts;

/* The sums per (stage, device) with execs inside W, stage by stage in
 * report order; `split` counts the execs whose backend split their wall
 * (the rest have only device and unattributed). */
typedef struct pp_decomp_stats {
    uint32_t stage;            /* UINT32_MAX: execs without a stage */
    uint32_t device;
    uint64_t execs, split;
    int has_contention;        /* an isolated time was given for the pair */
    pp_wall_parts total;
} pp_decomp_stats;

/* How a device's own timestamps were mapped into the trace's clock: from
 * its "clock alignment" marks (the largest error bound when there are
 * several). */
typedef struct pp_clock_stats {
    uint32_t device;
    const char *method;
    int64_t error_ns;
} pp_clock_stats;

/* The per-exec parts are computed on the first call, from the model the
 * report was built from, which must still exist then (a report keeps only
 * each exec's (stage, device) cell: 4 bytes an exec rather than 80); the
 * table lives until pp_report_free. That first call writes into the report:
 * not from two threads at once. NULL and *n = 0 on no memory, and for a
 * report of pp_report_build_owned (its model is gone). */
const pp_exec_parts *pp_report_exec_parts(const pp_report *r, size_t *n);
const pp_decomp_stats *pp_report_decomposition(const pp_report *r, size_t *n);
const pp_clock_stats *pp_report_clocks(const pp_report *r, size_t *n);
/* Scheduler split of host spans (docs/analysis.md "Scheduler split"): per
 * stage and kind of span (the stage span, the partition, the merge, an API
 * call or another span, by name), the spans inside W that carry scheduler
 * figures (pipeprof/sched.h) and their wall split into parts that are each
 * >= 0 and sum to wall exactly: on a CPU, runnable waiting for a core, and
 * blocked (the rest: asleep on a queue, a lock, I/O, the GIL). A span whose
 * method had no run-queue figure counts all its off-CPU time as blocked
 * (`no_wait` counts them). In stage order, then stage span, partition,
 * merge, others by name. */
typedef struct pp_sched_stats {
    const char *stage;   /* "" for spans without a stage */
    const char *span;    /* "stage", "partition", "merge", or the span's name */
    uint64_t spans, no_wait;
    int64_t wall_ns, cpu_ns, wait_ns, blocked_ns;
    int64_t voluntary, involuntary; /* context switches */
    /* With the sampler (collect "threads"), for a stage row: the group of
     * same-named threads of the process that used the most CPU during its
     * spans, and that CPU time (an estimate at the sampler's period); NULL
     * and 0 without. */
    const char *rival;
    int64_t rival_cpu_ns;
} pp_sched_stats;
const pp_sched_stats *pp_report_sched(const pp_report *r, size_t *n);
/* How the trace's scheduler figures were read ("schedstat", "cputime", or
 * several joined by '+'), or NULL when it carries none (a foreign trace, or
 * one recorded without the sched bit). */
const char *pp_report_sched_method(const pp_report *r);
/* The process's CPUs as the sampler (collect "threads") marked them, and
 * what the sampler cost; NULL when the trace has no sampler marks. */
typedef struct pp_sched_process {
    int64_t cpus_online, cpus_allowed; /* allowed: by the process's affinity */
    const char *affinity;              /* "0-3,6" */
    int64_t period_ns;                 /* between samples */
    int64_t sampler_cpu_ns;            /* the sampler thread's CPU time; -1 unknown */
    int64_t sampled_ns;                /* from its start mark to its end mark; 0 unknown */
} pp_sched_process;
const pp_sched_process *pp_report_sched_process(const pp_report *r);
/* ---- findings ------------------------------------------------------------
 *
 * A finding is data; its sentence is one rendering of it. Each one has a
 * kind, the stage and device it names (UINT32_MAX: none), the figure it
 * rests on with a 95% bootstrap interval across batches where one applies
 * (docs/analysis.md, "Uncertainty"), and, when it suggests an action, the
 * action and a slot for the predicted effect of that action, which the
 * what-if layer fills (pp_whatif_advise in pipeprof/whatif.h, through
 * pp_report_set_finding_prediction; `pipeprof analyze` and the Python
 * package call it); a report it did not see reads "Predicted effect: not
 * computed". The thresholds a finding depends on are
 * the PP_FINDING_* constants below, each with its reason in
 * docs/analysis.md ("Findings"). */

typedef enum pp_finding_kind {
    PP_FINDING_DATA_LOSS = 0,  /* records dropped, bytes truncated, pairs unmatched */
    PP_FINDING_UNLABELED,      /* execs without stage or batch, and a pattern that would label them */
    PP_FINDING_BOTTLENECK,     /* the stage that bounds the most cycles */
    PP_FINDING_THROUGHPUT,     /* measured throughput far below the cycle bound */
    PP_FINDING_IDLE,           /* the most idle device and when it idles */
    PP_FINDING_IMBALANCE,      /* a data-parallel stage's parts take unequal time */
    PP_FINDING_HW_QUALITY,     /* hardware times that are not per-run measurements */
    PP_FINDING_WALL_PART,      /* a non-device part dominates a (stage, device)'s wall */
    PP_FINDING_HW_UNKNOWN,     /* device execs without hardware time */
    PP_FINDING_BACK_PRESSURE,  /* a stage idle with its input ready, its output not yet taken */
    PP_FINDING_HANDOFF,        /* a stage holds each batch well beyond its stage time */
    PP_FINDING_SCHED,          /* a host stage's thread off a CPU: waiting for a core, blocked */
    PP_FINDING_WORTH_OPTIMIZING, /* the what-if causal profile's top stage (pipeprof/whatif.h) */
    PP_FINDING_KIND_COUNT
} pp_finding_kind;

/* The figure a finding ranks by: `name` says what it is ("imbalance",
 * "batches_in_flight", ...; "" when the finding has none), `unit` its unit
 * ("ratio", "ns", "share", "count"). lo and hi bound a 95% interval across
 * batches; both equal est where the figure is exact (a count, a sum over
 * the window). */
typedef struct pp_finding_figure {
    const char *name, *unit;
    double est, lo, hi;
} pp_finding_figure;

typedef enum pp_finding_action_kind {
    PP_ACTION_NONE = 0,        /* a statement, no advice */
    PP_ACTION_RESPLIT,         /* give the parts of a data-parallel stage other shares */
    PP_ACTION_REQUESTS,        /* keep `requests` requests in flight on `device` */
    PP_ACTION_SPEEDUP,         /* make `stage` faster by `factor` (time / factor) */
    PP_ACTION_MOVE             /* run `stage` on `device` */
} pp_finding_action_kind;

/* What an advice suggests. RESPLIT: `stage`, and nshares shares, one per
 * part of that stage's pp_dp_stats.devices (same order), summing to 1. */
typedef struct pp_finding_action {
    pp_finding_action_kind kind;
    uint32_t stage, device;    /* UINT32_MAX where the action names none */
    size_t nshares;
    const double *shares;
    uint32_t requests;
    double factor;
} pp_finding_action;

typedef enum pp_prediction_state {
    PP_PREDICTION_NONE = 0,    /* not computed (no what-if layer ran) */
    PP_PREDICTION_PREDICTED,   /* change_pct with its interval [lo_pct, hi_pct] */
    PP_PREDICTION_REFUSED      /* the model declined (its replay check failed, ...): reason */
} pp_prediction_state;

/* The predicted effect of a finding's action on throughput, in percent
 * (+8.1 = 8.1% more batches per second), with its interval. */
typedef struct pp_finding_prediction {
    pp_prediction_state state;
    double change_pct, lo_pct, hi_pct;
    const char *reason;        /* why refused, or what was simulated; NULL: none */
} pp_finding_prediction;

/* Whether an advice stands: with no action, or no prediction computed,
 * the statement stands as measured; a PREDICTED effect whose interval
 * reaches 0 (lo_pct <= 0), or a REFUSED one, withdraws the advice: the
 * renderers say so instead of advising. */
typedef struct pp_finding {
    pp_finding_kind kind;
    uint32_t stage, device;    /* report stage / device index, UINT32_MAX: none */
    pp_finding_figure figure;
    /* For a finding that compares two things: 1 when the difference is
     * significant (docs/analysis.md, "Uncertainty"), 0 when it is within
     * noise (the sentence says so and no action is advised); -1 when the
     * finding compares nothing. */
    int significant;
    const char *sentence;      /* the statement, without the prediction */
    const char *text;          /* the rendered line: the sentence, and for advice its
                                * predicted effect (pp_report_findings gives these) */
    pp_finding_action action;
    pp_finding_prediction prediction;
} pp_finding;

/* Thresholds (docs/analysis.md, "Findings", gives each one's reason). */
#define PP_FINDING_THROUGHPUT_GAP 1.2      /* bound / measured above this: say why */
#define PP_FINDING_SERIAL_MIN 0.8          /* batches in flight from this (estimate) .. */
#define PP_FINDING_SERIAL_MAX 1.2          /* .. to this (interval's top): "does not stream" */
#define PP_FINDING_IMBALANCE_MIN 1.05      /* imbalance (interval's low end) above this */
#define PP_FINDING_ALPHA 0.05              /* significance level of every comparison */
#define PP_FINDING_STARVED_SHARE 0.05      /* idle before a stage worth a word: of its time */
#define PP_FINDING_WALL_PART_SHARE (1.0 / 3.0) /* a non-device part's share of the wall */
#define PP_FINDING_HANDOFF_SHARE 0.25      /* hand-off's share of the hold time */
#define PP_FINDING_MIN_GAIN_PCT 1.0        /* advice predicted to gain less is withdrawn */

const char *pp_finding_kind_name(pp_finding_kind k);          /* "imbalance", ... */
const char *pp_finding_action_name(pp_finding_action_kind k); /* "resplit", ... */

/* The findings in rank order, data loss first when there is any. */
const pp_finding *pp_report_finding_list(const pp_report *r, size_t *n);
/* Sets the predicted effect of finding i's action (the what-if layer's
 * result); the report copies `p` and its reason and re-renders the
 * finding's text. PP_EINVAL for i out of range or a finding without an
 * action, PP_ENOMEM. Not from two threads at once. */
int pp_report_set_finding_prediction(pp_report *r, size_t i, const pp_finding_prediction *p);
/* Appends a finding that a layer above the analysis concludes (the what-if
 * layer's "worth optimizing", PP_FINDING_WORTH_OPTIMIZING) at the end of
 * the list, and renders its line. Its sentence, shares and prediction
 * reason are copied; figure.name and figure.unit must outlive the report
 * (string literals). PP_EINVAL for a NULL sentence or an unknown kind,
 * PP_ENOMEM. Not from two threads at once. */
int pp_report_add_finding(pp_report *r, const pp_finding *f);
/* The rendered lines of pp_report_finding_list (each finding's `text`). */
const char *const *pp_report_findings(const pp_report *r, size_t *n);

/* Renderers. Text fits 80 columns; JSON follows docs/report-json.md. They
 * return PP_EIO when writing fails. */
int pp_report_write_text(const pp_report *r, FILE *out);
int pp_report_write_json(const pp_report *r, FILE *out);
/* The same JSON in memory, for bindings that have no FILE* (the Python
 * package parses it): *out receives a NUL-terminated buffer of *len bytes
 * (len may be NULL) that the caller frees with pp_report_json_free. */
int pp_report_json(const pp_report *r, char **out, size_t *len);
/* Accepts NULL. */
void pp_report_json_free(char *json);
/* Writes devices.csv, tracks.csv, stages.csv, batches.csv, gaps.csv, ops.csv,
 * op_types.csv, decomposition.csv, bandwidth.csv and sched.csv into
 * the existing directory `dir`, each atomically. */
int pp_report_write_csv(const pp_report *r, const char *dir, pp_error *err);
/* Writes the report as one self-contained HTML page to `path`, atomically
 * (docs/report-html.md): findings, a zoomable timeline of `m`, which must be
 * the model the report was built from, utilization, bubble and stage latency
 * histograms, the stage, cycle and data-parallel tables. It works offline.
 * The timeline holds at most 20000 spans in full and summarizes the rest.
 * PP_EIO when writing fails (no file is left), PP_EINVAL for a model that is
 * not the report's, PP_ENOMEM. */
int pp_report_write_html(const pp_report *r, const pp_model *m, const char *path,
                         pp_error *err);
/* Writes the report as an xlsx workbook to `path`, atomically
 * (docs/report.md): an overview sheet (findings, window, data loss,
 * devices, stages, cycles), a sheet per device (its tracks and bubbles) and
 * per stage (its time per batch), and the op tables; durations in ms or µs
 * number formats, header rows frozen, autofilters. PP_EUNSUPPORTED when
 * pipeprof was built without libxlsxwriter (`pipeprof --version` lists
 * "xlsx" when it has it), PP_EIO when writing fails (no file is left),
 * PP_ENOMEM. */
int pp_report_write_xlsx(const pp_report *r, const char *path, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
