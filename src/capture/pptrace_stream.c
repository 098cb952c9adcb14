/* The flight recorder (pptrace_stream.h): one writer thread turns a
 * session's newly published records into .pptrace blocks at the end of the
 * output file, every PP_STREAM_PERIOD_MS, with the encoders the model writer
 * uses (io/pptrace_blocks.h). What a record becomes is in
 * pptrace_stream_records.c; the file keeps events in the order they were
 * streamed, thread after thread in each period (readers and analyses do
 * not rely on order; sorting would cost a copy of every batch). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/pptrace_stream.h"
#include "capture/pptrace_stream_impl.h"
#include "core/names.h"
#include "io/outfile.h"
#include "model/ann_table.h"

/* Set before the session starts, cleared by finish; read by any thread
 * that stops a session. */
static _Atomic(stream *) active;
static pid_t active_pid; /* a forked child has the pointer, not the thread */

void pp_stream_fail(stream *st, int rc) {
    if (st->rc == PP_OK)
        st->rc = rc;
}

/* ---- writing ---- */

static void to_file(void *ctx, const void *data, size_t len) {
    stream *st = ctx;
    const char *p = data;
    while (len && !st->write_errno) {
        ssize_t n = write(st->fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            st->write_errno = n < 0 ? errno : EIO;
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

/* Appends the new strings and tracks, then the batch of events with their
 * annotations, and starts an empty batch (reusing the model's arrays). */
void pp_stream_write_batch(stream *st) {
    size_t nevents = pp_model_event_count(st->m), nanns;
    pp_model_anns(st->m, &nanns);
    int rc = pptrace_put_strings(&st->enc, st->m, st->strings_out, st->path, &st->err);
    if (rc == PP_OK && (rc = pptrace_put_tracks(&st->enc, st->m, st->tracks_out)) == PP_OK)
        rc = pptrace_put_events(&st->enc, st->m, st->events_out);
    if (rc != PP_OK) {
        pp_stream_fail(st, rc);
        return;
    }
    st->strings_out = pp_model_string_count(st->m);
    st->tracks_out = pp_model_track_count(st->m);
    st->events_out += nevents;
    st->annotations_out += nanns;
    pp_model_clear_events(st->m);
    st->gen++;
}

static void poll_once(stream *st) {
    if (pp_follower_poll(st->f, pp_stream_on_records, st) == PP_ENOMEM)
        pp_stream_fail(st, PP_ENOMEM);
    if (st->rc == PP_OK && (pp_model_event_count(st->m) || st->strings_out < pp_model_string_count(st->m)))
        pp_stream_write_batch(st);
}

/* ---- the end of the file ---- */

static int add_thread_row(void *ctx, const pp_thread_meta *t, const pp_record *recs, size_t n) {
    stream *st = ctx;
    (void)recs;
    (void)n;
    if (pp_model_thread_count(st->m) > t->index)
        return 0; /* a further run of a thread already added */
    pp_thread_info info = {.tid = t->tid, .name = pp_stream_map_name(st, t->name), .recorded = t->recorded,
                           .dropped = t->dropped};
    if (pp_model_add_thread(st->m, &info) != PP_OK)
        pp_stream_fail(st, PP_ENOMEM);
    pp_model_meta_mut(st->m)->dropped_records += t->dropped;
    return st->rc != PP_OK;
}

static void write_end(stream *st) {
    pp_model_meta *meta = pp_model_meta_mut(st->m);
    meta->level = pp_session_level(st->s);
    meta->process_name = st->process;
    if (pp_model_meta_set_clock(st->m) != PP_OK) {
        pp_stream_fail(st, PP_ENOMEM);
        return;
    }
    int rc = pp_session_visit_records(st->s, add_thread_row, st);
    if (rc != PP_OK || st->rc != PP_OK) {
        pp_stream_fail(st, rc != PP_OK ? rc : st->rc);
        return;
    }
    meta->dropped_records += st->late_annotations;
    meta->unmatched_ends = st->unmatched + st->begins.n + st->ends.n;
    meta->ignored_events = st->ignored;
    meta->truncated_bytes += pp_names_cut_bytes(); /* over-long names (pp_intern) */
    pp_stream_write_batch(st); /* the thread names */
    pptrace_totals totals = {pp_model_string_count(st->m), pp_model_track_count(st->m),
                             pp_model_thread_count(st->m), st->events_out, st->annotations_out};
    if (st->rc == PP_OK && ((rc = pptrace_put_threads(&st->enc, st->m, 0)) ||
                            (rc = pptrace_put_meta(&st->enc, st->m)) ||
                            (rc = pptrace_put_clock(&st->enc, st->m)) ||
                            (rc = pptrace_put_end(&st->enc, &totals))))
        pp_stream_fail(st, rc);
}

static void *stream_main(void *arg) {
    stream *st = arg;
    sigset_t all;
    sigfillset(&all);
    /* Signals go to the program's threads; a write past ulimit -f fails
     * with EFBIG here instead of killing the process with SIGXFSZ. */
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pptrace_put_header(&st->enc);
    pthread_mutex_lock(&st->lock);
    while (!st->quit) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += PP_STREAM_PERIOD_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&st->wake, &st->lock, &until);
        if (st->quit)
            break;
        pthread_mutex_unlock(&st->lock);
        if (st->rc == PP_OK && !st->write_errno) /* else the file is removed at the end */
            poll_once(st);
        pthread_mutex_lock(&st->lock);
    }
    pthread_mutex_unlock(&st->lock);
    st->final = 1;
    if (st->rc == PP_OK)
        poll_once(st);
    if (st->rc == PP_OK)
        write_end(st);
    return NULL;
}

/* ---- open and finish ---- */

static void stream_free(stream *st) {
    pp_follower_close(st->f);
    pp_model_free(st->m);
    pptrace_enc_free(&st->enc);
    pp_name_map_free(&st->names);
    free(st->track_map);
    free(st->lane_end);
    free(st->lane_track);
    free(st->begins.v);
    free(st->ends.v);
    free(st->threads);
    free(st->path);
    pthread_cond_destroy(&st->wake);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

static int start_thread(stream *st) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&st->lock, NULL);
    return pthread_create(&st->thread, NULL, stream_main, st) ? PP_ENOMEM : PP_OK;
}

int pp_pptrace_stream_open(pp_session *s, const char *path, pp_error *err) {
    if (!s || !path)
        return pp_set_error(err, PP_EINVAL, "pp_pptrace_stream_open: session and path are required");
    if (atomic_load(&active))
        return pp_set_error(err, PP_ESTATE, "%s: a flight recording is already being written", path);
    stream *st = calloc(1, sizeof *st);
    if (!st || !(st->path = strdup(path)) || pp_model_create(&st->m) != PP_OK) {
        if (st)
            free(st->path);
        free(st);
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    st->s = s;
    st->fd = -1;
    st->strings_out = 1; /* id 0, "", is implicit */
    st->pid = pp_session_pid(s);
    const char *pname = pp_session_process_name(s);
    int rc = pp_follower_open(s, &st->f);
    if (rc == PP_OK && pp_model_intern(st->m, pname, strlen(pname), &st->process) != PP_OK)
        rc = PP_ENOMEM;
    if (rc != PP_OK) {
        pthread_mutex_init(&st->lock, NULL);
        pthread_cond_init(&st->wake, NULL);
        stream_free(st);
        return pp_set_error(err, rc, "%s: cannot follow the session: %s", path, pp_strerror(rc));
    }
    unlink(path); /* a new file: `record` tells a fresh trace by its inode */
    st->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (st->fd < 0) {
        rc = pp_set_error(err, PP_EIO, "%s: cannot create: %s", path, strerror(errno));
        pthread_mutex_init(&st->lock, NULL);
        pthread_cond_init(&st->wake, NULL);
        stream_free(st);
        return rc;
    }
    st->enc = (pptrace_enc){.sink = to_file, .ctx = st};
    if (start_thread(st) != PP_OK) {
        close(st->fd);
        unlink(path);
        stream_free(st);
        return pp_set_error(err, PP_ENOMEM, "%s: cannot start the writer thread", path);
    }
    active_pid = getpid();
    atomic_store(&active, st);
    return PP_OK;
}

int pp_pptrace_stream_active(const pp_session *s) {
    stream *st = atomic_load(&active);
    return st && st->s == s && getpid() == active_pid;
}

void pp_pptrace_stream_path(const pp_session *s, char *buf, size_t cap) {
    stream *st = atomic_load(&active);
    if (cap)
        snprintf(buf, cap, "%s", st && st->s == s && getpid() == active_pid ? st->path : "");
}

/* Whether the file under the stream's path is still the stream's own: a
 * child that exec'd a program with the same PIPEPROF_OUTPUT replaces it. */
static int owns_name(const stream *st) {
    struct stat mine, named;
    return fstat(st->fd, &mine) == 0 && stat(st->path, &named) == 0 &&
           named.st_ino == mine.st_ino && named.st_dev == mine.st_dev;
}

/* Puts the finished file back under its name when another process took
 * the name: as when every process wrote its trace at exit, the last to
 * finish wins (copied through PATH.tmp.PID and a rename). */
static int republish(stream *st, pp_error *err) {
    if (owns_name(st))
        return PP_OK;
    pp_outfile out;
    int rc = pp_outfile_open(&out, st->path, err);
    if (rc)
        return rc;
    static char buf[1 << 16];
    for (off_t at = 0;;) {
        ssize_t n = pread(st->fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            pp_outfile_abort(&out);
            return pp_set_error(err, PP_EIO, "%s: reading the recording back: %s", st->path,
                                strerror(errno));
        }
        if (n == 0)
            break;
        pp_outfile_write(&out, buf, (size_t)n);
        at += n;
    }
    return pp_outfile_commit(&out, err);
}

int pp_pptrace_stream_finish(pp_session *s, pp_error *err) {
    stream *st = atomic_load(&active);
    if (!st || st->s != s || getpid() != active_pid)
        return pp_set_error(err, PP_ENOTFOUND, "the session has no flight recording");
    atomic_store(&active, NULL);
    pthread_mutex_lock(&st->lock);
    st->quit = 1;
    pthread_cond_signal(&st->wake);
    pthread_mutex_unlock(&st->lock);
    pthread_join(st->thread, NULL);
    int rc = PP_OK;
    if (st->write_errno)
        rc = pp_set_error(err, PP_EIO, "%s: write failed: %s", st->path, strerror(st->write_errno));
    else if (st->rc != PP_OK)
        rc = st->err.msg[0] ? pp_set_error(err, st->rc, "%s", st->err.msg)
                            : pp_set_error(err, st->rc, "%s: %s", st->path, pp_strerror(st->rc));
    if (rc != PP_OK && owns_name(st))
        unlink(st->path); /* no file that looks like more than it is */
    if (rc == PP_OK)
        rc = republish(st, err);
    if (close(st->fd) != 0 && rc == PP_OK)
        rc = pp_set_error(err, PP_EIO, "%s: write failed: %s", st->path, strerror(errno));
    stream_free(st);
    return rc;
}
