/* diff_impl.h — what the files of the diff layer share: the summary of one
 * run (its samples and window figures) and the comparison of two.
 *
 * A summary owns every string and array it holds, so a summary loaded from
 * a baseline file and one taken from a report are the same thing. */
#ifndef PP_DIFF_IMPL_H
#define PP_DIFF_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof/diff.h"

/* One sample: per-batch or per-exec values of one kind, in ns. The strings
 * that are not part of the kind's key are NULL. */
typedef struct diff_sample {
    pp_diff_kind kind;
    char *stage, *device, *op;
    double *v;
    size_t n;
} diff_sample;

/* One window figure (PP_DIFF_MEASURED, _BUSY, _BUBBLES): one value a run. */
typedef struct diff_value {
    pp_diff_kind kind;
    char *device;
    double value;
} diff_value;

/* A stage in the order of the run, and the cycles it was the bottleneck of. */
typedef struct diff_stage {
    char *name;
    uint64_t bottleneck;
} diff_stage;

struct pp_diff_summary {
    char *source;
    uint64_t cycles;         /* batches with a cycle latency */
    diff_stage *stages;
    size_t nstages;
    diff_sample *samples;
    size_t nsamples, capsamples;
    diff_value *values;
    size_t nvalues, capvalues;
};

/* Allocates an empty summary named after `source`; NULL on no memory. */
pp_diff_summary *diff_summary_new(const char *source);
/* Appends a sample (copies the strings; takes `v`, malloc'd, even on
 * failure) and a window value. PP_ENOMEM. */
int diff_summary_add_sample(pp_diff_summary *s, pp_diff_kind kind, const char *stage,
                            const char *device, const char *op, double *v, size_t n);
int diff_summary_add_value(pp_diff_summary *s, pp_diff_kind kind, const char *device,
                           double value);
int diff_summary_add_stage(pp_diff_summary *s, const char *name, uint64_t bottleneck);

/* The name of a kind in keys and files ("stage", "exec", ...), and back
 * (PP_DIFF_KINDS when unknown). */
const char *diff_kind_name(pp_diff_kind k);
pp_diff_kind diff_kind_from_name(const char *name);

/* strdup that accepts NULL (and gives NULL). Sets *failed on no memory. */
char *diff_strdup(const char *s, int *failed);

/* A per-batch sample pair kept for the HTML page's overlaid distributions. */
typedef struct diff_dist {
    const char *title;       /* "cycle", "end-to-end", "Embedding time" */
    double *v[2];            /* base, new (owned) */
    size_t n[2];
} diff_dist;

struct pp_diff {
    pp_diff_figure *figures;
    size_t nfigures;
    char **strings;          /* keys, labels and names the figures point into */
    size_t nstrings, capstrings;
    char **findings;
    size_t nfindings;
    char **noise;            /* beyond 1% but not significant: "within noise" lines */
    size_t nnoise;
    pp_diff_bottleneck bottleneck[2];
    const char *source[2];
    size_t ntests;           /* sample pairs tested (Holm's family) */
    double alpha;
    double min_change;
    diff_dist *dists;
    size_t ndists;
};

/* Keeps a copy of `s` for the diff's lifetime; NULL on no memory. */
const char *diff_keep(pp_diff *d, const char *s);
/* A figure's value for people: "1.234 ms", "812.5/s", "41.2%". */
void diff_format_value(const pp_diff_figure *f, double v, char *buf, size_t cap);
/* A relative change and its interval: "+10.2% (+8.1..+12.3%)". */
void diff_format_change(const pp_diff_figure *f, char *buf, size_t cap);
/* Writes the findings and noise lines of a compared diff (findings.c). */
int diff_findings_build(pp_diff *d);

#endif
