/* Output name patterns: one PIPEPROF_OUTPUT or session output for several
 * processes and sessions must give each its own file (%p process id, %n the
 * process's session number, %h host name, %% a percent sign), and a typo in
 * a pattern must say what is wrong instead of writing a strange file. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "testutil.h"

/* Every pattern expands to what it names; other text is copied. */
static void test_each_pattern_expands(void) {
    char out[512], want[512], host[256];
    pp_error err = {{0}};
    EXPECT_EQ_I64(gethostname(host, sizeof host), 0);
    EXPECT_EQ_I64(pp_output_expand("t-%p-%n-%h-100%%.json", 7, out, sizeof out, &err), PP_OK);
    snprintf(want, sizeof want, "t-%ld-7-%s-100%%.json", (long)getpid(), host);
    EXPECT_STR(out, want);
    EXPECT_EQ_I64(pp_output_expand("plain.pptrace", 3, out, sizeof out, &err), PP_OK);
    EXPECT_STR(out, "plain.pptrace");
}

/* An unknown %x or a lone % is an error naming the pattern and what exists. */
static void test_bad_patterns_are_refused(void) {
    char out[64];
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_output_expand("t-%q.json", 0, out, sizeof out, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "output name \"t-%q.json\": unknown pattern %q (have: %p process id, "
                             "%n session number, %h host name, %% percent sign)");
    EXPECT_EQ_I64(pp_output_expand("t.json%", 0, out, sizeof out, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "a lone % at the end");
    EXPECT_EQ_I64(pp_output_expand("a-very-long-name-%p.json", 0, out, 12, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "expands to more than 11 bytes");
}

/* Records one span named `name` in a session written to `pattern`. */
static int record_session(const char *pattern, const char *name) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_error err = {{0}};
    pp_session_config_init(&cfg);
    cfg.output = pattern;
    if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK)
        return -1;
    pp_track t;
    pp_track_thread(s, "main", &t);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern(name);
    r.ts_ns = pp_now();
    r.dur_ns = 100;
    pp_span(s, &r);
    int rc = pp_session_stop(s, &err);
    if (rc != PP_OK)
        fprintf(stderr, "%s\n", err.msg);
    pp_session_close(s);
    return rc;
}

/* The name of the one span of the trace at `path`, or "" when unreadable. */
static const char *span_name(const char *path, char *buf, size_t cap) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    buf[0] = '\0';
    if (pp_trace_read(path, &m, &err) != PP_OK)
        return buf;
    if (pp_model_event_count(m) == 1) {
        pp_event e;
        pp_model_event(m, 0, &e);
        snprintf(buf, cap, "%s", pp_model_string(m, e.name));
    }
    pp_model_free(m);
    return buf;
}

/* Two sessions of one process and one of a forked child, all given the same
 * pattern, write three files, each holding its own session's span. */
static void test_processes_and_sessions_write_distinct_files(void) {
    char pattern[512], path[512], got[64];
    const char *dir = pp_test_path("outname");
    snprintf(path, sizeof path, "mkdir -p %s", dir);
    EXPECT_EQ_I64(system(path), 0);
    snprintf(pattern, sizeof pattern, "%s/trace-%%p-%%n.pptrace", dir);
    /* the first sessions of this process to write: numbers 0 and 1 */
    EXPECT_EQ_I64(record_session(pattern, "parent first"), PP_OK);
    EXPECT_EQ_I64(record_session(pattern, "parent second"), PP_OK);
    pid_t child = fork();
    if (child == 0)
        _exit(record_session(pattern, "child first") == PP_OK ? 0 : 1);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    snprintf(path, sizeof path, "%s/trace-%ld-0.pptrace", dir, (long)getpid());
    EXPECT_STR(span_name(path, got, sizeof got), "parent first");
    snprintf(path, sizeof path, "%s/trace-%ld-1.pptrace", dir, (long)getpid());
    EXPECT_STR(span_name(path, got, sizeof got), "parent second");
    /* the child inherited the counter at 2: numbers count per process, and
     * the pid already tells the processes apart */
    snprintf(path, sizeof path, "%s/trace-%ld-2.pptrace", dir, (long)child);
    EXPECT_STR(span_name(path, got, sizeof got), "child first");
}

/* A session whose output has a bad pattern records, but stop says why no
 * file was written. */
static void test_session_with_bad_pattern_fails_at_stop(void) {
    EXPECT_EQ_I64(record_session(pp_test_path("bad-%x.pptrace"), "x"), PP_EINVAL);
}

int main(void) {
    RUN(test_each_pattern_expands);
    RUN(test_bad_patterns_are_refused);
    RUN(test_processes_and_sessions_write_distinct_files);
    RUN(test_session_with_bad_pattern_fails_at_stop);
    return pp_test_finish();
}
