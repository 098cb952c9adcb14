/* pipeprof top: a live view of a running pipeline. The program under test
 * streams its spans through a pipe (PIPEPROF_LIVE_FD, a subscription of its
 * env-activated session: it needs nothing but libpipeprof); `--demo` runs
 * the built-in pipeline in this process, subscribed the same way. The view
 * (top_view.c) is redrawn every interval, in place on a terminal and as
 * successive plain-text blocks otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/top_view.h"
#include "pipeprof/pipeline.h"
#include "pipeprof/subscribe.h"

static void top_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof top [options] -- CMD [ARGS...]\n"
            "       pipeprof top [options] --demo\n\n"
            "A live view of a running pipeline, redrawn about twice a second: per device\n"
            "its utilization and bubbles over the last seconds, the latest cycle latency\n"
            "and its bottleneck stage, each stage's time per batch, the busiest ops, and\n"
            "data loss. CMD is any program linked with libpipeprof that records into its\n"
            "default session (docs/recording.md): pipeprof starts it with PIPEPROF_LIVE_FD\n"
            "set and reads its spans from a pipe. --demo runs the built-in pipeline (CPU +\n"
            "simulated NPU/GPU) instead. On a terminal the view is redrawn in place (CMD's\n"
            "own output is discarded); otherwise each refresh prints a plain-text block,\n"
            "the last one marked \"finished\". Exits with CMD's status.\n\n"
            "options:\n"
            "  --window S        seconds the view covers (default 5)\n"
            "  --interval MS     refresh period in milliseconds (default 500)\n"
            "  --level 0|1|2     what is recorded; 2 (default) includes per-op spans\n"
            "  -o, --output FILE also write CMD's trace to FILE, as pipeprof record does\n"
            "  --demo            run the built-in demo pipeline in this process\n"
            "  --batches N       with --demo: measured batches (default 200)\n"
            "  -h, --help        this help\n\n"
            "examples:\n"
            "  pipeprof top -- ./my_pipeline --batches 5000\n"
            "  pipeprof top -o trace.pptrace -- ./my_pipeline\n"
            "  pipeprof top --demo --batches 500\n");
}

typedef struct top_opts {
    int64_t window_ns;
    int interval_ms;
    int level;
    const char *output;
    int demo;
    int batches;
    char **command;
} top_opts;

static int top_parse(int argc, char **argv, top_opts *o) {
    *o = (top_opts){.window_ns = 5000000000LL, .interval_ms = 500, .level = 2, .batches = 200};
    for (int i = 1; i < argc; i++) {
        const char *v;
        uint64_t n;
        int got;
        if (strcmp(argv[i], "--") == 0) {
            if (i + 1 < argc)
                o->command = argv + i + 1;
            break;
        }
        if (strcmp(argv[i], "--demo") == 0) {
            o->demo = 1;
        } else if ((got = cli_option(argc, argv, &i, "--window", &v)) != 0) {
            if (got < 0 || cli_parse_u64("top", "--window", v, 1, 3600, &n) != 0)
                return CLI_BADINPUT;
            o->window_ns = (int64_t)n * 1000000000LL;
        } else if ((got = cli_option(argc, argv, &i, "--interval", &v)) != 0) {
            if (got < 0 || cli_parse_u64("top", "--interval", v, 50, 60000, &n) != 0)
                return CLI_BADINPUT;
            o->interval_ms = (int)n;
        } else if ((got = cli_option(argc, argv, &i, "--level", &v)) != 0) {
            if (got < 0 || cli_parse_u64("top", "--level", v, 0, 2, &n) != 0)
                return CLI_BADINPUT;
            o->level = (int)n;
        } else if ((got = cli_option(argc, argv, &i, "--batches", &v)) != 0) {
            if (got < 0 || cli_parse_u64("top", "--batches", v, 1, 1000000, &n) != 0)
                return CLI_BADINPUT;
            o->batches = (int)n;
        } else if ((got = cli_option(argc, argv, &i, "--output", &v)) != 0 ||
                   (got = cli_option(argc, argv, &i, "-o", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            o->output = v;
        } else {
            return cli_unknown_option("top", argv[i]);
        }
    }
    if (o->demo == !!o->command) {
        cli_error("top: give a command to watch (pipeprof top -- CMD [ARGS...]) or --demo");
        return CLI_BADINPUT;
    }
    if (o->demo && o->output) {
        cli_error("top: --output is for a watched command; the demo writes no trace");
        return CLI_BADINPUT;
    }
    return 0;
}

/* ---- the view loop ---- */

/* What ended a watch. */
typedef enum { WATCH_EOF, WATCH_CHILD_EXITED, WATCH_VIEW_CLOSED } watch_end;

/* The longest poll while a child is watched: how soon its exit is seen. */
#define CHILD_CHECK_MS 50

/* Writes the view; 0 when the reader of stdout went away (EPIPE: SIGPIPE
 * is ignored while top watches, `top ... | head` closes it). */
static int view_out(top_view *v, int64_t at, const char *title, int tty) {
    if (tty)
        fputs("\033[H\033[J", stdout);
    top_view_render(v, at, title, stdout);
    if (!tty)
        fputc('\n', stdout);
    return fflush(stdout) == 0 || errno != EPIPE;
}

/* Reads records from fd until end of file, or, with child > 0, until that
 * child has exited (what is in the pipe then is read, but a grandchild that
 * inherited the pipe is not waited for; *status gets the child's status),
 * redrawing every interval; draws the last view at the end. */
static watch_end watch(int fd, const top_opts *o, const char *what, pid_t child, int *status) {
    watch_end end_of = WATCH_EOF;
    top_view *v = top_view_create(o->window_ns);
    if (!v) {
        cli_error("top: out of memory");
        return end_of;
    }
    int tty = isatty(STDOUT_FILENO);
    unsigned char buf[64 * PP_SUBREC_SIZE];
    size_t have = 0, bad = 0;
    int64_t started = pp_now(), next = started + (int64_t)o->interval_ms * 1000000;
    char title[512];
    for (int eof = 0; !eof;) {
        int64_t now = pp_now();
        int wait_ms = now < next ? (int)((next - now + 999999) / 1000000) : 0;
        if (child > 0 && wait_ms > CHILD_CHECK_MS)
            wait_ms = CHILD_CHECK_MS;
        if (child > 0 && end_of == WATCH_EOF && waitpid(child, status, WNOHANG) == child) {
            end_of = WATCH_CHILD_EXITED; /* read what it left in the pipe, then stop */
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (end_of == WATCH_CHILD_EXITED || poll(&p, 1, wait_ms) > 0) {
            ssize_t n = read(fd, buf + have, sizeof buf - have);
            if (n == 0 || (n < 0 && errno != EINTR)) {
                eof = n == 0 || errno != EAGAIN || end_of == WATCH_CHILD_EXITED;
            } else if (n > 0) {
                have += (size_t)n;
                size_t whole = pp_subrec_count(have);
                bad += top_view_add(v, buf, whole);
                memmove(buf, buf + whole * PP_SUBREC_SIZE, have - whole * PP_SUBREC_SIZE);
                have -= whole * PP_SUBREC_SIZE;
            }
        }
        now = pp_now();
        if (now >= next && !eof) {
            snprintf(title, sizeof title, "%s, running for %.1f s", what, (double)(now - started) / 1e9);
            if (!view_out(v, now, title, tty)) {
                top_view_free(v);
                return WATCH_VIEW_CLOSED;
            }
            next = now + (int64_t)o->interval_ms * 1000000;
        }
    }
    /* The last view covers the end of the run, not the moment it was drawn. */
    int64_t end = top_view_received(v) ? top_view_last_end(v) : pp_now();
    snprintf(title, sizeof title, "%s, finished after %.1f s", what, (double)(pp_now() - started) / 1e9);
    if (!view_out(v, end, title, tty)) {
        top_view_free(v);
        return WATCH_VIEW_CLOSED;
    }
    if (top_view_received(v) == 0)
        printf("\nno spans arrived: is the program linked with libpipeprof and recording "
               "into its default session (docs/recording.md)?\n");
    if (bad)
        printf("\n%zu records were not valid pipeprof subscription records and were skipped\n",
               bad);
    top_view_free(v);
    return fflush(stdout) != 0 && errno == EPIPE ? WATCH_VIEW_CLOSED : end_of;
}

/* ---- watching a command ---- */

static int watch_command(const top_opts *o) {
    int fds[2];
    if (pipe(fds) != 0) {
        cli_error("top: cannot create a pipe: %s", strerror(errno));
        return CLI_FAIL;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    char fd_text[16], level[8];
    snprintf(fd_text, sizeof fd_text, "%d", fds[1]);
    snprintf(level, sizeof level, "%d", o->level);
    int report[2]; /* exec's errno comes back on this close-on-exec pipe */
    if (pipe2(report, O_CLOEXEC) != 0) {
        cli_error("top: cannot create a pipe: %s", strerror(errno));
        return CLI_FAIL;
    }
    int tty = isatty(STDOUT_FILENO);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(report[0]);
        cli_die_with_parent(parent); /* top killed, even by SIGKILL: CMD goes too */
        if (tty) { /* the view owns the terminal */
            int null = open("/dev/null", O_WRONLY);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        setenv("PIPEPROF_LIVE_FD", fd_text, 1);
        setenv("PIPEPROF_LEVEL", level, 1);
        if (o->output)
            setenv("PIPEPROF_OUTPUT", o->output, 1);
        else
            unsetenv("PIPEPROF_OUTPUT");
        execvp(o->command[0], o->command);
        int e = errno;
        ssize_t put = write(report[1], &e, sizeof e);
        (void)put;
        _exit(127);
    }
    close(fds[1]);
    close(report[1]);
    if (pid < 0) {
        cli_error("top: cannot start %s: %s", o->command[0], strerror(errno));
        close(fds[0]);
        close(report[0]);
        return CLI_FAIL;
    }
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (n == (ssize_t)sizeof exec_errno) {
        waitpid(pid, NULL, 0);
        close(fds[0]);
        cli_error("top: cannot run \"%s\": %s", o->command[0],
                  exec_errno == ENOENT ? "command not found" : strerror(exec_errno));
        return exec_errno == ENOENT ? CLI_BADINPUT : CLI_FAIL;
    }
    /* Ctrl-C reaches CMD too (same process group); the view then shows
     * what CMD sent before it ended. A closed view (`top ... | head`) is
     * an EPIPE, not a SIGPIPE that would leave CMD running on its own. */
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int status = 0;
    watch_end end_of = watch(fds[0], o, o->command[0], pid, &status);
    close(fds[0]);
    if (end_of == WATCH_VIEW_CLOSED) { /* nobody watches: CMD ends, quietly */
        kill(pid, SIGTERM);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        return 128 + SIGPIPE; /* as a viewer killed by SIGPIPE would */
    }
    while (end_of != WATCH_CHILD_EXITED && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* ---- the demo in this process ---- */

typedef struct demo_run {
    pp_pipeline *p;
    pp_session *s;
    pp_subscription *sub;
    int batches;
    int rc;
    pp_error err;
} demo_run;

static void *run_demo(void *arg) {
    demo_run *d = arg;
    pp_run_options opt = {.batches = d->batches, .warmup = -1};
    d->rc = pp_pipeline_run(d->p, d->s, &opt, NULL, &d->err);
    pp_session_stop(d->s, NULL);
    pp_subscription_close(d->sub, NULL); /* the rest is sent, then end of file */
    return NULL;
}

static int watch_demo(const top_opts *o) {
    demo_run d = {.batches = o->batches};
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        cli_error("top: cannot create a pipe: %s", strerror(errno));
        return CLI_FAIL;
    }
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    scfg.level = o->level;
    scfg.process_name = "demo";
    pp_subscription_config sc;
    pp_subscription_config_init(&sc);
    sc.fd = fds[1];
    sc.roles = PP_SUB_ALL_SPANS;
    int rc = pp_pipeline_demo(&d.p, &d.err);
    if (rc == PP_OK)
        rc = pp_session_open(&scfg, &d.s);
    if (rc == PP_OK)
        rc = pp_subscription_open(d.s, &sc, &d.sub, &d.err);
    if (rc == PP_OK)
        rc = pp_session_start(d.s);
    pthread_t th;
    if (rc == PP_OK && pthread_create(&th, NULL, run_demo, &d) != 0)
        rc = PP_ENOMEM;
    if (rc != PP_OK) {
        cli_error("top: %s", d.err.msg[0] ? d.err.msg : pp_strerror(rc));
        pp_subscription_close(d.sub, NULL);
        if (!d.sub)
            close(fds[1]);
        close(fds[0]);
        pp_session_close(d.s);
        pp_pipeline_free(d.p);
        return cli_exit_code(rc);
    }
    signal(SIGPIPE, SIG_IGN); /* a closed view is an EPIPE: the demo is run out unwatched */
    int unused;
    watch(fds[0], o, "demo pipeline (CPU + simulated NPU/GPU)", 0, &unused);
    pthread_join(th, NULL);
    close(fds[0]);
    pp_session_close(d.s);
    pp_pipeline_free(d.p);
    if (d.rc != PP_OK) {
        cli_error("top: %s", d.err.msg);
        return cli_exit_code(d.rc);
    }
    return CLI_OK;
}

static int top_run(int argc, char **argv) {
    top_opts o;
    int rc = top_parse(argc, argv, &o);
    if (rc != 0)
        return rc;
    return o.demo ? watch_demo(&o) : watch_command(&o);
}

const pp_command pp_cmd_top = {
    .name = "top",
    .summary = "live view of a running pipeline: utilization, bubbles, bottleneck, ops",
    .run = top_run,
    .help = top_help,
};
