/* label.c — which spans are stage instances, partitions, merges and batch
 * spans, and the labels of execs that have none (docs/architecture.md §4,
 * "Host stage spans and foreign traces"; docs/analysis.md).
 *
 * Two sources:
 *   - a span's own fields: pipeprof's partition, merge and stage spans, and
 *     any span whose args name a stage and a batch (prof.span(stage=,
 *     batch=), the C API's stage spans);
 *   - the user's name patterns: --batch-pattern / --stage-pattern capture a
 *     stage and a batch from a name; a batch may instead come from the
 *     span's own batch_id (or batch) arg, or from an enclosing span
 *     (ProfilerStep#N) and apply to everything nested in it
 *     and launched from it; names matching --partition-pattern and
 *     --merge-pattern (default: beginning "Partition" / "Merge") take those
 *     roles for the data-parallel stage they bracket.
 *
 * The spans a pattern matches are sorted by (track, start, longest first),
 * so that with proper nesting each one's parent is the innermost earlier
 * span that still encloses it; labels are inherited down that tree. An exec
 * without a stage or batch takes them from the innermost labeled span
 * around its launch (the host event with the same args.correlation), else
 * around itself on its own track (a GPU-side annotation on its stream). */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* What the patterns say of one model string. */
typedef struct name_label {
    uint8_t matched, partition, merge;
    uint8_t by_batch, by_stage; /* which of the two patterns matched it */
    an_capture cap;
} name_label;

/* A span a pattern matched. stage_from is the index (in the sorted array)
 * of the span that gives its stage (itself or an ancestor), SIZE_MAX for
 * none; batch likewise inherited. */
typedef struct label_span {
    int64_t start, end, batch;
    int64_t own_batch; /* the span's own batch_id arg, -1 = none */
    size_t event, parent, stage_from;
    uint32_t track, name;
} label_span;

typedef struct corr {
    int64_t id;
    size_t event;
} corr;

typedef struct patterns {
    an_pattern batch, stage, partition, merge;
    int any;
} patterns;

static void patterns_free(patterns *p) {
    an_pattern_free(&p->batch), an_pattern_free(&p->stage);
    an_pattern_free(&p->partition), an_pattern_free(&p->merge);
}

static int patterns_compile(patterns *p, const pp_analyze_options *o, pp_error *err) {
    memset(p, 0, sizeof *p);
    p->any = o->batch_pattern || o->stage_pattern;
    if (!p->any)
        return PP_OK;
    int rc = PP_OK;
    if (o->batch_pattern)
        rc = an_pattern_compile(&p->batch, 'b', "--batch-pattern", o->batch_pattern, err);
    if (rc == PP_OK && o->stage_pattern)
        rc = an_pattern_compile(&p->stage, 's', "--stage-pattern", o->stage_pattern, err);
    if (rc == PP_OK)
        rc = an_pattern_compile(&p->partition, 'r', "--partition-pattern",
                                o->partition_pattern ? o->partition_pattern : "^Partition", err);
    if (rc == PP_OK)
        rc = an_pattern_compile(&p->merge, 'r', "--merge-pattern",
                                o->merge_pattern ? o->merge_pattern : "^Merge", err);
    if (rc != PP_OK)
        patterns_free(p);
    return rc;
}

/* Matches every distinct string once: partition and merge first (their
 * batch only is used), then the batch pattern, then the stage pattern,
 * which may add a stage to a batch pattern's batch-only match. */
static void match_names(const pp_model *m, const patterns *p, name_label *nl) {
    size_t nstr = pp_model_string_count(m);
    for (uint32_t id = 1; id < nstr; id++) {
        const char *name = pp_model_string(m, id);
        name_label *l = &nl[id];
        an_capture c;
        memset(l, 0, sizeof *l);
        l->cap.batch = -1;
        if (an_pattern_match(&p->partition, name, &c) || an_pattern_match(&p->merge, name, &c)) {
            l->partition = an_pattern_match(&p->partition, name, &c);
            l->merge = !l->partition;
            an_capture b;
            if (an_pattern_match(&p->batch, name, &b) && b.batch >= 0)
                c.batch = b.batch;
            l->cap = (an_capture){0, 0, 0, c.batch};
            l->matched = 1;
            continue;
        }
        if (an_pattern_match(&p->batch, name, &c)) {
            l->cap = c;
            l->matched = l->by_batch = 1;
        }
        if (an_pattern_match(&p->stage, name, &c) && c.has_stage) {
            l->by_stage = 1;
            l->cap.has_stage = 1;
            l->cap.stage_at = c.stage_at;
            l->cap.stage_len = c.stage_len;
            if (l->cap.batch < 0)
                l->cap.batch = c.batch;
            l->matched = 1;
        }
    }
    nl[0].matched = 0;
}

static int cmp_label(const void *a, const void *b) {
    const label_span *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end); /* the enclosing one first */
}

static int cmp_corr(const void *a, const void *b) {
    const corr *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int candidate(const pp_report *r, size_t i, const name_label *nl) {
    const pp_cols *c = &r->c;
    return !an_bookkeeping(r, i) && c->kind[i] == PP_EV_SPAN && c->role[i] != PP_ROLE_EXEC && c->role[i] != PP_ROLE_OP &&
           nl[pp_cols_name(c, i)].matched && !an_labeled_by_fields(c, i) &&
           !an_bracket_by_fields(c, i);
}

/* Parents, inherited stages and batches, in one pass per track with a
 * stack of the spans still open. */
static void inherit(label_span *l, size_t n, const name_label *nl) {
    size_t top = SIZE_MAX; /* index of the innermost open span */
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && l[i].track != l[i - 1].track)
            top = SIZE_MAX;
        while (top != SIZE_MAX && l[top].end < l[i].end)
            top = l[top].parent; /* ended before, or not nested: not an ancestor */
        l[i].parent = top;
        const an_capture *c = &nl[l[i].name].cap;
        l[i].stage_from = c->has_stage ? i : top != SIZE_MAX ? l[top].stage_from : SIZE_MAX;
        /* the pattern's capture, else the span's own batch_id arg, else its parent's */
        l[i].batch = c->batch >= 0        ? c->batch
                     : l[i].own_batch >= 0 ? l[i].own_batch
                     : top != SIZE_MAX     ? l[top].batch
                                           : -1;
        top = i;
    }
}

/* The innermost span of l on `track` enclosing [s, e), or SIZE_MAX. Any
 * span enclosing it starts no later than the last one starting at or
 * before s, so with proper nesting it is that one or one of its ancestors. */
static size_t enclosing(const label_span *l, size_t n, uint32_t track, int64_t s, int64_t e) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].track < track || (l[mid].track == track && l[mid].start <= s))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || l[lo - 1].track != track)
        return SIZE_MAX;
    size_t k = lo - 1;
    while (k != SIZE_MAX && l[k].end < e)
        k = l[k].parent;
    return k;
}

/* The stage index the label span `from` gives (AN_NONE on no memory). */
static uint32_t stage_of_label(pp_report *r, const label_span *l, size_t from,
                               const name_label *nl) {
    const an_capture *c = &nl[l[from].name].cap;
    return an_stage_intern(r, pp_model_string(r->m, l[from].name) + c->stage_at, c->stage_len);
}

/* Execs lacking a stage or batch take the labels around their launch, else
 * around themselves on their own track. */
static int label_execs(pp_report *r, const label_span *l, size_t nl_, const name_label *nl,
                       corr *cs) {
    const pp_model *m = r->m;
    const pp_cols *c = &r->c;
    size_t nc = 0, nann;
    const pp_ann *a = pp_model_anns(m, &nann);
    uint32_t key = pp_model_find_string(m, "correlation");
    for (size_t k = 0; key != 0 && k < nann; k++)
        if (pp_ann_key(&a[k]) == key && pp_ann_type(&a[k]) == PP_VALUE_INT && c->role[a[k].event] != PP_ROLE_EXEC)
            cs[nc++] = (corr){a[k].v.i, a[k].event};
    qsort(cs, nc, sizeof *cs, cmp_corr);
    for (size_t i = 0; i < r->nexecs; i++) {
        an_exec *x = &r->execs[i];
        if (x->stage != AN_NONE && an_exec_batch(r, x) >= 0)
            continue;
        size_t hit = SIZE_MAX, first, n;
        pp_model_annotations_of(m, x->event, &first, &n);
        for (size_t k = first; key != 0 && k < first + n && hit == SIZE_MAX; k++) {
            if (pp_ann_key(&a[k]) != key || pp_ann_type(&a[k]) != PP_VALUE_INT)
                continue;
            corr want = {a[k].v.i, 0};
            const corr *launch = bsearch(&want, cs, nc, sizeof *cs, cmp_corr);
            if (launch) {
                size_t e = launch->event;
                hit = enclosing(l, nl_, pp_cols_track(c, e), pp_cols_ts(c, e), pp_cols_end(c, e));
            }
        }
        if (hit == SIZE_MAX)
            hit = enclosing(l, nl_, an_exec_track(r, x), an_start(r, x->event),
                            an_end(r, x->event));
        if (hit == SIZE_MAX)
            continue;
        if (x->stage == AN_NONE && l[hit].stage_from != SIZE_MAX &&
            (x->stage = stage_of_label(r, l, l[hit].stage_from, nl)) == AN_NONE)
            return PP_ENOMEM;
        if (an_exec_batch(r, x) < 0 && an_exec_batch_set(r, i, l[hit].batch) != PP_OK)
            return PP_ENOMEM;
    }
    return PP_OK;
}

static int host_add(pp_report *r, size_t *cap, const an_host *h) {
    if (r->nhost == *cap) {
        size_t grown = *cap ? 2 * *cap : 64;
        an_host *p = realloc(r->host, grown * sizeof *p);
        if (!p)
            return PP_ENOMEM;
        r->host = p;
        *cap = grown;
    }
    r->host[r->nhost++] = *h;
    return PP_OK;
}

/* The spans that label themselves: user and unlabeled roles count as stage
 * spans. an_execs_collect counted them: the table is made at its size. */
static int hosts_from_fields(pp_report *r, size_t *cap) {
    const pp_cols *c = &r->c;
    r->host = an_alloc(r->nfield_hosts, sizeof *r->host);
    if (!r->host)
        return PP_ENOMEM;
    *cap = r->nfield_hosts;
    for (size_t i = 0; i < c->count && r->nhost < *cap; i++) {
        if (an_bracket_by_fields(c, i)) { /* its stage: the one it brackets */
            r->host[r->nhost++] = an_host_make(pp_cols_batch(c, i), i, AN_NONE, c->role[i], 1);
            continue;
        }
        if (!an_labeled_by_fields(c, i))
            continue;
        uint8_t role = c->role[i] == PP_ROLE_PARTITION || c->role[i] == PP_ROLE_MERGE
                           ? c->role[i]
                           : PP_ROLE_STAGE;
        uint32_t s = an_stage_of_string(r, pp_cols_stage(c, i));
        if (s == AN_NONE)
            return PP_ENOMEM;
        r->host[r->nhost++] = an_host_make(pp_cols_batch(c, i), i, s, role, 0);
    }
    return PP_OK;
}

/* The spans the patterns label, with their inherited batch: stage spans,
 * partitions and merges (attributed to the stage around them, if any), and
 * batch spans. A span that ends up with no batch labels nothing. */
static int hosts_from_patterns(pp_report *r, size_t *cap, const label_span *l, size_t n,
                               const name_label *nl) {
    for (size_t i = 0; i < n; i++) {
        if (l[i].batch < 0)
            continue;
        const name_label *k = &nl[l[i].name];
        uint8_t role = k->partition ? PP_ROLE_PARTITION
                       : k->merge   ? PP_ROLE_MERGE
                       : k->cap.has_stage ? PP_ROLE_STAGE
                                          : PP_ROLE_NONE;
        uint32_t s = AN_NONE;
        if (role != PP_ROLE_NONE && l[i].stage_from != SIZE_MAX &&
            (s = stage_of_label(r, l, l[i].stage_from, nl)) == AN_NONE)
            return PP_ENOMEM;
        an_host h = an_host_make(l[i].batch, l[i].event, s, role, 1);
        if (host_add(r, cap, &h) != PP_OK)
            return PP_ENOMEM;
    }
    return PP_OK;
}

static int label_with_patterns(pp_report *r, const patterns *p, const pp_analyze_options *o,
                               size_t *cap) {
    const pp_model *m = r->m;
    const pp_cols *c = &r->c;
    size_t nstr = pp_model_string_count(m), nann, n = 0;
    pp_model_anns(m, &nann);
    name_label *nl = malloc((nstr ? nstr : 1) * sizeof *nl);
    if (!nl)
        return PP_ENOMEM;
    match_names(m, p, nl);
    for (size_t i = 0; i < c->count; i++)
        n += (size_t)candidate(r, i, nl);
    label_span *l = malloc((n ? n : 1) * sizeof *l);
    corr *cs = malloc((nann ? nann : 1) * sizeof *cs);
    int rc = l && cs ? PP_OK : PP_ENOMEM;
    for (size_t i = 0, k = 0; rc == PP_OK && i < c->count; i++)
        if (candidate(r, i, nl))
            l[k++] = (label_span){.start = pp_cols_ts(c, i), .end = pp_cols_end(c, i),
                                  .own_batch = pp_cols_batch(c, i), .event = i,
                                  .track = pp_cols_track(c, i), .name = pp_cols_name(c, i)};
    /* a pattern that matches no span gets the hint a trace without one
     * gets (hint.c): the user's guess at the names was wrong */
    int by_batch = 0, by_stage = 0;
    for (size_t k = 0; rc == PP_OK && k < n; k++)
        by_batch |= nl[l[k].name].by_batch, by_stage |= nl[l[k].name].by_stage;
    if (o->stage_pattern && !by_stage)
        r->unmatched = "--stage-pattern";
    else if (o->batch_pattern && !by_batch)
        r->unmatched = "--batch-pattern";
    if (rc == PP_OK) {
        qsort(l, n, sizeof *l, cmp_label);
        inherit(l, n, nl);
        rc = label_execs(r, l, n, nl, cs);
    }
    if (rc == PP_OK)
        rc = hosts_from_patterns(r, cap, l, n, nl);
    free(nl), free(l), free(cs);
    return rc;
}

int an_labels_collect(pp_report *r, const pp_analyze_options *o, pp_error *err) {
    patterns p;
    int rc = patterns_compile(&p, o, err);
    if (rc != PP_OK)
        return rc;
    size_t cap = 0;
    rc = hosts_from_fields(r, &cap);
    r->patterns = p.any;
    if (rc == PP_OK && p.any)
        rc = label_with_patterns(r, &p, o, &cap);
    patterns_free(&p);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
