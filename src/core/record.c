/* The recording hot path.
 *
 * Cost budget: a timed span at most 1.5x the floor of two TSC reads and a
 * naive 64-byte append (bench/bench_record.c prints the ratios). Each call
 * here is: a relaxed load of the session state, a thread-local compare to
 * find the thread's buffer, a bounds check, the record's fields written
 * straight into its slot (a record built on the stack and copied costs a
 * store-forwarding stall when the copy reloads its narrow fields 16 bytes
 * at a time), and a release store that publishes it. No lock, no
 * allocation, no formatting; pp_thread_buf_grow (buffer.c) is the only way
 * out, once per chunk. */
#include <string.h>

#include "core/session.h"

/* next_slot's way when the fast case does not hold: no session, not
 * running, the thread's first record in the session, or a full chunk. Out
 * of line, so that the fast case needs no saved registers. */
static __attribute__((noinline, cold)) pp_record *next_slot_slow(pp_session *s, pp_thread_buf **tbp,
                                                                   int *rc, int ends_range) {
    *rc = PP_OK;
    if (!s)
        return NULL;
    int state = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (state != PP_STATE_RUNNING && !(ends_range && state == PP_STATE_PAUSED)) {
        *rc = state == PP_STATE_PAUSED ? PP_OK : PP_ESTATE;
        return NULL;
    }
    pp_thread_buf *tb = pp_thread_buf_get(s);
    if (!tb) {
        *rc = PP_ENOMEM;
        return NULL;
    }
    if ((!tb->last || tb->pos == tb->last->cap) && pp_thread_buf_grow(s, tb) != PP_OK) {
        atomic_fetch_add_explicit(&tb->dropped, 1, memory_order_relaxed);
        *rc = PP_EFULL;
        return NULL;
    }
    *tbp = tb;
    return &tb->last->recs[tb->pos];
}

/* The slot for the next record of the calling thread, or NULL with *rc:
 * PP_OK when the call should be ignored (NULL session, paused), else a
 * negative status. */
static inline pp_record *next_slot(pp_session *s, pp_thread_buf **tbp, int *rc) {
    if (s && atomic_load_explicit(&s->state, memory_order_relaxed) == PP_STATE_RUNNING &&
        pp_tls_cache.session_id == s->id) {
        pp_thread_buf *tb = pp_tls_cache.tb;
        if (tb->last && tb->pos != tb->last->cap) {
            *tbp = tb;
            return &tb->last->recs[tb->pos];
        }
    }
    return next_slot_slow(s, tbp, rc, 0);
}

/* The slot for the end of a range whose begin was recorded: taken while
 * paused too, so that a pause never cuts a recorded range in half (its
 * begin without an end, or a pop that unwinds nothing). */
static inline pp_record *end_slot(pp_session *s, pp_thread_buf **tbp, int *rc) {
    pp_record *r = next_slot(s, tbp, rc);
    if (r || *rc != PP_OK || !s)
        return r;
    return next_slot_slow(s, tbp, rc, 1); /* paused */
}

/* A range begun while paused was not recorded; when its end comes while
 * recording, the range is one the trace lacks: counted dropped on the
 * ending thread. Ended while paused too, it is ignored as every call made
 * while paused is. PP_ESTATE before start or after stop. */
static int drop_range_begun_paused(pp_session *s) {
    int state = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (state == PP_STATE_PAUSED)
        return PP_OK;
    if (state != PP_STATE_RUNNING)
        return PP_ESTATE;
    pp_thread_buf *tb = pp_thread_buf_get(s);
    if (!tb)
        return PP_ENOMEM;
    atomic_fetch_add_explicit(&tb->dropped, 1, memory_order_relaxed);
    return PP_OK;
}

/* Range ids handed out while paused carry this bit: nothing was recorded
 * for them, and their end must not be (it would match no begin). */
#define ID_BEGUN_PAUSED (UINT64_C(1) << 63)

/* Makes the slot next_slot gave visible to readers. */
static inline int publish(pp_thread_buf *tb) {
    tb->pos++;
    atomic_store_explicit(&tb->last->used, tb->pos, memory_order_release);
    return PP_OK;
}

/* Writes a span's fields into its slot. */
static inline void fill_span(pp_record *r, pp_track track, pp_str name, pp_str stage,
                             int64_t ts_ns, int64_t dur_ns, int64_t batch, uint64_t hw_ns,
                             uint64_t xfer_ns, uint8_t role) {
    r->ts_ns = ts_ns;
    r->dur_ns = dur_ns;
    r->batch = batch;
    r->hw_ns = hw_ns;
    r->xfer_ns = xfer_ns;
    r->u.id = 0;
    r->name = name;
    r->stage = stage;
    r->track = track;
    r->kind = PP_REC_SPAN;
    r->role = role;
    r->phase = 0;
    r->pad = 0;
}

/* Writes one record of the other kinds (not the hot path of a timed span:
 * a copy of a record built by the caller). */
static inline int put(pp_session *s, const pp_record *rec) {
    pp_thread_buf *tb;
    int rc;
    pp_record *r = next_slot(s, &tb, &rc);
    if (!r)
        return rc;
    *r = *rec;
    return publish(tb);
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
    pp_thread_buf *tb;
    int rc;
    pp_record *r = next_slot(s, &tb, &rc);
    if (!r)
        return rc;
    /* rec is read only now: nothing of it has to live across next_slot */
    fill_span(r, rec->track, rec->name, rec->stage, rec->ts_ns, rec->dur_ns, rec->batch,
              rec->hw_ns, rec->xfer_ns, (uint8_t)rec->role);
    return publish(tb);
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

/* A push while paused goes on the stack too (unrecorded), so that every
 * pop ends the range the program means. */
int pp_push(pp_session *s, pp_track track, pp_str name) {
    if (!s)
        return PP_OK;
    int state = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (state != PP_STATE_RUNNING && state != PP_STATE_PAUSED)
        return PP_ESTATE;
    pp_thread_buf *tb = pp_thread_buf_get(s);
    if (!tb)
        return PP_ENOMEM;
    int paused = state == PP_STATE_PAUSED;
    if (tb->depth == PP_STACK_DEPTH) {
        if (!paused)
            atomic_fetch_add_explicit(&tb->dropped, 1, memory_order_relaxed);
        return PP_EFULL;
    }
    tb->stack[tb->depth++] = (pp_open_range){.track = track, .name = name, .ts_ns = paused ? 0 : pp_now(),
                                             .begun_paused = (uint8_t)paused};
    return PP_OK;
}

int pp_pop(pp_session *s) {
    if (!s)
        return PP_OK;
    int64_t now = pp_now();
    int state = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (state != PP_STATE_RUNNING && state != PP_STATE_PAUSED)
        return PP_ESTATE;
    pp_thread_buf *tb = pp_thread_buf_get(s);
    if (!tb)
        return PP_ENOMEM;
    if (tb->depth == 0)
        return PP_ESTATE;
    const pp_open_range *o = &tb->stack[--tb->depth];
    if (o->begun_paused)
        return drop_range_begun_paused(s);
    int rc;
    pp_record *r = end_slot(s, &tb, &rc);
    if (!r)
        return rc;
    fill_span(r, o->track, o->name, 0, o->ts_ns, now - o->ts_ns, -1, 0, 0, PP_ROLE_USER);
    return publish(tb);
}

/* Begin records carry a fresh id that the matching end record repeats. */
static int begin_with_id(pp_session *s, pp_str name, uint64_t *id, uint8_t kind) {
    if (!id)
        return PP_EINVAL;
    *id = 0;
    if (!s)
        return PP_OK;
    uint64_t fresh = atomic_fetch_add_explicit(&s->next_id, 1, memory_order_relaxed);
    pp_record rec = {.ts_ns = pp_now(), .batch = -1, .u.id = fresh, .name = name, .kind = kind};
    pp_thread_buf *tb;
    int rc;
    pp_record *r = next_slot(s, &tb, &rc);
    if (!r) {
        if (rc == PP_OK) /* paused: an id all the same, marked, so its end is known */
            *id = fresh | ID_BEGUN_PAUSED;
        return rc;
    }
    *r = rec;
    *id = fresh;
    return publish(tb);
}

static int end_with_id(pp_session *s, uint64_t id, uint8_t kind) {
    if (!s || id == 0)
        return PP_OK;
    if (id & ID_BEGUN_PAUSED)
        return drop_range_begun_paused(s);
    pp_thread_buf *tb;
    int rc;
    pp_record *r = end_slot(s, &tb, &rc);
    if (!r)
        return rc;
    *r = (pp_record){.ts_ns = pp_now(), .batch = -1, .u.id = id, .kind = kind};
    return publish(tb);
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
