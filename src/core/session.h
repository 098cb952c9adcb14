/* session.h — the session and per-thread buffer structures, shared by the
 * core's files (lifecycle, tracks, slow path, hot path). Not public. */
#ifndef PP_CORE_SESSION_H
#define PP_CORE_SESSION_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/record.h"

enum { PP_STATE_OPEN = 0, PP_STATE_RUNNING = 1, PP_STATE_PAUSED = 2, PP_STATE_STOPPED = 3 };

#define PP_STACK_DEPTH 64
#define PP_CHUNK_MAX 4096 /* records in a chunk of a large budget (pp_chunk_records_for) */

/* A run of records. The owner publishes each record by a release store of
 * `used`, so a reader (stop, possibly on another thread while the program
 * still records) sees only complete records: recs[0 .. used) . */
typedef struct pp_chunk {
    _Atomic(struct pp_chunk *) next;
    size_t cap;
    _Atomic size_t used;
    _Alignas(64) pp_record recs[]; /* one cache line each */
} pp_chunk;

typedef struct pp_open_range {
    pp_track track;
    pp_str name;
    int64_t ts_ns;
    uint8_t begun_paused; /* pushed while paused: not recorded (record.c) */
} pp_open_range;

/* One thread's buffer in one session. Only the owning thread writes it while
 * recording; readers look at it after stop (or while paused), or follow it
 * while it records (follow.c: published records only). */
typedef struct pp_thread_buf {
    /* session's list of buffers: appended under the lock, read without it */
    _Atomic(struct pp_thread_buf *) next;
    int64_t tid;
    pp_str name;
    _Atomic(pp_chunk *) first; /* chunk list, oldest first */
    pp_chunk *last;             /* owner only: the chunk being filled */
    size_t pos;                 /* owner only: next slot in `last` */
    _Atomic uint64_t dropped;
    int depth;                  /* open push/pop ranges */
    pp_open_range stack[PP_STACK_DEPTH];
} pp_thread_buf;

struct pp_session {
    uint64_t id;              /* process-unique, so a stale thread cache never matches */
    _Atomic int state;
    int level;                 /* follows `collect` (pp_session_level) */
    unsigned collect;          /* PP_COLLECT_* */
    pp_str *devices;           /* devices recorded; none: every device (settings.c) */
    size_t ndevices;
    pp_overflow overflow;
    uint64_t max_records;
    size_t chunk_records;
    _Atomic uint64_t reserved; /* records of budget handed out to chunks */
    _Atomic uint64_t next_id;  /* range / region ids */
    char *output;
    char *process_name;
    int64_t pid;
    pthread_mutex_t lock;      /* guards threads and tracks (slow paths only) */
    struct pp_session *next_open; /* the registry of open sessions (fork.c) */
    _Atomic(pp_thread_buf *) threads; /* appended under lock, read lock-free by followers */
    uint32_t nthreads;
    pp_track_def *tracks;
    size_t ntracks, captracks;
    int has_regions;
    pp_track regions;
    int followers;             /* open followers (follow.c), guarded by lock: no ring then */
    int64_t sched_sample_ns;   /* the sampler's period (PP_COLLECT_THREADS; settings.c) */
    struct pp_sampler *sampler; /* its thread while it runs (sampler.c) */
};

/* One cached (session, buffer) pair per thread: the hot path compares the
 * session id and goes straight to the buffer. */
typedef struct pp_thread_cache {
    uint64_t session_id;
    pp_thread_buf *tb;
} pp_thread_cache;
extern _Thread_local pp_thread_cache pp_tls_cache;

/* Slow path of pp_thread_buf_get: finds or creates the calling thread's
 * buffer in `s` (lock + allocation) and caches it. NULL when out of memory. */
pp_thread_buf *pp_thread_buf_attach(pp_session *s);

/* The calling thread's buffer in `s`. */
static inline pp_thread_buf *pp_thread_buf_get(pp_session *s) {
    return pp_tls_cache.session_id == s->id ? pp_tls_cache.tb : pp_thread_buf_attach(s);
}
/* Makes room for one more record in tb (new chunk, or the oldest one reused
 * under the ring policy). PP_EFULL when the budget is spent. */
int pp_thread_buf_grow(pp_session *s, pp_thread_buf *tb);
/* Gives a chunk back: kept for a later session when full-size, else freed
 * (buffer.c). */
void pp_chunk_release(pp_chunk *c);
/* Frees every chunk the pool keeps (bench/bench_record.c: a first
 * session's cost, in fresh memory). */
void pp_chunk_pool_trim(void);
/* Number of complete records in a chunk. */
static inline size_t pp_chunk_count(pp_chunk *c) {
    return atomic_load_explicit(&c->used, memory_order_acquire);
}

/* Ends recording without writing anything (pp_session_stop writes). */
int pp_session_halt(pp_session *s);
const char *pp_session_output(const pp_session *s);
/* Records per chunk for a budget (session.c). */
size_t pp_chunk_records_for(uint64_t max_records);
/* Applies cfg's collect and devices settings to a new session (settings.c). */
int pp_session_settings_init(pp_session *s, const pp_session_config *cfg);
void pp_session_settings_free(pp_session *s);

#endif
