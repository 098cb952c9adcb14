/* Following a recording session: per-thread cursors over the chunk lists,
 * advanced by what the owners have published (follow.h). Runs on the
 * follower's thread only; the recording threads are never touched. */
#include <stdlib.h>

#include "core/follow.h"
#include "core/grow.h"
#include "core/session.h"

typedef struct cursor {
    pp_thread_buf *tb;
    pp_chunk *chunk; /* NULL until the thread has its first chunk */
    size_t idx;      /* next record of `chunk` to hand over */
} cursor;

struct pp_follower {
    pp_session *s;
    cursor *cur;
    size_t ncur, capcur;
};

/* Appends a cursor for tb, placed after everything tb published so far when
 * `at_end`, else at its first record. */
static int add_cursor(pp_follower *f, pp_thread_buf *tb, int at_end) {
    if (pp_grow((void **)&f->cur, &f->capcur, f->ncur, sizeof *f->cur))
        return PP_ENOMEM;
    cursor c = {.tb = tb, .chunk = NULL, .idx = 0};
    if (at_end) {
        for (pp_chunk *k = atomic_load_explicit(&tb->first, memory_order_acquire); k;
             k = atomic_load_explicit(&k->next, memory_order_acquire)) {
            c.chunk = k;
            c.idx = pp_chunk_count(k);
        }
    }
    f->cur[f->ncur++] = c;
    return PP_OK;
}

/* Adds cursors for threads that attached since the last call. */
static int find_new_threads(pp_follower *f, int at_end) {
    pp_thread_buf *tb = f->ncur ? atomic_load_explicit(&f->cur[f->ncur - 1].tb->next, memory_order_acquire)
                                : atomic_load_explicit(&f->s->threads, memory_order_acquire);
    for (; tb; tb = atomic_load_explicit(&tb->next, memory_order_acquire))
        if (add_cursor(f, tb, at_end) != PP_OK)
            return PP_ENOMEM;
    return PP_OK;
}

int pp_follower_open(pp_session *s, pp_follower **out) {
    if (!s || !out)
        return PP_EINVAL;
    pp_follower *f = calloc(1, sizeof *f);
    if (!f)
        return PP_ENOMEM;
    int rc = PP_OK;
    pthread_mutex_lock(&s->lock); /* pp_session_set_config cannot switch to ring meanwhile */
    if (s->overflow == PP_OVERFLOW_RING)
        rc = PP_EUNSUPPORTED;
    else
        s->followers++;
    pthread_mutex_unlock(&s->lock);
    if (rc != PP_OK) {
        free(f);
        return rc;
    }
    f->s = s;
    if (find_new_threads(f, 1) != PP_OK) {
        pp_follower_close(f);
        return PP_ENOMEM;
    }
    *out = f;
    return PP_OK;
}

/* Hands over what thread i published past its cursor; 1 when fn stopped. */
static int poll_thread(pp_follower *f, uint32_t i, pp_follow_fn fn, void *ctx) {
    cursor *c = &f->cur[i];
    for (;;) {
        if (!c->chunk) {
            c->chunk = atomic_load_explicit(&c->tb->first, memory_order_acquire);
            c->idx = 0;
            if (!c->chunk)
                return 0;
        }
        size_t n = pp_chunk_count(c->chunk);
        if (n > c->idx) {
            size_t consumed = n - c->idx;
            int stop = fn(ctx, i, c->chunk->recs + c->idx, n - c->idx, &consumed);
            c->idx += consumed;
            if (stop)
                return 1;
        }
        if (c->idx < c->chunk->cap)
            return 0; /* the owner is still filling this chunk */
        pp_chunk *next = atomic_load_explicit(&c->chunk->next, memory_order_acquire);
        if (!next)
            return 0;
        c->chunk = next;
        c->idx = 0;
    }
}

int pp_follower_poll(pp_follower *f, pp_follow_fn fn, void *ctx) {
    int rc = find_new_threads(f, 0);
    for (size_t i = 0; i < f->ncur; i++)
        if (poll_thread(f, (uint32_t)i, fn, ctx))
            return 1;
    return rc;
}

uint64_t pp_follower_session_dropped(const pp_follower *f) {
    uint64_t n = 0;
    for (size_t i = 0; i < f->ncur; i++)
        n += atomic_load_explicit(&f->cur[i].tb->dropped, memory_order_relaxed);
    return n;
}

int pp_follower_track(pp_follower *f, pp_track t, pp_track_def *out) {
    int rc = PP_ENOTFOUND;
    pthread_mutex_lock(&f->s->lock);
    if (t < f->s->ntracks) {
        *out = f->s->tracks[t];
        rc = PP_OK;
    }
    pthread_mutex_unlock(&f->s->lock);
    return rc;
}

void pp_follower_close(pp_follower *f) {
    if (!f)
        return;
    pthread_mutex_lock(&f->s->lock);
    f->s->followers--;
    pthread_mutex_unlock(&f->s->lock);
    free(f->cur);
    free(f);
}
