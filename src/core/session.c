/* Session lifecycle: open, start, pause, resume, halt, close; statistics and
 * read access to what was recorded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/fork.h"
#include "core/sampler.h"
#include "core/session.h"

static _Atomic uint64_t next_session_id = 1;

/* Every open session, so that fork can take their locks (fork.c). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_session *registry;

void pp_sessions_fork_lock(void) {
    pthread_mutex_lock(&registry_lock);
    for (pp_session *s = registry; s; s = s->next_open)
        pthread_mutex_lock(&s->lock);
}

void pp_sessions_fork_unlock(void) {
    for (pp_session *s = registry; s; s = s->next_open)
        pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&registry_lock);
}

void pp_session_config_init(pp_session_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->level = 1;
    cfg->max_records = PP_DEFAULT_MAX_RECORDS;
    cfg->overflow = PP_OVERFLOW_DROP;
}

/* Chunks are the unit of allocation and, under the ring policy, of
 * overwriting: small budgets get small chunks so the ring keeps most of it. */
size_t pp_chunk_records_for(uint64_t max_records) {
    uint64_t n = max_records / 16;
    if (n < 64)
        n = 64;
    if (n > PP_CHUNK_MAX)
        n = PP_CHUNK_MAX;
    return (size_t)n;
}

int pp_session_open(const pp_session_config *cfg, pp_session **out) {
    if (!cfg || !out || cfg->level < 0 || cfg->level > 2 || (cfg->collect & ~PP_COLLECT_ALL) ||
        (cfg->overflow != PP_OVERFLOW_DROP && cfg->overflow != PP_OVERFLOW_RING))
        return PP_EINVAL;
    pp_session *s = calloc(1, sizeof *s);
    if (!s)
        return PP_ENOMEM;
    const char *pname = cfg->process_name ? cfg->process_name : program_invocation_short_name;
    s->output = cfg->output ? strdup(cfg->output) : NULL;
    s->process_name = strdup(pname && *pname ? pname : "process");
    if ((cfg->output && !s->output) || !s->process_name) {
        free(s->output);
        free(s->process_name);
        free(s);
        return PP_ENOMEM;
    }
    s->id = atomic_fetch_add(&next_session_id, 1);
    s->level = cfg->level;
    s->overflow = cfg->overflow;
    s->max_records = cfg->max_records ? cfg->max_records : PP_DEFAULT_MAX_RECORDS;
    s->chunk_records = pp_chunk_records_for(s->max_records);
    s->pid = (int64_t)getpid();
    atomic_init(&s->state, PP_STATE_OPEN);
    atomic_init(&s->reserved, 0);
    atomic_init(&s->next_id, 1);
    pthread_mutex_init(&s->lock, NULL);
    pp_fork_handlers_register();
    pthread_mutex_lock(&registry_lock);
    s->next_open = registry;
    registry = s;
    pthread_mutex_unlock(&registry_lock);
    int rc = pp_session_settings_init(s, cfg);
    if (rc != PP_OK) {
        pp_session_close(s);
        return rc;
    }
    *out = s;
    return PP_OK;
}

/* Moves the state from `from` to `to`; PP_ESTATE if it was not `from`. */
static int transition(pp_session *s, int from, int to) {
    if (!s)
        return PP_EINVAL;
    int expected = from;
    return atomic_compare_exchange_strong(&s->state, &expected, to) ? PP_OK : PP_ESTATE;
}

int pp_session_start(pp_session *s) {
    pp_clock_calibrate(); /* a fresh clock pair where recording begins (clock.c) */
    int rc = transition(s, PP_STATE_OPEN, PP_STATE_RUNNING);
    if (rc == PP_OK) /* without its thread, the session records all but the samples */
        (void)pp_sampler_start(s);
    return rc;
}

int pp_session_pause(pp_session *s) {
    return transition(s, PP_STATE_RUNNING, PP_STATE_PAUSED);
}

int pp_session_resume(pp_session *s) {
    return transition(s, PP_STATE_PAUSED, PP_STATE_RUNNING);
}

int pp_session_halt(pp_session *s) {
    if (!s)
        return PP_EINVAL;
    pp_clock_calibrate(); /* and where it ends */
    pp_sampler_stop(s); /* while still recording: its last mark is its cost */
    int state = atomic_load(&s->state);
    while (state == PP_STATE_RUNNING || state == PP_STATE_PAUSED) {
        if (atomic_compare_exchange_weak(&s->state, &state, PP_STATE_STOPPED))
            return PP_OK;
    }
    return PP_ESTATE;
}

int pp_session_close(pp_session *s) {
    if (!s)
        return PP_OK;
    /* A follower (a subscription's consumer thread) reads the thread and
     * chunk lists freed below: refuse while one is open, before changing
     * anything, so the program can still close the subscription first. */
    pthread_mutex_lock(&s->lock);
    int followed = s->followers > 0;
    pthread_mutex_unlock(&s->lock);
    if (followed)
        return PP_ESTATE;
    pp_session_halt(s);
    pthread_mutex_lock(&registry_lock);
    pp_session **p = &registry;
    while (*p != s)
        p = &(*p)->next_open;
    *p = s->next_open;
    pthread_mutex_unlock(&registry_lock);
    pp_thread_buf *tb = s->threads;
    while (tb) {
        pp_thread_buf *next_tb = tb->next;
        pp_chunk *c = atomic_load(&tb->first);
        while (c) {
            pp_chunk *next_c = c->next;
            pp_chunk_release(c);
            c = next_c;
        }
        free(tb);
        tb = next_tb;
    }
    pthread_mutex_destroy(&s->lock);
    pp_session_settings_free(s);
    free(s->tracks);
    free(s->output);
    free(s->process_name);
    free(s);
    return PP_OK;
}

int pp_session_level(const pp_session *s) {
    return s ? s->level : 0;
}

const char *pp_session_output(const pp_session *s) {
    return s->output;
}

const char *pp_session_process_name(const pp_session *s) {
    return s->process_name;
}

int64_t pp_session_pid(const pp_session *s) {
    return s->pid;
}

int pp_session_stats_get(pp_session *s, pp_session_stats *out) {
    if (!s || !out)
        return PP_EINVAL;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->lock);
    for (const pp_thread_buf *tb = s->threads; tb; tb = tb->next) {
        for (pp_chunk *c = atomic_load(&tb->first); c; c = atomic_load(&c->next))
            out->recorded += pp_chunk_count(c);
        out->dropped += atomic_load(&tb->dropped);
        out->threads++;
    }
    pthread_mutex_unlock(&s->lock);
    return PP_OK;
}

int pp_session_visit_records(pp_session *s, pp_record_visit_fn fn, void *ctx) {
    if (!s || !fn)
        return PP_EINVAL;
    pp_clock_calibrate(); /* a snapshot refits the clock too */
    if (atomic_load(&s->state) == PP_STATE_RUNNING && s->overflow == PP_OVERFLOW_RING)
        return PP_ESTATE;
    int rc = PP_OK;
    pthread_mutex_lock(&s->lock);
    uint32_t index = 0;
    for (pp_thread_buf *tb = s->threads; tb && rc == PP_OK; tb = tb->next) {
        pp_thread_meta meta = {.index = index++, .tid = tb->tid, .name = tb->name,
                              .dropped = atomic_load(&tb->dropped)};
        for (pp_chunk *c = atomic_load(&tb->first); c; c = atomic_load(&c->next))
            meta.recorded += pp_chunk_count(c);
        if (meta.recorded == 0) {
            rc = fn(ctx, &meta, NULL, 0) ? PP_EINVAL : PP_OK;
            continue;
        }
        for (pp_chunk *c = atomic_load(&tb->first); c && rc == PP_OK; c = atomic_load(&c->next)) {
            size_t n = pp_chunk_count(c);
            if (n && fn(ctx, &meta, c->recs, n))
                rc = PP_EINVAL;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int pp_session_recording(const pp_session *s) {
    return atomic_load(&s->state) == PP_STATE_RUNNING;
}

int pp_session_tracks_copy(pp_session *s, pp_track_def **out, size_t *count) {
    pthread_mutex_lock(&s->lock);
    size_t n = s->ntracks;
    pp_track_def *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (copy)
        memcpy(copy, s->tracks, n * sizeof *copy);
    pthread_mutex_unlock(&s->lock);
    if (n && !copy)
        return PP_ENOMEM;
    *out = copy;
    *count = n;
    return PP_OK;
}
