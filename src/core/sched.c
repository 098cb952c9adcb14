/* Scheduler counters of the calling thread (pipeprof/sched.h).
 *
 * Where each figure comes from, and why:
 * - run-queue wait: of what Linux gives an unprivileged process per thread,
 *   only /proc/<pid>/task/<tid>/schedstat has the time a thread spent
 *   runnable on a run queue (its second field, run_delay, in ns:
 *   Documentation/scheduler/sched-stats.rst). It is exact when the thread
 *   reads its own: the kernel adds a wait when the thread gets a CPU, and
 *   the reader is on one. Its descriptor is opened once per thread and read
 *   with pread (about 0.6 us). perf_event_open's software counters (task
 *   clock, context switches, migrations) have no run-queue counter.
 * - on-CPU time: clock_gettime(CLOCK_THREAD_CPUTIME_ID), not schedstat's
 *   first field: the kernel brings a running thread's sum_exec_runtime up
 *   to date only at a tick or a switch, so schedstat lags by up to a tick
 *   (a 78 us partition read 0 ns), where the thread clock updates it first
 *   (about 0.4 us, like a read() of a perf task clock; the syscall-free
 *   read of a task clock through its mmap'd page needs cap_user_time,
 *   which the VM this was measured on lacks).
 * - voluntary and involuntary switches: getrusage(RUSAGE_THREAD) (about
 *   0.25 us); schedstat counts timeslices without telling them apart.
 * Where schedstat cannot be read (a kernel without CONFIG_SCHED_INFO), the
 * method is "cputime": the thread clock and getrusage, with the run-queue
 * wait unknown (-1). The method is process-wide, chosen at the first read,
 * and every annotated span names it. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/sched.h"

static _Atomic int method; /* pp_sched_method; PP_SCHED_NONE: not chosen yet */
static _Atomic int forced;

/* The thread's schedstat descriptor + 1 (0: not opened), closed at thread
 * exit by the key's destructor. */
static _Thread_local int schedstat_fd1;
static pthread_key_t fd_key;
static pthread_once_t fd_key_once = PTHREAD_ONCE_INIT;

static void close_fd(void *p) {
    close((int)(intptr_t)p - 1);
}

/* A forked child's one thread inherits its parent thread's descriptor,
 * which names the parent's thread: it opens its own at its next read. */
static void forget_in_child(void) {
    if (schedstat_fd1 > 0)
        close(schedstat_fd1 - 1);
    schedstat_fd1 = 0;
    (void)pthread_setspecific(fd_key, NULL);
}

static void make_key(void) {
    (void)pthread_key_create(&fd_key, close_fd);
    (void)pthread_atfork(NULL, NULL, forget_in_child);
}

static int schedstat_fd(void) {
    if (schedstat_fd1 > 0)
        return schedstat_fd1 - 1;
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    pthread_once(&fd_key_once, make_key);
    (void)pthread_setspecific(fd_key, (void *)(intptr_t)(fd + 1));
    schedstat_fd1 = fd + 1;
    return fd;
}

/* The run-queue wait of "cpu_ns wait_ns timeslices\n". */
static int read_run_delay(int64_t *wait) {
    int fd = schedstat_fd();
    if (fd < 0)
        return -1;
    char buf[96];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    long long c, w;
    if (sscanf(buf, "%lld %lld", &c, &w) != 2)
        return -1;
    *wait = w;
    return 0;
}

static pp_sched_method choose(void) {
    int m = atomic_load_explicit(&forced, memory_order_relaxed);
    if (m == PP_SCHED_NONE) {
        int64_t w;
        struct rusage ru;
        struct timespec ts;
        if (getrusage(RUSAGE_THREAD, &ru) != 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
            m = PP_SCHED_NONE;
        else
            m = read_run_delay(&w) == 0 ? PP_SCHED_SCHEDSTAT : PP_SCHED_CPUTIME;
    }
    return (pp_sched_method)m;
}

pp_sched_method pp_sched_method_get(void) {
    int m = atomic_load_explicit(&method, memory_order_relaxed);
    if (m == PP_SCHED_NONE) {
        m = choose();
        atomic_store_explicit(&method, m, memory_order_relaxed);
    }
    return (pp_sched_method)m;
}

const char *pp_sched_method_name(void) {
    switch (pp_sched_method_get()) {
    case PP_SCHED_SCHEDSTAT:
        return "schedstat";
    case PP_SCHED_CPUTIME:
        return "cputime";
    default:
        return "none";
    }
}

void pp_sched_force(pp_sched_method m) {
    atomic_store(&forced, m);
    atomic_store(&method, PP_SCHED_NONE);
}

int pp_sched_read(pp_sched_sample *out) {
    pp_sched_method m = pp_sched_method_get();
    struct rusage ru;
    struct timespec ts;
    if (m == PP_SCHED_NONE || getrusage(RUSAGE_THREAD, &ru) != 0 ||
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return PP_EUNSUPPORTED;
    out->ts_ns = pp_now();
    out->voluntary = ru.ru_nvcsw;
    out->involuntary = ru.ru_nivcsw;
    out->cpu_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    out->wait_ns = -1;
    if (m == PP_SCHED_SCHEDSTAT && read_run_delay(&out->wait_ns) != 0)
        return PP_EUNSUPPORTED;
    return PP_OK;
}

/* The annotation keys, interned once. */
typedef struct sched_keys {
    pp_str cpu, wait, vcsw, ivcsw, method, schedstat, cputime;
} sched_keys;
static sched_keys keys;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void make_keys(void) {
    keys.cpu = pp_intern("sched_cpu_ns");
    keys.wait = pp_intern("sched_wait_ns");
    keys.vcsw = pp_intern("sched_vcsw");
    keys.ivcsw = pp_intern("sched_ivcsw");
    keys.method = pp_intern("sched_method");
    keys.schedstat = pp_intern("schedstat");
    keys.cputime = pp_intern("cputime");
}

int pp_annotate_sched_between(pp_session *s, const pp_sched_sample *start,
                              const pp_sched_sample *end) {
    if (!s || !start || !end)
        return PP_EINVAL;
    pthread_once(&keys_once, make_keys);
    int known = end->wait_ns >= 0 && start->wait_ns >= 0;
    int rc = pp_annotate_int(s, keys.cpu, end->cpu_ns - start->cpu_ns);
    if (rc == PP_OK && known)
        rc = pp_annotate_int(s, keys.wait, end->wait_ns - start->wait_ns);
    if (rc == PP_OK)
        rc = pp_annotate_int(s, keys.vcsw, end->voluntary - start->voluntary);
    if (rc == PP_OK)
        rc = pp_annotate_int(s, keys.ivcsw, end->involuntary - start->involuntary);
    if (rc == PP_OK)
        rc = pp_annotate_str(s, keys.method, known ? keys.schedstat : keys.cputime);
    return rc;
}

int pp_span_sched(pp_session *s, pp_span_rec *rec, const pp_sched_sample *start) {
    pp_sched_sample end;
    int read = pp_sched_read(&end);
    rec->dur_ns = (read == PP_OK ? end.ts_ns : pp_now()) - rec->ts_ns;
    int rc = pp_span(s, rec);
    if (rc == PP_OK && read == PP_OK)
        pp_annotate_sched_between(s, start, &end);
    return rc;
}

int pp_annotate_sched(pp_session *s, const pp_sched_sample *start) {
    pp_sched_sample end;
    int rc = pp_sched_read(&end);
    return rc != PP_OK ? rc : pp_annotate_sched_between(s, start, &end);
}
