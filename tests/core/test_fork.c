/* fork() from a program that records on several threads: the child can
 * intern names, create tracks and record at once, however the fork falls
 * relative to the other threads' locks. Before the core took its locks
 * around fork (src/core/fork.c), a child forked while another thread held
 * the name table's lock hung in pp_intern (about 5 forks in 300). A child
 * that hangs is killed by its own alarm and counted. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeprof/trace.h"
#include "testutil.h"

#define BUSY_THREADS 3

static atomic_int stop;

/* Interns ever new names (the name table's lock and its growth) and makes
 * tracks (the session's lock) while the main thread forks. */
static void *busy(void *arg) {
    pp_session *s = arg;
    char name[64];
    pp_track t;
    pp_span_rec r;
    pp_span_rec_init(&r);
    pp_track_thread(s, NULL, &r.track);
    for (long i = 0; !atomic_load(&stop); i++) {
        snprintf(name, sizeof name, "name %p %ld", (void *)&name, i);
        r.name = pp_intern(name);
        pp_track_device(s, name, (int)(i % 4), NULL, 0, &t);
        r.ts_ns = i;
        pp_span(s, &r);
    }
    return NULL;
}

/* What a child does: every call that takes a lock of the core. */
static int child_main(pp_session *s) {
    alarm(3); /* a hang ends as SIGALRM, which the parent counts */
    pp_track t;
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.name = pp_intern("child's own name");
    if (!r.name || pp_track_device(s, "child device", 0, NULL, 0, &t) != PP_OK)
        return 3;
    r.track = t;
    return pp_span(s, &r) == PP_OK || pp_span(s, &r) == PP_EFULL ? 0 : 4;
}

static void test_children_never_hang(void) {
    int forks = getenv("PP_SANITIZE") && *getenv("PP_SANITIZE") ? 100 : 300;
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    cfg.max_records = 1 << 16;
    cfg.overflow = PP_OVERFLOW_RING;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pthread_t th[BUSY_THREADS];
    for (int i = 0; i < BUSY_THREADS; i++)
        pthread_create(&th[i], NULL, busy, s);
    int hung = 0, failed = 0;
    for (int k = 0; k < forks && hung < 3; k++) { /* 3 hangs say enough */
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_main(s));
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid) {
            failed++;
            continue;
        }
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            hung++;
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < BUSY_THREADS; i++)
        pthread_join(th[i], NULL);
    EXPECT_EQ_I64(hung, 0);
    EXPECT_EQ_I64(failed, 0);
    fprintf(stderr, "%d forks: %d hung, %d failed\n", forks, hung, failed);
    pp_session_close(s);
}

int main(void) {
    RUN(test_children_never_hang);
    return pp_test_finish();
}
