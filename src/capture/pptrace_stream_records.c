/* The flight recorder's records to events (pptrace_stream_impl.h): what
 * pp_model_from_session makes of a record (model/record_event.h), one
 * period at a time.
 *
 * Annotations follow their record on the same thread, and an ANNOTATIONS
 * block may only refer to events at or after the last one annotated. So a
 * thread's newest record is held back for one period, which is time for its
 * annotations to arrive; an annotation that comes later still, after its
 * event was written, is counted among the dropped records. A range is
 * written when its end is seen (begin and end may come from two threads),
 * on the first lane free at its start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/pptrace_stream_impl.h"
#include "core/grow.h"
#include "io/pptrace_format.h"

uint32_t pp_stream_map_name(stream *st, pp_str id) {
    uint32_t mid;
    if (pp_name_map_get(&st->names, st->m, id, &mid) != PP_OK)
        pp_stream_fail(st, PP_ENOMEM);
    return mid;
}

static uint32_t add_track(stream *st, const pp_track_info *t) {
    uint32_t index = 0;
    if (pp_model_add_track(st->m, t, &index) != PP_OK)
        pp_stream_fail(st, PP_ENOMEM);
    return index;
}

/* Tracks the stream creates sort after the session's own. */
#define OWN_TRACKS_SORT (INT32_MAX / 2)

static pp_track_info own_track(stream *st, uint8_t kind, const char *name, int32_t sort) {
    pp_track_info t;
    pp_track_info_init(&t);
    t.kind = kind;
    if (pp_model_intern(st->m, name, strlen(name), &t.name) != PP_OK)
        pp_stream_fail(st, PP_ENOMEM);
    t.process = st->process;
    t.pid = st->pid;
    t.sort_index = sort;
    return t;
}

/* The model track of session track `t`, copied from the session on first
 * use; UINT32_MAX for a track the session never created. */
static uint32_t map_track(stream *st, uint32_t t) {
    if (t < st->track_cap && st->track_map[t])
        return st->track_map[t] - 1;
    pp_track_def d;
    if (pp_follower_track(st->f, t, &d) != PP_OK)
        return UINT32_MAX;
    if (t >= st->track_cap) {
        size_t cap = st->track_cap;
        if (pp_grow((void **)&st->track_map, &cap, t, sizeof *st->track_map) != PP_OK) {
            pp_stream_fail(st, PP_ENOMEM);
            return UINT32_MAX;
        }
        memset(st->track_map + st->track_cap, 0, (cap - st->track_cap) * sizeof *st->track_map);
        st->track_cap = cap;
    }
    pp_track_info info;
    pp_track_info_from_def(&d, &info);
    info.name = pp_stream_map_name(st, d.name);
    info.device = pp_stream_map_name(st, d.device);
    info.process = info.kind == PP_TRACK_KIND_DEVICE ? info.device : st->process;
    info.pid = st->pid;
    info.sort_index = (int32_t)t;
    st->track_map[t] = add_track(st, &info) + 1;
    return st->track_map[t] - 1;
}

static void add_event(stream *st, thread_state *ts, const pp_event *e) {
    if (pp_model_event_count(st->m) >= PPTRACE_ROWS_PER_BLOCK)
        pp_stream_write_batch(st);
    int rc = pp_model_add_event(st->m, e);
    if (rc == PP_EINVAL) { /* a time no trace format can hold */
        st->ignored++;
        return;
    }
    if (rc != PP_OK) {
        pp_stream_fail(st, rc);
        return;
    }
    if (ts) {
        ts->has_event = 1;
        ts->gen = st->gen;
        ts->event = pp_model_event_count(st->m) - 1;
    }
}

static void add_annotation(stream *st, thread_state *ts, const pp_record *r) {
    if (!ts->has_event)
        return; /* after a range record, as in pp_model_from_session */
    if (ts->gen != st->gen) {
        st->late_annotations++;
        return;
    }
    pp_annotation a;
    pp_annotation_from_record(r, ts->event, &a);
    a.key = pp_stream_map_name(st, a.key);
    if (a.type == PP_VALUE_STR)
        a.v.s = pp_stream_map_name(st, a.v.s);
    if (pp_model_add_annotation(st->m, &a) != PP_OK)
        pp_stream_fail(st, PP_ENOMEM);
}

static open_range *find_range(range_list *l, uint64_t id) {
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].id == id)
            return &l->v[i];
    return NULL;
}

static void take_range(range_list *l, open_range *r) {
    *r = l->v[--l->n];
}

static void push_range(stream *st, range_list *l, open_range r) {
    if (pp_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v) != PP_OK) {
        pp_stream_fail(st, PP_ENOMEM);
        return;
    }
    l->v[l->n++] = r;
}

/* The track of a range [begin, end): regions on the session's regions
 * track (or one of the stream's own), ranges on the first lane free at
 * their start. */
static uint32_t range_track(stream *st, const open_range *b, int64_t end_ns) {
    if (b->is_region) {
        if (!st->regions_track) {
            pp_track_def d;
            for (uint32_t t = 0; pp_follower_track(st->f, t, &d) == PP_OK; t++)
                if (d.kind == PP_TRACK_KIND_REGIONS)
                    st->regions_track = map_track(st, t) + 1;
            if (!st->regions_track) {
                pp_track_info t = own_track(st, PP_TRACK_KIND_REGIONS, "regions", OWN_TRACKS_SORT);
                st->regions_track = add_track(st, &t) + 1;
            }
        }
        return st->regions_track - 1;
    }
    size_t lane = 0;
    while (lane < st->nlanes && st->lane_end[lane] > b->ts_ns)
        lane++;
    if (lane == st->nlanes) {
        size_t cap = st->lane_cap;
        if (pp_grow((void **)&st->lane_end, &cap, lane, sizeof *st->lane_end) != PP_OK ||
            pp_grow((void **)&st->lane_track, &st->lane_track_cap, lane, sizeof *st->lane_track)) {
            pp_stream_fail(st, PP_ENOMEM);
            return 0;
        }
        st->lane_cap = cap;
        char name[32];
        snprintf(name, sizeof name, "ranges %zu", lane);
        pp_track_info t = own_track(st, PP_TRACK_KIND_ASYNC, name, OWN_TRACKS_SORT + 1 + (int32_t)lane);
        st->lane_track[lane] = add_track(st, &t);
        st->nlanes++;
    }
    st->lane_end[lane] = end_ns;
    return st->lane_track[lane];
}

static void emit_range(stream *st, const open_range *b, int64_t end_ns) {
    pp_event e;
    pp_event_init(&e);
    e.kind = b->is_region ? PP_EV_REGION : PP_EV_RANGE;
    e.ts_ns = b->ts_ns;
    e.dur_ns = end_ns - b->ts_ns;
    e.name = b->name;
    e.id = b->id;
    e.track = range_track(st, b, end_ns);
    if (st->rc == PP_OK)
        add_event(st, NULL, &e);
}

/* A begin meets its end, whichever of the two is seen first (they may be
 * recorded on different threads); an end before its begin is unmatched. */
static void on_range_record(stream *st, const pp_record *r) {
    int is_begin = r->kind == PP_REC_RANGE_BEGIN || r->kind == PP_REC_REGION_BEGIN;
    open_range *other = find_range(is_begin ? &st->ends : &st->begins, r->u.id);
    open_range me = {.id = r->u.id, .ts_ns = r->ts_ns, .is_region = r->kind == PP_REC_REGION_BEGIN};
    if (is_begin)
        me.name = pp_stream_map_name(st, r->name);
    if (other) {
        open_range o = *other;
        take_range(is_begin ? &st->ends : &st->begins, other);
        const open_range *b = is_begin ? &me : &o;
        int64_t end_ns = is_begin ? o.ts_ns : me.ts_ns;
        if (end_ns >= b->ts_ns) {
            emit_range(st, b, end_ns);
            return;
        }
        st->unmatched++; /* the end; the begin stays open */
        if (!is_begin)
            push_range(st, &st->begins, o);
        else
            push_range(st, &st->begins, me);
        return;
    }
    push_range(st, is_begin ? &st->begins : &st->ends, me);
}

static void on_record(stream *st, thread_state *ts, const pp_record *r) {
    if (r->kind >= PP_REC_ARG_INT) {
        add_annotation(st, ts, r);
        return;
    }
    ts->has_event = 0;
    if (r->kind >= PP_REC_RANGE_BEGIN) {
        on_range_record(st, r);
        return;
    }
    pp_event e;
    pp_event_from_record(r, &e);
    e.track = map_track(st, e.track);
    if (e.track == UINT32_MAX) {
        st->unmatched++;
        return;
    }
    e.name = pp_stream_map_name(st, e.name);
    e.stage = pp_stream_map_name(st, e.stage);
    add_event(st, ts, &e);
}

static thread_state *thread_of(stream *st, uint32_t i) {
    if (i >= st->nthreads) {
        size_t cap = st->nthreads;
        if (pp_grow((void **)&st->threads, &cap, i, sizeof *st->threads) != PP_OK) {
            pp_stream_fail(st, PP_ENOMEM);
            return NULL;
        }
        memset(st->threads + st->nthreads, 0, (cap - st->nthreads) * sizeof *st->threads);
        st->nthreads = cap;
    }
    return &st->threads[i];
}

/* Takes a thread's newly published records, all but its newest record and
 * the annotations after it, which wait one poll for more annotations. */
int pp_stream_on_records(void *ctx, uint32_t thread, const pp_record *recs, size_t n, size_t *consumed) {
    stream *st = ctx;
    thread_state *ts = thread_of(st, thread);
    if (!ts)
        return 1;
    size_t take = n, newest = n;
    while (newest > 0 && recs[newest - 1].kind >= PP_REC_ARG_INT)
        newest--;
    if (!st->final && newest > 0 && !(newest == 1 && ts->held))
        take = newest - 1;
    ts->held = take < n;
    for (size_t i = 0; i < take && st->rc == PP_OK; i++)
        on_record(st, ts, &recs[i]);
    *consumed = take;
    return st->rc != PP_OK;
}
