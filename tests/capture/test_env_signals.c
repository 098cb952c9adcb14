/* On SIGTERM and SIGINT a program recording through PIPEPROF_OUTPUT still
 * writes a complete trace, and still dies of the signal as it would have
 * without pipeprof (src/capture/env.c: the handler wakes a watcher thread
 * that writes the trace, then re-raises). */
#include "env_child.h"

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

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0)
        return child_main(atol(argv[2]), atoi(argv[3]));
    const char *san = getenv("PP_SANITIZE");
    if (san && strcmp(san, "thread") == 0)
        pp_test_skip("ThreadSanitizer's own background thread does not block signals, and a "
                     "signal the kernel hands to it is never handled (the killed child hangs); "
                     "the plain and ASan builds run this test");
    RUN(test_written_on_signals);
    return pp_test_finish();
}
