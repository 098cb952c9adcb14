/* pipeprof/sweep.h — calibration sweeps, lookup tables, bandwidth fits and
 * plan search (docs/architecture.md §2, docs/sweep.md).
 *
 * A sweep measures every stage (a workload: matmul or sage with its
 * parameters) on every device over a grid of graph sizes, alone, and keeps
 * per combination the mean, std, min, max and p50 of its wall, hardware and
 * transfer times. Each finished combination is appended to DIR/raw.jsonl
 * with one write and an fsync, so a killed sweep resumes where it stopped;
 * shards of one sweep run anywhere and merge into the same result. A
 * complete sweep writes DIR/lookup_table.json, DIR/bandwidth_table.json and
 * DIR/report.txt.
 *
 * The planner reads a lookup table and a pipeline file, enumerates stage ->
 * device assignments and two-device data-parallel splits, and ranks them by
 * estimated cycle latency.
 *
 * Every function returns 0 or a negative PP_E* code and fills the optional
 * pp_error; nothing here prints. */
#ifndef PIPEPROF_SWEEP_H
#define PIPEPROF_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof/analyze.h"
#include "pipeprof/common.h"
#include "pipeprof/pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- least-squares line ---- */

/* y = a*x + b over n points, and how well it explains them. */
typedef struct pp_fit {
    size_t n;
    double a, b;
    double r2;           /* 1 - SS_res / SS_tot; 1 when every y is equal and fitted */
    double x_min, x_max; /* the range the fit saw: outside it is extrapolation */
} pp_fit;

/* Fits y = a*x + b. PP_EINVAL when n < 2 or every x is the same. */
int pp_fit_linear(const double *x, const double *y, size_t n, pp_fit *out);

/* ---- sweep ---- */

typedef struct pp_sweep_config pp_sweep_config;

/* Reads a sweep config (JSON, docs/sweep.md). Errors name the file and the
 * key ("sweep.json: stages[1].model: unknown model ..."). */
int pp_sweep_config_load(const char *path, pp_sweep_config **out, pp_error *err);
void pp_sweep_config_free(pp_sweep_config *c);
/* sizes x devices x stages. */
size_t pp_sweep_config_combinations(const pp_sweep_config *c);
/* 16 hex digits identifying everything that changes what is measured. */
const char *pp_sweep_config_fingerprint(const pp_sweep_config *c);
/* "nodes,edges,device,stage" of combination i, into buf. */
void pp_sweep_config_key(const pp_sweep_config *c, size_t i, char *buf, size_t len);

/* Reported after every combination this run finishes. */
typedef struct pp_sweep_progress {
    size_t done, total; /* of the shard, counting those resumed */
    size_t ran;         /* measured by this run */
    const char *key;    /* the combination just finished */
    int failed;         /* it was recorded as failed */
    int simulated;      /* it ran on a simulated device */
    int64_t elapsed_ns; /* since this run started */
} pp_sweep_progress;

typedef void (*pp_sweep_progress_fn)(void *ctx, const pp_sweep_progress *p);

typedef struct pp_sweep_options {
    int resume;          /* continue the sweep in DIR (same config and shard) */
    int shard, shards;   /* run combinations i with i % shards == shard - 1; 0, 0: all */
    size_t limit;        /* > 0: stop after measuring this many (resume later) */
    int co_run;          /* complete and unsharded: also measure sharing devices' stage
                          * pairs together (DIR/co_run.jsonl, docs/sweep.md) */
    pp_sweep_progress_fn progress;
    void *progress_ctx;
} pp_sweep_options;

typedef struct pp_sweep_result {
    size_t total;   /* combinations of the shard */
    size_t done;    /* recorded in DIR */
    size_t resumed; /* of those, found there at the start */
    size_t failed;  /* recorded as failed (the device could not run them) */
    int complete;   /* done == total; the tables were written (unsharded) */
    size_t co_runs; /* pairs measured together by this run (co_run) */
} pp_sweep_result;

/* Runs the sweep (or its shard) into directory `dir`, created if missing.
 * Without `resume`, a DIR that already holds a sweep is PP_EINVAL; with it,
 * a DIR of another config or shard is PP_EINVAL naming both fingerprints. A
 * record cut off by a kill at the end of raw.jsonl is dropped and measured
 * again. An unsharded sweep that completes writes the tables. */
int pp_sweep_run(const pp_sweep_config *c, const char *dir, const pp_sweep_options *opt,
                 pp_sweep_result *res, pp_error *err);

/* Combines complete shards of one sweep into `out`, as if it had run
 * unsharded: raw.jsonl, the tables and the report. Mismatched configs,
 * a shard given twice, missing or incomplete shards are PP_EINVAL with a
 * message naming the directories. */
int pp_sweep_merge(const char *const *dirs, size_t n, const char *out, pp_error *err);

/* Writes DIR/gnx/lookup_table.json and DIR/gnx/bandwidth_table.json from
 * the tables of the complete sweep in DIR, in the layout of `format`
 * ("gnx", the only one: docs/sweep.md): "nodes,edges,PU,stage" entries in
 * ms and "PU_stageN" bandwidths in MB/s (1024^2). A device's PU name is
 * what its spec has after the backend ("sim:NPU" -> "NPU", "cpu" -> "CPU")
 * unless pu_map (npu "SPEC=NAME" strings) names it; two devices with one
 * name are PP_EINVAL. */
int pp_sweep_compat_write(const char *dir, const char *format, const char *const *pu_map,
                          size_t npu, pp_error *err);

/* ---- lookup tables ---- */

typedef struct pp_lookup pp_lookup;

/* Reads a lookup_table.json. */
int pp_lookup_load(const char *path, pp_lookup **out, pp_error *err);
void pp_lookup_free(pp_lookup *l);
/* The isolated hardware times the analyzer's contention factor needs
 * (pp_analyze_options.isolated): one per stage and device of the table that
 * reports hardware time, the device named by its track name ("NPU"), at
 * size (nodes, edges), or with nodes = 0 at the only size the table has for
 * that stage and device (PP_EINVAL naming them when it has several). *out
 * is freed with free(); its strings belong to the table. */
int pp_lookup_isolated(const pp_lookup *l, int64_t nodes, int64_t edges, pp_isolated_hw **out,
                       size_t *n, pp_error *err);

/* 1 when the table's entries on device spec `device` ran on a simulated
 * device (every output labels it so), else 0. */
int pp_lookup_simulated(const pp_lookup *l, const char *device);

/* The wall of a stage alone on a device, as the table measured it: the mean
 * and the spread from run to run ((p75 - p25) / 1.349; 0 in tables without
 * quartiles), and the device's track name ("NPU"). */
typedef struct pp_lookup_wall {
    double mean_ns, sd_ns;
    int simulated;
    char device_name[64];
} pp_lookup_wall;

/* Stage `stage` on `device` (its spec "sim:NPU" or its track name "NPU") at
 * size (nodes, edges), or with nodes = 0 at the only size the table has:
 * PP_ENOTFOUND when the table has no such entry, PP_EINVAL when it has
 * several sizes or the stage failed there. What `whatif --move` draws. */
int pp_lookup_stage_wall(const pp_lookup *l, const char *stage, const char *device,
                         int64_t nodes, int64_t edges, pp_lookup_wall *out, pp_error *err);

/* ---- plan search ---- */

#define PP_PLAN_MAX_DP 2 /* devices of a data-parallel stage in a plan */
/* pp_plan.bottleneck_device when the devices sharing the host's cores
 * (cpu, openvino:CPU) and the host copies, taking turns, set the cycle */
#define PP_PLAN_HOST_CORES "host cores"

typedef struct pp_plan_stage {
    char stage[64];                      /* the pipeline's stage name */
    int ndevices;                        /* 1, or PP_PLAN_MAX_DP for a data-parallel stage */
    char devices[PP_PLAN_MAX_DP][64];    /* specs, as in the table */
    double split[PP_PLAN_MAX_DP];        /* shares summing to 1 */
    int64_t time_ns;                     /* estimated mean stage time, spread included */
    int64_t device_ns[PP_PLAN_MAX_DP];   /* each device's share of it */
    int64_t partition_ns, merge_ns;      /* data parallel: host copies */
    int extrapolated;                    /* a size outside the table's range */
    int interpolated;                    /* a size the table has not measured */
    /* Other ways to run this stage (devices, splits) that leave the plan's
     * cycle as it is: 0, this stage's choice matters; > 0, the stage is
     * free, and the plans that differ from this one only in free stages
     * were collapsed into it. */
    int free_options;
    int collapsed; /* plans of this cycle that differ from this one here were folded into it */
    /* Each device's slowdown from running beside the plan's other stages on
     * devices that share its hardware (sweep --co-run; 1: none), already in
     * device_ns and time_ns. */
    double slowdown[PP_PLAN_MAX_DP];
    double sd_ns[PP_PLAN_MAX_DP]; /* each device's spread of wall from run to run (the
                                   * table's quartiles), for pp_plan_costs */
    double busy_ns[PP_PLAN_MAX_DP]; /* of each device's wall, its hardware time (the wall
                                     * where the table has none): what other stages on the
                                     * device wait for */
    /* "" or why a table cell this stage's time rests on is unstable
     * (docs/sweep.md, "Unstable cells"): "NPU: CV 0.41 above 0.25" */
    char unstable[96];
} pp_plan_stage;

typedef struct pp_plan {
    int nstages;
    pp_plan_stage stages[PP_PIPELINE_MAX_STAGES];
    int64_t cycle_ns;      /* estimated mean cycle latency: each batch waits for the
                            * slowest of its stages, so run-to-run spread (the
                            * sweep's quartiles) adds to the largest mean */
    int64_t mean_cycle_ns; /* the cycle of mean stage times alone, <= cycle_ns: plans
                            * of equal mean cycle held by the same bottleneck fold */
    int64_t work_ns;       /* sum of the stage times: ranks plans of equal cycle */
    double throughput;     /* 1e9 / cycle_ns batches per second */
    int bottleneck_stage;  /* the stage whose time is the cycle (upstream on ties), or -1 */
    char bottleneck_device[64]; /* or the device whose summed stage times are (or
                                 * PP_PLAN_HOST_CORES), else "" */
    int extrapolated;      /* some stage relies on extrapolation */
    int uncalibrated_sharing; /* it puts stages on devices that share hardware (or two
                               * stages on one device of the host's cores), and the
                               * table has no co-run of them: estimated as independent */
} pp_plan;

/* What an exact search looked at: every plan is ranked or ruled out, the
 * ruled-out ones by a bound (a partial plan whose cycle already ranks
 * after the k-th best cannot get better as stages are added). */
typedef struct pp_plan_search_info {
    double plans;       /* the ways to map every stage: product of each stage's options */
    uint64_t evaluated; /* complete plans evaluated in full */
    uint64_t cut;       /* partial plans ruled out with everything below them */
} pp_plan_search_info;

typedef struct pp_plan_options {
    int top;                   /* best plans to return, >= 1 */
    int splits;                /* split ratios of a data-parallel pair: 1/(splits+1) .. */
    double copy_bytes_per_s;   /* host copy rate for partition/merge; 0: measure it */
    pp_plan_search_info *info; /* optional: filled by the search */
} pp_plan_options;

/* Defaults: top 5, 9 splits (0.1 .. 0.9), measured copy rate. */
void pp_plan_options_init(pp_plan_options *o);

/* Ranks the plans of pipeline `p` over the devices of lookup table `l`:
 * fills plans[0 .. *nplans) (room for o->top), best first, and the copy rate
 * used in *copy_bytes_per_s (may be NULL). A stage the table does not know
 * (by name, model and dims) is PP_EINVAL naming it. */
int pp_plan_search(const pp_lookup *l, const pp_pipeline *p, const pp_plan_options *o,
                   pp_plan *plans, size_t *nplans, double *copy_bytes_per_s, pp_error *err);

/* The plan as a description of the pipeline's costs (pipeprof/whatif.h),
 * the one the what-if simulation takes from a trace: per stage its
 * devices with their shares, each device's wall per batch drawn from 64
 * quantiles of a normal of the plan's mean (co-run slowdowns included) and
 * spread, partition and merge; one server a stage; the pipeline's queue
 * depth and requests (p may be NULL: depth 2, one request); devices run
 * one part at a time (`exclusive`: the times are isolated ones, so stages
 * on one device take turns in the simulation). It has no measurement: its
 * replay is not checked. Free it with pp_whatif_costs_free. */
struct pp_whatif_costs;
int pp_plan_costs(const pp_plan *plan, const pp_pipeline *p, struct pp_whatif_costs **out,
                  pp_error *err);

/* A copy of pipeline `p` with its stages mapped as `plan` says. */
int pp_plan_apply(const pp_pipeline *p, const pp_plan *plan, pp_pipeline **out, pp_error *err);

/* What a run of a pipeline measured, as `pipeprof analyze` computes it
 * over its measured batches (warm-up excluded). */
typedef struct pp_plan_measured {
    uint64_t batches;
    int64_t cycle_ns;                          /* mean cycle latency */
    int64_t stage_ns[PP_PIPELINE_MAX_STAGES];  /* mean stage time of stage i; -1 if none */
    double throughput_per_s;                   /* measured batches / |W| */
} pp_plan_measured;

/* Runs pipeline `p`, recorded at level 1, and analyzes the recording. */
int pp_plan_measure(pp_pipeline *p, pp_plan_measured *out, pp_error *err);

/* What `plan --verify` does: runs pipeline `p` mapped as `plan` says
 * (pp_plan_apply) and measures it (pp_plan_measure), over the pipeline's
 * batches or more: at least 250 ms of the plan's predicted cycles (at most
 * 100000 batches), since a mean over a few ms of short cycles measures a
 * loaded machine's preemptions more than the plan. out->batches says how
 * many were measured. */
int pp_plan_verify(const pp_pipeline *p, const pp_plan *plan, pp_plan_measured *out,
                   pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
