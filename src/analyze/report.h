/* report.h — the report's layout and the steps that fill it.
 *
 * pp_report_build (report.c) runs the steps in order: window, exec view,
 * devices and tracks, stage times, cycles, data-parallel breakdown, op
 * statistics, findings. Each step reads what earlier ones filled in. */
#ifndef PP_ANALYZE_REPORT_H
#define PP_ANALYZE_REPORT_H

#include "pipeprof/analyze.h"

#define AN_NONE UINT32_MAX

/* One exec span as the analysis sees it: stage is a report stage index
 * (AN_NONE when unlabeled), inside is 1 when it lies entirely inside W. */
typedef struct an_exec {
    int64_t start, end, batch;
    uint64_t hw, xfer;
    size_t event;
    uint32_t track, device, stage;
    int inside;
} an_exec;

/* One bubble of a device: [start, end). */
typedef struct an_gap {
    uint32_t device;
    int64_t start, end;
} an_gap;

/* A data-parallel (stage, batch): its parts, and one an_dp_wall per device
 * (walls[first .. first+ndev)). */
typedef struct an_dp_row {
    uint32_t stage;
    int64_t batch;
    int64_t partition_ns, merge_ns, max_device_ns, measured_ns;
    size_t first, ndev;
} an_dp_row;

typedef struct an_dp_wall {
    uint32_t device;
    int64_t wall_ns;
    double share;              /* of the batch's work: "share" annotation, else 1/ndev */
} an_dp_wall;

struct pp_report {
    pp_window window;
    char *how, *source;
    pp_model_meta meta;

    an_exec *execs;
    size_t nexecs;
    uint32_t *track_device;    /* model track -> device index, AN_NONE */
    uint32_t *stage_of_string; /* model string id -> stage index, AN_NONE */

    pp_device_stats *devices;
    size_t ndevices;
    pp_track_stats *tracks;
    size_t ntracks;
    an_gap *gaps;
    size_t ngaps;

    char **stage_names;        /* owned; stages[i].name points here */
    int64_t *stage_first;      /* first appearance in time, for the order */
    size_t stage_cap;
    pp_stage_stats *stages;
    size_t nstages;
    pp_stage_time *times;      /* sorted by (batch, stage) */
    size_t ntimes;
    an_dp_row *dp_rows;
    size_t ndp_rows;
    an_dp_wall *dp_walls;
    size_t ndp_walls;
    pp_batch_stats *batches;
    size_t nbatches;
    pp_cycle_stats cycles;
    pp_dp_stats *dp;
    size_t ndp;
    pp_dp_device *dp_devices;  /* dp[i].devices point here */
    pp_op_stats *ops;
    size_t nops;
    char **op_names;
    char **findings;
    size_t nfindings;
};

/* Steps, in order. Each returns 0 or a PP_E* code with err filled. */
int an_window_select(pp_report *r, const pp_model *m, const pp_analyze_options *o,
                     pp_error *err);
int an_execs_collect(pp_report *r, const pp_model *m, pp_error *err);
int an_foreign_label(pp_report *r, const pp_model *m, const char *pattern, pp_error *err);
int an_stage_order(pp_report *r, const pp_model *m, pp_error *err);
int an_devices_compute(pp_report *r, const pp_model *m, pp_error *err);
int an_stages_compute(pp_report *r, const pp_model *m, pp_error *err);
int an_cycles_compute(pp_report *r, const pp_model *m, pp_error *err);
int an_dp_compute(pp_report *r, const pp_model *m, pp_error *err);
int an_ops_compute(pp_report *r, const pp_model *m, pp_error *err);
int an_findings_compute(pp_report *r, pp_error *err);

/* Helpers shared by the steps. */

/* Interned stage index of `name`, added when new; AN_NONE on no memory. */
uint32_t an_stage_intern(pp_report *r, const char *name, size_t len);
/* 1 when the event [ts, ts+dur) lies entirely inside W. */
int an_inside(const pp_report *r, int64_t ts, int64_t dur);

/* Merges `n` intervals (sorted in place by start) clipped to W; returns the
 * merged count written over the array, and the busy length in *busy. */
typedef struct an_span {
    int64_t start, end;
} an_span;
size_t an_intervals_merge(an_span *iv, size_t n, int64_t w0, int64_t w1, int64_t *busy);
/* Bubbles of `n` merged intervals inside [w0, w1); PP_ENOMEM possible. */
int an_gaps_summarize(const an_span *merged, size_t n, int64_t w0, int64_t w1,
                      pp_gap_stats *out);

/* A 64-bit sort key with a payload (an index). */
typedef struct an_kv {
    uint64_t key, val;
} an_kv;
/* Stable radix sort by key; PP_ENOMEM when the scratch space is missing. */
int an_kv_sort(an_kv *a, size_t n);
/* The unsigned key that sorts like the signed value. */
uint64_t an_key_i64(int64_t v);

/* Formatted, malloc'd string (NULL on no memory). */
char *an_strdupf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* "NPU (simulated)" or "GPU": how every output names device d. */
void an_device_label(const pp_report *r, uint32_t d, char *buf, size_t len);
/* A duration for people: "812 ns", "12.345 us", "1.234 ms", "2.500 s". */
void an_format_ns(int64_t ns, char *buf, size_t len);
/* Seconds as a double from integer ns, for ratios. */
double an_ratio(int64_t num, int64_t den);

#endif
