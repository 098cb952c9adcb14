/* The flight recorder (pptrace_stream.h): one writer thread turns a
 * session's newly published records into .pptrace blocks at the end of the
 * output file, every PP_STREAM_PERIOD_MS, with the encoders the model writer
 * uses (io/pptrace_blocks.h).
 *
 * A record becomes what it becomes in pp_model_from_session
 * (model/record_event.h), with two differences a stream cannot avoid: the
 * file keeps events in the order they were streamed, thread after thread
 * in each period (readers and analyses do not rely on order; sorting would
 * cost a copy of every batch), and a range is written when its end is
 * seen, on the first lane free at its start.
 *
 * Annotations follow their record on the same thread, and an ANNOTATIONS
 * block may only refer to events at or after the last one annotated. So a
 * thread's newest record is held back for one period, which is time for its
 * annotations to arrive; an annotation that comes later still, after its
 * event was written, is counted among the dropped records. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/pptrace_stream.h"
#include "core/follow.h"
#include "core/grow.h"
#include "io/outfile.h"
#include "io/pptrace_blocks.h"
#include "io/pptrace_format.h"
#include "model/record_event.h"

typedef struct thread_state {
    int held;          /* its newest record was held back on the last poll */
    int has_event;     /* its last record is an event that takes annotations */
    uint64_t gen;      /* ... in the batch of this generation */
    size_t event;      /* ... at this index of the batch */
} thread_state;

typedef struct open_range {
    uint64_t id;
    int64_t ts_ns;
    uint32_t name; /* model id (begin), or unused (an end seen first) */
    int is_region;
} open_range;

typedef struct range_list {
    open_range *v;
    size_t n, cap;
} range_list;

typedef struct stream {
    pp_session *s;
    pp_follower *f;
    char *path;
    int fd;
    int write_errno;     /* of the first failed write; nothing is written after it */
    int rc;              /* first failure other than a write */
    pp_error err;
    pp_model *m;         /* the file's strings and tracks; the batch of events being built */
    pptrace_enc enc;
    pp_name_map names;
    size_t strings_out, tracks_out; /* rows of m's tables already in the file */
    uint64_t events_out, annotations_out;
    uint64_t gen;        /* batches written; a thread's event is in the batch of its gen */
    uint32_t process;
    int64_t pid;
    uint32_t *track_map; /* session track -> model track + 1 (0: not yet) */
    size_t track_cap;
    uint32_t regions_track; /* + 1; 0: not yet */
    int64_t *lane_end;
    uint32_t *lane_track;
    size_t nlanes, lane_cap, lane_track_cap;
    range_list begins, ends; /* ranges begun, not yet ended; ends whose begin is not yet seen */
    thread_state *threads;
    size_t nthreads;
    uint64_t unmatched, ignored, late_annotations;
    int final;           /* the session stopped: hold nothing back */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int quit;
} stream;

/* Set before the session starts, cleared by finish; read by any thread
 * that stops a session. */
static _Atomic(stream *) active;
static pid_t active_pid; /* a forked child has the pointer, not the thread */

static void fail(stream *st, int rc) {
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
static void write_batch(stream *st) {
    size_t nevents = pp_model_event_count(st->m), nanns;
    pp_model_annotations(st->m, &nanns);
    int rc = pptrace_put_strings(&st->enc, st->m, st->strings_out, st->path, &st->err);
    if (rc == PP_OK && (rc = pptrace_put_tracks(&st->enc, st->m, st->tracks_out)) == PP_OK)
        rc = pptrace_put_events(&st->enc, st->m, st->events_out);
    if (rc != PP_OK) {
        fail(st, rc);
        return;
    }
    st->strings_out = pp_model_string_count(st->m);
    st->tracks_out = pp_model_track_count(st->m);
    st->events_out += nevents;
    st->annotations_out += nanns;
    pp_model_clear_events(st->m);
    st->gen++;
}

/* ---- records to events ---- */

static uint32_t map_name(stream *st, pp_str id) {
    uint32_t mid;
    if (pp_name_map_get(&st->names, st->m, id, &mid) != PP_OK)
        fail(st, PP_ENOMEM);
    return mid;
}

static uint32_t add_track(stream *st, const pp_track_info *t) {
    uint32_t index = 0;
    if (pp_model_add_track(st->m, t, &index) != PP_OK)
        fail(st, PP_ENOMEM);
    return index;
}

/* Tracks the stream creates sort after the session's own. */
#define OWN_TRACKS_SORT (INT32_MAX / 2)

static pp_track_info own_track(stream *st, uint8_t kind, const char *name, int32_t sort) {
    pp_track_info t;
    pp_track_info_init(&t);
    t.kind = kind;
    if (pp_model_intern(st->m, name, strlen(name), &t.name) != PP_OK)
        fail(st, PP_ENOMEM);
    t.process = st->process;
    t.pid = st->pid;
    t.sort_index = sort;
    return t;
}

/* The model track of session track `t`, copied from the session on first
 * use; UINT32_MAX for a track the session never created. */
static uint32_t map_track(stream *st, uint32_t t) {
    if (t < st->track_cap && st->track_map[t])
        return st->track_map[t] - 1;
    pp_track_def d;
    if (pp_follower_track(st->f, t, &d) != PP_OK)
        return UINT32_MAX;
    if (t >= st->track_cap) {
        size_t cap = st->track_cap;
        if (pp_grow((void **)&st->track_map, &cap, t, sizeof *st->track_map) != PP_OK) {
            fail(st, PP_ENOMEM);
            return UINT32_MAX;
        }
        memset(st->track_map + st->track_cap, 0, (cap - st->track_cap) * sizeof *st->track_map);
        st->track_cap = cap;
    }
    pp_track_info info;
    pp_track_info_from_def(&d, &info);
    info.name = map_name(st, d.name);
    info.device = map_name(st, d.device);
    info.process = info.kind == PP_TRACK_KIND_DEVICE ? info.device : st->process;
    info.pid = st->pid;
    info.sort_index = (int32_t)t;
    st->track_map[t] = add_track(st, &info) + 1;
    return st->track_map[t] - 1;
}

static void add_event(stream *st, thread_state *ts, const pp_event *e) {
    if (pp_model_event_count(st->m) >= PPTRACE_ROWS_PER_BLOCK)
        write_batch(st);
    int rc = pp_model_add_event(st->m, e);
    if (rc == PP_EINVAL) { /* a time no trace format can hold */
        st->ignored++;
        return;
    }
    if (rc != PP_OK) {
        fail(st, rc);
        return;
    }
    if (ts) {
        ts->has_event = 1;
        ts->gen = st->gen;
        ts->event = pp_model_event_count(st->m) - 1;
    }
}

static void add_annotation(stream *st, thread_state *ts, const pp_record *r) {
    if (!ts->has_event)
        return; /* after a range record, as in pp_model_from_session */
    if (ts->gen != st->gen) {
        st->late_annotations++;
        return;
    }
    pp_annotation a;
    pp_annotation_from_record(r, ts->event, &a);
    a.key = map_name(st, a.key);
    if (a.type == PP_VALUE_STR)
        a.v.s = map_name(st, a.v.s);
    if (pp_model_add_annotation(st->m, &a) != PP_OK)
        fail(st, PP_ENOMEM);
}

static open_range *find_range(range_list *l, uint64_t id) {
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].id == id)
            return &l->v[i];
    return NULL;
}

static void take_range(range_list *l, open_range *r) {
    *r = l->v[--l->n];
}

static void push_range(stream *st, range_list *l, open_range r) {
    if (pp_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v) != PP_OK) {
        fail(st, PP_ENOMEM);
        return;
    }
    l->v[l->n++] = r;
}

/* The track of a range [begin, end): regions on the session's regions
 * track (or one of the stream's own), ranges on the first lane free at
 * their start. */
static uint32_t range_track(stream *st, const open_range *b, int64_t end_ns) {
    if (b->is_region) {
        if (!st->regions_track) {
            pp_track_def d;
            for (uint32_t t = 0; pp_follower_track(st->f, t, &d) == PP_OK; t++)
                if (d.kind == PP_TRACK_KIND_REGIONS)
                    st->regions_track = map_track(st, t) + 1;
            if (!st->regions_track) {
                pp_track_info t = own_track(st, PP_TRACK_KIND_REGIONS, "regions", OWN_TRACKS_SORT);
                st->regions_track = add_track(st, &t) + 1;
            }
        }
        return st->regions_track - 1;
    }
    size_t lane = 0;
    while (lane < st->nlanes && st->lane_end[lane] > b->ts_ns)
        lane++;
    if (lane == st->nlanes) {
        size_t cap = st->lane_cap;
        if (pp_grow((void **)&st->lane_end, &cap, lane, sizeof *st->lane_end) != PP_OK ||
            pp_grow((void **)&st->lane_track, &st->lane_track_cap, lane, sizeof *st->lane_track)) {
            fail(st, PP_ENOMEM);
            return 0;
        }
        st->lane_cap = cap;
        char name[32];
        snprintf(name, sizeof name, "ranges %zu", lane);
        pp_track_info t = own_track(st, PP_TRACK_KIND_ASYNC, name, OWN_TRACKS_SORT + 1 + (int32_t)lane);
        st->lane_track[lane] = add_track(st, &t);
        st->nlanes++;
    }
    st->lane_end[lane] = end_ns;
    return st->lane_track[lane];
}

static void emit_range(stream *st, const open_range *b, int64_t end_ns) {
    pp_event e;
    pp_event_init(&e);
    e.kind = b->is_region ? PP_EV_REGION : PP_EV_RANGE;
    e.ts_ns = b->ts_ns;
    e.dur_ns = end_ns - b->ts_ns;
    e.name = b->name;
    e.id = b->id;
    e.track = range_track(st, b, end_ns);
    if (st->rc == PP_OK)
        add_event(st, NULL, &e);
}

/* A begin meets its end, whichever of the two is seen first (they may be
 * recorded on different threads); an end before its begin is unmatched. */
static void on_range_record(stream *st, const pp_record *r) {
    int is_begin = r->kind == PP_REC_RANGE_BEGIN || r->kind == PP_REC_REGION_BEGIN;
    open_range *other = find_range(is_begin ? &st->ends : &st->begins, r->u.id);
    open_range me = {.id = r->u.id, .ts_ns = r->ts_ns, .is_region = r->kind == PP_REC_REGION_BEGIN};
    if (is_begin)
        me.name = map_name(st, r->name);
    if (other) {
        open_range o = *other;
        take_range(is_begin ? &st->ends : &st->begins, other);
        const open_range *b = is_begin ? &me : &o;
        int64_t end_ns = is_begin ? o.ts_ns : me.ts_ns;
        if (end_ns >= b->ts_ns) {
            emit_range(st, b, end_ns);
            return;
        }
        st->unmatched++; /* the end; the begin stays open */
        if (!is_begin)
            push_range(st, &st->begins, o);
        else
            push_range(st, &st->begins, me);
        return;
    }
    push_range(st, is_begin ? &st->begins : &st->ends, me);
}

static void on_record(stream *st, thread_state *ts, const pp_record *r) {
    if (r->kind >= PP_REC_ARG_INT) {
        add_annotation(st, ts, r);
        return;
    }
    ts->has_event = 0;
    if (r->kind >= PP_REC_RANGE_BEGIN) {
        on_range_record(st, r);
        return;
    }
    pp_event e;
    pp_event_from_record(r, &e);
    e.track = map_track(st, e.track);
    if (e.track == UINT32_MAX) {
        st->unmatched++;
        return;
    }
    e.name = map_name(st, e.name);
    e.stage = map_name(st, e.stage);
    add_event(st, ts, &e);
}

static thread_state *thread_of(stream *st, uint32_t i) {
    if (i >= st->nthreads) {
        size_t cap = st->nthreads;
        if (pp_grow((void **)&st->threads, &cap, i, sizeof *st->threads) != PP_OK) {
            fail(st, PP_ENOMEM);
            return NULL;
        }
        memset(st->threads + st->nthreads, 0, (cap - st->nthreads) * sizeof *st->threads);
        st->nthreads = cap;
    }
    return &st->threads[i];
}

/* Takes a thread's newly published records, all but its newest record and
 * the annotations after it, which wait one poll for more annotations. */
static int on_records(void *ctx, uint32_t thread, const pp_record *recs, size_t n, size_t *consumed) {
    stream *st = ctx;
    thread_state *ts = thread_of(st, thread);
    if (!ts)
        return 1;
    size_t take = n, newest = n;
    while (newest > 0 && recs[newest - 1].kind >= PP_REC_ARG_INT)
        newest--;
    if (!st->final && newest > 0 && !(newest == 1 && ts->held))
        take = newest - 1;
    ts->held = take < n;
    for (size_t i = 0; i < take && st->rc == PP_OK; i++)
        on_record(st, ts, &recs[i]);
    *consumed = take;
    return st->rc != PP_OK;
}

static void poll_once(stream *st) {
    if (pp_follower_poll(st->f, on_records, st) == PP_ENOMEM)
        fail(st, PP_ENOMEM);
    if (st->rc == PP_OK && (pp_model_event_count(st->m) || st->strings_out < pp_model_string_count(st->m)))
        write_batch(st);
}

/* ---- the end of the file ---- */

static int add_thread_row(void *ctx, const pp_thread_meta *t, const pp_record *recs, size_t n) {
    stream *st = ctx;
    (void)recs;
    (void)n;
    if (pp_model_thread_count(st->m) > t->index)
        return 0; /* a further run of a thread already added */
    pp_thread_info info = {.tid = t->tid, .name = map_name(st, t->name), .recorded = t->recorded,
                           .dropped = t->dropped};
    if (pp_model_add_thread(st->m, &info) != PP_OK)
        fail(st, PP_ENOMEM);
    pp_model_meta_mut(st->m)->dropped_records += t->dropped;
    return st->rc != PP_OK;
}

static void write_end(stream *st) {
    pp_model_meta *meta = pp_model_meta_mut(st->m);
    meta->level = pp_session_level(st->s);
    meta->process_name = st->process;
    int rc = pp_session_visit_records(st->s, add_thread_row, st);
    if (rc != PP_OK || st->rc != PP_OK) {
        fail(st, rc != PP_OK ? rc : st->rc);
        return;
    }
    meta->dropped_records += st->late_annotations;
    meta->unmatched_ends = st->unmatched + st->begins.n + st->ends.n;
    meta->ignored_events = st->ignored;
    write_batch(st); /* the thread names */
    pptrace_totals totals = {pp_model_string_count(st->m), pp_model_track_count(st->m),
                             pp_model_thread_count(st->m), st->events_out, st->annotations_out};
    if (st->rc == PP_OK && ((rc = pptrace_put_threads(&st->enc, st->m, 0)) ||
                            (rc = pptrace_put_meta(&st->enc, st->m)) ||
                            (rc = pptrace_put_end(&st->enc, &totals))))
        fail(st, rc);
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
