/* pipeprof record: run a program linked with libpipeprof with recording
 * switched on from outside, through the env activation contract
 * (docs/recording.md): PIPEPROF_OUTPUT and friends are set for the child,
 * whose default session writes the trace at exit. pipeprof itself records
 * nothing; it starts the child, passes signals on, and checks the result. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/inject_env.h"
#include "cli/record_log.h"
#include "pipeprof/io.h"
#include "pipeprof/trace.h"

static void record_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof record -o FILE [options] -- CMD [ARGS...]\n\n"
            "Runs CMD with recording switched on: a program linked with libpipeprof\n"
            "records into its default session from start to exit and writes FILE\n"
            "(.pptrace, .json or .pftrace). pipeprof sets PIPEPROF_OUTPUT, PIPEPROF_LEVEL,\n"
            "PIPEPROF_MAX_RECORDS, PIPEPROF_OVERFLOW, PIPEPROF_COLLECT and PIPEPROF_DEVICES\n"
            "for CMD, passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on to it, and exits with\n"
            "its status (128+N if signal N killed it). If pipeprof itself dies (even of\n"
            "SIGKILL), CMD gets SIGTERM.\n"
            "A CMD that exits 0 without writing FILE makes pipeprof exit 1, and so does a\n"
            "trace one session of CMD wrote and another replaced (several processes\n"
            "writing one FILE without %%p): every session reports what it wrote. The\n"
            "traces of two copies of libpipeprof in one process are merged into FILE.\n\n"
            "CMD need not link libpipeprof: its NVTX ranges (nvtxRangePush, torch.cuda.nvtx)\n"
            "and ITT tasks (torch.profiler.itt, emit_itt) are recorded through pipeprof's\n"
            "injection libraries, which NVTX_INJECTION64_PATH and INTEL_LIBITTNOTIFY64 name;\n"
            "where pipeprof was built with CUPTI, the CUDA driver loads its collector\n"
            "(CUDA_INJECTION64_PATH) and kernels, memcpys and memsets are recorded per stream.\n\n"
            "options:\n"
            "  -o, --output FILE     trace to write: .pptrace (native), .json (Chrome)\n"
            "                        or .pftrace (Perfetto protobuf); in its name %%p is\n"
            "                        the process id, %%n the process's session number\n"
            "                        (0, 1, ...), %%h the host name, %%%% a percent sign, so\n"
            "                        several processes or sessions write several files\n"
            "  --level 0|1|2         0: wall times, 1: + hardware totals (default),\n"
            "                        2: + one span per layer / kernel\n"
            "  --max-records N       record budget over all threads (default %" PRIu64 ")\n"
            "  --overflow drop|ring  when the budget is spent: drop new records (default)\n"
            "                        or overwrite the oldest (flight recorder)\n"
            "  --collect LIST        what to record instead of the level's preset: spans,\n"
            "                        hw, ops, transfers, api, sched, threads joined by ',' (or all)\n"
            "  --devices LIST        record only these devices (\"NPU,GPU.0\")\n"
            "%s"
            "  -h, --help            this help\n\n"
            "examples:\n"
            "  pipeprof record -o trace.pptrace -- ./my_pipeline --batches 500\n"
            "  pipeprof record -o trace.pftrace -- ./my_pipeline   # open in ui.perfetto.dev\n"
            "  pipeprof record -o last.json --max-records 100000 --overflow ring -- ./server\n"
            "  pipeprof record -o 'trace-%%p-%%n.pptrace' -- ./run_both_processes.sh\n"
            "  pipeprof record -o nvtx.pptrace -- python infer.py   # NVTX / ITT ranges\n",
            (uint64_t)PP_DEFAULT_MAX_RECORDS, inject_help);
}

typedef struct record_opts {
    const char *output;    /* as the user wrote it, for messages */
    pp_session_config cfg; /* level, budget, overflow, collect and devices for the child */
    const char *collect;   /* as given; NULL: the level's preset */
    char **command;        /* NULL-terminated argv of the child */
    inject_opts inject;    /* annotation APIs to attach to */
} record_opts;

/* --collect and --devices, checked by the library that will read them (on
 * a scratch session); 0 or CLI_BADINPUT after a message. */
static int check_setting(pp_session *s, const char *option, const char *key, const char *value) {
    pp_error err = {{0}};
    if (!value || pp_session_set_config(s, key, value, &err) == PP_OK)
        return 0;
    cli_error("record: %s: %s", option, err.msg);
    return CLI_BADINPUT;
}

static int check_settings(const record_opts *o) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    if (pp_session_open(&cfg, &s) != PP_OK) {
        cli_error("record: out of memory");
        return CLI_FAIL;
    }
    int rc = check_setting(s, "--collect", "collect", o->collect);
    if (rc == 0)
        rc = check_setting(s, "--devices", "devices", o->cfg.devices);
    pp_session_close(s);
    return rc;
}

/* Returns 0, or CLI_BADINPUT after printing what is wrong. */
static int record_parse(int argc, char **argv, record_opts *o) {
    const char *v;
    uint64_t n;
    int got;
    pp_session_config_init(&o->cfg);
    o->output = NULL;
    o->command = NULL;
    o->inject = (inject_opts){.nvtx = 1, .itt = 1, .cupti = 1};
    o->collect = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            o->command = i + 1 < argc ? argv + i + 1 : NULL;
            break;
        }
        if ((got = cli_option(argc, argv, &i, "-o", &v)) != 0 ||
            (got = cli_option(argc, argv, &i, "--output", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            o->output = v;
        } else if ((got = cli_option(argc, argv, &i, "--level", &v)) != 0) {
            if (got < 0 || cli_parse_u64(argv[0], "--level", v, 0, 2, &n) != 0)
                return CLI_BADINPUT;
            o->cfg.level = (int)n;
        } else if ((got = cli_option(argc, argv, &i, "--max-records", &v)) != 0) {
            if (got < 0 || cli_parse_u64(argv[0], "--max-records", v, 1, UINT64_MAX, &n) != 0)
                return CLI_BADINPUT;
            o->cfg.max_records = n;
        } else if ((got = cli_option(argc, argv, &i, "--overflow", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            if (strcmp(v, "drop") != 0 && strcmp(v, "ring") != 0) {
                cli_error("record: --overflow \"%s\": expected drop or ring", v);
                return CLI_BADINPUT;
            }
            o->cfg.overflow = strcmp(v, "ring") == 0 ? PP_OVERFLOW_RING : PP_OVERFLOW_DROP;
        } else if (inject_option(argv[i], &o->inject)) {
            continue;
        } else if ((got = cli_option(argc, argv, &i, "--collect", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            o->collect = v;
        } else if ((got = cli_option(argc, argv, &i, "--devices", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            o->cfg.devices = v;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option(argv[0], argv[i]);
        } else {
            cli_error("record: unexpected argument \"%s\": put the command after \"--\" "
                      "(pipeprof record -o FILE -- %s ...)", argv[i], argv[i]);
            return CLI_BADINPUT;
        }
    }
    if (!o->output) {
        cli_error("record: no output file: give -o FILE (.pptrace, .json or .pftrace)");
        return CLI_BADINPUT;
    }
    char probe[4096];
    pp_error err = {{0}};
    if (pp_output_expand(o->output, 0, probe, sizeof probe, &err) != PP_OK) {
        cli_error("record: -o: %s", err.msg);
        return CLI_BADINPUT;
    }
    const char *slash = strrchr(o->output, '/');
    if (slash && memchr(o->output, '%', (size_t)(slash - o->output))) {
        cli_error("record: -o %s: patterns (%%p, %%n, %%h) go in the file name, not in its "
                  "directory", o->output);
        return CLI_BADINPUT;
    }
    pp_format f = pp_format_from_path(o->output);
    if (f != PP_FORMAT_PPTRACE && f != PP_FORMAT_CHROME_JSON && f != PP_FORMAT_PERFETTO) {
        cli_error("record: -o %s: a recording is written as .pptrace, .json or .pftrace",
                  o->output);
        return CLI_BADINPUT;
    }
    if (!o->command) {
        cli_error("record: no command to run: pipeprof record -o %s -- CMD [ARGS...]", o->output);
        return CLI_BADINPUT;
    }
    return check_settings(o);
}

/* The output as an absolute path, so that a child that changes directory
 * still writes where the user asked. NULL (after a message) on failure. */
static char *absolute_output(const char *path) {
    char cwd[4096];
    char *abs;
    if (path[0] == '/') {
        abs = strdup(path);
    } else if (!getcwd(cwd, sizeof cwd)) {
        cli_error("record: cannot resolve %s: %s", path, strerror(errno));
        return NULL;
    } else if ((abs = malloc(strlen(cwd) + strlen(path) + 2)) != NULL) {
        sprintf(abs, "%s/%s", cwd, path);
    }
    if (!abs)
        cli_error("record: out of memory");
    return abs;
}

/* A missing or read-only directory would only show up as a trace the child
 * failed to write; say so before running anything. */
static int check_output_dir(const char *output, const char *abs) {
    char *dir = strdup(abs);
    if (!dir) {
        cli_error("record: out of memory");
        return CLI_FAIL;
    }
    char *slash = strrchr(dir, '/');
    slash[slash == dir ? 1 : 0] = '\0';
    int ok = access(dir, W_OK | X_OK) == 0;
    if (!ok)
        cli_error("record: -o %s: cannot write in %s: %s", output, dir, strerror(errno));
    free(dir);
    return ok ? 0 : CLI_BADINPUT;
}

/* The child learns everything through its environment; every variable is set
 * so that values left in the user's shell cannot leak into the recording.
 * Returns 0 or CLI_FAIL. */
static int record_setenv(const record_opts *o, const char *abs_output) {
    char level[8], budget[32];
    snprintf(level, sizeof level, "%d", o->cfg.level);
    snprintf(budget, sizeof budget, "%" PRIu64, o->cfg.max_records);
    if (setenv("PIPEPROF_OUTPUT", abs_output, 1) != 0 || setenv("PIPEPROF_LEVEL", level, 1) != 0 ||
        setenv("PIPEPROF_MAX_RECORDS", budget, 1) != 0 ||
        setenv("PIPEPROF_OVERFLOW", o->cfg.overflow == PP_OVERFLOW_RING ? "ring" : "drop", 1) != 0 ||
        (o->collect ? setenv("PIPEPROF_COLLECT", o->collect, 1) : unsetenv("PIPEPROF_COLLECT")) != 0 ||
        (o->cfg.devices ? setenv("PIPEPROF_DEVICES", o->cfg.devices, 1)
                        : unsetenv("PIPEPROF_DEVICES")) != 0) {
        cli_error("record: cannot set the environment: %s", strerror(errno));
        return CLI_FAIL;
    }
    return 0;
}

/* Identity of an output file, to tell "written by this run" from "left
 * over from an earlier one": writers rename a new file into place, so a
 * fresh trace has a new inode and mtime. */
typedef struct file_stamp {
    char *path;
    struct stat st;
} file_stamp;

static int stamp_same(const struct stat *a, const struct stat *b) {
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The files the output names: the one file, or for a pattern every file
 * whose name it could expand to (%p and %n any text, %h this host). */
typedef struct file_set {
    file_stamp *files;
    size_t n;
} file_set;

static void file_set_free(file_set *fs) {
    for (size_t i = 0; i < fs->n; i++)
        free(fs->files[i].path);
    free(fs->files);
    *fs = (file_set){0};
}

/* The glob(3) pattern of an output name pattern: literal text escaped.
 * NULL when out of memory. */
static char *output_glob(const char *output) {
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "unknown-host");
    host[sizeof host - 1] = '\0';
    size_t len = strlen(output);
    char *g = malloc(2 * len + (len / 2 + 1) * 2 * strlen(host) + 1), *q = g;
    if (!g)
        return NULL;
    for (const char *p = output; *p; p++) {
        const char *lit = p;
        size_t n = 1;
        if (*p == '%') {
            p++;
            if (*p == 'p' || *p == 'n') {
                *q++ = '*';
                continue;
            }
            if (*p == 'h')
                lit = host, n = strlen(host);
        }
        for (size_t k = 0; k < n; k++) {
            if (strchr("*?[\\", lit[k]))
                *q++ = '\\';
            *q++ = lit[k];
        }
    }
    *q = '\0';
    return g;
}

static int file_set_add(file_set *fs, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!(fs->files[fs->n].path = strdup(path)))
        return CLI_FAIL;
    fs->files[fs->n++].st = st;
    return 0;
}

/* Fills `fs` with the files `output` (absolute) names now. */
static int file_set_scan(const char *output, file_set *fs) {
    glob_t g = {0};
    char *pattern = NULL;
    int rc = 0;
    *fs = (file_set){0};
    if (strchr(output, '%')) {
        if (!(pattern = output_glob(output)) || glob(pattern, 0, NULL, &g) == GLOB_NOSPACE)
            rc = CLI_FAIL;
    }
    size_t n = pattern ? g.gl_pathc : 1;
    if (!rc && !(fs->files = calloc(n ? n : 1, sizeof *fs->files)))
        rc = CLI_FAIL;
    for (size_t i = 0; !rc && i < n; i++)
        rc = file_set_add(fs, pattern ? g.gl_pathv[i] : output);
    if (pattern)
        globfree(&g);
    free(pattern);
    if (rc)
        cli_error("record: out of memory");
    return rc;
}

/* 1 when `f` is not in `before` as it was then: written by this run. */
static int is_new(const file_stamp *f, const file_set *before) {
    for (size_t i = 0; i < before->n; i++)
        if (strcmp(before->files[i].path, f->path) == 0)
            return !stamp_same(&before->files[i].st, &f->st);
    return 1;
}

/* ---- running the child ---- */

static volatile sig_atomic_t child_pid;
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

/* A signal typed at the terminal already reaches the child, which is in the
 * same process group; only one sent to pipeprof alone (kill, a CI timeout:
 * si_code <= 0) needs passing on, else the child would get Ctrl-C twice. */
static void forward_signal(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    if (child_pid > 0 && info->si_code <= 0)
        kill((pid_t)child_pid, sig);
}

/* In the child: dies with pipeprof (SIGTERM, which lets it write its
 * trace, when pipeprof itself is killed: no orphan recording on to its
 * budget), back to the dispositions pipeprof was started with, then exec.
 * On failure the errno goes up the close-on-exec pipe. */
static void exec_child(char **command, int report_fd, const struct sigaction *saved,
                       const sigset_t *saved_mask, pid_t parent) {
    cli_die_with_parent(parent);
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaction(forwarded[k], &saved[k], NULL);
    sigprocmask(SIG_SETMASK, saved_mask, NULL);
    execvp(command[0], command);
    int e = errno;
    ssize_t put = write(report_fd, &e, sizeof e);
    (void)put; /* nothing more can be done if the report is lost */
    _exit(127);
}

/* Starts `command` and waits for it, passing SIGINT and SIGTERM on. Returns
 * 0 with *status set, or CLI_BADINPUT / CLI_FAIL after a message. */
static int run_child(char **command, int *status) {
    struct sigaction sa, saved[NFORWARDED];
    sigset_t block, saved_mask;
    int fds[2], exec_errno = 0, rc = 0;
    ssize_t n;

    if (pipe2(fds, O_CLOEXEC) != 0) {
        cli_error("record: cannot create a pipe: %s", strerror(errno));
        return CLI_FAIL;
    }
    /* Signals stay blocked from before fork until child_pid is known, so
     * none arrives while there is nobody to pass it to. */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&block);
    for (size_t k = 0; k < NFORWARDED; k++) {
        sigaddset(&block, forwarded[k]);
        sigaction(forwarded[k], &sa, &saved[k]);
    }
    sigprocmask(SIG_BLOCK, &block, &saved_mask);

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        exec_child(command, fds[1], saved, &saved_mask, parent);
    close(fds[1]);
    if (pid < 0) {
        cli_error("record: cannot start %s: %s", command[0], strerror(errno));
        rc = CLI_FAIL;
    } else {
        child_pid = pid;
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
        while ((n = read(fds[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
            ;
        while (waitpid(pid, status, 0) < 0) {
            if (errno != EINTR) {
                cli_error("record: waiting for %s: %s", command[0], strerror(errno));
                rc = CLI_FAIL;
                break;
            }
        }
        if (rc == 0 && n == (ssize_t)sizeof exec_errno) {
            if (exec_errno == ENOENT)
                cli_error("record: cannot run \"%s\": command not found", command[0]);
            else
                cli_error("record: cannot run \"%s\": %s", command[0], strerror(exec_errno));
            rc = CLI_BADINPUT;
        }
    }
    close(fds[0]);
    child_pid = 0;
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaction(forwarded[k], &saved[k], NULL);
    return rc;
}

/* The shell's convention: the exit code, or 128 + the signal that killed it. */
static int exit_code_of(int status) {
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_FAIL;
}

/* One line on stderr saying what the trace holds, read back from the file
 * the way any later command will read it (a .pftrace, which pipeprof does
 * not read, by its size). Returns 0 or a CLI_* code. */
static int record_summary(const char *cmd, const char *path) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    struct stat st;
    cli_viewer_limits_warn(path);
    if (pp_format_from_path(path) == PP_FORMAT_PERFETTO && stat(path, &st) == 0) {
        fprintf(stderr, "pipeprof: %s: wrote %s: %lld bytes (open it in ui.perfetto.dev; its "
                "\"pipeprof\" track names the records dropped, if any)\n", cmd, path,
                (long long)st.st_size);
        return 0;
    }
    int rc = pp_trace_read(path, &m, &err);
    if (rc != PP_OK && rc != PP_ETRUNCATED) {
        cli_error("record: %s wrote a trace that cannot be read back: %s", cmd, err.msg);
        return CLI_FAIL;
    }
    const pp_model_meta *meta = pp_model_meta_get(m);
    size_t threads = pp_model_thread_count(m);
    char dropped[128];
    /* a file cut off before its META block cannot say how many were dropped */
    if (rc == PP_ETRUNCATED)
        snprintf(dropped, sizeof dropped, "dropped records not known (the file was cut off)");
    else
        snprintf(dropped, sizeof dropped, "%" PRIu64 " dropped records%s", meta->dropped_records,
                 meta->dropped_records ? " (raise --max-records, or --overflow ring keeps the newest)"
                                       : "");
    fprintf(stderr, "pipeprof: %s: wrote %s: %zu events from %zu thread%s, %s\n", cmd, path,
            pp_model_event_count(m), threads, threads == 1 ? "" : "s", dropped);
    if (rc == PP_ETRUNCATED)
        cli_error("record: warning: %s", err.msg);
    pp_model_free(m);
    return rc == PP_OK ? 0 : CLI_FAIL;
}

/* What the program's library said on PIPEPROF_RECORD_FD (env.c). */
typedef struct lib_said {
    int activated, write_failed;
} lib_said;

/* Reads what the library wrote to the pipe, without waiting: the program
 * has ended, and a grandchild that inherited the pipe is not waited for. */
static lib_said read_lib_said(int fd) {
    lib_said said = {0};
    char buf[64];
    ssize_t n;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            said.activated |= buf[i] == 'a';
            said.write_failed |= buf[i] == 'f';
        }
    return said;
}

/* Says which traces the run wrote (one line each) or that it wrote none;
 * returns 0 or a CLI_* code. */
static int record_report(const record_opts *o, const char *abs, const file_set *before,
                         int status, lib_said said) {
    int code = exit_code_of(status), rc = 0, wrote = 0;
    file_set after;
    if ((rc = file_set_scan(abs, &after)) != 0)
        return rc;
    for (size_t i = 0; i < after.n; i++) {
        if (!is_new(&after.files[i], before))
            continue;
        wrote++;
        /* a plain name is shown as the user wrote it */
        int r = record_summary(o->command[0],
                               strchr(o->output, '%') ? after.files[i].path : o->output);
        rc = rc ? rc : r;
    }
    file_set_free(&after);
    if (!wrote && said.write_failed) { /* the library has printed why */
        cli_error("record: %s could not write its trace to %s (the error is above)",
                  o->command[0], o->output);
        return code ? code : CLI_FAIL;
    }
    if (!wrote) {
        char why[64] = "";
        if (WIFSIGNALED(status))
            snprintf(why, sizeof why, " (it was killed by signal %d)", WTERMSIG(status));
        else if (code != 0)
            snprintf(why, sizeof why, " (it exited with status %d)", code);
        if (said.activated) /* it recorded, and ended before it wrote */
            cli_error("%s recorded but wrote no trace to %s%s", o->command[0], o->output, why);
        else
            cli_error("%s wrote no trace to %s%s: does it use libpipeprof, NVTX or ITT?",
                      o->command[0], o->output, why);
        return code ? code : CLI_FAIL;
    }
    return code ? code : rc;
}

static int record_run(int argc, char **argv) {
    record_opts o;
    file_set before = {0};
    int rc = record_parse(argc, argv, &o), status = 0;
    if (rc != 0)
        return rc;
    char *abs = absolute_output(o.output);
    if (!abs)
        return CLI_FAIL;
    char log[4096] = "";
    /* the library's word on how it went (env.c): the write end goes to
     * the program, the read end stays here */
    int said_pipe[2] = {-1, -1};
    char said_fd[16];
    if (pipe(said_pipe) != 0 || fcntl(said_pipe[0], F_SETFD, FD_CLOEXEC) != 0) {
        cli_error("record: cannot create a pipe: %s", strerror(errno));
        free(abs);
        return CLI_FAIL;
    }
    snprintf(said_fd, sizeof said_fd, "%d", said_pipe[1]);
    if ((rc = check_output_dir(o.output, abs)) != 0 || (rc = file_set_scan(abs, &before)) != 0 ||
        (rc = record_setenv(&o, abs)) != 0 || (rc = inject_setenv(&o.inject)) != 0 ||
        (rc = setenv("PIPEPROF_RECORD_FD", said_fd, 1) != 0 ? CLI_FAIL : 0) != 0 ||
        (rc = record_log_open(log, sizeof log)) != 0 || (rc = run_child(o.command, &status)) != 0) {
        if (log[0])
            unlink(log);
        close(said_pipe[0]);
        close(said_pipe[1]);
        file_set_free(&before);
        free(abs);
        return rc;
    }
    close(said_pipe[1]);
    lib_said said = read_lib_said(said_pipe[0]);
    close(said_pipe[0]);
    /* the traces of several libpipeprof copies in one process merged first;
     * a trace one session wrote and another replaced is a failure, loudly */
    record_log sessions;
    record_log_read(log, &sessions);
    int merged = record_log_merge(o.command[0], &sessions);
    rc = record_report(&o, abs, &before, status, said);
    int lost = record_log_check(o.command[0], &sessions);
    record_log_free(&sessions);
    rc = rc ? rc : merged ? merged : lost;
    file_set_free(&before);
    free(abs);
    return rc;
}

const pp_command pp_cmd_record = {
    .name = "record",
    .summary = "run a program linked with libpipeprof and record a trace",
    .run = record_run,
    .help = record_help,
};
