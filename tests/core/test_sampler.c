/* The whole-process sampler (collect "threads"): every period it records,
 * for every thread of the process, the share of the period it ran and the
 * share it waited for a core, as counters named after the thread; it marks
 * the process's CPUs and affinity at the start and its own CPU time at the
 * end. A thread that spins is on a CPU or waiting for one the whole period
 * (the two shares add to about 100%), one that sleeps is at about 0. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/sched.h"
#include "pipeprof/model.h"
#include "testutil.h"

static atomic_int spinner_stop;
static atomic_llong spinner_tid;

static void *spinner(void *arg) {
    (void)arg;
    atomic_store(&spinner_tid, (long long)gettid());
    volatile unsigned long x = 0;
    while (!atomic_load_explicit(&spinner_stop, memory_order_relaxed))
        x++;
    return NULL;
}

static int64_t ann_int(const pp_model *m, size_t ev, const char *key, int64_t none) {
    size_t n = 0, at = 0, total = 0;
    pp_model_annotations_of(m, ev, &at, &n);
    const pp_annotation *a = pp_model_annotations(m, &total) + at;
    for (size_t i = 0; total && i < n; i++)
        if (strcmp(pp_model_string(m, a[i].key), key) == 0 && a[i].type == PP_VALUE_INT)
            return a[i].v.i;
    return none;
}

static void test_the_sampler_records_each_threads_shares(void) {
    if (pp_sched_method_get() != PP_SCHED_SCHEDSTAT) {
        pp_test_skip("this kernel has no /proc/thread-self/schedstat (CONFIG_SCHED_INFO): the "
                     "sampler has nothing to read");
        return;
    }
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.collect = PP_COLLECT_SPANS | PP_COLLECT_THREADS;
    pp_session *s = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_set_config(s, "sched_sample_ms", "5", &err), PP_OK);
    EXPECT_EQ_I64(pp_session_set_config(s, "sched_sample_ms", "0", &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "sched_sample_ms \"0\": must be an integer from 1 to 10000");
    atomic_store(&spinner_stop, 0);
    pthread_t th;
    EXPECT_EQ_I64(pthread_create(&th, NULL, spinner, NULL), 0);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    struct timespec nap = {0, 80 * 1000000};
    nanosleep(&nap, NULL);
    atomic_store(&spinner_stop, 1);
    pthread_join(th, NULL);
    EXPECT_EQ_I64(pp_session_stop(s, &err), PP_OK);
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);

    char spin_cpu[64], spin_runq[64], main_cpu[64];
    snprintf(spin_cpu, sizeof spin_cpu, "[%lld]", (long long)atomic_load(&spinner_tid));
    snprintf(main_cpu, sizeof main_cpu, "[%lld]", (long long)gettid());
    strcpy(spin_runq, spin_cpu);
    double best_spin = 0, max_main = 0;
    size_t counters = 0;
    int64_t start_mark = -1, end_mark = -1;
    /* the spinner's cpu% and runq% of one sample share a timestamp */
    int64_t last_ts = -1;
    double cpu_at_ts = 0;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        const char *name = pp_model_string(m, e.name);
        if (e.kind == PP_EV_INSTANT && strcmp(name, "sched sampler") == 0)
            start_mark = (int64_t)i;
        if (e.kind == PP_EV_INSTANT && strcmp(name, "sched sampler end") == 0)
            end_mark = (int64_t)i;
        if (e.kind != PP_EV_COUNTER)
            continue;
        counters++;
        if (strstr(name, spin_cpu) && strncmp(name, "cpu% ", 5) == 0) {
            last_ts = e.ts_ns;
            cpu_at_ts = e.value;
        } else if (strstr(name, spin_runq) && strncmp(name, "runq% ", 6) == 0 &&
                   e.ts_ns == last_ts && cpu_at_ts + e.value > best_spin) {
            best_spin = cpu_at_ts + e.value;
        } else if (strstr(name, main_cpu) && strncmp(name, "cpu% ", 5) == 0 && e.value > max_main) {
            max_main = e.value;
        }
    }
    EXPECT(counters >= 4);
    EXPECT(best_spin >= 80.0); /* runnable the whole period: running or waiting */
    EXPECT(max_main < 50.0);   /* the main thread slept */
    EXPECT(start_mark >= 0 && end_mark >= 0);
    if (start_mark >= 0) {
        cpu_set_t set;
        EXPECT_EQ_I64(sched_getaffinity(0, sizeof set, &set), 0);
        EXPECT_EQ_I64(ann_int(m, (size_t)start_mark, "cpus_allowed", -1), CPU_COUNT(&set));
        EXPECT_EQ_I64(ann_int(m, (size_t)start_mark, "period_ns", -1), 5000000);
        EXPECT(ann_int(m, (size_t)start_mark, "cpus_online", -1) >= CPU_COUNT(&set));
    }
    if (end_mark >= 0)
        EXPECT(ann_int(m, (size_t)end_mark, "sampler_cpu_ns", -1) > 0);
    pp_model_free(m);
    pp_session_close(s);
}

/* Without the bit there is no sampler: no counters, no marks. */
static void test_no_sampler_without_the_bit(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT(!(pp_session_collect(s) & PP_COLLECT_THREADS));
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    struct timespec nap = {0, 20 * 1000000};
    nanosleep(&nap, NULL);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_session_stats st;
    pp_session_stats_get(s, &st);
    EXPECT_EQ_U64(st.recorded, 0);
    pp_session_close(s);
}

int main(void) {
    RUN(test_no_sampler_without_the_bit);
    RUN(test_the_sampler_records_each_threads_shares);
    return pp_test_finish();
}
