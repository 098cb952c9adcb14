/* foreign.c — labeling the execs of a foreign trace with --batch-pattern.
 *
 * A PyTorch-profiler trace has GPU kernels without stage or batch; the user's
 * code marks them with annotations such as record_function("embed/batch7").
 * For an exec lacking a stage or a batch, the host event with the same
 * args.correlation (the launch) is found, and the innermost span enclosing it
 * on its thread whose name matches the pattern supplies the labels (capture 1
 * = stage, capture 2 = batch number); failing that, a span on the exec's own
 * track (a GPU-side annotation on the same stream) enclosing the exec. */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

typedef struct labeled {
    uint32_t track;
    int64_t start, end;
    uint32_t name; /* model string id of a matching name */
} labeled;

/* What the pattern captured from one matching name. */
typedef struct capture {
    int matched;
    size_t stage_at, stage_len;
    int64_t batch;
} capture;

typedef struct corr {
    int64_t id;
    size_t event;
} corr;

static int cmp_labeled(const void *a, const void *b) {
    const labeled *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

static int cmp_corr(const void *a, const void *b) {
    const corr *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The innermost labeled span on `track` enclosing [s, e), or NULL. Spans on
 * one track nest, so walking back from the last start <= s meets the
 * innermost enclosing one first. */
static const labeled *enclosing(const labeled *l, size_t n, uint32_t track, int64_t s, int64_t e) {
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first entry after (track, s) */
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].track < track || (l[mid].track == track && l[mid].start <= s))
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo > 0 && l[lo - 1].track == track) {
        lo--;
        if (l[lo].end >= e)
            return &l[lo];
    }
    return NULL;
}

/* Matches every distinct string once. Stages are interned only when an exec
 * takes the label, so matching names that label nothing add no stage. */
static void match_names(const pp_model *m, regex_t *re, capture *cap) {
    size_t nstr = pp_model_string_count(m);
    for (uint32_t id = 0; id < nstr; id++) {
        regmatch_t g[3];
        const char *name = pp_model_string(m, id);
        cap[id].matched = 0;
        if (id == 0 || regexec(re, name, 3, g, 0) != 0 || g[1].rm_so < 0 || g[2].rm_so < 0)
            continue;
        char *end;
        cap[id].batch = strtoll(name + g[2].rm_so, &end, 10);
        if (end == name + g[2].rm_so || end != name + g[2].rm_eo)
            continue; /* the batch capture is not a number */
        cap[id] = (capture){1, (size_t)g[1].rm_so, (size_t)(g[1].rm_eo - g[1].rm_so),
                            cap[id].batch};
    }
}

static int label_execs(pp_report *r, const capture *cap, labeled *l, corr *cs) {
    const pp_model *m = r->m;
    const pp_event_columns c = r->c;
    size_t nl = 0, nc = 0, nann;
    const pp_annotation *a = pp_model_annotations(m, &nann);
    uint32_t key = pp_model_find_string(m, "correlation");
    for (size_t i = 0; i < c.count; i++)
        if (c.kind[i] == PP_EV_SPAN && c.role[i] != PP_ROLE_EXEC && cap[c.name[i]].matched)
            l[nl++] = (labeled){c.track[i], c.ts_ns[i], c.ts_ns[i] + c.dur_ns[i], c.name[i]};
    for (size_t k = 0; key != 0 && k < nann; k++)
        if (a[k].key == key && a[k].type == PP_VALUE_INT && c.role[a[k].event] != PP_ROLE_EXEC)
            cs[nc++] = (corr){a[k].v.i, a[k].event};
    qsort(l, nl, sizeof *l, cmp_labeled);
    qsort(cs, nc, sizeof *cs, cmp_corr);
    for (size_t i = 0; i < r->nexecs; i++) {
        an_exec *x = &r->execs[i];
        if (x->stage != AN_NONE && x->batch >= 0)
            continue;
        const labeled *hit = NULL;
        size_t first, n;
        pp_model_annotations_of(m, x->event, &first, &n);
        for (size_t k = first; key != 0 && k < first + n && !hit; k++) {
            if (a[k].key != key || a[k].type != PP_VALUE_INT)
                continue;
            corr want = {a[k].v.i, 0};
            const corr *launch = bsearch(&want, cs, nc, sizeof *cs, cmp_corr);
            if (launch) {
                size_t e = launch->event;
                hit = enclosing(l, nl, c.track[e], c.ts_ns[e], c.ts_ns[e] + c.dur_ns[e]);
            }
        }
        if (!hit)
            hit = enclosing(l, nl, x->track, x->start, x->end);
        if (!hit)
            continue;
        const capture *k = &cap[hit->name];
        if (x->stage == AN_NONE) {
            x->stage = an_stage_intern(r, pp_model_string(m, hit->name) + k->stage_at,
                                       k->stage_len);
            if (x->stage == AN_NONE)
                return PP_ENOMEM;
        }
        if (x->batch < 0)
            x->batch = k->batch;
    }
    return PP_OK;
}

int an_foreign_label(pp_report *r, const char *pattern, pp_error *err) {
    const pp_model *m = r->m;
    regex_t re;
    int rc = regcomp(&re, pattern, REG_EXTENDED);
    if (rc != 0) {
        char msg[200];
        regerror(rc, &re, msg, sizeof msg);
        return pp_set_error(err, PP_EINVAL, "--batch-pattern \"%s\": %s", pattern, msg);
    }
    if (re.re_nsub < 2) {
        regfree(&re);
        return pp_set_error(err, PP_EINVAL,
                            "--batch-pattern \"%s\": needs two capture groups, stage then batch "
                            "number (e.g. \"^(.+)/batch([0-9]+)$\")", pattern);
    }
    size_t nstr = pp_model_string_count(m), nev = pp_model_event_count(m), nann;
    pp_model_annotations(m, &nann);
    capture *cap = malloc(nstr * sizeof *cap);
    labeled *l = malloc((nev ? nev : 1) * sizeof *l);
    corr *cs = malloc((nann ? nann : 1) * sizeof *cs);
    rc = cap && l && cs ? PP_OK : PP_ENOMEM;
    if (rc == PP_OK)
        match_names(m, &re, cap);
    regfree(&re);
    if (rc == PP_OK)
        rc = label_execs(r, cap, l, cs);
    free(cap), free(l), free(cs);
    return rc == PP_OK ? PP_OK : pp_set_error(err, rc, "out of memory");
}
