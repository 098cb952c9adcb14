/* bench_inject — what a range an unchanged program makes through NVTX or ITT
 * costs when pipeprof records it, beside the same program with no tool
 * attached (the APIs' own no-ops). Runs bench/inject_ranges both ways and
 * prints BENCH lines:
 *
 *   nvtx_range_ns   push + pop, recorded   (baseline: no_tool, NVTX's no-op)
 *   itt_range_ns    task_begin + task_end  (baseline: no_tool, ITT's no-op)
 *
 * Each figure is the best of several rounds of RANGES ranges in a fresh
 * process (the least disturbed by other processes on a shared machine). */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RANGES "1000000"
#define ROUNDS 5

extern char **environ;

/* Runs inject_ranges API with `vars` added to the environment; the ns per
 * range it printed, or -1. */
static double run_once(const char *api, char *const *vars) {
    char *env[256];
    size_t n = 0;
    for (char **e = environ; *e && n < 200; e++)
        if (strncmp(*e, "PIPEPROF_", 9) && strncmp(*e, "NVTX_INJECTION", 14) &&
            strncmp(*e, "INTEL_LIBITTNOTIFY", 18))
            env[n++] = *e;
    for (; vars && *vars; vars++)
        env[n++] = *vars;
    env[n] = NULL;
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    char *argv[] = {PP_INJECT_RANGES, (char *)api, RANGES, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, PP_INJECT_RANGES, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    char out[64] = "";
    ssize_t got = rc == 0 ? read(fds[0], out, sizeof out - 1) : -1;
    close(fds[0]);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        got <= 0)
        return -1;
    return strtod(out, NULL);
}

static double best_of(const char *api, char *const *vars) {
    double best = -1;
    for (int r = 0; r < ROUNDS; r++) {
        double ns = run_once(api, vars);
        if (ns < 0)
            return -1;
        if (best < 0 || ns < best)
            best = ns;
    }
    return best;
}

static int bench(const char *name, const char *api, const char *var, const char *lib) {
    char out[64], inject[4096];
    snprintf(out, sizeof out, "PIPEPROF_OUTPUT=/tmp/bench_inject.%d.pptrace", (int)getpid());
    snprintf(inject, sizeof inject, "%s=%s", var, lib);
    char *recorded[] = {out, inject, NULL};
    double base = best_of(api, NULL), value = best_of(api, recorded);
    unlink(out + strlen("PIPEPROF_OUTPUT="));
    if (base < 0 || value < 0) {
        fprintf(stderr, "bench_inject: %s failed to run\n", PP_INJECT_RANGES);
        return 1;
    }
    printf("BENCH %s value=%.2f unit=ns baseline=no_tool:%.2f ratio=%.2f\n", name, value, base,
           base > 0 ? value / base : 0);
    return 0;
}

int main(void) {
    int rc = bench("nvtx_range_ns", "nvtx", "NVTX_INJECTION64_PATH", PP_NVTX_LIB);
    return bench("itt_range_ns", "itt", "INTEL_LIBITTNOTIFY64", PP_ITT_LIB) | rc;
}
