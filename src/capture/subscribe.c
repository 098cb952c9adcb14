/* Live subscriptions (pipeprof/subscribe.h): a consumer thread per
 * subscriber that follows the session (core/follow.h), keeps the spans its
 * filter selects, encodes them (subrec.c) into a bounded queue and hands the
 * queue to a file descriptor or a callback.
 *
 * Nothing here runs on a recording thread. The only shared state with them
 * is what core/follow.c reads: published records and the thread list. A
 * consumer that lags fills the queue; what does not fit is counted, never
 * waited for. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/subrec.h"
#include "core/error.h"
#include "core/follow.h"
#include "core/grow.h"

#define DEFAULT_PERIOD_MS 10
#define DEFAULT_QUEUE_RECORDS 16384
#define DEFAULT_ARGS_WAIT_MS 100
/* pp_subscription_close hands on what the consumer takes in this long from
 * the call; what is left then is counted lost (subscribe.h). */
#define CLOSE_WAIT_NS (PP_SUBSCRIPTION_CLOSE_WAIT_MS * 1000000LL)
/* ... and then this long more for the stream's last (STATUS) record. */
#define LAST_RECORD_WAIT_MS 1000

/* A thread's last span, held until its annotations are known. */
typedef struct pending {
    int active;
    pp_record rec;
    pp_str type;
    int64_t seen_ns; /* when the consumer first saw it */
} pending;

typedef struct track_entry {
    int known;
    pp_track_def def;
} track_entry;

struct pp_subscription {
    pp_session *s;
    pp_follower *follower;
    /* the config, resolved */
    unsigned roles;
    pp_str device, stage; /* 0: any */
    int fd;
    pp_subscription_fn callback;
    void *ctx;
    int period_ms;
    int64_t args_wait_ns;
    pp_str key_type;
    /* the consumer thread and how close reaches it */
    pid_t pid; /* the process that opened it: a forked child has no consumer thread */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int closing; /* guarded by lock */
    /* monotonic_ns() past which close hands nothing more on; 0 until close.
     * Atomic: set by close while the consumer may be in a callback. */
    _Atomic int64_t deadline_ns;
    /* consumer-thread state */
    unsigned char *queue;      /* encoded records waiting for the consumer */
    size_t qcap, qstart, qend; /* bytes: capacity, first unsent, end */
    int broken;                /* the descriptor failed: nothing more can be sent */
    pending *pend;
    size_t npend;
    track_entry *tracks;
    size_t ntracks;
    const char **texts; /* pp_str -> text, looked up once per id */
    size_t ntexts;
    uint64_t seq;
    uint64_t reported_lost, reported_dropped;
    int64_t now_ns;
    /* totals, read by pp_subscription_stats_get from any thread */
    _Atomic uint64_t delivered, lost, dropped;
};

void pp_subscription_config_init(pp_subscription_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->fd = -1;
}

/* ---- lookups, cached on the consumer thread ---- */

/* Makes *items (of *n zeroed items) hold index `index`, zeroing new items. */
static int grow_zeroed(void **items, size_t *n, size_t index, size_t elem) {
    size_t cap = *n;
    if (pp_grow(items, &cap, index, elem))
        return PP_ENOMEM;
    memset((char *)*items + *n * elem, 0, (cap - *n) * elem);
    *n = cap;
    return PP_OK;
}

static const char *text_of(pp_subscription *sub, pp_str id) {
    if (id == 0)
        return "";
    if (grow_zeroed((void **)&sub->texts, &sub->ntexts, id, sizeof *sub->texts))
        return pp_str_text(id);
    if (!sub->texts[id])
        sub->texts[id] = pp_str_text(id); /* interned texts live as long as the process */
    return sub->texts[id];
}

/* The definition of track t; NULL if the session has none such. */
static const pp_track_def *track_of(pp_subscription *sub, pp_track t) {
    if (grow_zeroed((void **)&sub->tracks, &sub->ntracks, t, sizeof *sub->tracks))
        return NULL;
    track_entry *e = &sub->tracks[t];
    if (!e->known)
        e->known = pp_follower_track(sub->follower, t, &e->def) == PP_OK;
    return e->known ? &e->def : NULL;
}

/* ---- handing the queue on ---- */

static size_t queued_spans(const pp_subscription *sub) {
    size_t n = 0;
    for (size_t off = sub->qstart - sub->qstart % PP_SUBREC_SIZE; off < sub->qend; off += PP_SUBREC_SIZE)
        n += pp_subrec_kind_of(sub->queue + off, 0) == PP_SUBREC_SPAN;
    return n;
}

/* Every whole record queued is lost: the consumer cannot take it. A record
 * a descriptor took part of stays, so that the stream never holds half a
 * record followed by others. */
static void discard_queue(pp_subscription *sub) {
    size_t keep = sub->qstart % PP_SUBREC_SIZE ? PP_SUBREC_SIZE - sub->qstart % PP_SUBREC_SIZE : 0;
    if (keep > sub->qend - sub->qstart)
        keep = sub->qend - sub->qstart;
    sub->qstart += keep;
    uint64_t spans = queued_spans(sub);
    atomic_fetch_sub(&sub->delivered, spans);
    atomic_fetch_add(&sub->lost, spans);
    sub->qstart -= keep;
    sub->qend = sub->qstart + keep;
}

/* CLOCK_MONOTONIC in ns: close's deadline is wall time, whatever pp_now's
 * mapping does meanwhile. */
static int64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* 1 once close's deadline has passed. */
static int past_deadline(const pp_subscription *sub) {
    int64_t d = atomic_load(&sub->deadline_ns);
    return d != 0 && monotonic_ns() >= d;
}

/* Writes the queue to the descriptor: what fits now, or, with a deadline
 * (monotonic_ns; 0: none), waiting for room until then. Returns 0 when it
 * gave up with bytes left (no room in time). */
static int write_queue(pp_subscription *sub, int64_t deadline) {
    while (!sub->broken && sub->qstart < sub->qend) {
        ssize_t w = write(sub->fd, sub->queue + sub->qstart, sub->qend - sub->qstart);
        if (w > 0) {
            sub->qstart += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int64_t left = deadline ? deadline - monotonic_ns() : 0;
            struct pollfd p = {.fd = sub->fd, .events = POLLOUT};
            if (left > 0 && poll(&p, 1, (int)((left + 999999) / 1000000)) > 0 &&
                !(p.revents & (POLLERR | POLLNVAL)))
                continue;
            return 0;
        }
        sub->broken = 1; /* the reader is gone (EPIPE) or the descriptor failed */
    }
    return 1;
}

/* Hands queued records on. A callback takes them all; a descriptor takes
 * what fits now. Once closing, it waits for the consumer until close's
 * deadline; past it, what is queued is lost (counted). */
static void flush_queue(pp_subscription *sub) {
    if (sub->qend == sub->qstart)
        return;
    /* read once: close may set it meanwhile, and a flush that did not wait
     * must not discard as if it had */
    int64_t deadline = atomic_load(&sub->deadline_ns);
    if (deadline && monotonic_ns() >= deadline) {
        discard_queue(sub);
    } else if (sub->callback) {
        sub->callback(sub->ctx, sub->queue + sub->qstart, (sub->qend - sub->qstart) / PP_SUBREC_SIZE);
        sub->qstart = sub->qend;
    } else if (!write_queue(sub, deadline) && deadline) {
        discard_queue(sub); /* closing, and the reader made no room in time */
    }
    if (sub->broken)
        discard_queue(sub);
    if (sub->qstart == sub->qend)
        sub->qstart = sub->qend = 0;
}

/* The stream's last record (close's STATUS, queued after everything else
 * was handed on or counted lost): a callback gets it in one more call, a
 * descriptor's reader gets LAST_RECORD_WAIT_MS to make room for it. */
static void flush_last_record(pp_subscription *sub) {
    if (sub->callback) {
        if (sub->qend > sub->qstart)
            sub->callback(sub->ctx, sub->queue + sub->qstart, (sub->qend - sub->qstart) / PP_SUBREC_SIZE);
    } else {
        write_queue(sub, monotonic_ns() + LAST_RECORD_WAIT_MS * 1000000LL);
    }
    sub->qstart = sub->qend = 0;
}

/* Room for one more record at the end of the queue; 0 when it is full. */
static unsigned char *queue_slot(pp_subscription *sub) {
    /* moved by whole records: records stay at multiples of PP_SUBREC_SIZE,
     * a part-written one included */
    size_t first = sub->qstart - sub->qstart % PP_SUBREC_SIZE;
    if (sub->qend + PP_SUBREC_SIZE > sub->qcap && first > 0) {
        memmove(sub->queue, sub->queue + first, sub->qend - first);
        sub->qend -= first;
        sub->qstart -= first;
    }
    return sub->qend + PP_SUBREC_SIZE <= sub->qcap ? sub->queue + sub->qend : NULL;
}

/* Queues one record, handing the queue on first when it is full; 0 when
 * there was no room. */
static int enqueue(pp_subscription *sub, const pp_subrec_fields *f) {
    unsigned char *slot = queue_slot(sub);
    if (!slot) {
        flush_queue(sub);
        slot = queue_slot(sub);
    }
    if (!slot || sub->broken)
        return 0;
    pp_subrec_encode(slot, f);
    sub->qend += PP_SUBREC_SIZE;
    return 1;
}

static void emit_span(pp_subscription *sub, const pending *p) {
    if (past_deadline(sub)) { /* close: the rest of what the session holds is lost */
        atomic_fetch_add(&sub->lost, 1);
        return;
    }
    const pp_record *r = &p->rec;
    const pp_track_def *t = track_of(sub, r->track);
    int on_device = t && t->kind == PP_TRACK_KIND_DEVICE;
    pp_subrec_fields f = {
        .kind = PP_SUBREC_SPAN, .role = (pp_role)r->role, .start_ns = r->ts_ns,
        .end_ns = r->ts_ns + r->dur_ns, .batch = r->batch, .hw_ns = r->hw_ns, .xfer_ns = r->xfer_ns,
        .seq = sub->seq++, .stream = on_device ? t->stream : -1, .name = text_of(sub, r->name),
        .type = text_of(sub, p->type), .device = on_device ? text_of(sub, t->device) : "",
        .stage = text_of(sub, r->stage), .track = t ? text_of(sub, t->name) : "",
        .flags = (on_device ? 0 : PP_SUBREC_HOST) |
                 (t && (t->flags & PP_TRACK_SIMULATED) ? PP_SUBREC_SIMULATED : 0)};
    if (enqueue(sub, &f))
        atomic_fetch_add(&sub->delivered, 1);
    else
        atomic_fetch_add(&sub->lost, 1);
}

/* A STATUS record when the loss totals changed (or always, `force`). */
static void emit_status(pp_subscription *sub, int force) {
    uint64_t lost = atomic_load(&sub->lost), dropped = atomic_load(&sub->dropped);
    if (!force && lost == sub->reported_lost && dropped == sub->reported_dropped)
        return;
    pp_subrec_fields f = {.kind = PP_SUBREC_STATUS, .start_ns = sub->now_ns, .end_ns = sub->now_ns,
                          .batch = -1, .hw_ns = lost, .xfer_ns = dropped, .seq = sub->seq,
                          .stream = -1};
    if (enqueue(sub, &f)) {
        sub->reported_lost = lost;
        sub->reported_dropped = dropped;
    }
}

/* ---- reading the session ---- */

static int span_selected(pp_subscription *sub, const pp_record *r) {
    if (!(sub->roles & PP_SUB_ROLE(r->role)) || (sub->stage && r->stage != sub->stage))
        return 0;
    if (!sub->device)
        return 1;
    const pp_track_def *t = track_of(sub, r->track);
    return t && t->kind == PP_TRACK_KIND_DEVICE && t->device == sub->device;
}

static int on_records(void *ctx, uint32_t thread, const pp_record *recs, size_t n, size_t *consumed) {
    pp_subscription *sub = ctx;
    if (grow_zeroed((void **)&sub->pend, &sub->npend, thread, sizeof *sub->pend)) {
        *consumed = 0;
        return 1; /* out of memory: these records come again on the next look */
    }
    pending *p = &sub->pend[thread];
    for (size_t i = 0; i < n; i++) {
        const pp_record *r = &recs[i];
        if (r->kind == PP_REC_ARG_INT || r->kind == PP_REC_ARG_DOUBLE || r->kind == PP_REC_ARG_STR) {
            if (p->active && r->kind == PP_REC_ARG_STR && r->name == sub->key_type)
                p->type = r->stage;
            continue;
        }
        if (p->active)
            emit_span(sub, p);
        p->active = r->kind == PP_REC_SPAN && span_selected(sub, r);
        if (p->active) {
            p->rec = *r;
            p->type = 0;
            p->seen_ns = sub->now_ns;
        }
    }
    *consumed = n;
    return 0;
}

/* Sends held spans that waited long enough for annotations (all: `all`). */
static void release_pending(pp_subscription *sub, int all) {
    for (size_t i = 0; i < sub->npend; i++) {
        pending *p = &sub->pend[i];
        if (p->active && (all || sub->now_ns - p->seen_ns >= sub->args_wait_ns)) {
            emit_span(sub, p);
            p->active = 0;
        }
    }
}

static void collect(pp_subscription *sub, int final) {
    sub->now_ns = pp_now();
    pp_follower_poll(sub->follower, on_records, sub);
    atomic_store(&sub->dropped, pp_follower_session_dropped(sub->follower));
    release_pending(sub, final);
    emit_status(sub, 0);
}

/* Waits one period or until close; returns 1 when closing. */
static int wait_period(pp_subscription *sub) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += (long)sub->period_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&sub->lock);
    while (!sub->closing && pthread_cond_timedwait(&sub->wake, &sub->lock, &until) != ETIMEDOUT) {
    }
    int closing = sub->closing;
    pthread_mutex_unlock(&sub->lock);
    return closing;
}

static void *consumer_main(void *arg) {
    pp_subscription *sub = arg;
    sigset_t all;
    sigfillset(&all);
    /* The program's signals go to its own threads; a write to a pipe whose
     * reader left then fails with EPIPE instead of killing the process. */
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        int closing = wait_period(sub);
        collect(sub, closing);
        flush_queue(sub);
        if (closing) {
            if (sub->qend > sub->qstart) /* past the deadline: what is left is lost */
                discard_queue(sub);
            emit_status(sub, 1); /* the stream's last record: the final totals */
            flush_last_record(sub);
            return NULL;
        }
    }
}

/* ---- open / close ---- */

static int check_config(const pp_subscription_config *cfg, pp_error *err) {
    if ((cfg->fd >= 0) == (cfg->callback != NULL))
        return pp_set_error(err, PP_EINVAL, "subscribe: give either a file descriptor or a callback");
    if (cfg->roles & ~PP_SUB_ALL_SPANS)
        return pp_set_error(err, PP_EINVAL, "subscribe: roles 0x%x: only span roles 0x%x can be subscribed",
                            cfg->roles, PP_SUB_ALL_SPANS);
    if (cfg->period_ms < 0 || cfg->period_ms > 1000)
        return pp_set_error(err, PP_EINVAL, "subscribe: period_ms %d: must be 0 (default) to 1000",
                            cfg->period_ms);
    if (cfg->args_wait_ms < 0)
        return pp_set_error(err, PP_EINVAL, "subscribe: args_wait_ms %d: must not be negative",
                            cfg->args_wait_ms);
    if (cfg->queue_records > ((size_t)1 << 24))
        return pp_set_error(err, PP_EINVAL, "subscribe: queue_records %zu: at most %zu",
                            cfg->queue_records, (size_t)1 << 24);
    if (cfg->fd >= 0) {
        int fl = fcntl(cfg->fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
            return pp_set_error(err, PP_EINVAL, "subscribe: fd %d is not open for writing", cfg->fd);
    }
    return PP_OK;
}

/* Frees what the subscription owns. Its lock and condition variable are
 * destroyed only in the process that made them: in a forked child they are
 * copies of the parent's as they were at the fork, possibly held or waited
 * on by a consumer thread the child does not have (destroying a condition
 * variable with a waiter blocks for ever). */
static void free_subscription(pp_subscription *sub) {
    pp_follower_close(sub->follower);
    if (sub->pid == getpid()) {
        pthread_mutex_destroy(&sub->lock);
        pthread_cond_destroy(&sub->wake);
    }
    free(sub->queue);
    free(sub->pend);
    free(sub->tracks);
    free(sub->texts);
    free(sub);
}

int pp_subscription_open(pp_session *s, const pp_subscription_config *cfg, pp_subscription **out,
                         pp_error *err) {
    if (!s || !cfg || !out)
        return pp_set_error(err, PP_EINVAL, "subscribe: no session, config or result pointer");
    int rc = check_config(cfg, err);
    if (rc != PP_OK)
        return rc;
    pp_subscription *sub = calloc(1, sizeof *sub);
    if (!sub)
        return pp_set_error(err, PP_ENOMEM, "subscribe: out of memory");
    sub->s = s;
    sub->pid = getpid();
    sub->roles = cfg->roles ? cfg->roles : PP_SUB_EXECS | PP_SUB_OPS;
    sub->device = cfg->device && *cfg->device ? pp_intern(cfg->device) : 0;
    sub->stage = cfg->stage && *cfg->stage ? pp_intern(cfg->stage) : 0;
    sub->fd = cfg->fd;
    sub->callback = cfg->callback;
    sub->ctx = cfg->ctx;
    sub->period_ms = cfg->period_ms ? cfg->period_ms : DEFAULT_PERIOD_MS;
    sub->args_wait_ns = (int64_t)(cfg->args_wait_ms ? cfg->args_wait_ms : DEFAULT_ARGS_WAIT_MS) * 1000000;
    sub->key_type = pp_intern("type");
    sub->qcap = (cfg->queue_records ? cfg->queue_records : DEFAULT_QUEUE_RECORDS) * PP_SUBREC_SIZE;
    sub->queue = malloc(sub->qcap);
    pthread_mutex_init(&sub->lock, NULL);
    pthread_condattr_t attr; /* periods on the monotonic clock: a clock change cannot stall them */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&sub->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (!sub->queue || !sub->key_type) {
        free_subscription(sub);
        return pp_set_error(err, PP_ENOMEM, "subscribe: out of memory");
    }
    rc = pp_follower_open(s, &sub->follower);
    if (rc != PP_OK) {
        free_subscription(sub);
        if (rc == PP_EUNSUPPORTED)
            return pp_set_error(err, rc, "subscribe: the session overwrites its oldest records "
                                         "(ring overflow), so they cannot be read while it records; "
                                         "use the drop policy");
        return pp_set_error(err, rc, "subscribe: %s", pp_strerror(rc));
    }
    if (sub->fd >= 0) {
        fcntl(sub->fd, F_SETFL, fcntl(sub->fd, F_GETFL) | O_NONBLOCK);
        fcntl(sub->fd, F_SETFD, fcntl(sub->fd, F_GETFD) | FD_CLOEXEC);
    }
    if (pthread_create(&sub->thread, NULL, consumer_main, sub) != 0) {
        free_subscription(sub);
        return pp_set_error(err, PP_ENOMEM, "subscribe: cannot start the consumer thread");
    }
    *out = sub;
    return PP_OK;
}

int pp_subscription_stats_get(pp_subscription *sub, pp_subscription_stats *out) {
    if (!sub || !out)
        return PP_EINVAL;
    out->delivered = atomic_load(&sub->delivered);
    out->lost = atomic_load(&sub->lost);
    out->session_dropped = atomic_load(&sub->dropped);
    return PP_OK;
}

int pp_subscription_close(pp_subscription *sub, pp_subscription_stats *final) {
    if (!sub)
        return PP_OK;
    int forked = sub->pid != getpid(); /* a child: the consumer thread stayed in the parent */
    if (!forked && pthread_equal(pthread_self(), sub->thread))
        return PP_ESTATE; /* from its own callback: the thread cannot wait for itself */
    if (!forked) {
        atomic_store(&sub->deadline_ns, monotonic_ns() + CLOSE_WAIT_NS);
        pthread_mutex_lock(&sub->lock);
        sub->closing = 1;
        pthread_cond_signal(&sub->wake);
        pthread_mutex_unlock(&sub->lock);
        pthread_join(sub->thread, NULL);
    }
    if (final)
        pp_subscription_stats_get(sub, final);
    if (sub->fd >= 0)
        close(sub->fd); /* in a child: its own copy; the parent's stays open */
    free_subscription(sub);
    return PP_OK;
}
