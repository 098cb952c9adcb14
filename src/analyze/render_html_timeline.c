/* render_html_timeline.c — the timeline of the HTML page over the report's
 * window W: one row per track (device streams grouped under their device,
 * then host threads by process, cross-thread ranges, regions), the spans of
 * the busiest stretch in full, and the rest summarized.
 *
 * A page with millions of spans would not respond, so at most HTML_SPAN_CAP
 * spans are written in full. W is cut into FINE bins; the spans written are
 * those starting in the run of bins that holds the most exec time among the
 * runs of at most HTML_SPAN_CAP span starts (two pointers, linear). When
 * spans are left out, every row also gets HTML_BUCKETS buckets over W with
 * the span time overlapping each, which the page draws outside that run.
 * Two passes over the events, no sort. */
#include <stdlib.h>
#include <string.h>

#include "analyze/render_html.h"
#include "core/error.h"

#define FINE 65536

typedef struct row {
    uint32_t track;
    uint32_t cls;   /* 0 device stream, 1 host thread, 2 cross-thread, 3 regions */
    uint64_t group; /* device index or process string, within the class */
    int32_t sort_index;
} row;

typedef struct tl {
    const pp_report *r;
    const pp_model *m;
    pp_cols c;
    int64_t w0, w1;
    uint32_t *row_of;  /* model track -> row, UINT32_MAX = not drawn */
    uint32_t *dev;     /* model track -> report device, AN_NONE = a host track */
    row *rows;
    size_t nrows;
    uint32_t *str_of;  /* model string -> page string, UINT32_MAX = unused */
    uint32_t *strs;    /* page strings, as model ids */
    size_t nstrs;
    uint32_t *starts;  /* per fine bin: spans starting there */
    int64_t *weight;   /* per fine bin: exec time starting there */
    size_t spans_total, first, last; /* detail = fine bins [first, last) */
} tl;

static int drawn(const tl *t, size_t i) {
    uint8_t k = t->c.kind[i];
    if (k != PP_EV_SPAN && k != PP_EV_RANGE && k != PP_EV_REGION)
        return 0;
    int64_t s = pp_cols_ts(&t->c, i), e = s + pp_cols_dur(&t->c, i);
    return e > t->w0 && s < t->w1 && (e > s || s >= t->w0);
}

static size_t fine_bin(const tl *t, int64_t ts) {
    if (ts <= t->w0)
        return 0;
    double f = (double)(ts - t->w0) / (double)(t->w1 - t->w0) * FINE;
    return f >= FINE ? FINE - 1 : (size_t)f;
}

/* W-relative time of fine bin edge k. */
static int64_t fine_edge(const tl *t, size_t k) {
    return (int64_t)((double)(t->w1 - t->w0) * (double)k / FINE);
}

static int row_cmp(const void *a, const void *b) {
    const row *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->sort_index != y->sort_index)
        return x->sort_index < y->sort_index ? -1 : 1;
    return x->track < y->track ? -1 : x->track > y->track;
}

/* The report's device of each track: from its track table (tracks with
 * execs in W), else by the device name of a device track. PP_EINVAL when the
 * report names a track the model lacks (not the report's model). */
static int map_devices(tl *t, size_t ntracks, pp_error *err) {
    for (size_t k = 0; k < ntracks; k++) {
        const pp_track_info *ti = pp_model_track(t->m, (uint32_t)k);
        const char *name = pp_model_string(t->m, ti->device);
        t->dev[k] = AN_NONE;
        for (size_t d = 0; ti->kind == PP_TRACK_KIND_DEVICE && d < t->r->ndevices; d++)
            if (strcmp(t->r->devices[d].name, name) == 0)
                t->dev[k] = (uint32_t)d;
    }
    for (size_t i = 0; i < t->r->ntracks; i++) {
        if (t->r->tracks[i].track >= ntracks)
            return pp_set_error(err, PP_EINVAL, "HTML report: the model is not the one the "
                                "report was built from (it lacks track %u)",
                                (unsigned)t->r->tracks[i].track);
        t->dev[t->r->tracks[i].track] = t->r->tracks[i].device;
    }
    return PP_OK;
}

/* Pass 1: which tracks have something to draw, and the fine bins. */
static void scan(tl *t) {
    size_t ntracks = pp_model_track_count(t->m);
    for (size_t i = 0; i < t->c.count; i++) {
        if (!drawn(t, i))
            continue;
        t->spans_total++;
        size_t b = fine_bin(t, pp_cols_ts(&t->c, i));
        t->starts[b]++;
        if (t->c.kind[i] == PP_EV_SPAN && t->c.role[i] == PP_ROLE_EXEC)
            t->weight[b] += pp_cols_dur(&t->c, i);
        t->row_of[pp_cols_track(&t->c, i)] = 0;
    }
    for (uint32_t k = 0; k < ntracks; k++) {
        if (t->row_of[k] == UINT32_MAX)
            continue;
        const pp_track_info *ti = pp_model_track(t->m, k);
        row *w = &t->rows[t->nrows++];
        w->track = k;
        w->sort_index = ti->sort_index;
        uint32_t dev = t->dev[k];
        if (ti->kind == PP_TRACK_KIND_DEVICE || dev != AN_NONE) {
            w->cls = 0;
            w->group = dev != AN_NONE ? dev : (uint64_t)t->r->ndevices + ti->device;
        } else {
            w->cls = ti->kind == PP_TRACK_KIND_REGIONS ? 3 : ti->kind == PP_TRACK_KIND_ASYNC ? 2 : 1;
            w->group = ti->process;
        }
    }
    qsort(t->rows, t->nrows, sizeof *t->rows, row_cmp);
    for (size_t i = 0; i < t->nrows; i++)
        t->row_of[t->rows[i].track] = (uint32_t)i;
}

/* The run of fine bins with at most HTML_SPAN_CAP starts and the most exec
 * time (the earliest of equals), widened over the empty bins around it; all
 * of W when everything fits. */
static void choose_detail(tl *t) {
    t->first = 0;
    t->last = FINE;
    if (t->spans_total <= HTML_SPAN_CAP)
        return;
    size_t a = 0, count = 0;
    int64_t w = 0, best = -1;
    t->last = 0;
    for (size_t b = 0; b < FINE; b++) {
        count += t->starts[b];
        w += t->weight[b];
        while (count > HTML_SPAN_CAP) {
            count -= t->starts[a];
            w -= t->weight[a++];
        }
        if (a <= b && w > best) {
            best = w;
            t->first = a;
            t->last = b + 1;
        }
    }
    while (t->last < FINE && t->starts[t->last] == 0) /* up to the next start */
        t->last++;
}

static uint32_t page_str(tl *t, uint32_t id) {
    if (t->str_of[id] == UINT32_MAX) {
        t->str_of[id] = (uint32_t)t->nstrs;
        t->strs[t->nstrs++] = id;
    }
    return t->str_of[id];
}

static const char *const role_names[] = {"", "exec", "partition", "merge", "stage", "op", "user"};

/* Pass 2: the spans of the detail run, with their annotations. */
static void spans(tl *t, pp_outfile *o) {
    hj_raw(o, ",\n\"spans\": [");
    size_t shown = 0;
    for (size_t i = 0; i < t->c.count; i++) {
        if (!drawn(t, i))
            continue;
        size_t b = fine_bin(t, pp_cols_ts(&t->c, i));
        if (b < t->first || b >= t->last)
            continue;
        uint8_t role = t->c.role[i];
        const char *what = t->c.kind[i] == PP_EV_REGION ? "region"
                           : t->c.kind[i] == PP_EV_RANGE ? "range"
                           : role < sizeof role_names / sizeof *role_names ? role_names[role] : "";
        hj_raw(o, shown++ ? ",\n[" : "\n[");
        hj_i64(o, t->row_of[pp_cols_track(&t->c, i)]);
        int64_t v[] = {pp_cols_ts(&t->c, i) - t->w0, pp_cols_dur(&t->c, i), page_str(t, pp_cols_name(&t->c, i)),
                       page_str(t, pp_cols_stage(&t->c, i)), pp_cols_batch(&t->c, i), (int64_t)pp_cols_hw(&t->c, i),
                       (int64_t)pp_cols_xfer(&t->c, i)};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
            hj_raw(o, ",");
            hj_i64(o, v[k]);
        }
        hj_raw(o, ",");
        hj_str(o, what);
        size_t first, n, all;
        pp_model_annotations_of(t->m, i, &first, &n);
        const pp_ann *an = pp_model_anns(t->m, &all) + first;
        hj_raw(o, ",[");
        for (size_t k = 0; k < n; k++) {
            hj_raw(o, k ? ",[" : "[");
            hj_i64(o, page_str(t, pp_ann_key(&an[k])));
            hj_raw(o, ",");
            if (pp_ann_type(&an[k]) == PP_VALUE_INT)
                hj_i64(o, an[k].v.i);
            else if (pp_ann_type(&an[k]) == PP_VALUE_DOUBLE)
                hj_dbl(o, an[k].v.d);
            else
                hj_str(o, pp_model_string(t->m, an[k].v.s));
            hj_raw(o, "]");
        }
        hj_raw(o, "]]");
    }
    hj_raw(o, "]");
}

/* Span time per row and bucket of W, for what the detail run leaves out. */
static int buckets(tl *t, pp_outfile *o, pp_error *err) {
    int64_t *busy = calloc(t->nrows * (size_t)HTML_BUCKETS, sizeof *busy);
    if (!busy)
        return pp_set_error(err, PP_ENOMEM, "HTML report: out of memory for the timeline");
    double width = (double)(t->w1 - t->w0) / HTML_BUCKETS;
    for (size_t i = 0; i < t->c.count; i++) {
        if (!drawn(t, i))
            continue;
        int64_t s = pp_cols_ts(&t->c, i) - t->w0, e = s + pp_cols_dur(&t->c, i);
        s = s < 0 ? 0 : s;
        e = e > t->w1 - t->w0 ? t->w1 - t->w0 : e;
        int64_t *line = busy + (size_t)t->row_of[pp_cols_track(&t->c, i)] * HTML_BUCKETS;
        for (size_t k = (size_t)((double)s / width); k < HTML_BUCKETS; k++) {
            int64_t lo = (int64_t)(width * (double)k), hi = (int64_t)(width * (double)(k + 1));
            if (lo >= e)
                break;
            line[k] += (e < hi ? e : hi) - (s > lo ? s : lo);
        }
    }
    hj_raw(o, ",\n\"buckets\": {\"n\": ");
    hj_i64(o, HTML_BUCKETS);
    hj_raw(o, ", \"rows\": [");
    for (size_t r = 0; r < t->nrows; r++) {
        hj_raw(o, r ? ",\n[" : "\n[");
        int any = 0;
        for (size_t k = 0; k < HTML_BUCKETS; k++) {
            int64_t v = busy[r * HTML_BUCKETS + k];
            if (v <= 0)
                continue;
            hj_raw(o, any++ ? ",[" : "[");
            hj_i64(o, (int64_t)k);
            hj_raw(o, ",");
            hj_i64(o, v);
            hj_raw(o, "]");
        }
        hj_raw(o, "]");
    }
    hj_raw(o, "]}");
    free(busy);
    return PP_OK;
}

static void rows(tl *t, pp_outfile *o) {
    hj_raw(o, ",\n\"rows\": [");
    for (size_t i = 0; i < t->nrows; i++) {
        const pp_track_info *ti = pp_model_track(t->m, t->rows[i].track);
        uint32_t dev = t->dev[t->rows[i].track];
        const char *group = dev != AN_NONE ? t->r->devices[dev].name
                            : pp_model_string(t->m, ti->kind == PP_TRACK_KIND_DEVICE && ti->device
                                                        ? ti->device : ti->process);
        static const char *const cls[] = {"device", "thread", "range", "regions"};
        hj_raw(o, i ? ",\n {" : "\n {");
        hj_key(o, "group", 1);
        hj_str(o, group);
        hj_key(o, "name", 0);
        hj_str(o, pp_model_string(t->m, ti->name));
        hj_key(o, "kind", 0);
        hj_str(o, cls[t->rows[i].cls]);
        hj_raw(o, (ti->flags & PP_TRACK_SIMULATED) || (dev != AN_NONE && t->r->devices[dev].simulated)
                      ? ", \"simulated\": true}" : ", \"simulated\": false}");
    }
    hj_raw(o, "]");
}

static int write_all(tl *t, pp_outfile *o, pp_error *err) {
    scan(t);
    choose_detail(t);
    hj_raw(o, "{\"cap\": ");
    hj_i64(o, HTML_SPAN_CAP);
    hj_raw(o, ", \"spans_total\": ");
    hj_i64(o, (int64_t)t->spans_total);
    hj_raw(o, ", \"duration_ns\": ");
    hj_i64(o, t->w1 - t->w0);
    hj_raw(o, ", \"detail\": [");
    hj_i64(o, fine_edge(t, t->first));
    hj_raw(o, ", ");
    hj_i64(o, t->last == FINE ? t->w1 - t->w0 : fine_edge(t, t->last));
    hj_raw(o, "]");
    rows(t, o);
    spans(t, o);
    if (t->spans_total > HTML_SPAN_CAP) {
        int rc = buckets(t, o, err);
        if (rc != PP_OK)
            return rc;
    }
    hj_raw(o, ",\n\"strings\": [");
    for (size_t i = 0; i < t->nstrs; i++) {
        hj_raw(o, i ? ", " : "");
        hj_str(o, pp_model_string(t->m, t->strs[i]));
    }
    hj_raw(o, "]}");
    return PP_OK;
}

int html_write_timeline(const pp_report *r, const pp_model *m, pp_outfile *o, pp_error *err) {
    tl t = {.r = r, .m = m, .w0 = r->window.start_ns, .w1 = r->window.end_ns};
    pp_model_cols(m, &t.c);
    size_t ntracks = pp_model_track_count(m), nstrings = pp_model_string_count(m);
    t.row_of = malloc((ntracks ? ntracks : 1) * sizeof *t.row_of);
    t.dev = malloc((ntracks ? ntracks : 1) * sizeof *t.dev);
    t.rows = malloc((ntracks ? ntracks : 1) * sizeof *t.rows);
    t.str_of = malloc((nstrings ? nstrings : 1) * sizeof *t.str_of);
    t.strs = malloc((nstrings ? nstrings : 1) * sizeof *t.strs);
    t.starts = calloc(FINE, sizeof *t.starts);
    t.weight = calloc(FINE, sizeof *t.weight);
    int rc = PP_OK;
    if (!t.row_of || !t.dev || !t.rows || !t.str_of || !t.strs || !t.starts || !t.weight) {
        rc = pp_set_error(err, PP_ENOMEM, "HTML report: out of memory for the timeline");
    } else {
        memset(t.row_of, 0xff, ntracks * sizeof *t.row_of);
        memset(t.str_of, 0xff, nstrings * sizeof *t.str_of);
        rc = map_devices(&t, ntracks, err);
        if (rc == PP_OK)
            rc = write_all(&t, o, err);
    }
    free(t.row_of);
    free(t.dev);
    free(t.rows);
    free(t.str_of);
    free(t.strs);
    free(t.starts);
    free(t.weight);
    return rc;
}
