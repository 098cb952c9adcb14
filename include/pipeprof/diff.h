/* pipeprof/diff.h — two runs of a pipeline compared figure by figure, with
 * the noise of each figure judged, and gates for CI.
 *
 * A comparison has three steps (docs/diff.md):
 *
 *   1. pp_diff_summary_build() takes what a comparison needs from a report:
 *      the per-batch samples (cycle latency, end-to-end latency, each
 *      stage's time), the per-exec samples (each stage's wall on each
 *      device, each device's concurrency penalty, the top ops' durations)
 *      and the window figures (measured throughput, each device's busy
 *      time and bubbles). A summary can be saved (pp_diff_summary_save) and
 *      loaded (pp_diff_summary_load) instead of the trace: a baseline for
 *      CI, a few kilobytes to a few megabytes.
 *   2. pp_diff_compare() matches the two summaries (stages by name, devices
 *      by name or through a map, ops by device and name) and computes for
 *      every figure the base and new values, the absolute and relative
 *      change, a bootstrap interval of the relative change and whether the
 *      change is significant, then the findings in plain words.
 *   3. pp_diff_write_text / _json print it; pp_gate_* judges rules such as
 *      "throughput>=-5%" against it and writes JUnit XML.
 *
 * Significance (docs/diff.md, "Significance"): each sample pair is tested
 * once with the Mann-Whitney rank test; Holm's method corrects those
 * p-values over every sample pair of the comparison at a family-wise 5%. A
 * figure is significant when its sample pair's test is rejected after the
 * correction AND the 95% bootstrap interval of its own relative change
 * excludes zero AND the change is at least min_change (1%): on a shared
 * machine two runs of one configuration really do differ by fractions of
 * a percent, which many batches make detectable but nobody should act on. Window figures (one value per run) have no sample: they
 * are listed, never tested, never findings. Every result is deterministic
 * (seeded bootstrap, stats/stats.h).
 *
 * Functions return 0 or a negative PP_E* code; messages go to the optional
 * pp_error. */
#ifndef PIPEPROF_DIFF_H
#define PIPEPROF_DIFF_H

#include <stdio.h>

#include "pipeprof/analyze.h"
#include "pipeprof/common.h"
#include "pipeprof/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_diff_summary pp_diff_summary;
typedef struct pp_diff pp_diff;

/* What a sample or a figure is of. */
typedef enum pp_diff_kind {
    PP_DIFF_THROUGHPUT = 0, /* 1 / mean cycle latency (the bound), batches/s */
    PP_DIFF_CYCLE,          /* cycle latency per batch */
    PP_DIFF_E2E,            /* end-to-end latency per batch */
    PP_DIFF_STAGE,          /* stage time per batch */
    PP_DIFF_EXEC,           /* a stage's wall per exec on one device */
    PP_DIFF_PENALTY,        /* a device's concurrency penalty per exec */
    PP_DIFF_OP,             /* an op's duration per occurrence on one device */
    PP_DIFF_MEASURED,       /* window: completed batches / |W| */
    PP_DIFF_BUSY,           /* window: a device's busy time / |W| */
    PP_DIFF_BUBBLES,        /* window: a device's bubble total / completed batch, ns */
    PP_DIFF_KINDS
} pp_diff_kind;

/* ---- summaries ------------------------------------------------------------ */

/* The summary of report `r`. `m` is the model r was built from (for the
 * per-exec and op samples; pp_report_build, not _owned), or NULL: then only
 * the per-batch samples and window figures are taken. PP_EINVAL for a
 * report without batches (nothing to compare); PP_ENOMEM. */
int pp_diff_summary_build(const pp_report *r, const pp_model *m, pp_diff_summary **out,
                          pp_error *err);
/* Writes the summary as JSON (docs/diff.md, "Baselines") to `path`,
 * atomically. PP_EIO when writing fails. */
int pp_diff_summary_save(const pp_diff_summary *s, const char *path, pp_error *err);
/* Reads a saved summary. PP_ENOTFOUND for a missing file, PP_EFORMAT (with
 * file, line and column, or the key) for a file that is not one. */
int pp_diff_summary_load(const char *path, pp_diff_summary **out, pp_error *err);
/* True when the file begins like a saved summary (`{"pipeprof_baseline"`,
 * whitespace allowed around the brace),
 * so a command can take a baseline where it takes a trace. */
int pp_diff_summary_is_file(const char *path);
/* The trace a summary was made from, as its report named it. */
const char *pp_diff_summary_source(const pp_diff_summary *s);
/* Accepts NULL. */
void pp_diff_summary_free(pp_diff_summary *s);

/* ---- comparing ------------------------------------------------------------ */

/* One device name of the base mapped to one of the new run
 * ("--map NPU=GPU"): its samples and figures are compared as one. */
typedef struct pp_diff_map {
    const char *base, *new_name;
} pp_diff_map;

typedef struct pp_diff_options {
    const pp_diff_map *map; /* NULL / 0: devices match by name */
    size_t nmap;
    double alpha;           /* family-wise error rate of Holm's correction; 0: 0.05 */
    unsigned reps;          /* bootstrap resamples; 0: 1000 */
    uint64_t seed;          /* 0: PP_STATS_SEED */
    double min_change;      /* smallest |relative change| that can be significant */
} pp_diff_options;

/* Zeroes *o, then min_change = 0.01 (1%). */
void pp_diff_options_init(pp_diff_options *o);

/* Which statistic of a sample a figure is. */
typedef enum pp_diff_stat {
    PP_DIFF_MEAN = 0,
    PP_DIFF_P50,
    PP_DIFF_P95,
    PP_DIFF_VALUE           /* throughput and window figures */
} pp_diff_stat;

/* One figure of both runs. Times are ns, throughput batches/s, busy a
 * fraction of W. `rel` = new / base - 1 (NaN when base is 0); `ci` its 95%
 * bootstrap interval (NaN for untested figures). `p` is the rank test's
 * p-value of the figure's sample pair before correction, `tested` 0 for
 * window figures and for samples of fewer than 2 values on a side. */
typedef struct pp_diff_figure {
    const char *key;        /* "stage:Embedding.p95", the name gate rules use */
    const char *label;      /* "Embedding time p95", for people */
    pp_diff_kind kind;
    pp_diff_stat stat;
    const char *stage, *device, *op; /* NULL where not part of the key; device: base name */
    int higher_is_better;   /* throughput: a drop is the regression */
    double base, new_value, abs, rel;
    double ci_lo, ci_hi;    /* of rel */
    uint64_t n_base, n_new; /* sample sizes */
    int tested;
    double p;
    int significant;
    int only_in;            /* 0 both, 1 base only ("gone"), 2 new only ("new") */
} pp_diff_figure;

/* Compares two summaries. PP_EINVAL with a message when they share no
 * stage (different pipelines or different labeling: the message lists
 * both sides' stages). */
int pp_diff_compare(const pp_diff_summary *base, const pp_diff_summary *new_run,
                    const pp_diff_options *o, pp_diff **out, pp_error *err);
void pp_diff_free(pp_diff *d);

/* Every figure: throughput first, then cycle, end-to-end, stages in the
 * base's order, execs, devices, ops. */
const pp_diff_figure *pp_diff_figures(const pp_diff *d, size_t *n);
/* The figure of `key`, or NULL. */
const pp_diff_figure *pp_diff_find(const pp_diff *d, const char *key);
/* Plain statements of the significant changes, largest first, then the
 * bottleneck shift when the bottleneck moved. */
const char *const *pp_diff_findings(const pp_diff *d, size_t *n);
/* The stage that was the bottleneck of most cycles in each run, and in how
 * many of how many cycles; NULL when a run has none. */
typedef struct pp_diff_bottleneck {
    const char *stage;
    uint64_t cycles, of;
} pp_diff_bottleneck;
void pp_diff_bottlenecks(const pp_diff *d, pp_diff_bottleneck *base, pp_diff_bottleneck *new_run);

/* Text (findings first, then the within-noise changes, then every figure)
 * and JSON (docs/diff.md, "JSON"). PP_EIO when writing fails. */
int pp_diff_write_text(const pp_diff *d, FILE *out);
int pp_diff_write_json(const pp_diff *d, FILE *out);
/* The same JSON in memory; free with pp_report_json_free. */
int pp_diff_json(const pp_diff *d, char **out, size_t *len);
/* One self-contained HTML page at `path`, written atomically (docs/diff.md,
 * "HTML"): the findings, each per-batch distribution (cycle, end-to-end,
 * each stage) of the two runs overlaid, and the figures with significant
 * changes highlighted. PP_EIO when writing fails (no file is left). */
int pp_diff_write_html(const pp_diff *d, const char *path, pp_error *err);

/* ---- gates ---------------------------------------------------------------- */

/* A rule "KEY OP LIMIT%": OP is >= or <=, LIMIT a signed percentage of the
 * relative change ("throughput>=-5%", "stage:Embedding.p95<=+10%"). A KEY
 * without a statistic means its mean ("e2e" = "e2e.mean"). */
typedef struct pp_gate_rule {
    char *text;             /* as written */
    char *key;              /* the figure's key */
    int at_least;           /* 1: >=, 0: <= */
    double limit;           /* a fraction: -5% = -0.05 */
} pp_gate_rule;

/* Parses one rule; PP_EINVAL with a message naming the rule. Free with
 * pp_gate_rule_clear. */
int pp_gate_rule_parse(const char *text, pp_gate_rule *out, pp_error *err);
void pp_gate_rule_clear(pp_gate_rule *r);

typedef enum pp_gate_verdict {
    PP_GATE_PASS = 0,       /* within the limit */
    PP_GATE_NOISE,          /* beyond the limit but not significant: passes */
    PP_GATE_FAIL            /* beyond the limit and significant */
} pp_gate_verdict;

typedef struct pp_gate_result {
    const pp_gate_rule *rule;
    const pp_diff_figure *figure;
    pp_gate_verdict verdict;
    char message[256];      /* "throughput -12.4% (-14.0..-10.9%), p = 3e-09: beyond the
                             * limit (>= -5%) and significant" */
} pp_gate_result;

/* Judges a rule. PP_ENOTFOUND naming the key (and the keys that exist of
 * its kind) when the diff has no such figure, PP_EINVAL for an untested
 * (window) figure, which can never be judged significant. */
int pp_gate_check(const pp_diff *d, const pp_gate_rule *rule, pp_gate_result *out,
                  pp_error *err);
/* JUnit XML of the results: one test suite "pipeprof gate", one test case
 * per rule, a <failure> for each PP_GATE_FAIL. */
int pp_gate_write_junit(const pp_gate_result *res, size_t n, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
