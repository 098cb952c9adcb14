/* The trace model: columnar event arrays plus string, track, thread and
 * annotation tables. Append-only while built; readers and writers share it. */
#include "pipeprof/model.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strtab.h"
#include "model/ann_table.h"
#include "model/column_mem.h"
#include "model/columns.h"
#include "model/event_blank.h"
#include "model/event_slots.h"
#include "model/event_store.h"

/* The 64-bit and 32-bit columns that pp_model_columns hands out and the
 * 24-byte annotations of pp_model_annotations, made from the narrow ones
 * on their first call after a change (NULL until then). */
typedef struct wide_view {
    pthread_mutex_t lock;
    size_t bytes;
    int64_t *ts_ns, *dur_ns, *batch;
    uint64_t *hw_ns, *xfer_ns;
    uint32_t *stage, *track;
    pp_annotation *anns;
    size_t anns_bytes;
} wide_view;

struct pp_model {
    pp_strtab strings;
    pp_event_store ev;
    wide_view view;
    pp_track_info *tracks;
    size_t ntracks, captracks;
    pp_thread_info *threads;
    size_t nthreads, capthreads;
    pp_ann *anns;
    size_t nanns, capanns;
    pp_model_meta meta;
    /* Holders of the model: 1 for its creator, one more for each Arrow
     * export alive (pipeprof/arrow.h), whose columns point into it. */
    _Atomic size_t refs;
};

/* A model some export still reads takes no more events and keeps its
 * columns where they are: the export points at them. */
static int shared(const pp_model *m) {
    return atomic_load_explicit(&m->refs, memory_order_acquire) > 1;
}

int pp_model_create(pp_model **out) {
    pp_model *m = calloc(1, sizeof *m);
    if (!m)
        return PP_ENOMEM;
    if (pp_strtab_init(&m->strings) != 0) {
        free(m);
        return PP_ENOMEM;
    }
    if (pthread_mutex_init(&m->view.lock, NULL) != 0) {
        pp_strtab_free(&m->strings);
        free(m);
        return PP_ENOMEM;
    }
    m->meta.level = -1;
    atomic_init(&m->refs, 1);
    pp_event_store_init(&m->ev);
    *out = m;
    return PP_OK;
}

/* Forgets the copies made for pp_model_columns and pp_model_annotations:
 * called by every change to the events and annotations. */
static void view_drop(wide_view *v) {
    if (!v->ts_ns && !v->anns) /* the usual case, on every append: nothing made */
        return;
    pp_column_free(v->ts_ns, v->bytes);
    pp_column_free(v->dur_ns, v->bytes);
    pp_column_free(v->batch, v->bytes);
    pp_column_free(v->hw_ns, v->bytes);
    pp_column_free(v->xfer_ns, v->bytes);
    pp_column_free(v->stage, v->bytes / 2);
    pp_column_free(v->track, v->bytes / 2);
    pp_column_free(v->anns, v->anns_bytes);
    v->ts_ns = v->dur_ns = v->batch = NULL;
    v->hw_ns = v->xfer_ns = NULL;
    v->stage = v->track = NULL;
    v->anns = NULL;
    v->bytes = v->anns_bytes = 0;
}

pp_model *pp_model_retain(const pp_model *m) {
    pp_model *held = (pp_model *)m; /* a holder frees it: the count is not the model's contents */
    atomic_fetch_add_explicit(&held->refs, 1, memory_order_relaxed);
    return held;
}

void pp_model_free(pp_model *m) {
    if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    pp_strtab_free(&m->strings);
    pp_event_store_free(&m->ev);
    view_drop(&m->view);
    pthread_mutex_destroy(&m->view.lock);
    free(m->tracks);
    free(m->threads);
    pp_column_free(m->anns, m->capanns * sizeof *m->anns);
    free(m);
}

int pp_model_intern(pp_model *m, const char *text, size_t len, uint32_t *id) {
    return pp_strtab_intern(&m->strings, text, len, id);
}

uint32_t pp_model_find_string(const pp_model *m, const char *text) {
    return pp_strtab_find(&m->strings, text, strlen(text));
}

const char *pp_model_string(const pp_model *m, uint32_t id) {
    return pp_strtab_text(&m->strings, id);
}

size_t pp_model_string_count(const pp_model *m) {
    return m->strings.count;
}

void pp_track_info_init(pp_track_info *t) {
    memset(t, 0, sizeof *t);
    t->kind = PP_TRACK_KIND_THREAD;
    t->stream = -1;
}

int pp_model_add_track(pp_model *m, const pp_track_info *t, uint32_t *index) {
    if (t->process >= m->strings.count || t->name >= m->strings.count ||
        t->device >= m->strings.count || t->kind > PP_TRACK_KIND_ASYNC)
        return PP_EINVAL;
    if (pp_grow((void **)&m->tracks, &m->captracks, m->ntracks, sizeof *m->tracks))
        return PP_ENOMEM;
    m->tracks[m->ntracks] = *t;
    if (index)
        *index = (uint32_t)m->ntracks;
    m->ntracks++;
    return PP_OK;
}

size_t pp_model_track_count(const pp_model *m) {
    return m->ntracks;
}

const pp_track_info *pp_model_track(const pp_model *m, uint32_t index) {
    return index < m->ntracks ? &m->tracks[index] : NULL;
}

pp_track_info *pp_model_track_mut(pp_model *m, uint32_t index) {
    return index < m->ntracks ? &m->tracks[index] : NULL;
}

void pp_event_init(pp_event *e) {
    *e = pp_event_blank();
}

/* pp_model_add_event's rules (model.h), for the one event and the bulk
 * append alike. */
static inline int event_ok(const pp_model *m, int64_t ts, int64_t dur, uint32_t name,
                           uint32_t stage, uint32_t track, uint8_t kind, uint8_t role,
                           uint8_t phase) {
    return track < m->ntracks && name < m->strings.count && stage < m->strings.count &&
           dur >= 0 && ts != INT64_MIN && !(ts > 0 && dur > INT64_MAX - ts) &&
           kind <= PP_EV_REGION && role <= PP_ROLE_USER && phase <= PP_FLOW_END;
}

int pp_model_add_event(pp_model *m, const pp_event *ev) {
    pp_event_store *e = &m->ev;
    if (!event_ok(m, ev->ts_ns, ev->dur_ns, ev->name, ev->stage, ev->track, ev->kind, ev->role,
                  ev->phase))
        return PP_EINVAL;
    if (shared(m))
        return PP_ESTATE;
    int rc = pp_event_store_make_room(e, 1);
    if (rc)
        return rc;
    view_drop(&m->view);
    if (pp_event_slots_put(&e->col, e->count, ev) != 0) {
        pp_model_events_unreserve(m, 1);
        return PP_ENOMEM;
    }
    e->count++;
    return PP_OK;
}

int pp_model_add_events(pp_model *m, const pp_event_columns *c, size_t *added) {
    size_t i = 0;
    int rc = PP_OK;
    for (; i < c->count && rc == PP_OK; i++) {
        pp_event ev = {c->ts_ns[i], c->dur_ns[i], c->batch[i], c->hw_ns[i], c->xfer_ns[i],
                       c->id[i], c->value[i], c->name[i], c->stage[i], c->track[i],
                       c->kind[i], c->role[i], c->phase[i]};
        rc = pp_model_add_event(m, &ev);
    }
    if (added)
        *added = rc == PP_OK ? i : i - 1;
    return rc;
}

int pp_model_events_reserve(pp_model *m, size_t n, pp_event_slots *out) {
    pp_event_store *e = &m->ev;
    if (shared(m))
        return PP_ESTATE;
    int rc = pp_event_store_make_room(e, n);
    if (rc)
        return rc;
    pp_event_slots_at(&e->col, e->count, out);
    return PP_OK;
}

size_t pp_model_events_commit(pp_model *m, size_t n, pp_event *refused) {
    pp_event_store *e = &m->ev;
    size_t i = e->count, end = e->count + n;
    pp_cols c;
    pp_model_cols(m, &c); /* its count is the committed one; the slots past it are read alike */
    while (i < end && event_ok(m, pp_cols_ts(&c, i), pp_cols_dur(&c, i), pp_cols_name(&c, i),
                               pp_cols_stage(&c, i),
                               pp_cols_track(&c, i), c.kind[i], c.role[i], c.phase[i]))
        i++;
    if (i < end && refused)
        pp_event_slots_get(&e->col, i, refused);
    pp_event_store_clear_sparse(e, i, end);
    pp_wide_cut(&e->wide, i);
    view_drop(&m->view);
    n = i - e->count;
    e->count = i;
    return n;
}

void pp_model_events_unreserve(pp_model *m, size_t n) {
    pp_event_store_clear_sparse(&m->ev, m->ev.count, m->ev.count + n);
    pp_wide_cut(&m->ev.wide, m->ev.count);
}

size_t pp_model_event_count(const pp_model *m) {
    return m->ev.count;
}

void pp_model_event(const pp_model *m, size_t i, pp_event *out) {
    pp_event_store_event(&m->ev, i, out);
}

void pp_model_cols(const pp_model *m, pp_cols *out) {
    pp_event_store_cols(&m->ev, out);
}

void pp_model_narrow(pp_model *m) {
    if (shared(m)) /* an export reads the columns where they are */
        return;
    view_drop(&m->view);
    pp_event_store_narrow(&m->ev);
}

/* Makes the 64-bit columns of pp_model_columns from the narrow ones, the
 * sparse ones written only where not zero (fresh pages read zero). */
static int view_make(const pp_model *m, wide_view *v) {
    pp_cols c;
    pp_model_cols(m, &c);
    size_t bytes = (c.count ? c.count : 1) * sizeof(int64_t);
    v->bytes = bytes;
    v->ts_ns = pp_column_grow(NULL, 0, bytes);
    v->dur_ns = pp_column_grow(NULL, 0, bytes);
    v->batch = pp_column_grow(NULL, 0, bytes);
    v->hw_ns = pp_column_grow(NULL, 0, bytes);
    v->xfer_ns = pp_column_grow(NULL, 0, bytes);
    v->stage = pp_column_grow(NULL, 0, bytes / 2);
    v->track = pp_column_grow(NULL, 0, bytes / 2);
    if (!v->ts_ns || !v->dur_ns || !v->batch || !v->hw_ns || !v->xfer_ns || !v->stage ||
        !v->track) {
        view_drop(v);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < c.count; i++) {
        v->ts_ns[i] = pp_cols_ts(&c, i);
        v->dur_ns[i] = pp_cols_dur(&c, i);
        v->batch[i] = pp_cols_batch(&c, i);
        pp_slot_put_u64(v->hw_ns, i, pp_cols_hw(&c, i));
        pp_slot_put_u64(v->xfer_ns, i, pp_cols_xfer(&c, i));
        pp_slot_put_u32(v->stage, i, pp_cols_stage(&c, i));
        v->track[i] = pp_cols_track(&c, i);
    }
    return PP_OK;
}

int pp_model_columns(const pp_model *m, pp_event_columns *out) {
    const pp_event_store *e = &m->ev;
    wide_view *v = (wide_view *)&m->view; /* made once, under its lock */
    memset(out, 0, sizeof *out);
    if (e->narrowed) /* its name column is no longer the 32-bit one handed out */
        return PP_EINVAL;
    pthread_mutex_lock(&v->lock);
    int rc = v->dur_ns ? PP_OK : view_make(m, v);
    pthread_mutex_unlock(&v->lock);
    if (rc != PP_OK)
        return rc;
    out->count = e->count;
    out->ts_ns = v->ts_ns;
    out->dur_ns = v->dur_ns;
    out->batch = v->batch;
    out->hw_ns = v->hw_ns;
    out->xfer_ns = v->xfer_ns;
    out->id = e->col.id;
    out->value = e->col.value;
    out->name = e->col.name;
    out->stage = v->stage;
    out->track = v->track;
    out->kind = e->col.kind;
    out->role = e->col.role;
    out->phase = e->col.phase;
    return PP_OK;
}

/* pp_model_add_annotation's rules (model.h), given the event of the
 * annotation before it (0 for the first). */
static inline int annotation_ok(const pp_model *m, const pp_ann *a, uint64_t prev_event) {
    uint8_t type = pp_ann_type(a);
    return a->event < m->ev.count && a->event >= prev_event && pp_ann_key(a) < m->strings.count &&
           type <= PP_VALUE_STR && (type != PP_VALUE_STR || a->v.s < m->strings.count);
}

int pp_model_add_annotation(pp_model *m, const pp_annotation *a) {
    pp_ann packed;
    if (!pp_ann_pack(a, &packed) ||
        !annotation_ok(m, &packed, m->nanns ? m->anns[m->nanns - 1].event : 0))
        return PP_EINVAL;
    pp_ann *slot;
    int rc = pp_model_annotations_reserve(m, 1, &slot);
    if (rc)
        return rc;
    *slot = packed;
    m->nanns++;
    return PP_OK;
}

int pp_model_add_annotations(pp_model *m, const pp_annotation *a, size_t n, size_t *added) {
    size_t i = 0;
    int rc = PP_OK;
    for (; i < n && rc == PP_OK; i++)
        rc = pp_model_add_annotation(m, &a[i]);
    if (added)
        *added = rc == PP_OK ? i : i - 1;
    return rc;
}

int pp_model_annotations_reserve(pp_model *m, size_t n, pp_ann **out) {
    view_drop(&m->view);
    if (n > m->capanns - m->nanns || !m->anns) { /* *out points into the table, even for n = 0 */
        if (n > SIZE_MAX / 2 / sizeof *m->anns - m->nanns)
            return PP_ENOMEM;
        size_t cap = m->capanns ? m->capanns * 2 : 1024;
        cap = cap > m->nanns + n ? cap : m->nanns + n;
        pp_ann *p = pp_column_grow(m->anns, m->capanns * sizeof *p, cap * sizeof *p);
        if (!p)
            return PP_ENOMEM;
        m->anns = p;
        m->capanns = cap;
    }
    *out = m->anns + m->nanns;
    return PP_OK;
}

size_t pp_model_annotations_commit(pp_model *m, size_t n) {
    view_drop(&m->view);
    size_t i = m->nanns, end = m->nanns + n;
    uint64_t prev = i ? m->anns[i - 1].event : 0;
    for (; i < end && annotation_ok(m, &m->anns[i], prev); i++)
        prev = m->anns[i].event;
    n = i - m->nanns;
    m->nanns = i;
    return n;
}

void pp_model_clear_events(pp_model *m) {
    pp_event_store *e = &m->ev;
    if (e->count)
        pp_event_store_clear_sparse(e, 0, e->count);
    pp_wide_cut(&e->wide, 0);
    for (size_t p = 0; p < e->npages; p++) { /* the next events set their own */
        atomic_store_explicit(&e->col.pages[p].ts, PP_BASE_UNSET, memory_order_relaxed);
        atomic_store_explicit(&e->col.pages[p].batch, PP_BASE_UNSET, memory_order_relaxed);
    }
    view_drop(&m->view);
    e->count = 0;
    m->nanns = 0;
}

const pp_ann *pp_model_anns(const pp_model *m, size_t *count) {
    /* Never NULL, so that callers may compute `annotations + count` (NULL + 0
     * is undefined behaviour in C) for a model without any. */
    static const pp_ann none[1];
    *count = m->nanns;
    return m->anns ? m->anns : none;
}

/* pp_model_anns_keep (listed 1) and pp_model_anns_drop (listed 0): keeps
 * the annotations whose key is among keys[0..nkeys) or not. The keys go
 * into fixed slots, the rest holding UINT32_MAX, which no key is (keys are
 * below 2^30: ann_table.h), so that an annotation takes four compares and
 * no loop. */
static void anns_filter(pp_model *m, const uint32_t *keys, size_t nkeys, int listed) {
    uint32_t k[PP_ANN_KEYS_MAX] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    for (size_t j = 0; j < nkeys && j < PP_ANN_KEYS_MAX; j++)
        k[j] = keys[j] ? keys[j] : UINT32_MAX; /* a key 0 names none */
    size_t n = 0;
    for (size_t i = 0; i < m->nanns; i++) {
        uint32_t key = pp_ann_key(&m->anns[i]);
        int among = (key == k[0]) | (key == k[1]) | (key == k[2]) | (key == k[3]);
        if (among == listed)
            m->anns[n++] = m->anns[i];
    }
    view_drop(&m->view);
    m->nanns = n;
    if (n == 0) {
        pp_column_free(m->anns, m->capanns * sizeof *m->anns);
        m->anns = NULL;
        m->capanns = 0;
        return;
    }
    pp_ann *kept = n < m->capanns ? pp_column_shrink(m->anns, m->capanns * sizeof *kept,
                                                     n * sizeof *kept)
                                  : NULL;
    if (kept) { /* else the kept ones stay at the front of the larger table */
        m->anns = kept;
        m->capanns = n;
    }
}

void pp_model_anns_keep(pp_model *m, const uint32_t *keys, size_t n) {
    anns_filter(m, keys, n, 1);
}

void pp_model_anns_drop(pp_model *m, const uint32_t *keys, size_t n) {
    anns_filter(m, keys, n, 0);
}

const pp_annotation *pp_model_annotations(const pp_model *m, size_t *count) {
    static const pp_annotation none[1];
    wide_view *v = (wide_view *)&m->view; /* made once, under its lock */
    *count = 0;
    if (m->nanns == 0)
        return none;
    pthread_mutex_lock(&v->lock);
    if (!v->anns) {
        v->anns_bytes = m->nanns * sizeof *v->anns;
        v->anns = pp_column_grow(NULL, 0, v->anns_bytes);
        for (size_t k = 0; v->anns && k < m->nanns; k++)
            pp_ann_unpack(&m->anns[k], &v->anns[k]);
    }
    const pp_annotation *out = v->anns;
    pthread_mutex_unlock(&v->lock);
    *count = out ? m->nanns : 0;
    return out;
}

void pp_model_annotations_of(const pp_model *m, size_t i, size_t *first, size_t *n) {
    size_t lo = 0, hi = m->nanns;
    while (lo < hi) { /* first annotation with event >= i */
        size_t mid = lo + (hi - lo) / 2;
        if (m->anns[mid].event < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < m->nanns && m->anns[end].event == i)
        end++;
    *first = lo;
    *n = end - lo;
}

int pp_model_add_thread(pp_model *m, const pp_thread_info *t) {
    if (t->name >= m->strings.count)
        return PP_EINVAL;
    if (pp_grow((void **)&m->threads, &m->capthreads, m->nthreads, sizeof *m->threads))
        return PP_ENOMEM;
    m->threads[m->nthreads++] = *t;
    return PP_OK;
}

size_t pp_model_thread_count(const pp_model *m) {
    return m->nthreads;
}

const pp_thread_info *pp_model_thread(const pp_model *m, size_t i) {
    return i < m->nthreads ? &m->threads[i] : NULL;
}

const pp_model_meta *pp_model_meta_get(const pp_model *m) {
    return &m->meta;
}

pp_model_meta *pp_model_meta_mut(pp_model *m) {
    return &m->meta;
}

/* Stable merge sort of event indices by ts_ns; the result ends in `idx`. */
static void sort_indices(size_t *idx, size_t *tmp, size_t n, const int64_t *ts) {
    size_t *src = idx, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                dst[o++] = ts[src[b]] < ts[src[a]] ? src[b++] : src[a++];
            while (a < mid)
                dst[o++] = src[a++];
            while (b < hi)
                dst[o++] = src[b++];
        }
        size_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != idx)
        memcpy(idx, src, n * sizeof *idx);
}

int pp_model_sort_by_time(pp_model *m) {
    pp_event_store *e = &m->ev;
    if (e->narrowed) /* it takes no more events: it cannot make the sorted ones */
        return PP_EINVAL;
    if (shared(m))
        return PP_ESTATE;
    size_t n = e->count;
    pp_cols c;
    pp_model_cols(m, &c);
    int already = 1;
    for (size_t i = 1; i < n && already; i++)
        already = pp_cols_ts(&c, i - 1) <= pp_cols_ts(&c, i);
    if (already)
        return PP_OK;
    if (m->nanns && n >= PP_ANN_EVENT_MAX) /* an annotated event could move past them */
        return PP_EINVAL;
    size_t *idx = malloc(n * sizeof *idx), *tmp = malloc(n * sizeof *tmp);
    int64_t *ts = malloc(n * sizeof *ts);
    size_t capanns = m->nanns ? m->nanns : 1;
    pp_ann *anns = pp_column_grow(NULL, 0, capanns * sizeof *anns);
    pp_event_store sorted;
    pp_event_store_init(&sorted);
    if (!idx || !tmp || !ts || !anns || pp_event_store_reserve(&sorted, n) != PP_OK) {
        free(idx);
        free(tmp);
        free(ts);
        pp_column_free(anns, capanns * sizeof *anns);
        pp_event_store_free(&sorted);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        idx[i] = i;
        ts[i] = pp_cols_ts(&c, i);
    }
    sort_indices(idx, tmp, n, ts);
    free(ts);
    size_t nanns = 0;
    int rc = PP_OK;
    for (size_t i = 0; i < n && rc == PP_OK; i++) {
        size_t j = idx[i], first, count;
        pp_event ev;
        pp_event_slots_get(&e->col, j, &ev);
        rc = pp_event_slots_put(&sorted.col, i, &ev) ? PP_ENOMEM : PP_OK;
        /* annotations follow their event, in their original order */
        pp_model_annotations_of(m, j, &first, &count);
        for (size_t a = 0; a < count; a++) {
            anns[nanns] = m->anns[first + a];
            anns[nanns++].event = (uint32_t)i;
        }
    }
    free(idx);
    free(tmp);
    if (rc != PP_OK) {
        pp_column_free(anns, capanns * sizeof *anns);
        pp_event_store_free(&sorted);
        return rc;
    }
    sorted.count = n;
    pp_event_store_free(e);
    *e = sorted;
    e->col.wide = &e->wide; /* the store moved */
    view_drop(&m->view);
    pp_column_free(m->anns, m->capanns * sizeof *m->anns);
    m->anns = anns;
    m->capanns = capanns;
    return PP_OK;
}
