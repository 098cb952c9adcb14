/* Env activation: with PIPEPROF_OUTPUT=FILE set, a program linked with
 * libpipeprof gets a default session from load to exit, written to FILE (the
 * format its extension names) at exit, or on SIGINT, SIGTERM, SIGHUP or
 * SIGQUIT when the program has not installed handlers of its own.
 *
 *   PIPEPROF_OUTPUT       file to write (.pptrace, .json or .pftrace); %p, %n,
 *                         %h and %% expand at the write (pp_output_expand)
 *   PIPEPROF_LEVEL        0, 1 (default) or 2
 *   PIPEPROF_MAX_RECORDS  record budget (default 16777216)
 *   PIPEPROF_OVERFLOW     drop (default) or ring
 *   PIPEPROF_COLLECT, PIPEPROF_DEVICES, PIPEPROF_LIVE_FD: see env_live.h
 *                         (PIPEPROF_LIVE_FD alone also activates a session)
 *   PIPEPROF_RECORD_LOG   set by pipeprof record: a file each default session
 *                         appends its line to (what it recorded and wrote)
 *   PIPEPROF_DEFAULT_COPIES  set here: "PID:COUNT", how many copies of
 *                         libpipeprof in process PID have a default session
 *   PIPEPROF_RECORD_FD    set by `pipeprof record`: a pipe on which the
 *                         library says 'a' once its session is up and 'f'
 *                         when writing the trace failed, so that record's
 *                         own words after the run fit what happened
 *
 * A .pptrace output under the drop policy is a flight recording: written
 * while the program runs (pptrace_stream.h), so that even SIGKILL or a crash
 * leaves all but its last moments. Other outputs, and a file the stream
 * cannot create, are written at the end.
 *
 * The write on a signal happens on a small watcher thread, not inside the
 * handler, so the handler stays async-signal-safe.
 *
 * This is the one place the library writes to stderr: there is no caller to
 * hand a status to, and a profiler that silently records nothing because of a
 * typo in a variable is worse than one line of text. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/env_live.h"
#include "capture/pptrace_stream.h"
#include "core/session.h"
#include "pipeprof/io.h"

static pp_session *default_session;
static pid_t default_pid;
static unsigned default_copy; /* this copy's place among the process's copies */
static pthread_once_t flush_once = PTHREAD_ONCE_INIT;

pp_session *pp_default_session(void) {
    /* A forked child must not write its parent's file. */
    return default_session && getpid() == default_pid ? default_session : NULL;
}

static void env_complain(const char *var, const char *value, const char *what) {
    fprintf(stderr, "pipeprof: %s=%s: %s; not recording\n", var, value, what);
}

/* Parses the PIPEPROF_* variables into cfg; 0 if valid. */
static int env_config(pp_session_config *cfg) {
    const char *v;
    char *end;
    pp_session_config_init(cfg);
    cfg->output = getenv("PIPEPROF_OUTPUT");
    if (cfg->output && !*cfg->output)
        cfg->output = NULL; /* a live stream only */
    char probe[4096];
    pp_error err = {{0}};
    if (cfg->output && pp_output_expand(cfg->output, 0, probe, sizeof probe, &err) != PP_OK) {
        fprintf(stderr, "pipeprof: PIPEPROF_OUTPUT: %s; not recording\n", err.msg);
        return -1;
    }
    pp_format f = cfg->output ? pp_format_from_path(cfg->output) : PP_FORMAT_PPTRACE;
    if (f != PP_FORMAT_PPTRACE && f != PP_FORMAT_CHROME_JSON && f != PP_FORMAT_PERFETTO) {
        env_complain("PIPEPROF_OUTPUT", cfg->output,
                     "the file must end in .pptrace, .json or .pftrace");
        return -1;
    }
    if ((v = getenv("PIPEPROF_LEVEL")) && *v) {
        if (strcmp(v, "0") && strcmp(v, "1") && strcmp(v, "2")) {
            env_complain("PIPEPROF_LEVEL", v, "must be 0, 1 or 2");
            return -1;
        }
        cfg->level = v[0] - '0';
    }
    if ((v = getenv("PIPEPROF_MAX_RECORDS")) && *v) {
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno || *end || n == 0 || v[0] == '-') {
            env_complain("PIPEPROF_MAX_RECORDS", v, "must be a positive integer");
            return -1;
        }
        cfg->max_records = n;
    }
    /* core/clock.c reads it at the first pp_now; a value it does not know
     * would silently mean clock_gettime there, so the recording refuses it */
    if ((v = getenv("PIPEPROF_CLOCK")) && *v && strcmp(v, "tsc") && strcmp(v, "monotonic")) {
        env_complain("PIPEPROF_CLOCK", v, "must be tsc or monotonic");
        return -1;
    }
    if ((v = getenv("PIPEPROF_OVERFLOW")) && *v) {
        if (strcmp(v, "drop") == 0)
            cfg->overflow = PP_OVERFLOW_DROP;
        else if (strcmp(v, "ring") == 0)
            cfg->overflow = PP_OVERFLOW_RING;
        else {
            env_complain("PIPEPROF_OVERFLOW", v, "must be drop or ring");
            return -1;
        }
    }
    return 0;
}

/* Under `pipeprof record` (PIPEPROF_RECORD_LOG names a file), one line per
 * default session: its process, this copy of the library, what it recorded
 * and the file it wrote. Two copies of libpipeprof in one process (a wheel's
 * and the ITT or NVTX library's) each have a default session; when both
 * write one file, the later replaces the earlier, and record says so from
 * these lines instead of reporting success (docs/recording.md). One
 * O_APPEND write a line, so lines of several processes do not mix. */
static void log_default_session(const char *written, int rc) {
    const char *log = getenv("PIPEPROF_RECORD_LOG");
    if ((!log || !*log) && default_copy > 0 && written[0]) /* no record to merge it */
        fprintf(stderr, "pipeprof: a copy of libpipeprof other than the first in this process "
                        "wrote its trace to %s, beside PIPEPROF_OUTPUT's (pipeprof merge puts "
                        "them together)\n", written);
    if (!log || !*log)
        return;
    pp_session_stats st = {0};
    pp_session_stats_get(default_session, &st);
    char line[4400];
    int n = snprintf(line, sizeof line,
                     "session pid=%lld copy=%p index=%u records=%llu dropped=%llu rc=%d path=%s\n",
                     (long long)getpid(), (const void *)&default_session, default_copy,
                     (unsigned long long)st.recorded, (unsigned long long)st.dropped, rc,
                     written[0] ? written : "-");
    int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 || n <= 0 || (size_t)n >= sizeof line || write(fd, line, (size_t)n) != n)
        fprintf(stderr, "pipeprof: PIPEPROF_RECORD_LOG=%s: cannot log this session\n", log);
    if (fd >= 0)
        close(fd);
}

static int record_fd = -1; /* PIPEPROF_RECORD_FD, taken at activation */

/* One byte to `pipeprof record` ('a' activated, 'f' the write failed). */
static void tell_record(char what) {
    if (record_fd >= 0 && write(record_fd, &what, 1) != 1) {
        /* record then says less precisely what happened; nothing to do */
    }
}

/* PIPEPROF_RECORD_FD names an open descriptor: kept (close-on-exec, and the
 * variable removed, so a program this one runs does not write to whatever
 * that number is in it). */
static void take_record_fd(void) {
    const char *v = getenv("PIPEPROF_RECORD_FD");
    char *end;
    long fd = v && *v ? strtol(v, &end, 10) : -1;
    if (fd >= 0 && fd <= 1 << 20 && *end == '\0' && fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
        record_fd = (int)fd;
    unsetenv("PIPEPROF_RECORD_FD");
}

static void write_default_session(void) {
    pp_error err = {{0}};
    char written[4096];
    int rc = pp_session_stop_written(default_session, written, sizeof written, &err);
    if (rc != PP_OK) {
        fprintf(stderr, "pipeprof: %s\n", err.msg);
        tell_record('f');
    }
    log_default_session(written, rc);
    pp_env_live_close();
}

/* Writes the trace once. Whoever comes second (exit while the watcher
 * writes, a signal during the exit-time write) waits until the write is
 * done: returning at once would let the process end mid-write, leaving no
 * trace or a FILE.tmp.PID. */
static void flush_default_session(void) {
    if (pp_default_session())
        pthread_once(&flush_once, write_default_session);
}

/* The signal handler only wakes this thread (write() is async-signal-safe;
 * building a model and writing a file are not). The thread writes the
 * trace and then lets the process die of the signal as it would have. */
static int signal_pipe[2] = {-1, -1};

static void on_fatal_signal(int sig) {
    int saved = errno;
    if (write(signal_pipe[1], &sig, sizeof sig) < 0) {
        /* nothing to do in a handler: the trace is lost, the exit is not */
    }
    errno = saved;
}

static void *signal_watcher(void *arg) {
    int sig;
    sigset_t all;
    (void)arg;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals go to the program's threads */
    while (read(signal_pipe[0], &sig, sizeof sig) != (ssize_t)sizeof sig) {
        if (errno != EINTR)
            return NULL;
    }
    flush_default_session();
    signal(sig, SIG_DFL);
    kill(getpid(), sig);
    return NULL;
}

static int start_signal_watcher(void) {
    pthread_t th;
    pthread_attr_t attr;
    if (pipe2(signal_pipe, O_CLOEXEC) != 0)
        return -1;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, signal_watcher, NULL);
    pthread_attr_destroy(&attr);
    return rc;
}

static void install_if_default(int sig) {
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
    }
}

/* Copies of libpipeprof in one process (the package's and the one the ITT
 * or NVTX library loads, when they are different files) each get a default
 * session here. They count themselves in PIPEPROF_DEFAULT_COPIES
 * ("PID:COUNT", shared through the process's environment): the first
 * writes PIPEPROF_OUTPUT, copy k (k >= 1) its part "NAME.copyK.EXT", never
 * the same file, and `pipeprof record` merges the parts into the output
 * (cli/record_log.c). A forked or exec'd child, another pid, starts at 0. */
static unsigned claim_copy_index(void) {
    const char *v = getenv("PIPEPROF_DEFAULT_COPIES");
    long long pid = 0;
    unsigned count = 0, k = 0;
    char next[64];
    if (v && sscanf(v, "%lld:%u", &pid, &count) == 2 && pid == (long long)getpid())
        k = count;
    snprintf(next, sizeof next, "%lld:%u", (long long)getpid(), k + 1);
    setenv("PIPEPROF_DEFAULT_COPIES", next, 1);
    return k;
}

/* "dir/t.json" -> "dir/t.copy2.json" (before the extension of the name). */
static void part_name(const char *out, unsigned k, char *buf, size_t cap) {
    const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
    if (!dot || (slash && dot < slash))
        dot = out + strlen(out);
    snprintf(buf, cap, "%.*s.copy%u%s", (int)(dot - out), out, k, dot);
}

__attribute__((constructor)) static void env_activate(void) {
    const char *out = getenv("PIPEPROF_OUTPUT");
    pp_session_config cfg;
    pp_session *s = NULL;
    if ((!out || !*out) && !pp_env_live_requested())
        return;
    take_record_fd();
    if (env_config(&cfg) != 0)
        return;
    static char part[4096];
    default_copy = claim_copy_index();
    if (default_copy > 0 && cfg.output) {
        part_name(cfg.output, default_copy, part, sizeof part);
        cfg.output = part;
    }
    if (pp_session_open(&cfg, &s) == PP_OK && pp_env_apply_settings(s) != 0) {
        pp_session_close(s); /* the message named the variable */
        return;
    }
    if (!s || pp_session_start(s) != PP_OK) {
        fprintf(stderr, "pipeprof: cannot start the session for PIPEPROF_OUTPUT=%s\n", out ? out : "");
        pp_session_close(s);
        return;
    }
    /* Nothing records into s before it is the default session, so the
     * stream, which follows from now on, misses nothing. */
    if (cfg.output && pp_format_from_path(cfg.output) == PP_FORMAT_PPTRACE &&
        cfg.overflow == PP_OVERFLOW_DROP && !strchr(cfg.output, '%')) /* patterns: at stop */
        pp_pptrace_stream_open(s, cfg.output, NULL); /* else the whole file at the end */
    pp_env_live_open(s);
    default_session = s;
    default_pid = getpid();
    tell_record('a');
    atexit(flush_default_session);
    if (start_signal_watcher() == 0) {
        install_if_default(SIGINT);
        install_if_default(SIGTERM);
        install_if_default(SIGHUP);
        install_if_default(SIGQUIT);
    }
}
