/* The recording hot path.
 *
 * Cost budget: a span must cost at most as much again as the two clock reads
 * that time it (bench/bench_record.c prints the ratio). Each call here is: a
 * relaxed load of the session state, a thread-local compare to find the
 * thread's buffer, a bounds check, one 64-byte store. No lock, no allocation,
 * no formatting; pp_thread_buf_grow (buffer.c) is the only way out, once per
 * chunk. */
#include <string.h>

#include "core/session.h"

/* Finds the slot for the next record of the calling thread. Returns 1 when
 * the call should be ignored (NULL session, paused), 0 with *out set, or a
 * negative status. */
static inline int next_slot(pp_session *s, pp_thread_buf **tbp) {
    if (!s)
        return 1;
    int state = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (state != PP_STATE_RUNNING)
        return state == PP_STATE_PAUSED ? 1 : PP_ESTATE;
    pp_thread_buf *tb = pp_thread_buf_get(s);
    if (!tb)
        return PP_ENOMEM;
    if ((!tb->last || tb->pos == tb->last->cap) && pp_thread_buf_grow(s, tb) != PP_OK) {
        atomic_fetch_add_explicit(&tb->dropped, 1, memory_order_relaxed);
        return PP_EFULL;
    }
    *tbp = tb;
    return 0;
}

/* Writes one record with the fields every kind shares. */
static inline int put(pp_session *s, const pp_record *r) {
    pp_thread_buf *tb;
    int rc = next_slot(s, &tb);
    if (rc)
        return rc > 0 ? PP_OK : rc;
    tb->last->recs[tb->pos++] = *r;
    atomic_store_explicit(&tb->last->used, tb->pos, memory_order_release); /* publish */
    return PP_OK;
}

void pp_span_rec_init(pp_span_rec *rec) {
    memset(rec, 0, sizeof *rec);
    rec->role = PP_ROLE_USER;
    rec->batch = -1;
}

int pp_span(pp_session *s, const pp_span_rec *rec) {
    if (rec->dur_ns < 0 || (rec->ts_ns > 0 && rec->dur_ns > INT64_MAX - rec->ts_ns) ||
        (unsigned)rec->role > PP_ROLE_USER)
        return PP_EINVAL;
    pp_record r = {.ts_ns = rec->ts_ns, .dur_ns = rec->dur_ns, .batch = rec->batch,
                   .hw_ns = rec->hw_ns, .xfer_ns = rec->xfer_ns, .name = rec->name,
                   .stage = rec->stage, .track = rec->track, .kind = PP_REC_SPAN,
                   .role = (uint8_t)rec->role};
    return put(s, &r);
}

int pp_mark(pp_session *s, pp_track track, pp_str name, int64_t ts_ns) {
    pp_record r = {.ts_ns = ts_ns, .batch = -1, .name = name, .track = track, .kind = PP_REC_INSTANT};
    return put(s, &r);
}

int pp_counter(pp_session *s, pp_track track, pp_str name, int64_t ts_ns, double value) {
    pp_record r = {.ts_ns = ts_ns, .batch = -1, .u.value = value, .name = name, .track = track,
                   .kind = PP_REC_COUNTER};
    return put(s, &r);
}

int pp_flow(pp_session *s, pp_track track, pp_str name, int64_t ts_ns, uint64_t flow_id,
            pp_flow_phase phase) {
    if ((unsigned)phase > PP_FLOW_END)
        return PP_EINVAL;
    pp_record r = {.ts_ns = ts_ns, .batch = -1, .u.id = flow_id, .name = name, .track = track,
                   .kind = PP_REC_FLOW, .phase = (uint8_t)phase};
    return put(s, &r);
}

int pp_push(pp_session *s, pp_track track, pp_str name) {
    if (!s)
        return PP_OK;
    int state = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (state != PP_STATE_RUNNING)
        return state == PP_STATE_PAUSED ? PP_OK : PP_ESTATE;
    pp_thread_buf *tb = pp_thread_buf_get(s);
    if (!tb)
        return PP_ENOMEM;
    if (tb->depth == PP_STACK_DEPTH) {
        atomic_fetch_add_explicit(&tb->dropped, 1, memory_order_relaxed);
        return PP_EFULL;
    }
    tb->stack[tb->depth++] = (pp_open_range){.track = track, .name = name, .ts_ns = pp_now()};
    return PP_OK;
}

int pp_pop(pp_session *s) {
    if (!s)
        return PP_OK;
    int64_t now = pp_now();
    int state = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (state != PP_STATE_RUNNING)
        return state == PP_STATE_PAUSED ? PP_OK : PP_ESTATE;
    pp_thread_buf *tb = pp_thread_buf_get(s);
    if (!tb)
        return PP_ENOMEM;
    if (tb->depth == 0)
        return PP_ESTATE;
    const pp_open_range *o = &tb->stack[--tb->depth];
    pp_record r = {.ts_ns = o->ts_ns, .dur_ns = now - o->ts_ns, .batch = -1, .name = o->name,
                   .track = o->track, .kind = PP_REC_SPAN, .role = PP_ROLE_USER};
    return put(s, &r);
}

/* Begin records carry a fresh id that the matching end record repeats. */
static int begin_with_id(pp_session *s, pp_str name, uint64_t *id, uint8_t kind) {
    if (!id)
        return PP_EINVAL;
    *id = 0;
    if (!s)
        return PP_OK;
    uint64_t fresh = atomic_fetch_add_explicit(&s->next_id, 1, memory_order_relaxed);
    pp_record r = {.ts_ns = pp_now(), .batch = -1, .u.id = fresh, .name = name, .kind = kind};
    int rc = put(s, &r);
    if (rc == PP_OK)
        *id = fresh;
    return rc;
}

static int end_with_id(pp_session *s, uint64_t id, uint8_t kind) {
    if (!s || id == 0)
        return PP_OK;
    pp_record r = {.ts_ns = pp_now(), .batch = -1, .u.id = id, .kind = kind};
    return put(s, &r);
}

int pp_range_start(pp_session *s, pp_str name, uint64_t *id) {
    return begin_with_id(s, name, id, PP_REC_RANGE_BEGIN);
}

int pp_range_stop(pp_session *s, uint64_t id) {
    return end_with_id(s, id, PP_REC_RANGE_END);
}

int pp_region_begin(pp_session *s, pp_str name, uint64_t *id) {
    return begin_with_id(s, name, id, PP_REC_REGION_BEGIN);
}

int pp_region_end(pp_session *s, uint64_t id) {
    return end_with_id(s, id, PP_REC_REGION_END);
}

int pp_annotate_int(pp_session *s, pp_str key, int64_t value) {
    pp_record r = {.batch = -1, .u.ival = value, .name = key, .kind = PP_REC_ARG_INT};
    return put(s, &r);
}

int pp_annotate_double(pp_session *s, pp_str key, double value) {
    pp_record r = {.batch = -1, .u.value = value, .name = key, .kind = PP_REC_ARG_DOUBLE};
    return put(s, &r);
}

int pp_annotate_str(pp_session *s, pp_str key, pp_str value) {
    pp_record r = {.batch = -1, .name = key, .stage = value, .kind = PP_REC_ARG_STR};
    return put(s, &r);
}
