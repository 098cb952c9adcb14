/* Clock alignment of merged traces (include/pipeprof/merge.h has the rules;
 * docs/merging.md explains them to users).
 *
 * Sync marks: if both sides recorded the k-th mark at one true moment, the
 * k-th pair says offset = t_ref - t_input exactly. Real marks are recorded
 * a little apart (the two sides of a pipe, a scheduler in between), so each
 * pair is an estimate; the midpoint of the smallest and largest estimate is
 * the offset nearest to all of them (its worst distance to any is least),
 * and half their spread bounds how far the pairs disagree. One pair cannot
 * disagree with itself, so its error is stated as not known, not as 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/columns.h"
#include "pipeprof/merge.h"

#define DEFAULT_SYNC "sync"

static const char *input_name(const pp_merge_input *in, size_t i) {
    return in[i].name ? in[i].name : "trace";
}

/* Same clock: the same clock name on the same boot (the boot id names the
 * host's boot; without one nothing says the clocks are one). */
static int same_clock(const pp_model *a, const pp_model *b) {
    const pp_model_meta *x = pp_model_meta_get(a), *y = pp_model_meta_get(b);
    const char *ca = pp_model_string(a, x->clock), *ba = pp_model_string(a, x->boot_id);
    return *ca && *ba && strcmp(ca, pp_model_string(b, y->clock)) == 0 &&
           strcmp(ba, pp_model_string(b, y->boot_id)) == 0;
}

/* The times of the instants named `name`, ascending; *n of them. */
static int sync_times(const pp_model *m, const char *name, int64_t **out, size_t *n) {
    pp_cols c;
    uint32_t id = pp_model_find_string(m, name);
    *out = NULL;
    *n = 0;
    if (!id)
        return PP_OK;
    pp_model_cols(m, &c);
    size_t count = 0;
    for (size_t i = 0; i < c.count; i++)
        count += c.kind[i] == PP_EV_INSTANT && pp_cols_name(&c, i) == id;
    if (!count)
        return PP_OK;
    int64_t *t = malloc(count * sizeof *t);
    if (!t)
        return PP_ENOMEM;
    for (size_t i = 0, k = 0; i < c.count; i++)
        if (c.kind[i] == PP_EV_INSTANT && pp_cols_name(&c, i) == id)
            t[k++] = pp_cols_ts(&c, i);
    for (size_t i = 1; i < count; i++) /* nearly sorted already: insertion sort */
        for (size_t k = i; k > 0 && t[k - 1] > t[k]; k--) {
            int64_t x = t[k];
            t[k] = t[k - 1], t[k - 1] = x;
        }
    *out = t;
    *n = count;
    return PP_OK;
}

/* Aligns input i against aligned input j by their sync marks; 0 when
 * neither has any pairs (out untouched), 1 when aligned, <0 on no memory. */
static int align_by_sync(const pp_merge_input *in, size_t j, size_t i, const char *name,
                         const pp_alignment *ref, pp_alignment *out) {
    int64_t *tj = NULL, *ti = NULL;
    size_t nj = 0, ni = 0;
    int rc = sync_times(in[j].model, name, &tj, &nj);
    if (rc == PP_OK)
        rc = sync_times(in[i].model, name, &ti, &ni);
    size_t pairs = nj < ni ? nj : ni;
    if (rc == PP_OK && pairs) {
        /* estimates as long double: t_ref - t_input of two int64 can pass int64 */
        long double lo = 0, hi = 0;
        for (size_t k = 0; k < pairs; k++) {
            long double e = (long double)tj[k] + ref->offset_ns - (long double)ti[k];
            lo = k == 0 || e < lo ? e : lo;
            hi = k == 0 || e > hi ? e : hi;
        }
        long double mid = (lo + hi) / 2;
        if (mid > (long double)INT64_MAX / 2 || mid < -(long double)INT64_MAX / 2) {
            rc = PP_EINVAL;
        } else {
            out->method = PP_ALIGN_SYNC;
            out->to = j;
            out->offset_ns = (int64_t)(mid < 0 ? mid - 0.5L : mid + 0.5L);
            out->pairs = pairs > UINT32_MAX ? UINT32_MAX : (uint32_t)pairs;
            /* half the spread, rounded up: it then covers the offset rounded to ns */
            int64_t spread = pairs > 1 ? (int64_t)ceill((hi - lo) / 2) : -1;
            out->error_ns = spread < 0 || ref->error_ns < 0 ? -1 : spread + ref->error_ns;
            rc = 1;
        }
    }
    free(tj);
    free(ti);
    return rc;
}

/* The refusal: why input i has no clock in common with the first input. */
static int refuse(const pp_merge_input *in, size_t i, const char *sync, pp_error *err) {
    const pp_model_meta *a = pp_model_meta_get(in[0].model), *b = pp_model_meta_get(in[i].model);
    const char *ca = pp_model_string(in[0].model, a->clock);
    const char *cb = pp_model_string(in[i].model, b->clock);
    const char *ha = pp_model_string(in[0].model, a->host);
    const char *hb = pp_model_string(in[i].model, b->host);
    char why[256];
    if (!*ca || !*cb)
        snprintf(why, sizeof why, "%s does not say which clock it was recorded with",
                 input_name(in, *ca ? i : 0));
    else if (strcmp(ha, hb) != 0)
        snprintf(why, sizeof why, "they were recorded on different hosts (%s and %s)", ha, hb);
    else
        snprintf(why, sizeof why, "they were recorded on different boots of %s or with "
                 "different clocks (%s and %s)", ha, ca, cb);
    return pp_set_error(err, PP_EINVAL,
                        "%s and %s have no common clock: %s, no offset was given for %s, and no "
                        "sync mark \"%s\" is in both; record a pp_mark named \"%s\" at the same "
                        "moment in both processes, or give --offset %s=+12.5us (see "
                        "docs/merging.md)",
                        input_name(in, 0), input_name(in, i), why, input_name(in, i), sync, sync,
                        input_name(in, i));
}

int pp_model_align(const pp_merge_input *in, size_t n, const pp_merge_options *o,
                   pp_alignment *out, pp_error *err) {
    const char *sync = o && o->sync_name ? o->sync_name : DEFAULT_SYNC;
    if (!in || !out || n == 0)
        return pp_set_error(err, PP_EINVAL, "pp_model_align: no inputs");
    for (size_t i = 0; i < n; i++) {
        if (!in[i].model)
            return pp_set_error(err, PP_EINVAL, "pp_model_align: input %zu has no model", i);
        pp_alignment *a = &out[i];
        *a = (pp_alignment){.method = PP_ALIGN_REFERENCE};
        if (i == 0)
            continue;
        if (in[i].has_offset) {
            *a = (pp_alignment){PP_ALIGN_OFFSET, 0, in[i].offset_ns, -1, 0};
            continue;
        }
        int done = 0;
        for (size_t j = 0; j < i && !done; j++) {
            if (same_clock(in[j].model, in[i].model)) {
                *a = (pp_alignment){PP_ALIGN_SAME_CLOCK, j, out[j].offset_ns, out[j].error_ns, 0};
                done = 1;
            }
        }
        for (size_t j = 0; j < i && !done; j++) {
            int rc = align_by_sync(in, j, i, sync, &out[j], a);
            if (rc == PP_EINVAL)
                return pp_set_error(err, rc, "%s: its sync marks \"%s\" lie too far from those "
                                    "of %s to align", input_name(in, i), sync, input_name(in, j));
            if (rc < 0)
                return pp_set_error(err, rc, "out of memory aligning %s", input_name(in, i));
            done = rc == 1;
        }
        if (!done)
            return refuse(in, i, sync, err);
    }
    return PP_OK;
}
