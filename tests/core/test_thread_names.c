/* Thread names users give (pp_thread_name_set): before a thread's first
 * record, after it (a rename of its rows), from another thread while it
 * records (a core test: the ThreadSanitizer suite runs it). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "pipeprof/model.h"
#include "testutil.h"

typedef struct worker {
    pp_session *s;
    _Atomic int64_t tid;
    _Atomic int go, stop;
    _Atomic long recorded;
    const char *early; /* named before its first record, by itself */
} worker;

static void record_one(pp_session *s) {
    pp_track t;
    if (pp_track_thread(s, NULL, &t) != PP_OK)
        return;
    pp_span_rec r = {.track = t, .name = pp_intern("work"), .batch = -1, .ts_ns = pp_now(), .dur_ns = 1};
    pp_span(s, &r);
}

static void *run(void *arg) {
    worker *w = arg;
    if (w->early)
        pp_thread_name_set(0, w->early);
    atomic_store(&w->tid, (int64_t)gettid());
    while (!atomic_load(&w->go))
        ;
    while (!atomic_load(&w->stop)) {
        record_one(w->s);
        atomic_fetch_add(&w->recorded, 1);
    }
    return NULL;
}

/* The name of the thread track and thread entry of OS thread tid. */
static void names_of(const pp_model *m, int64_t tid, const char **track, const char **thread) {
    *track = *thread = NULL;
    for (uint32_t i = 0; i < pp_model_track_count(m); i++) {
        const pp_track_info *t = pp_model_track(m, i);
        if (t->kind == PP_TRACK_KIND_THREAD && t->tid == tid)
            *track = pp_model_string(m, t->name);
    }
    for (size_t i = 0; i < pp_model_thread_count(m); i++)
        if (pp_model_thread(m, i)->tid == tid)
            *thread = pp_model_string(m, pp_model_thread(m, i)->name);
}

static void test_names_before_after_and_from_elsewhere(void) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    cfg.process_name = "test";
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    worker a = {.s = s, .early = "prep-worker"}, b = {.s = s};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, run, &a);
    pthread_create(&tb, NULL, run, &b);
    while (!atomic_load(&a.tid) || !atomic_load(&b.tid))
        ;
    atomic_store(&a.go, 1);
    atomic_store(&b.go, 1);
    while (atomic_load(&a.recorded) < 1 || atomic_load(&b.recorded) < 1)
        usleep(100);
    /* b records under its OS name, then is named from this thread, twice */
    EXPECT_EQ_I64(pp_thread_name_set(atomic_load(&b.tid), "first name"), PP_OK);
    EXPECT_EQ_I64(pp_thread_name_set(atomic_load(&b.tid), "embed-worker"), PP_OK);
    long after = atomic_load(&b.recorded);
    while (atomic_load(&b.recorded) < after + 2) /* and records on */
        usleep(100);
    atomic_store(&a.stop, 1);
    atomic_store(&b.stop, 1);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    const char *track, *thread;
    names_of(m, atomic_load(&a.tid), &track, &thread);
    EXPECT(track && strcmp(track, "prep-worker") == 0);
    EXPECT(thread && strcmp(thread, "prep-worker") == 0);
    names_of(m, atomic_load(&b.tid), &track, &thread);
    EXPECT(track && strcmp(track, "embed-worker") == 0);
    EXPECT(thread && strcmp(thread, "embed-worker") == 0);
    EXPECT_EQ_I64(pp_thread_name_set(-1, "x"), PP_EINVAL);
    EXPECT_EQ_I64(pp_thread_name_set(1, ""), PP_EINVAL);
    pp_model_free(m);
    pp_session_close(s);
}

int main(void) {
    RUN(test_names_before_after_and_from_elsewhere);
    return pp_test_finish();
}
