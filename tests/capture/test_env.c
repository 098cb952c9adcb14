/* Env activation: a program linked with libpipeprof records with no code
 * change beyond using pp_default_session(), and its trace is written on
 * normal exit (on SIGINT/SIGTERM: test_env_signals.c). The test re-executes
 * itself as the "program" with PIPEPROF_* set, since activation happens at
 * load time (env_child.h). */
#include "env_child.h"

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
    snprintf(cmd, sizeof cmd, "PIPEPROF_OUTPUT=%s PIPEPROF_CLOCK=rdtsc /proc/%d/exe child 10 -1",
             path, (int)getpid());
    rc = pp_test_run(cmd, &out);
    EXPECT_EQ_I64(rc, 3);
    EXPECT_CONTAINS(out, "PIPEPROF_CLOCK=rdtsc: must be tsc or monotonic; not recording");
    free(out);
    EXPECT(access(path, F_OK) != 0);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0)
        return child_main(atol(argv[2]), atoi(argv[3]));
    RUN(test_written_at_exit_in_both_formats);
    RUN(test_budget_from_env_and_drops_reported);
    RUN(test_bad_env_is_reported);
    return pp_test_finish();
}
