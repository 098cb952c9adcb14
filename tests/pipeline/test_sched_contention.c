/* A host stage competing with busy threads pinned to its one core waits
 * for the core: its run-queue wait exceeds its time on the CPU, the
 * scheduler preempts it, and the finding names the wait. Skipped, with the
 * reason, where the kernel has no schedstat (no run-queue figure). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sched.h"
#include "sched_stage.h"

/* ---- contention: busy threads pinned to the stage's core ---- */

#define RIVALS 3
static atomic_int rivals_stop;

static void *rival_main(void *arg) {
    cpu_set_t *one = arg;
    pthread_setaffinity_np(pthread_self(), sizeof *one, one);
    volatile uint64_t x = 0;
    while (!atomic_load_explicit(&rivals_stop, memory_order_relaxed))
        x++;
    return NULL;
}

/* With three busy threads on its one core, a stage that must run 10 ms
 * gets about a quarter of the core: it waits for the core about three
 * times as long as it runs. The test asserts only that the wait exceeds
 * the run, and that the scheduler preempted it. */
static void test_a_stage_sharing_its_core_waits_for_it(void) {
    if (pp_sched_method_get() != PP_SCHED_SCHEDSTAT) {
        pp_test_skip("this kernel has no /proc/thread-self/schedstat (CONFIG_SCHED_INFO): no "
                     "run-queue figure to test");
        return;
    }
    cpu_set_t allowed, one;
    CPU_ZERO(&one);
    EXPECT_EQ_I64(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed))
        cpu++;
    CPU_SET(cpu, &one);
    EXPECT_EQ_I64(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    atomic_store(&rivals_stop, 0);
    pthread_t rivals[RIVALS];
    for (int i = 0; i < RIVALS; i++)
        EXPECT_EQ_I64(pthread_create(&rivals[i], NULL, rival_main, &one), 0);
    int64_t spin = 10 * MS;
    pp_model *m = record_stage(spin_fn, &spin);
    atomic_store(&rivals_stop, 1);
    for (int i = 0; i < RIVALS; i++)
        pthread_join(rivals[i], NULL);
    pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
    pp_report *r = report_of(m);
    pp_sched_stats v = work_row(r);
    EXPECT(v.cpu_ns >= BATCHES * spin);
    EXPECT(v.wait_ns > v.cpu_ns);
    EXPECT(v.involuntary >= 1);
    size_t n = 0;
    const char *const *f = pp_report_findings(r, &n);
    int named = 0;
    for (size_t i = 0; i < n; i++)
        named |= strstr(f[i], "Work: ") != NULL && strstr(f[i], "waiting for a core") != NULL;
    EXPECT(named);
    pp_report_free(r);
    pp_model_free(m);
}

/* A forked child reads its own thread's run-queue wait, not its parent
 * thread's through an inherited descriptor: after the test above this
 * thread has waited longer than it ran (tens of ms), while the child's
 * wait cannot exceed its own life. */
static void test_a_forked_child_reads_its_own_counters(void) {
    pp_sched_sample parent;
    EXPECT_EQ_I64(pp_sched_read(&parent), PP_OK); /* the descriptor is open */
    int fds[2];
    EXPECT_EQ_I64(pipe(fds), 0);
    int64_t forked = pp_now();
    pid_t pid = fork();
    if (pid == 0) {
        pp_sched_sample child;
        int64_t out[2] = {pp_sched_read(&child) == PP_OK ? child.wait_ns : -1, 0};
        out[1] = pp_now() - forked; /* the child's life so far */
        (void)!write(fds[1], out, sizeof out);
        _exit(0);
    }
    int64_t got[2] = {-2, 0};
    EXPECT_EQ_I64(read(fds[0], got, sizeof got), (long)sizeof got);
    waitpid(pid, NULL, 0);
    close(fds[0]);
    close(fds[1]);
    EXPECT(parent.wait_ns > 10 * MS);
    EXPECT(got[0] >= 0 && got[0] <= got[1]);
}

int main(void) {
    RUN(test_a_stage_sharing_its_core_waits_for_it);
    RUN(test_a_forked_child_reads_its_own_counters);
    return pp_test_finish();
}
