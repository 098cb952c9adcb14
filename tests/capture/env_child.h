/* env_child.h — the env activation tests run their own binary again as
 * the recorded "program", with PIPEPROF_* set: activation happens when the
 * library loads. main() hands argv "child N FD" to child_main(). */
#ifndef PP_TEST_ENV_CHILD_H
#define PP_TEST_ENV_CHILD_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "testutil.h"

/* The child: records `n` spans (n < 0: until killed, telling the parent
 * through `ready_fd` once the first 1000 are in). */
static inline int child_main(long n, int ready_fd) {
    pp_session *s = pp_default_session();
    if (!s)
        return 3;
    pp_track t;
    pp_track_thread(s, "worker", &t);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("step");
    for (long i = 0; n < 0 || i < n; i++) {
        r.ts_ns = pp_now();
        r.dur_ns = 10;
        r.batch = i;
        pp_span(s, &r);
        if (i == 1000 && n < 0 && ready_fd >= 0) {
            if (write(ready_fd, "x", 1) != 1)
                return 4;
            close(ready_fd);
        }
        if (n < 0 && i > 1000)
            usleep(1000);
    }
    return 0;
}

/* Runs this binary as a child with the given env; returns its wait status. */
static inline int run_child(const char *output, const char *level, const char *max, long n, int sig) {
    int fds[2];
    EXPECT_EQ_I64(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char nbuf[32], fdbuf[16];
        close(fds[0]);
        snprintf(nbuf, sizeof nbuf, "%ld", n);
        snprintf(fdbuf, sizeof fdbuf, "%d", fds[1]);
        setenv("PIPEPROF_OUTPUT", output, 1);
        if (level)
            setenv("PIPEPROF_LEVEL", level, 1);
        else
            unsetenv("PIPEPROF_LEVEL");
        if (max)
            setenv("PIPEPROF_MAX_RECORDS", max, 1);
        else
            unsetenv("PIPEPROF_MAX_RECORDS");
        execl("/proc/self/exe", "test_env", "child", nbuf, fdbuf, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    if (sig) {
        char c;
        EXPECT_EQ_I64(read(fds[0], &c, 1), 1);
        kill(pid, sig);
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

static inline pp_model *read_trace(const char *path) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    int rc = pp_trace_read(path, &m, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "reading %s: %s", path, err.msg);
    return m;
}

#endif
