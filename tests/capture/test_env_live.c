/* Env activation of a live stream and of collection settings: a program
 * started with PIPEPROF_LIVE_FD (and no output file) streams every span it
 * records to that descriptor and ends the stream cleanly at exit; bad
 * PIPEPROF_COLLECT / PIPEPROF_LIVE_FD values are reported by name. This
 * binary runs itself again as the recorded program ("child N"). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeprof/subscribe.h"
#include "testutil.h"

#define SPANS 2000

/* The recorded program: N exec spans on a device row, batch i. */
static int child_main(long n) {
    pp_session *s = pp_default_session();
    if (!s)
        return 3;
    if (pp_session_collect(s) != (PP_COLLECT_SPANS | PP_COLLECT_API))
        return 4;
    pp_track t;
    pp_track_device(s, "NPU", 0, "req 0", 0, &t);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.role = PP_ROLE_EXEC;
    r.name = pp_intern("infer");
    for (long i = 0; i < n; i++) {
        r.ts_ns = pp_now();
        r.dur_ns = 10;
        r.batch = i;
        pp_span(s, &r);
    }
    return 0;
}

/* Runs the child with PIPEPROF_LIVE_FD=<pipe> (or `live` as given) and
 * PIPEPROF_COLLECT=`collect`; collects the stream into *got and stderr into
 * *err_out; returns the child's exit code. */
static int run_child(const char *live, const char *collect, unsigned char **got, size_t *len,
                     char **err_out) {
    int data[2], errp[2];
    EXPECT_EQ_I64(pipe(data), 0);
    EXPECT_EQ_I64(pipe(errp), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char fd[16];
        snprintf(fd, sizeof fd, "%d", data[1]);
        close(data[0]);
        close(errp[0]);
        dup2(errp[1], 2);
        unsetenv("PIPEPROF_OUTPUT");
        setenv("PIPEPROF_LIVE_FD", live ? live : fd, 1);
        setenv("PIPEPROF_COLLECT", collect, 1);
        char n[16];
        snprintf(n, sizeof n, "%d", SPANS);
        execl("/proc/self/exe", "test_env_live", "child", n, (char *)NULL);
        _exit(127);
    }
    close(data[1]);
    close(errp[1]);
    *got = NULL;
    *len = 0;
    size_t cap = 0;
    unsigned char buf[4096];
    ssize_t r;
    while ((r = read(data[0], buf, sizeof buf)) > 0) {
        if (*len + (size_t)r > cap) {
            cap = (*len + (size_t)r) * 2;
            *got = realloc(*got, cap);
        }
        memcpy(*got + *len, buf, (size_t)r);
        *len += (size_t)r;
    }
    close(data[0]);
    char ebuf[2048];
    ssize_t e = read(errp[0], ebuf, sizeof ebuf - 1);
    ebuf[e > 0 ? e : 0] = 0;
    close(errp[0]);
    *err_out = strdup(ebuf);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Every span arrives once, in order, then a STATUS record, then end of file
 * when the program exits. */
static void test_live_fd_streams_every_span_until_exit(void) {
    unsigned char *got;
    size_t len;
    char *err;
    EXPECT_EQ_I64(run_child(NULL, "spans,api", &got, &len, &err), 0);
    EXPECT_STR(err, "");
    size_t n = pp_subrec_count(len);
    EXPECT_EQ_U64(len % PP_SUBREC_SIZE, 0);
    EXPECT_EQ_U64(n, SPANS + 1);
    for (size_t i = 0; i + 1 < n && i < SPANS; i++) {
        if (pp_subrec_batch(got, i) != (int64_t)i || strcmp(pp_subrec_device(got, i), "NPU") != 0) {
            EXPECT_EQ_I64(pp_subrec_batch(got, i), (int64_t)i);
            EXPECT_STR(pp_subrec_device(got, i), "NPU");
            break;
        }
    }
    if (n > 0) {
        EXPECT_EQ_I64(pp_subrec_kind_of(got, n - 1), PP_SUBREC_STATUS);
        EXPECT_EQ_U64(pp_subrec_lost(got, n - 1), 0);
    }
    free(got);
    free(err);
}

static void test_bad_live_settings_are_reported(void) {
    unsigned char *got;
    size_t len;
    char *err;
    EXPECT_EQ_I64(run_child(NULL, "spans,kernels", &got, &len, &err), 3); /* no session */
    EXPECT_CONTAINS(err, "pipeprof: PIPEPROF_COLLECT: collect \"spans,kernels\": unknown item "
                         "\"kernels\"");
    EXPECT_CONTAINS(err, "not recording");
    EXPECT_EQ_U64(len, 0);
    free(got);
    free(err);

    EXPECT_EQ_I64(run_child("pipe", "spans,api", &got, &len, &err), 0);
    EXPECT_CONTAINS(err, "pipeprof: PIPEPROF_LIVE_FD=pipe: must be a file descriptor number; "
                         "no live stream");
    free(got);
    free(err);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child_main(atol(argv[2]));
    RUN(test_live_fd_streams_every_span_until_exit);
    RUN(test_bad_live_settings_are_reported);
    return pp_test_finish();
}
