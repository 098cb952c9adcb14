/* pipeprof/whatif.h — a pipeline model built from a trace, its
 * discrete-event simulation, and predictions of what a change would do
 * (docs/whatif.md).
 *
 * Three steps:
 *   1. pp_whatif_costs_from_report() describes the pipeline's costs as the
 *      analysis sees them: the stages in order; per stage its servers (the
 *      batches it can work on at once: one host thread in pipeprof's
 *      runtime), its parts (one device, or a data-parallel stage's devices
 *      with their shares) with one measured wall per batch each, its
 *      partition, merge and the rest of its server's time per batch; the
 *      hand-off delay into it; the bounded queue between stages; which
 *      devices several stages share. Everything it had to infer is flagged,
 *      and what it could not infer is listed in `notes`. A plan from a
 *      sweep's lookup table gives the same description (pp_plan_costs,
 *      pipeprof/sweep.h), so traces and plans share one engine.
 *   2. pp_whatif_predict() simulates the unchanged model first (the
 *      replay) and compares it with what was measured; then simulates each
 *      scenario (a list of pp_whatif_change) with the same seeds. Service
 *      times are the trace's own per-batch measurements (never a mean),
 *      resampled as blocks of consecutive measured batches, each batch with
 *      every stage's times it had: their spread, the correlation of a
 *      batch's parts and stalls that hit all stages at once carry into
 *      every prediction.
 *   3. pp_whatif_causal() is the causal profile: for every stage and device,
 *      the throughput gained if it were 1.1x, 1.25x, 1.5x and 2x faster.
 *
 * The simulation is deterministic for a seed (pp_whatif_options.seed); N
 * seeds give each figure as a mean with the 2.5% and 97.5% quantiles of
 * the seeds' values. Times are nanoseconds (doubles in results), rates per
 * second. Functions return 0 or a negative PP_E* code and fill the optional
 * pp_error; nothing here prints except the renderers (pp_whatif_write_*,
 * pp_whatif_run), to the FILE* they are given. */
#ifndef PIPEPROF_WHATIF_H
#define PIPEPROF_WHATIF_H

#include <stdio.h>

#include "pipeprof/analyze.h"
#include "pipeprof/common.h"
#include "pipeprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_WHATIF_MAX_STAGES 64
#define PP_WHATIF_MAX_DEVICES 64
#define PP_WHATIF_MAX_PARTS 8            /* devices of one data-parallel stage */
#define PP_WHATIF_REPLAY_THRESHOLD 0.10  /* a replay further off in throughput refuses */

/* ---- the description of a pipeline's costs ---------------------------- */

/* One part of a stage: the work of one device for each batch. */
typedef struct pp_whatif_part {
    char *device;          /* the report's device name, "(simulated)" added for a
                            * simulated one: "CPU", "NPU (simulated)", "CPU (host)";
                            * changes may name it without the suffix */
    double share;          /* its share of the stage's work (1 for a stage's only part):
                            * the recorded split, else an even one */
    int64_t *wall_ns;      /* per row of the stage: first start to last end of its
                            * execs in that batch; -1 where it took no part */
    /* The wall of a row in three: fixed_ns (the mean submit + completion
     * time of its execs, which does not grow with the work), work_ns (the
     * device's time for the work: its execs' hw_ns, run ceil(requests /
     * units) at a time; the rest of the wall where hw_ns is unknown) and
     * the rest, waiting for hardware that other stages hold. A new share or
     * request count scales work_ns; a speed-up fixed_ns and work_ns; other
     * stages' work on a shared device the wait. */
    int64_t *fixed_ns, *work_ns;
    uint32_t requests;     /* its execs per batch (request slots sharing the work) */
} pp_whatif_part;

/* One stage. Rows are its measured batches, in batch order: the unit the
 * simulation resamples, so a batch's partition, parts and merge stay
 * together. */
typedef struct pp_whatif_stage {
    char *name;
    int data_parallel;     /* its batches ran on several parts */
    int host;              /* host work: no device execs (its part is "CPU (host)") */
    uint32_t servers;      /* batches it works on at once (>= 1) */
    int servers_inferred;  /* 1: the most of its batches seen overlapping, not recorded */
    size_t nrows;
    int64_t *partition_ns, *merge_ns; /* per row; 0 where there was none */
    int64_t *overhead_ns;  /* per row: its server's time beyond partition + slowest
                            * part + merge (dispatch, wake-ups: the stage span's rest) */
    size_t nparts;
    pp_whatif_part *parts;
    /* Dispatch delay per row (nhandoff = nrows): from the later of "the
     * upstream stage finished the batch" and "this stage finished the
     * previous one" to its start (0 where that is negative: the batch was
     * taken by another server). The rest of the gap between stages is
     * waiting, which the simulation produces itself. */
    int64_t *handoff_ns;
    size_t nhandoff;
    /* A later stage (+1; 0: none) that one thread runs with this one, its
     * previous batch's end before this stage's next start in every pair of
     * consecutive batches (a serial loop: GraphPrep waits for the previous
     * batch's Classifier): the simulation starts this stage's batch b no
     * earlier than that stage's end of b - 1, and the hand-off is measured
     * from it. Inferred, only from a pattern-labeled trace's instances
     * (their tracks); a labeled trace's stages have 0. */
    uint32_t waits_for;
} pp_whatif_stage;

/* A device that several stages use: their work contends for it. The
 * measured walls carry the contention at the measured load; when a change
 * moves the others' work on it, each part's wait (its wall beyond fixed +
 * work) scales with that work, to first order (docs/whatif.md). */
typedef struct pp_whatif_group {
    char *device;
    uint32_t nstages;
    uint32_t stages[PP_WHATIF_MAX_STAGES];
} pp_whatif_group;

/* Figures of one run, measured or simulated, as the report defines them
 * (docs/architecture.md §4), but for throughput = batches / time from the
 * batches' first start to their last end (the window's idle before and
 * after them left out; a model without per-batch times takes the report's
 * batches / |W|); cycle = max stage time of a batch; end-to-end =
 * its last end - first start. busy[d] is the share of that time device d
 * (pp_whatif_costs.devices) was busy; bottleneck[s] the share of batches
 * whose cycle stage s set. */
typedef struct pp_whatif_figures {
    double throughput_per_s;
    double cycle_mean_ns, cycle_p95_ns;
    double e2e_p50_ns, e2e_p95_ns;
    double busy[PP_WHATIF_MAX_DEVICES];
    double bottleneck[PP_WHATIF_MAX_STAGES];
} pp_whatif_figures;

typedef struct pp_whatif_costs {
    size_t nstages;
    pp_whatif_stage *stages;
    size_t ndevices;
    char **devices;        /* every device a part names */
    uint32_t *units;       /* per device: the most of its execs seen computing at once
                            * (inferred; what extra requests can run beside each other) */
    uint32_t queue_depth;  /* batches that may wait between two stages */
    int queue_depth_inferred; /* 1: the most batches seen waiting (a lower bound) */
    int timed;             /* 1: per-batch start times known (hand-off, servers, queue):
                            * from the labeled spans, or for stages labeled by patterns
                            * only from the report's stage instances (a note says so);
                            * 0: stage times alone (a stage with no instance on a
                            * device's track) */
    int exclusive;         /* 1: a device runs one part at a time, whatever the stage
                            * (isolated times: a plan's, pp_plan_costs); 0: each wall
                            * already holds its wait for the device (a trace's) */
    size_t ngroups;
    pp_whatif_group *groups;
    uint64_t batches;      /* the measured batches the simulation runs */
    pp_whatif_figures measured; /* the report's figures, to compare the replay with */
    size_t nnotes;
    char **notes;          /* what the model could not infer, in plain words */
} pp_whatif_costs;

/* Builds the description from report `r` and the model `m` it was built
 * from (pp_report_build, not _owned: the model is read again for each
 * batch's start and end). PP_EINVAL when the report has no complete batch
 * or more stages / devices than the PP_WHATIF_MAX_* bounds. */
int pp_whatif_costs_from_report(const pp_report *r, const pp_model *m, pp_whatif_costs **out,
                                pp_error *err);
/* Accepts NULL. */
void pp_whatif_costs_free(pp_whatif_costs *c);
/* For a description built by hand (all of its memory malloc'd, as
 * pp_whatif_costs_free frees it): finds the devices several stages share
 * (groups) from the parts. 0 or PP_ENOMEM. */
int pp_whatif_costs_complete(pp_whatif_costs *c);

/* ---- changes ---------------------------------------------------------- */

typedef enum pp_whatif_kind {
    PP_WHATIF_SPEEDUP = 0,     /* stage (or stage@device: one part) `factor` x faster */
    PP_WHATIF_SPLIT = 1,       /* a data-parallel stage's shares set to `shares` */
    PP_WHATIF_REQUESTS = 2,    /* `count` batches in flight at once on `device` */
    PP_WHATIF_QUEUE_DEPTH = 3, /* `count` batches may wait between two stages */
    PP_WHATIF_MOVE = 4         /* stage runs on `device` alone, its wall per batch
                                * drawn from `samples` (a sweep's lookup table) */
} pp_whatif_kind;

typedef struct pp_whatif_change {
    pp_whatif_kind kind;
    char stage[64];            /* SPEEDUP, SPLIT, MOVE */
    char device[64];           /* SPEEDUP ("" = the whole stage), REQUESTS, MOVE */
    double factor;             /* SPEEDUP: > 0; 2 halves the time */
    size_t nshares;            /* SPLIT: devices[i] gets shares[i] of the work */
    char share_devices[PP_WHATIF_MAX_PARTS][64];
    double shares[PP_WHATIF_MAX_PARTS];
    uint32_t count;            /* REQUESTS, QUEUE_DEPTH: >= 1 */
    int64_t *samples;          /* MOVE: owned, freed by pp_whatif_change_clear */
    size_t nsamples;
} pp_whatif_change;

/* Parses a change as the CLI spells it: kind "speedup" ("STAGE=F",
 * "STAGE@DEVICE=F"), "split" ("STAGE=DEV:SHARE,DEV:SHARE"), "requests"
 * ("DEVICE=N"), "queue-depth" ("N"); "move" ("STAGE=DEVICE") needs its
 * samples set after (pp_whatif_change_move_samples). PP_EINVAL with the
 * problem named in err. */
int pp_whatif_change_parse(const char *kind, const char *text, pp_whatif_change *out,
                           pp_error *err);
/* MOVE: samples drawn from a time of mean `mean_ns` and spread `sd_ns`
 * (the sweep's figures), as the 64 quantiles of a normal distribution at
 * (i + 0.5) / 64, never below min_ns (0: no bound). */
int pp_whatif_change_move_samples(pp_whatif_change *c, double mean_ns, double sd_ns,
                                  double min_ns);
/* Frees what a change owns. Accepts NULL. */
void pp_whatif_change_clear(pp_whatif_change *c);
/* "Embedding@NPU 2x faster", into buf. */
void pp_whatif_change_describe(const pp_whatif_change *c, char *buf, size_t len);

/* ---- prediction ------------------------------------------------------- */

typedef struct pp_whatif_options {
    uint64_t seed;             /* default PP_WHATIF_SEED */
    unsigned seeds;            /* simulations per figure; 0 (default): enough for
                                * 20,000 simulated batches, 20 to 1000 */
    uint64_t batches;          /* batches a simulation runs; 0: the measured count */
    double threshold;          /* replay refusal bound on |throughput error|, default 0.10 */
} pp_whatif_options;

#define PP_WHATIF_SEED 0x5eed5eed5eedull
void pp_whatif_options_init(pp_whatif_options *o);

/* A simulated figure over the seeds: their mean (for a throughput, the
 * batches over the mean time: a harmonic mean) and the 2.5% and 97.5%
 * quantiles of the seeds' values (interpolated). */
typedef struct pp_whatif_estimate {
    double mean, lo, hi;
} pp_whatif_estimate;

typedef struct pp_whatif_result {
    pp_whatif_estimate throughput_per_s;
    pp_whatif_estimate cycle_mean_ns, cycle_p95_ns, e2e_p50_ns, e2e_p95_ns;
    double busy[PP_WHATIF_MAX_DEVICES];         /* means over the seeds */
    double bottleneck[PP_WHATIF_MAX_STAGES];
} pp_whatif_result;

/* The unchanged model against the measurement. error = replayed / measured
 * throughput - 1 (cycle_error likewise for the mean cycle). refused = 1
 * when |error| exceeds the threshold: no prediction is made, and `reason`
 * says what the model could not explain. A description without a
 * measurement (measured throughput 0: a plan's) is not checked: error is
 * NaN, refused 0, and `reason` says so. */
typedef struct pp_whatif_replay {
    pp_whatif_result replayed;
    double error, cycle_error;
    int refused;
    char reason[512];
} pp_whatif_replay;

/* One scenario's prediction: the changes' result and its change of
 * throughput against the replay (same seeds: common random numbers, so the
 * difference is the change's, not noise's). */
typedef struct pp_whatif_scenario {
    pp_whatif_result result;
    pp_whatif_estimate gain;   /* predicted / replayed throughput - 1 */
} pp_whatif_scenario;

/* Simulates the replay and then, unless it is refused, every scenario
 * (scenarios[i] is the list changes[i][0 .. nchanges[i])) into out[i].
 * A change naming a stage or device the model does not have is PP_EINVAL
 * naming it and those it has. A refused replay returns 0 with
 * replay->refused set and out untouched. */
int pp_whatif_predict(const pp_whatif_costs *c, const pp_whatif_change *const *changes,
                      const size_t *nchanges, size_t nscenarios, const pp_whatif_options *o,
                      pp_whatif_replay *replay, pp_whatif_scenario *out, pp_error *err);

/* One simulation of `c` with `changes` and one seed: its figures. For the
 * bench and tests of the engine; pp_whatif_predict runs many. */
int pp_whatif_simulate(const pp_whatif_costs *c, const pp_whatif_change *changes,
                       size_t nchanges, uint64_t seed, uint64_t batches,
                       pp_whatif_figures *out, pp_error *err);

/* ---- the causal profile ----------------------------------------------- */

#define PP_WHATIF_CAUSAL_STEPS 4
/* The speed-ups of the profile: 1.1x, 1.25x, 1.5x and 2x (time / factor). */
extern const double pp_whatif_causal_factors[PP_WHATIF_CAUSAL_STEPS];

typedef struct pp_whatif_causal_row {
    int is_device;             /* 0: a stage, 1: a device (every part on it) */
    const char *name;          /* the costs' string */
    pp_whatif_estimate gain[PP_WHATIF_CAUSAL_STEPS]; /* throughput change (0.19 = +19%) */
} pp_whatif_causal_row;

/* One row per stage, then one per device: *rows (room for nstages +
 * ndevices) filled, *n set. Uses o's seeds. */
int pp_whatif_causal(const pp_whatif_costs *c, const pp_whatif_options *o,
                     pp_whatif_causal_row *rows, size_t *n, pp_error *err);

/* ---- output ----------------------------------------------------------- */

/* Measured, replayed and predicted side by side; the causal profile when
 * rows is not NULL. Text fits 80 columns. PP_EIO when writing fails. */
int pp_whatif_write_text(const pp_whatif_costs *c, const pp_whatif_replay *replay,
                         const pp_whatif_change *const *changes, const size_t *nchanges,
                         const pp_whatif_scenario *sc, size_t nscenarios,
                         const pp_whatif_causal_row *rows, size_t nrows, FILE *out);
/* The same as JSON (docs/whatif.md): {"model": ..., "measured": ...,
 * "replay": {"throughput_per_s", "error", "refused", "reason", ...},
 * "scenarios": [{"changes": [...], "throughput_per_s": {"mean", "lo",
 * "hi"}, "cycle_ns": {...}, "e2e_ns": {"p50", "p95"}, ...}], "causal": [...]}. */
int pp_whatif_write_json(const pp_whatif_costs *c, const pp_whatif_replay *replay,
                         const pp_whatif_change *const *changes, const size_t *nchanges,
                         const pp_whatif_scenario *sc, size_t nscenarios,
                         const pp_whatif_causal_row *rows, size_t nrows, FILE *out);

/* ---- advice ------------------------------------------------------------- */

/* Fills the predicted effect of every finding of r that advises an action
 * (pp_finding.action: a re-split, requests in flight, a speed-up) from the
 * model of r and the model m it was built from (pp_report_build, as for
 * pp_whatif_costs_from_report; a report that gives no model refuses every
 * action with the reason): one replay, then each action as a
 * scenario of its own; an action the model cannot take (a move without a
 * lookup table, a split of one device's threads) and every action of a
 * model whose replay is refused get state REFUSED with the reason. The
 * report then renders advice whose predicted gain's interval reaches 0 as
 * withdrawn. Appends a PP_FINDING_WORTH_OPTIMIZING finding: the causal
 * profile's best stage at 1.25x, or, when nothing could be predicted, why. `pipeprof
 * analyze` and `report` call it; docs/whatif.md, "Advice". */
int pp_whatif_advise(pp_report *r, const pp_model *m, const pp_whatif_options *o,
                     pp_error *err);

/* ---- all of it ---------------------------------------------------------- */

/* What `pipeprof whatif` does after parsing: the replay; each change a
 * scenario of its own, or all of them one when `combine`; the causal
 * profile when `causal` (and the replay is not refused); written as text
 * or, with `json`, as JSON to `out`. PP_EINVAL naming a change the model
 * cannot take, PP_EIO when writing fails. */
int pp_whatif_run(const pp_whatif_costs *c, const pp_whatif_change *changes, size_t n,
                  int combine, int causal, const pp_whatif_options *o, int json, FILE *out,
                  pp_error *err);

/* The same JSON in memory, for bindings (the Python package's
 * pipeprof.whatif): the model of report r (built by pp_report_build from
 * m), changes spelled as the CLI spells them (kinds[i] "speedup", "split",
 * "requests" or "queue-depth", texts[i] its value; a move needs samples
 * and is PP_EINVAL here). *out (NUL-terminated, *len bytes; len may be
 * NULL) is freed with pp_whatif_json_free. */
int pp_whatif_json(const pp_report *r, const pp_model *m, const char *const *kinds,
                   const char *const *texts, size_t n, int combine, int causal,
                   const pp_whatif_options *o, char **out, size_t *len, pp_error *err);
/* Accepts NULL. */
void pp_whatif_json_free(char *json);

#ifdef __cplusplus
}
#endif
#endif
