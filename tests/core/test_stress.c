/* Many threads recording at once against a budget that forces drops: nothing
 * is lost silently. recorded + dropped = emitted, exactly, per thread (each
 * thread makes a different number, so a count given to the wrong thread
 * shows) and in total, under both overflow policies; the ring keeps each
 * thread's newest records. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "pipeprof/model.h"
#include "testutil.h"

#define THREADS 16

typedef struct {
    pp_session *s;
    long events;
    long refused; /* calls that returned PP_EFULL */
    long failed;  /* calls that returned anything else but PP_OK */
    int64_t tid;
} worker;

static void *record_spans(void *p) {
    worker *w = p;
    w->tid = (int64_t)gettid();
    pp_track t;
    pp_track_thread(w->s, NULL, &t);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("work");
    for (long i = 0; i < w->events; i++) {
        r.ts_ns = i;
        r.dur_ns = 1;
        r.batch = i;
        int rc = pp_span(w->s, &r);
        if (rc == PP_EFULL)
            w->refused++;
        else if (rc != PP_OK)
            w->failed++; /* checked on the main thread: the harness is not thread-safe */
    }
    return NULL;
}

static long events_per_thread(void) {
    /* 1M per thread normally; fewer under sanitizers, which slow every store. */
    const char *san = getenv("PP_SANITIZE");
    return san && *san ? 100000 : 1000000;
}

/* Thread i makes a few thousand more records than thread i - 1. */
static long events_of(long per_thread, int i) {
    return per_thread + 3001L * i;
}

static void run_policy(pp_overflow overflow) {
    long per_thread = events_per_thread();
    pp_session_config cfg;
    pp_session *s;
    pp_session_config_init(&cfg);
    cfg.max_records = (uint64_t)(THREADS * per_thread / 3);
    uint64_t made = 0;
    cfg.overflow = overflow;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    pp_session_start(s);
    worker w[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.s = s, .events = events_of(per_thread, i)};
        made += (uint64_t)w[i].events;
        pthread_create(&th[i], NULL, record_spans, &w[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pp_session_stop(s, NULL);

    pp_session_stats st;
    pp_session_stats_get(s, &st);
    EXPECT_EQ_U64(st.threads, THREADS);
    EXPECT_EQ_U64(st.recorded + st.dropped, made);
    /* the ring gives a thread that came too late one chunk of its own */
    EXPECT(st.recorded <= cfg.max_records + (overflow == PP_OVERFLOW_RING ? THREADS * 4096 : 0));
    EXPECT(st.dropped > 0);
    long refused = 0;
    for (int i = 0; i < THREADS; i++) {
        refused += w[i].refused;
        EXPECT_EQ_I64(w[i].failed, 0);
    }
    if (overflow == PP_OVERFLOW_DROP)
        EXPECT_EQ_U64(st.dropped, (uint64_t)refused);
    else
        EXPECT_EQ_I64(refused, 0); /* the ring never refuses, it overwrites */

    pp_model *m;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    EXPECT_EQ_U64(pp_model_event_count(m), st.recorded);
    EXPECT_EQ_U64(pp_model_thread_count(m), THREADS);
    uint64_t dropped = 0;
    for (size_t i = 0; i < pp_model_thread_count(m); i++) {
        const pp_thread_info *t = pp_model_thread(m, i);
        const worker *own = NULL;
        for (int k = 0; k < THREADS; k++)
            own = w[k].tid == t->tid ? &w[k] : own;
        EXPECT(own != NULL);
        if (!own)
            continue;
        EXPECT_EQ_U64(t->recorded + t->dropped, (uint64_t)own->events);
        if (overflow == PP_OVERFLOW_DROP)
            EXPECT_EQ_U64(t->dropped, (uint64_t)own->refused);
        dropped += t->dropped;
    }
    EXPECT_EQ_U64(dropped, st.dropped);
    /* which records a thread kept: its first ones under drop, its newest
     * under the ring (batch = the record's index in its thread) */
    int64_t lo[THREADS], hi[THREADS];
    uint64_t kept[THREADS] = {0};
    for (int k = 0; k < THREADS; k++)
        lo[k] = INT64_MAX, hi[k] = -1;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        const pp_track_info *t = pp_model_track(m, e.track);
        for (int k = 0; k < THREADS; k++) {
            if (w[k].tid != t->tid)
                continue;
            lo[k] = e.batch < lo[k] ? e.batch : lo[k];
            hi[k] = e.batch > hi[k] ? e.batch : hi[k];
            kept[k]++;
        }
    }
    for (int k = 0; k < THREADS; k++) {
        if (kept[k] == 0)
            continue;
        EXPECT_EQ_I64(hi[k] - lo[k] + 1, (int64_t)kept[k]); /* no gap */
        if (overflow == PP_OVERFLOW_DROP)
            EXPECT_EQ_I64(lo[k], 0);
        else
            EXPECT_EQ_I64(hi[k], w[k].events - 1);
    }
    EXPECT_EQ_U64(pp_model_meta_get(m)->dropped_records, st.dropped);
    pp_model_free(m);
    pp_session_close(s);
}

static void test_drop_policy_counts_every_record(void) {
    run_policy(PP_OVERFLOW_DROP);
}

static void test_ring_policy_counts_every_record(void) {
    run_policy(PP_OVERFLOW_RING);
}

typedef struct {
    pp_session *s;
    long events;
    _Atomic int *running;
} snapshot_worker;

/* Each thread makes its own track (while snapshots are taken) and records
 * spans with batch = ts = 0, 1, 2, ... inside one range it ends last. */
static void *record_numbered(void *p) {
    snapshot_worker *w = p;
    pp_track t;
    uint64_t range;
    pp_track_thread(w->s, NULL, &t);
    pp_range_start(w->s, pp_intern("whole run"), &range);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("numbered");
    for (long i = 0; i < w->events; i++) {
        r.ts_ns = r.batch = i;
        r.dur_ns = 1;
        pp_span(w->s, &r);
    }
    pp_range_stop(w->s, range);
    atomic_fetch_sub(w->running, 1);
    return NULL;
}

/* A model built while threads record (drop policy) is a snapshot: every
 * thread's spans so far, in order, without a gap (a prefix of 0, 1, 2, ...),
 * and a range still open is in progress, not an unmatched end. A ring
 * session, whose chunks are recycled while it records, refuses. */
static void test_snapshot_while_recording(void) {
    long per_thread = events_per_thread() / 4;
    pp_session_config cfg;
    pp_session *s;
    pp_session_config_init(&cfg);
    cfg.max_records = (uint64_t)(THREADS * per_thread * 2);
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    pp_session_start(s);
    _Atomic int running = THREADS;
    snapshot_worker w[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (snapshot_worker){.s = s, .events = per_thread, .running = &running};
        pthread_create(&th[i], NULL, record_numbered, &w[i]);
    }
    int snapshots = 0, bad_prefix = 0;
    uint64_t unmatched = 0;
    while (atomic_load(&running) > 0 || snapshots == 0) {
        pp_model *m;
        EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
        size_t ntracks = pp_model_track_count(m);
        int64_t *next = calloc(ntracks ? ntracks : 1, sizeof *next);
        for (size_t i = 0; i < pp_model_event_count(m); i++) {
            pp_event e;
            pp_model_event(m, i, &e);
            if (e.kind != PP_EV_SPAN)
                continue;
            bad_prefix += e.batch != next[e.track];
            next[e.track] = e.batch + 1;
        }
        unmatched += pp_model_meta_get(m)->unmatched_ends;
        free(next);
        pp_model_free(m);
        snapshots++;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    EXPECT_EQ_I64(bad_prefix, 0);
    EXPECT_EQ_U64(unmatched, 0);
    pp_session_close(s);

    cfg.overflow = PP_OVERFLOW_RING;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    pp_session_start(s);
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_ESTATE);
    pp_session_pause(s);
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    pp_model_free(m);
    pp_session_close(s);
}

int main(void) {
    RUN(test_drop_policy_counts_every_record);
    RUN(test_ring_policy_counts_every_record);
    RUN(test_snapshot_while_recording);
    return pp_test_finish();
}
