/* The trace of PIPEPROF_OUTPUT is written once, and whoever comes second
 * waits for that write: a program that exits while the signal watcher
 * writes, or gets SIGTERM while the exit-time write runs, still leaves the
 * complete trace and no FILE.tmp.PID (src/capture/env.c). Before, the
 * second caller returned at once and the process ended mid-write: exit 0
 * with no trace and no message, or a .tmp left behind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>

#include "env_child.h"

#define SPANS 300000 /* a write of a few tenths of a second */

static void record(long n) {
    pp_session *s = pp_default_session();
    pp_track t;
    pp_track_thread(s, "worker", &t);
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("step");
    for (long i = 0; i < n; i++) {
        r.ts_ns = 1000 * i;
        r.dur_ns = 10;
        r.batch = i;
        pp_span(s, &r);
    }
}

/* "raise": SIGTERM to itself, then returns from main while the watcher
 * writes. "exit": says it is done on fd 3 and returns from main; the parent
 * sends SIGTERM once the exit-time write has begun. */
static int child(const char *mode) {
    if (!pp_default_session())
        return 3;
    record(SPANS);
    if (strcmp(mode, "raise") == 0) {
        raise(SIGTERM);
        usleep(20000); /* the watcher has begun its write */
    } else if (write(3, "x", 1) != 1) {
        return 4;
    }
    return 0;
}

static pid_t spawn(const char *mode, const char *output, int ready[2]) {
    pid_t pid = fork();
    if (pid == 0) {
        if (ready)
            dup2(ready[1], 3);
        setenv("PIPEPROF_OUTPUT", output, 1);
        execl("/proc/self/exe", "test_env_flush", "child", mode, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Whether `dir` holds a file whose name starts with `prefix`. */
static int has_file(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL && !found;)
        found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return found;
}

/* Splits `path` into its folder and "<name>.tmp" (what a write in
 * progress or one cut short leaves). */
static void tmp_of(const char *path, char *dir, char *prefix) {
    snprintf(dir, 4096, "%s", path);
    char *slash = strrchr(dir, '/');
    *slash = 0;
    snprintf(prefix, 4096, "%s.tmp", slash + 1);
}

static void expect_complete(const char *path) {
    pp_model *m = read_trace(path);
    EXPECT_EQ_U64(m ? pp_model_event_count(m) : 0, SPANS);
    pp_model_free(m);
    char dir[4096], prefix[4096];
    tmp_of(path, dir, prefix);
    EXPECT(!has_file(dir, prefix));
}

static void test_exit_waits_for_the_signal_write(void) {
    const char *path = pp_test_path("flush_raise.json");
    pid_t pid = spawn("raise", path, NULL);
    int st = 0;
    waitpid(pid, &st, 0);
    /* the watcher's re-raised SIGTERM or the program's own exit, whichever
     * comes first once the trace is written */
    EXPECT((WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) || (WIFEXITED(st) && WEXITSTATUS(st) == 0));
    expect_complete(path);
}

static void test_signal_waits_for_the_exit_write(void) {
    const char *path = pp_test_path("flush_exit.json");
    char dir[4096], prefix[4096];
    int ready[2];
    tmp_of(path, dir, prefix);
    EXPECT_EQ_I64(pipe(ready), 0);
    pid_t pid = spawn("exit", path, ready);
    close(ready[1]);
    char c;
    EXPECT_EQ_I64(read(ready[0], &c, 1), 1);
    close(ready[0]);
    /* SIGTERM as soon as the write has begun (its .tmp exists) */
    int seen = 0;
    for (int i = 0; i < 20000 && !(seen = has_file(dir, prefix)); i++)
        usleep(100);
    EXPECT(seen);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT((WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) || (WIFEXITED(st) && WEXITSTATUS(st) == 0));
    expect_complete(path);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child(argv[2]);
    const char *san = getenv("PP_SANITIZE");
    if (san && strcmp(san, "thread") == 0)
        pp_test_skip("ThreadSanitizer's own background thread does not block signals, and a "
                     "signal the kernel hands to it is never handled (the killed child hangs); "
                     "the plain and ASan builds run this test");
    RUN(test_exit_waits_for_the_signal_write);
    RUN(test_signal_waits_for_the_exit_write);
    return pp_test_finish();
}
