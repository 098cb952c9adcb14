/* Building a model from a session's raw records.
 *
 * Two passes over the records. The first collects where every range and
 * region begins and ends (they may begin and end on different threads) and
 * gives each range a lane: an async track on which it overlaps no other, so
 * viewers can nest it. The second emits events in each thread's recording
 * order, annotations after their event.
 *
 * A session still recording (drop policy) is read as a snapshot: the second
 * pass stops each thread at the records the first pass saw, so both passes
 * and the tracks agree, and a range still open is in progress, not lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/names.h"
#include "core/record.h"
#include "model/record_event.h"
#include "pipeprof/model.h"

typedef struct range_info {
    uint64_t id;
    int64_t begin_ns, end_ns; /* end_ns < 0: never ended */
    int is_region;
    uint32_t lane;
} range_info;

typedef struct builder {
    pp_model *m;
    int rc;
    /* pass 1 */
    range_info *ranges;
    size_t nranges, capranges;
    int64_t *end_ids; /* (id, ts) pairs of end records, flattened */
    size_t nends, capends;
    /* pass 2 */
    uint32_t *track_map;  /* session track -> model track */
    size_t ntracks;
    uint32_t regions_track;
    uint32_t *lane_tracks;
    size_t nlanes;
    pp_name_map names;
    uint32_t thread_index;
    int have_event;       /* an event of the current thread can take annotations */
    uint64_t unmatched;
    int live;             /* the session was recording: a snapshot */
    size_t *seen;         /* records of each thread (by visit index) in pass 1 */
    size_t nseen;
    size_t left;          /* pass 2: records of the current thread still to emit */
} builder;

/* Maps a process-wide name id to this model's id. */
static uint32_t map_name(builder *b, pp_str id) {
    uint32_t mid;
    if (pp_name_map_get(&b->names, b->m, id, &mid) != PP_OK)
        b->rc = PP_ENOMEM;
    return mid;
}

static uint32_t intern(builder *b, const char *text) {
    uint32_t id = 0;
    if (pp_model_intern(b->m, text, strlen(text), &id) != PP_OK)
        b->rc = PP_ENOMEM;
    return id;
}

static int collect_ranges(void *ctx, const pp_thread_meta *t, const pp_record *recs, size_t n) {
    builder *b = ctx;
    if (t->index >= b->nseen) {
        size_t cap = b->nseen;
        if ((b->rc = pp_grow((void **)&b->seen, &cap, t->index, sizeof *b->seen)))
            return 1;
        memset(b->seen + b->nseen, 0, (cap - b->nseen) * sizeof *b->seen);
        b->nseen = cap;
    }
    b->seen[t->index] += n;
    for (size_t i = 0; i < n && b->rc == PP_OK; i++) {
        const pp_record *r = &recs[i];
        if (r->kind == PP_REC_RANGE_BEGIN || r->kind == PP_REC_REGION_BEGIN) {
            if ((b->rc = pp_grow((void **)&b->ranges, &b->capranges, b->nranges, sizeof *b->ranges)))
                break;
            b->ranges[b->nranges++] = (range_info){.id = r->u.id, .begin_ns = r->ts_ns, .end_ns = -1,
                                                   .is_region = r->kind == PP_REC_REGION_BEGIN};
        } else if (r->kind == PP_REC_RANGE_END || r->kind == PP_REC_REGION_END) {
            if ((b->rc = pp_grow((void **)&b->end_ids, &b->capends, b->nends + 1, 2 * sizeof *b->end_ids)))
                break;
            b->end_ids[2 * b->nends] = (int64_t)r->u.id;
            b->end_ids[2 * b->nends + 1] = r->ts_ns;
            b->nends++;
        }
    }
    return b->rc != PP_OK;
}

static int cmp_range_id(const void *a, const void *b) {
    const range_info *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_range_begin(const void *a, const void *b) {
    const range_info *x = *(const range_info *const *)a, *y = *(const range_info *const *)b;
    return x->begin_ns < y->begin_ns ? -1 : x->begin_ns > y->begin_ns;
}

static range_info *find_range(builder *b, uint64_t id) {
    range_info key = {.id = id};
    if (b->nranges == 0)
        return NULL;
    return bsearch(&key, b->ranges, b->nranges, sizeof *b->ranges, cmp_range_id);
}

/* Matches ends to begins (ids are unique per session) and assigns lanes:
 * greedy by start time, each range to the first lane free at its start. */
static int pair_and_assign_lanes(builder *b) {
    if (b->nranges)
        qsort(b->ranges, b->nranges, sizeof *b->ranges, cmp_range_id);
    for (size_t i = 0; i < b->nends; i++) {
        range_info *r = find_range(b, (uint64_t)b->end_ids[2 * i]);
        if (r && r->end_ns < 0 && b->end_ids[2 * i + 1] >= r->begin_ns)
            r->end_ns = b->end_ids[2 * i + 1];
        else
            b->unmatched++;
    }
    range_info **order = malloc((b->nranges ? b->nranges : 1) * sizeof *order);
    int64_t *lane_end = malloc((b->nranges ? b->nranges : 1) * sizeof *lane_end);
    if (!order || !lane_end) {
        free(order);
        free(lane_end);
        return PP_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < b->nranges; i++) {
        if (b->ranges[i].end_ns < 0)
            b->unmatched += !b->live;
        else if (!b->ranges[i].is_region)
            order[n++] = &b->ranges[i];
    }
    if (n)
        qsort(order, n, sizeof *order, cmp_range_begin);
    for (size_t i = 0; i < n; i++) {
        size_t lane = 0;
        while (lane < b->nlanes && lane_end[lane] > order[i]->begin_ns)
            lane++;
        if (lane == b->nlanes)
            b->nlanes++;
        lane_end[lane] = order[i]->end_ns;
        order[i]->lane = (uint32_t)lane;
    }
    free(order);
    free(lane_end);
    return PP_OK;
}

static void add_track(builder *b, const pp_track_info *t, uint32_t *index) {
    if (b->rc == PP_OK && pp_model_add_track(b->m, t, index) != PP_OK)
        b->rc = PP_ENOMEM;
}

static void add_tracks(builder *b, pp_session *s) {
    size_t n;
    pp_track_def *defs = NULL;
    if ((b->rc = pp_session_tracks_copy(s, &defs, &n)) != PP_OK)
        return;
    uint32_t process = intern(b, pp_session_process_name(s));
    b->ntracks = n;
    b->track_map = calloc(n ? n : 1, sizeof *b->track_map);
    b->lane_tracks = calloc(b->nlanes ? b->nlanes : 1, sizeof *b->lane_tracks);
    if (!b->track_map || !b->lane_tracks) {
        free(defs);
        b->rc = PP_ENOMEM;
        return;
    }
    b->regions_track = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        pp_track_info t;
        pp_track_info_from_def(&defs[i], &t);
        t.name = map_name(b, defs[i].name);
        t.device = map_name(b, defs[i].device);
        t.process = t.kind == PP_TRACK_KIND_DEVICE ? t.device : process;
        t.pid = pp_session_pid(s);
        t.sort_index = (int32_t)i;
        add_track(b, &t, &b->track_map[i]);
        if (t.kind == PP_TRACK_KIND_REGIONS)
            b->regions_track = b->track_map[i];
    }
    free(defs);
    int has_regions = 0;
    for (size_t i = 0; i < b->nranges; i++)
        has_regions |= b->ranges[i].is_region && b->ranges[i].end_ns >= 0;
    if (has_regions && b->regions_track == UINT32_MAX) {
        pp_track_info t;
        pp_track_info_init(&t);
        t.kind = PP_TRACK_KIND_REGIONS;
        t.name = intern(b, "regions");
        t.process = process;
        t.pid = pp_session_pid(s);
        t.sort_index = (int32_t)n;
        add_track(b, &t, &b->regions_track);
    }
    for (size_t lane = 0; lane < b->nlanes; lane++) {
        char name[32];
        pp_track_info t;
        pp_track_info_init(&t);
        snprintf(name, sizeof name, "ranges %zu", lane);
        t.kind = PP_TRACK_KIND_ASYNC;
        t.name = intern(b, name);
        t.process = process;
        t.pid = pp_session_pid(s);
        t.sort_index = (int32_t)(n + 1 + lane);
        add_track(b, &t, &b->lane_tracks[lane]);
    }
}

static void add_event(builder *b, const pp_event *e) {
    if (b->rc == PP_OK && (b->rc = pp_model_add_event(b->m, e)) == PP_OK)
        b->have_event = 1;
}

static void add_annotation(builder *b, const pp_record *r) {
    size_t n = pp_model_event_count(b->m);
    if (!b->have_event || n == 0 || b->rc != PP_OK)
        return; /* its event was dropped or overwritten: counted there */
    pp_annotation a;
    pp_annotation_from_record(r, n - 1, &a);
    a.key = map_name(b, a.key);
    if (a.type == PP_VALUE_STR)
        a.v.s = map_name(b, a.v.s);
    if (b->rc == PP_OK && pp_model_add_annotation(b->m, &a) != PP_OK)
        b->rc = PP_ENOMEM;
}

static void emit_record(builder *b, const pp_record *r) {
    pp_event e;
    pp_event_init(&e);
    e.ts_ns = r->ts_ns;
    e.name = map_name(b, r->name);
    if (r->kind >= PP_REC_ARG_INT) {
        add_annotation(b, r);
        return;
    }
    if (r->kind == PP_REC_RANGE_END || r->kind == PP_REC_REGION_END) {
        b->have_event = 0;
        return;
    }
    if (r->kind == PP_REC_RANGE_BEGIN || r->kind == PP_REC_REGION_BEGIN) {
        const range_info *ri = find_range(b, r->u.id);
        b->have_event = 0;
        if (!ri || ri->end_ns < 0)
            return; /* counted as unmatched */
        e.kind = ri->is_region ? PP_EV_REGION : PP_EV_RANGE;
        e.track = ri->is_region ? b->regions_track : b->lane_tracks[ri->lane];
        e.dur_ns = ri->end_ns - ri->begin_ns;
        e.id = r->u.id;
        add_event(b, &e);
        return;
    }
    if (r->track >= b->ntracks) {
        b->have_event = 0;
        b->unmatched++;
        return;
    }
    pp_event_from_record(r, &e);
    e.name = map_name(b, e.name);
    e.stage = map_name(b, e.stage);
    e.track = b->track_map[e.track];
    add_event(b, &e);
}

static int emit_thread_records(void *ctx, const pp_thread_meta *t, const pp_record *recs, size_t n) {
    builder *b = ctx;
    if (t->index != b->thread_index || pp_model_thread_count(b->m) == 0) {
        pp_thread_info info = {.tid = t->tid, .name = map_name(b, t->name),
                               .recorded = t->recorded, .dropped = t->dropped};
        b->thread_index = t->index;
        b->have_event = 0;
        b->left = t->index < b->nseen ? b->seen[t->index] : 0;
        if (b->rc == PP_OK && pp_model_add_thread(b->m, &info) != PP_OK)
            b->rc = PP_ENOMEM;
        pp_model_meta_mut(b->m)->dropped_records += t->dropped;
    }
    if (n > b->left)
        n = b->left;
    b->left -= n;
    for (size_t i = 0; i < n && b->rc == PP_OK; i++)
        emit_record(b, &recs[i]);
    return b->rc != PP_OK;
}

int pp_model_from_session(pp_session *s, pp_model **out) {
    builder b = {0};
    int rc = pp_model_create(&b.m);
    if (rc)
        return rc;
    pp_model_meta *meta = pp_model_meta_mut(b.m);
    meta->level = pp_session_level(s);
    meta->process_name = intern(&b, pp_session_process_name(s));
    if (pp_model_meta_set_clock(b.m) != PP_OK)
        b.rc = PP_ENOMEM;
    b.live = pp_session_recording(s);
    rc = pp_session_visit_records(s, collect_ranges, &b);
    if (rc == PP_OK)
        rc = b.rc ? b.rc : pair_and_assign_lanes(&b);
    if (rc == PP_OK) {
        add_tracks(&b, s);
        rc = b.rc ? b.rc : pp_session_visit_records(s, emit_thread_records, &b);
        if (b.rc)
            rc = b.rc;
    }
    meta->unmatched_ends = b.unmatched;
    meta->truncated_bytes += pp_names_cut_bytes(); /* over-long names (pp_intern) */
    if (rc == PP_OK)
        rc = pp_model_sort_by_time(b.m);
    free(b.ranges);
    free(b.end_ids);
    free(b.track_map);
    free(b.lane_tracks);
    pp_name_map_free(&b.names);
    free(b.seen);
    if (rc != PP_OK) {
        pp_model_free(b.m);
        return rc;
    }
    *out = b.m;
    return PP_OK;
}
