/* The recording slow path: attaching a thread to a session and giving it the
 * next chunk of records. Everything here may lock and allocate; the hot path
 * (record.c) only comes here on a thread's first record in a session and once
 * per chunk (every 64..4096 records). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/session.h"
#include "core/thread_names.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older C libraries do not name it */
#endif

_Thread_local pp_thread_cache pp_tls_cache;

pp_thread_buf *pp_thread_buf_attach(pp_session *s) {
    int64_t tid = (int64_t)gettid();
    pthread_mutex_lock(&s->lock);
    pp_thread_buf *tb = atomic_load(&s->threads);
    _Atomic(pp_thread_buf *) *tail = &s->threads;
    for (; tb && tb->tid != tid; tb = atomic_load(&tb->next))
        tail = &tb->next;
    if (!tb && (tb = calloc(1, sizeof *tb)) != NULL) {
        char name[32] = "";
        pp_str given = pp_thread_name_given(tid); /* the user's name, else the OS's */
        if (!given)
            pthread_getname_np(pthread_self(), name, sizeof name);
        tb->tid = tid;
        tb->name = given ? given : pp_intern(name);
        atomic_store_explicit(tail, tb, memory_order_release); /* complete before followers see it */
        s->nthreads++;
    }
    pthread_mutex_unlock(&s->lock);
    if (tb) {
        pp_tls_cache.session_id = s->id;
        pp_tls_cache.tb = tb;
    }
    return tb;
}

/* Takes up to one chunk's worth of the session budget; 0 when spent. */
static size_t reserve_budget(pp_session *s) {
    uint64_t have = atomic_load(&s->reserved);
    for (;;) {
        if (have >= s->max_records)
            return 0;
        uint64_t take = s->max_records - have;
        if (take > s->chunk_records)
            take = s->chunk_records;
        if (atomic_compare_exchange_weak(&s->reserved, &have, have + take))
            return (size_t)take;
    }
}

/* Full-size chunks of closed sessions, kept for the next session (up to
 * POOL_MAX of them, 64 MiB): their pages are already faulted and likely in
 * cache, where fresh memory costs the kernel a page clear every 64 records
 * (more than the record itself; docs/recording.md). Smaller chunks (budgets
 * under 64k records) are freed. */
#define POOL_MAX 256
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_chunk *pool;
static size_t pool_size;

void pp_chunks_fork_lock(void) {
    pthread_mutex_lock(&pool_lock);
}

void pp_chunks_fork_unlock(void) {
    pthread_mutex_unlock(&pool_lock);
}

void pp_chunk_release(pp_chunk *c) {
    if (c->cap == PP_CHUNK_MAX) {
        pthread_mutex_lock(&pool_lock);
        int keep = pool_size < POOL_MAX;
        if (keep) {
            atomic_store_explicit(&c->next, pool, memory_order_relaxed);
            pool = c;
            pool_size++;
        }
        pthread_mutex_unlock(&pool_lock);
        if (keep)
            return;
    }
    free(c);
}

void pp_chunk_pool_trim(void) {
    pthread_mutex_lock(&pool_lock);
    pp_chunk *c = pool;
    pool = NULL;
    pool_size = 0;
    pthread_mutex_unlock(&pool_lock);
    while (c) {
        pp_chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
        free(c);
        c = next;
    }
}

/* A chunk of n records with its pages already faulted in: from the pool, or
 * fresh, where a page faulted under pp_span would stall every 64th record
 * (a trap and a page clear) and one madvise here populates them all (one
 * write a page where the kernel lacks MADV_POPULATE_WRITE, before Linux
 * 5.14). Page-aligned, so records do not straddle cache lines. NULL when
 * out of memory. */
static pp_chunk *chunk_new(size_t n) {
    if (n == PP_CHUNK_MAX) {
        pthread_mutex_lock(&pool_lock);
        pp_chunk *c = pool;
        if (c) {
            pool = atomic_load_explicit(&c->next, memory_order_relaxed);
            pool_size--;
        }
        pthread_mutex_unlock(&pool_lock);
        if (c)
            return c;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = sizeof(pp_chunk) + n * sizeof(pp_record);
    void *p = NULL;
    if (posix_memalign(&p, page, bytes) != 0)
        return NULL;
    if (madvise(p, bytes, MADV_POPULATE_WRITE) != 0)
        for (size_t off = 0; off < bytes; off += page)
            ((volatile char *)p)[off] = 0;
    pp_chunk *c = p;
    c->cap = n;
    return c;
}

static void append_chunk(pp_thread_buf *tb, pp_chunk *c) {
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&c->used, 0, memory_order_release);
    if (tb->last)
        atomic_store_explicit(&tb->last->next, c, memory_order_release);
    else
        atomic_store_explicit(&tb->first, c, memory_order_release);
    tb->last = c;
    tb->pos = 0;
}

int pp_thread_buf_grow(pp_session *s, pp_thread_buf *tb) {
    size_t n = reserve_budget(s);
    if (n) {
        pp_chunk *c = chunk_new(n);
        if (!c) {
            atomic_fetch_sub(&s->reserved, n);
            return PP_EFULL;
        }
        append_chunk(tb, c);
        return PP_OK;
    }
    pp_chunk *oldest = atomic_load_explicit(&tb->first, memory_order_relaxed);
    if (s->overflow != PP_OVERFLOW_RING)
        return PP_EFULL;
    if (!oldest) {
        /* A flight recorder keeps every thread's newest records: a thread
         * that comes after the budget is spent still gets one chunk. */
        pp_chunk *c = chunk_new(s->chunk_records);
        if (!c)
            return PP_EFULL;
        atomic_fetch_add(&s->reserved, s->chunk_records);
        append_chunk(tb, c);
        return PP_OK;
    }
    /* Ring: the oldest chunk becomes the newest; what it held is lost. */
    atomic_fetch_add_explicit(&tb->dropped, pp_chunk_count(oldest), memory_order_relaxed);
    if (oldest == tb->last) {
        atomic_store_explicit(&oldest->used, 0, memory_order_release);
        tb->pos = 0;
        return PP_OK;
    }
    atomic_store_explicit(&tb->first, atomic_load_explicit(&oldest->next, memory_order_relaxed),
                          memory_order_release);
    append_chunk(tb, oldest);
    return PP_OK;
}
