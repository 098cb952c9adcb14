/* window.c — choosing the window W every figure is measured over.
 *
 * Default: first timestamp to last end over every timed event. --region NAME:
 * the hull of the regions of that name. --exclude-region NAME: from the end
 * of the last region of that name to the trace end (what "leave out the warm
 * up" means when the warm up is recorded as a region at the start).
 * --from/--to then clip W. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

/* Marks the tracks of a profiler's bookkeeping (r->bookkeeping, left NULL
 * when there are none, so that most traces pay nothing for it). */
static int mark_bookkeeping(pp_report *r) {
    size_t n = pp_model_track_count(r->m);
    for (uint32_t t = 0; t < n; t++) {
        if (!(pp_model_track(r->m, t)->flags & PP_TRACK_BOOKKEEPING))
            continue;
        if (!r->bookkeeping && !(r->bookkeeping = calloc(n, 1)))
            return PP_ENOMEM;
        r->bookkeeping[t] = 1;
    }
    return PP_OK;
}

/* Lists the distinct region names into buf: "warm up", "steady" (the first
 * 32 names; the message only has to show what is there). */
static void region_names(const pp_model *m, const pp_cols *c, char *buf, size_t len) {
    uint32_t seen[32];
    size_t nseen = 0, used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->count && nseen < 32; i++) {
        if (c->kind[i] != PP_EV_REGION)
            continue;
        size_t k = 0;
        while (k < nseen && seen[k] != pp_cols_name(c, i))
            k++;
        if (k < nseen)
            continue;
        seen[nseen++] = pp_cols_name(c, i);
        int w = snprintf(buf + used, len - used, "%s\"%s\"", used ? ", " : "",
                         pp_model_string(m, pp_cols_name(c, i)));
        if (w < 0 || (size_t)w >= len - used)
            return;
        used += (size_t)w;
    }
}

static int region_hull(const pp_model *m, const pp_cols *c,
                       const char *name, int64_t *lo, int64_t *hi, pp_error *err) {
    uint32_t id = pp_model_find_string(m, name);
    int found = 0;
    for (size_t i = 0; id != 0 && i < c->count; i++) {
        if (c->kind[i] != PP_EV_REGION || pp_cols_name(c, i) != id)
            continue;
        int64_t e = pp_cols_end(c, i);
        if (!found || pp_cols_ts(c, i) < *lo)
            *lo = pp_cols_ts(c, i);
        if (!found || e > *hi)
            *hi = e;
        found = 1;
    }
    if (found)
        return PP_OK;
    char names[400];
    region_names(m, c, names, sizeof names);
    return pp_set_error(err, PP_ENOTFOUND, "no region named \"%s\" in the trace (regions: %s)",
                        name, names[0] ? names : "none");
}

int an_window_select(pp_report *r, const pp_analyze_options *o, pp_error *err) {
    const pp_model *m = r->m;
    const pp_cols c = r->c;
    if (o->region && o->exclude_region)
        return pp_set_error(err, PP_EINVAL, "--region and --exclude-region exclude each other");
    if (mark_bookkeeping(r) != PP_OK)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    int64_t t0 = 0, t1 = 0;
    size_t counted = 0;
    for (size_t i = 0; i < c.count; i++) {
        if (an_bookkeeping(r, i)) /* a profiler's markers do not stretch W */
            continue;
        int64_t e = pp_cols_end(&c, i);
        if (counted == 0 || pp_cols_ts(&c, i) < t0)
            t0 = pp_cols_ts(&c, i);
        if (counted++ == 0 || e > t1)
            t1 = e;
    }
    if (counted == 0)
        return pp_set_error(err, PP_EINVAL, c.count ? "the trace has no events but a profiler's "
                                                      "bookkeeping (its start and end markers)"
                                                    : "the trace has no events");
    int64_t w0 = t0, w1 = t1;
    const char *how = "whole trace";
    char howbuf[300];
    if (o->region) {
        int rc = region_hull(m, &c, o->region, &w0, &w1, err);
        if (rc != PP_OK)
            return rc;
        snprintf(howbuf, sizeof howbuf, "region \"%s\"", o->region);
        how = howbuf;
    } else if (o->exclude_region) {
        int64_t lo = 0, hi = 0;
        int rc = region_hull(m, &c, o->exclude_region, &lo, &hi, err);
        if (rc != PP_OK)
            return rc;
        w0 = hi;
        snprintf(howbuf, sizeof howbuf, "after region \"%s\"", o->exclude_region);
        how = howbuf;
    }
    if (o->has_from && o->from_ns > w0)
        w0 = o->from_ns;
    if (o->has_to && o->to_ns < w1)
        w1 = o->to_ns;
    if (w1 <= w0)
        return pp_set_error(err, PP_EINVAL,
                            "the window is empty (%s, from %lld to %lld ns; the trace spans "
                            "%lld to %lld ns)", how, (long long)w0, (long long)w1,
                            (long long)t0, (long long)t1);
    /* A quarter of the int64 range (73 years) keeps every sum of lengths
     * inside W, busy and idle times, bubbles, representable. */
    if ((uint64_t)w1 - (uint64_t)w0 > (uint64_t)INT64_MAX / 4)
        return pp_set_error(err, PP_EINVAL,
                            "the window spans %lld to %lld ns, more than 73 years: timestamps "
                            "that far apart cannot be one recording (a corrupt trace, or clocks "
                            "mixed?); narrow it with --from/--to",
                            (long long)w0, (long long)w1);
    r->how = an_strdupf("%s%s", how, (o->has_from || o->has_to) ? ", clipped by --from/--to" : "");
    if (!r->how)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    r->window = (pp_window){w0, w1, r->how};
    return PP_OK;
}
