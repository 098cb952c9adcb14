/* Env activation: a program linked with libpipeprof records with no code
 * change beyond using pp_default_session(), and its trace is written on
 * normal exit and on SIGINT/SIGTERM. The test re-executes itself as the
 * "program" with PIPEPROF_* set, since activation happens at load time. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "testutil.h"

/* The child: records `n` spans (n < 0: until killed, telling the parent
 * through `ready_fd` once the first 1000 are in). */
static int child_main(long n, int ready_fd) {
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
static int run_child(const char *output, const char *level, const char *max, long n, int sig) {
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

static pp_model *read_trace(const char *path) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    int rc = pp_trace_read(path, &m, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "reading %s: %s", path, err.msg);
    return m;
}

/* On normal exit the whole run is written, in the format the name asks for. */
static void test_written_at_exit_in_both_formats(void) {
    const char *paths[] = {pp_test_path("env_exit.pptrace"), pp_test_path("env_exit.json")};
    for (int i = 0; i < 2; i++) {
        int st = run_child(paths[i], "2", NULL, 5000, 0);
        EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        pp_model *m = read_trace(paths[i]);
        if (!m)
            continue;
        EXPECT_EQ_U64(pp_model_event_count(m), 5000);
        EXPECT_EQ_I64(pp_model_meta_get(m)->level, 2);
        pp_model_free(m);
    }
}

/* SIGTERM and SIGINT still produce a complete trace, and the process still
 * dies of the signal as it would have without pipeprof. */
static void test_written_on_signals(void) {
    int sigs[] = {SIGTERM, SIGINT};
    for (int i = 0; i < 2; i++) {
        const char *path = pp_test_path(i ? "env_int.pptrace" : "env_term.pptrace");
        int st = run_child(path, NULL, NULL, -1, sigs[i]);
        EXPECT(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i]);
        pp_model *m = read_trace(path);
        if (!m)
            continue;
        EXPECT(pp_model_event_count(m) > 1000);
        pp_model_free(m);
    }
}

/* The budget from the environment applies, and the drops are in the file. */
static void test_budget_from_env_and_drops_reported(void) {
    const char *path = pp_test_path("env_budget.pptrace");
    int st = run_child(path, NULL, "100", 1000, 0);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pp_model *m = read_trace(path);
    if (!m)
        return;
    EXPECT_EQ_U64(pp_model_event_count(m), 100);
    EXPECT_EQ_U64(pp_model_meta_get(m)->dropped_records, 900);
    pp_model_free(m);
}

/* A bad variable is reported on stderr and nothing is recorded. */
static void test_bad_env_is_reported(void) {
    char *out = NULL;
    char cmd[2048];
    const char *path = pp_test_path("env_bad.json");
    snprintf(cmd, sizeof cmd, "PIPEPROF_OUTPUT=%s PIPEPROF_LEVEL=7 /proc/%d/exe child 10 -1", path,
             (int)getpid());
    int rc = pp_test_run(cmd, &out);
    EXPECT_EQ_I64(rc, 3); /* no default session */
    EXPECT_CONTAINS(out, "PIPEPROF_LEVEL=7: must be 0, 1 or 2; not recording");
    free(out);
    snprintf(cmd, sizeof cmd, "PIPEPROF_OUTPUT=trace.txt /proc/%d/exe child 10 -1", (int)getpid());
    rc = pp_test_run(cmd, &out);
    EXPECT_EQ_I64(rc, 3);
    EXPECT_CONTAINS(out, "PIPEPROF_OUTPUT=trace.txt: the file must end in .pptrace, .json or .pftrace");
    free(out);
    EXPECT(access(path, F_OK) != 0);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0)
        return child_main(atol(argv[2]), atoi(argv[3]));
    RUN(test_written_at_exit_in_both_formats);
    RUN(test_written_on_signals);
    RUN(test_budget_from_env_and_drops_reported);
    RUN(test_bad_env_is_reported);
    return pp_test_finish();
}
