/* Live subscriptions: what a consumer receives while the program records is
 * exactly what the trace file holds (each span once, the same fields); a
 * consumer that lags loses records only as counted; unsubscribing mid-run
 * leaves a clean prefix; callbacks and many subscribers at once see the same
 * thing; bad configs are refused with a message. Runs under ThreadSanitizer
 * too (scripts/test), which checks the consumer thread against the
 * recording threads. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pipeprof/io.h"
#include "pipeprof/pipeline.h"
#include "pipeprof/subscribe.h"
#include "testutil.h"

/* ---- what a consumer collects ---- */

typedef struct received {
    pthread_mutex_t lock; /* callbacks append from the consumer thread */
    unsigned char *bytes;
    size_t len, cap;
} received;

static void received_init(received *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
}

static void received_free(received *r) {
    pthread_mutex_destroy(&r->lock);
    free(r->bytes);
}

static void received_append(received *r, const void *data, size_t n) {
    pthread_mutex_lock(&r->lock);
    if (r->len + n > r->cap) {
        r->cap = (r->len + n) * 2;
        r->bytes = realloc(r->bytes, r->cap);
    }
    memcpy(r->bytes + r->len, data, n);
    r->len += n;
    pthread_mutex_unlock(&r->lock);
}

static void on_records(void *ctx, const void *records, size_t count) {
    received_append(ctx, records, count * PP_SUBREC_SIZE);
}

/* A thread reading a pipe to its end. */
typedef struct pipe_reader {
    int fd;
    received got;
    pthread_t th;
    _Atomic int hold; /* 1: do not read yet (a consumer that lags) */
} pipe_reader;

static void *read_pipe(void *arg) {
    pipe_reader *p = arg;
    unsigned char buf[4096];
    while (atomic_load(&p->hold)) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    for (;;) {
        ssize_t n = read(p->fd, buf, sizeof buf);
        if (n <= 0)
            break;
        received_append(&p->got, buf, (size_t)n);
    }
    close(p->fd);
    return NULL;
}

/* Opens a pipe, starts its reader, returns the write end. */
static int start_reader(pipe_reader *p, int hold) {
    int fds[2];
    EXPECT_EQ_I64(pipe(fds), 0);
    p->fd = fds[0];
    received_init(&p->got);
    atomic_init(&p->hold, hold);
    pthread_create(&p->th, NULL, read_pipe, p);
    return fds[1];
}

static void finish_reader(pipe_reader *p) {
    pthread_join(p->th, NULL);
}

/* ---- comparing with the trace file ---- */

/* One span as a line of text: every field a subscription carries. */
static char *span_key(char *buf, size_t len, int role, const char *device, const char *track,
                      const char *stage, const char *name, const char *type, int64_t batch,
                      int64_t start, int64_t end, uint64_t hw, uint64_t xfer) {
    snprintf(buf, len, "%d|%s|%s|%s|%s|%s|%lld|%lld|%lld|%llu|%llu", role, device, track, stage,
             name, type, (long long)batch, (long long)start, (long long)end,
             (unsigned long long)hw, (unsigned long long)xfer);
    return buf;
}

typedef struct keys {
    char **k;
    size_t n, cap;
} keys;

static void keys_add(keys *ks, const char *k) {
    if (ks->n == ks->cap) {
        ks->cap = ks->cap ? ks->cap * 2 : 256;
        ks->k = realloc(ks->k, ks->cap * sizeof *ks->k);
    }
    ks->k[ks->n++] = strdup(k);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void keys_free(keys *ks) {
    for (size_t i = 0; i < ks->n; i++)
        free(ks->k[i]);
    free(ks->k);
}

static const char *annotation_str(const pp_model *m, size_t i, const char *key) {
    size_t first, n, count;
    const pp_annotation *a = pp_model_annotations(m, &count);
    pp_model_annotations_of(m, i, &first, &n);
    for (size_t j = first; j < first + n; j++)
        if (a[j].type == PP_VALUE_STR && strcmp(pp_model_string(m, a[j].key), key) == 0)
            return pp_model_string(m, a[j].v.s);
    return "";
}

/* The spans of the trace that a subscription with `roles` and `device`
 * (NULL: any) selects. */
static keys trace_keys(const pp_model *m, unsigned roles, const char *device) {
    keys ks = {0};
    char buf[512];
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        if (e.kind != PP_EV_SPAN || !(roles & PP_SUB_ROLE(e.role)))
            continue;
        const pp_track_info *t = pp_model_track(m, e.track);
        int on_device = t->kind == PP_TRACK_KIND_DEVICE;
        const char *dev = on_device ? pp_model_string(m, t->device) : "";
        if (device && strcmp(dev, device) != 0)
            continue;
        keys_add(&ks, span_key(buf, sizeof buf, e.role, dev, pp_model_string(m, t->name),
                               pp_model_string(m, e.stage), pp_model_string(m, e.name),
                               annotation_str(m, i, "type"), e.batch, e.ts_ns, e.ts_ns + e.dur_ns,
                               e.hw_ns, e.xfer_ns));
    }
    qsort(ks.k, ks.n, sizeof *ks.k, cmp_str);
    return ks;
}

/* The span records received; *status gets the index of the last STATUS
 * record (-1 if none). Every record must be valid. */
static keys received_keys(const received *r, long *status) {
    keys ks = {0};
    char buf[512];
    *status = -1;
    EXPECT_EQ_U64(r->len % PP_SUBREC_SIZE, 0);
    for (size_t i = 0; i < pp_subrec_count(r->len); i++) {
        const void *b = r->bytes;
        EXPECT(pp_subrec_valid(b, i));
        if (pp_subrec_kind_of(b, i) == PP_SUBREC_STATUS) {
            *status = (long)i;
            continue;
        }
        EXPECT_EQ_I64(pp_subrec_kind_of(b, i), PP_SUBREC_SPAN);
        EXPECT_EQ_I64(pp_subrec_duration_ns(b, i), pp_subrec_end_ns(b, i) - pp_subrec_start_ns(b, i));
        keys_add(&ks, span_key(buf, sizeof buf, pp_subrec_role(b, i), pp_subrec_device(b, i),
                               pp_subrec_track(b, i), pp_subrec_stage(b, i), pp_subrec_name(b, i),
                               pp_subrec_type(b, i), pp_subrec_batch(b, i), pp_subrec_start_ns(b, i),
                               pp_subrec_end_ns(b, i), pp_subrec_hw_ns(b, i), pp_subrec_xfer_ns(b, i)));
    }
    qsort(ks.k, ks.n, sizeof *ks.k, cmp_str);
    return ks;
}

static void expect_same_keys(const keys *got, const keys *want) {
    EXPECT_EQ_U64(got->n, want->n);
    for (size_t i = 0; i < got->n && i < want->n; i++) {
        if (strcmp(got->k[i], want->k[i]) != 0) {
            EXPECT_STR(got->k[i], want->k[i]);
            return;
        }
    }
}

/* Every span record's sequence number appears once: 0 .. n-1 with no gap
 * when nothing was lost. */
static void expect_seqs_distinct(const received *r, uint64_t total) {
    unsigned char *seen = calloc(total ? total : 1, 1);
    for (size_t i = 0; i < pp_subrec_count(r->len); i++) {
        if (pp_subrec_kind_of(r->bytes, i) != PP_SUBREC_SPAN)
            continue;
        uint64_t q = pp_subrec_seq(r->bytes, i);
        EXPECT(q < total);
        if (q < total) {
            EXPECT(!seen[q]);
            seen[q] = 1;
        }
    }
    free(seen);
}

/* ---- the recording under test ---- */

/* The demo pipeline (cpu and simulated devices), 6 batches at level 2,
 * written to `path`. */
static pp_session *open_session(const char *path, int level) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.output = path;
    cfg.level = level;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    return s;
}

static void run_demo(pp_session *s) {
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_demo(&p, &err), PP_OK);
    pp_run_options opt = {.batches = 6, .warmup = 1};
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    EXPECT_EQ_I64(pp_pipeline_run(p, s, &opt, NULL, &err), PP_OK);
    EXPECT_STR(err.msg, "");
    EXPECT_EQ_I64(pp_session_stop(s, &err), PP_OK);
    pp_pipeline_free(p);
}

static pp_model *read_trace(const char *path) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_trace_read(path, &m, &err), PP_OK);
    return m;
}

/* Spans wait for their annotations until the thread's next record or the
 * close, so the test never depends on how the consumer thread is scheduled. */
static pp_subscription_config patient_config(void) {
    pp_subscription_config c;
    pp_subscription_config_init(&c);
    c.args_wait_ms = 3600 * 1000;
    c.queue_records = 1 << 16;
    return c;
}

/* Through a pipe, every exec and op span of a level-2 pipeline run (cpu +
 * simulated devices) that the trace file holds arrives exactly once, with
 * the same fields; the stream ends with a STATUS record saying nothing was
 * lost. */
static void test_pipe_delivers_every_span_of_the_trace_once(void) {
    const char *path = pp_test_path("subscribe_pipe.pptrace");
    pp_session *s = open_session(path, 2);
    pipe_reader rd;
    pp_subscription_config c = patient_config();
    c.fd = start_reader(&rd, 0);
    pp_subscription *sub = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_OK);
    run_demo(s);
    pp_subscription_stats st;
    pp_subscription_close(sub, &st);
    finish_reader(&rd);

    pp_model *m = read_trace(path);
    keys want = trace_keys(m, PP_SUB_EXECS | PP_SUB_OPS, NULL);
    long status;
    keys got = received_keys(&rd.got, &status);
    EXPECT(want.n > 6 * 4); /* execs of 4 devices' worth and their ops */
    expect_same_keys(&got, &want);
    expect_seqs_distinct(&rd.got, want.n);
    EXPECT_EQ_U64(st.delivered, want.n);
    EXPECT_EQ_U64(st.lost, 0);
    EXPECT_EQ_I64(status, (long)pp_subrec_count(rd.got.len) - 1); /* last */
    if (status >= 0) {
        EXPECT_EQ_U64(pp_subrec_lost(rd.got.bytes, (size_t)status), 0);
        EXPECT_EQ_U64(pp_subrec_seq(rd.got.bytes, (size_t)status), want.n);
    }
    /* the simulated devices say so in every record */
    int simulated = 0;
    for (size_t i = 0; i < pp_subrec_count(rd.got.len); i++)
        if (strcmp(pp_subrec_device(rd.got.bytes, i), "NPU") == 0) {
            simulated++;
            EXPECT(pp_subrec_flags(rd.got.bytes, i) & PP_SUBREC_SIMULATED);
        }
    EXPECT(simulated > 0);
    keys_free(&want);
    keys_free(&got);
    pp_model_free(m);
    received_free(&rd.got);
    pp_session_close(s);
}

/* A callback subscriber filtered to one device's execs gets exactly those. */
static void test_callback_gets_the_filtered_spans(void) {
    const char *path = pp_test_path("subscribe_callback.pptrace");
    pp_session *s = open_session(path, 2);
    received got;
    received_init(&got);
    pp_subscription_config c = patient_config();
    c.callback = on_records;
    c.ctx = &got;
    c.roles = PP_SUB_EXECS;
    c.device = "NPU";
    pp_subscription *sub = NULL;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, NULL), PP_OK);
    run_demo(s);
    pp_subscription_close(sub, NULL);

    pp_model *m = read_trace(path);
    keys want = trace_keys(m, PP_SUB_EXECS, "NPU");
    long status;
    keys gotk = received_keys(&got, &status);
    EXPECT(want.n >= 6);
    expect_same_keys(&gotk, &want);
    for (size_t i = 0; i < pp_subrec_count(got.len); i++)
        if (pp_subrec_kind_of(got.bytes, i) == PP_SUBREC_SPAN) {
            EXPECT_STR(pp_subrec_device(got.bytes, i), "NPU");
            EXPECT_EQ_I64(pp_subrec_role(got.bytes, i), PP_ROLE_EXEC);
        }
    keys_free(&want);
    keys_free(&gotk);
    pp_model_free(m);
    received_free(&got);
    pp_session_close(s);
}

/* ---- plain recording threads ---- */

typedef struct recorder {
    pp_session *s;
    long spans;        /* how many to record; -1: until `stop` */
    _Atomic int stop;
    _Atomic long done; /* recorded so far */
    int role;
    pthread_t th;
} recorder;

/* Records spans with batch 0, 1, 2, ... on a device track of its own. */
static void *record_loop(void *arg) {
    recorder *r = arg;
    char dev[32];
    snprintf(dev, sizeof dev, "DEV%p", (void *)r);
    pp_track t;
    pp_track_device(r->s, dev, 0, NULL, 0, &t);
    pp_span_rec rec;
    pp_span_rec_init(&rec);
    rec.track = t;
    rec.name = pp_intern("work");
    rec.role = (pp_role)r->role;
    for (long i = 0; r->spans < 0 ? !atomic_load(&r->stop) : i < r->spans; i++) {
        rec.ts_ns = pp_now();
        rec.dur_ns = 10;
        rec.batch = i;
        rec.hw_ns = (uint64_t)i;
        pp_span(r->s, &rec);
        atomic_store(&r->done, i + 1);
        if (r->spans < 0) { /* a steady stream, not a flood that spends the budget */
            struct timespec us = {0, 20000};
            nanosleep(&us, NULL);
        }
    }
    return NULL;
}

static void start_recorder(recorder *r, pp_session *s, long spans, int role) {
    r->s = s;
    r->spans = spans;
    r->role = role;
    atomic_init(&r->stop, 0);
    atomic_init(&r->done, 0);
    pthread_create(&r->th, NULL, record_loop, r);
}

/* Waits (10 s at most) until cond(arg) holds; the test fails otherwise. */
static int wait_until(int (*cond)(void *), void *arg) {
    for (int i = 0; i < 10000; i++) {
        if (cond(arg))
            return 1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

static int has_lost(void *arg) {
    pp_subscription_stats st;
    pp_subscription_stats_get(arg, &st);
    return st.lost > 0;
}

static int has_delivered_100(void *arg) {
    pp_subscription_stats st;
    pp_subscription_stats_get(arg, &st);
    return st.delivered >= 100;
}

#define SLOW_SPANS 5000

/* A consumer that does not read while 5000 spans are recorded: the pipe and
 * a 64-record queue fill, the rest is lost. Every span is either received
 * once or counted lost, the STATUS records carry the count, and the trace
 * still holds all 5000 (the recording threads never waited). */
static void test_slow_consumer_loses_only_what_is_counted(void) {
    pp_session *s = open_session(NULL, 1);
    pipe_reader rd;
    pp_subscription_config c;
    pp_subscription_config_init(&c);
    c.fd = start_reader(&rd, 1);
    c.roles = PP_SUB_EXECS;
    c.queue_records = 64;
    c.args_wait_ms = 1;
    pp_subscription *sub = NULL;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, NULL), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    recorder r;
    start_recorder(&r, s, SLOW_SPANS, PP_ROLE_EXEC);
    pthread_join(r.th, NULL);
    EXPECT(wait_until(has_lost, sub));
    atomic_store(&rd.hold, 0); /* now the consumer reads */
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_subscription_stats st;
    pp_subscription_close(sub, &st);
    finish_reader(&rd);

    long status;
    keys got = received_keys(&rd.got, &status);
    EXPECT(st.lost > 0);
    EXPECT_EQ_U64(got.n + st.lost, SLOW_SPANS);
    EXPECT_EQ_U64(st.delivered, got.n);
    expect_seqs_distinct(&rd.got, SLOW_SPANS);
    EXPECT(status >= 0);
    if (status >= 0)
        EXPECT_EQ_U64(pp_subrec_lost(rd.got.bytes, (size_t)status), st.lost);
    /* what arrived is what was recorded: batch i carries hw i */
    for (size_t i = 0; i < pp_subrec_count(rd.got.len); i++)
        if (pp_subrec_kind_of(rd.got.bytes, i) == PP_SUBREC_SPAN)
            EXPECT_EQ_U64(pp_subrec_hw_ns(rd.got.bytes, i), (uint64_t)pp_subrec_batch(rd.got.bytes, i));
    pp_session_stats ss;
    pp_session_stats_get(s, &ss);
    EXPECT_EQ_U64(ss.recorded, SLOW_SPANS);
    keys_free(&got);
    received_free(&rd.got);
    pp_session_close(s);
}

/* Closing a subscription while a thread records: the consumer gets batches
 * 0 .. k-1, each once, then end of file; recording goes on untouched. */
static void test_unsubscribe_mid_run_leaves_a_clean_prefix(void) {
    pp_session *s = open_session(NULL, 1);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pipe_reader rd;
    pp_subscription_config c = patient_config();
    c.fd = start_reader(&rd, 0);
    c.roles = PP_SUB_EXECS;
    pp_subscription *sub = NULL;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, NULL), PP_OK);
    recorder r;
    start_recorder(&r, s, -1, PP_ROLE_EXEC);
    EXPECT(wait_until(has_delivered_100, sub));
    pp_subscription_stats st;
    pp_subscription_close(sub, &st);
    finish_reader(&rd);
    long at_close = atomic_load(&r.done);
    while (atomic_load(&r.done) < at_close + 100) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    atomic_store(&r.stop, 1);
    pthread_join(r.th, NULL);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);

    size_t n = 0;
    for (size_t i = 0; i < pp_subrec_count(rd.got.len); i++) {
        if (pp_subrec_kind_of(rd.got.bytes, i) != PP_SUBREC_SPAN)
            continue;
        if (pp_subrec_batch(rd.got.bytes, i) != (int64_t)n) {
            EXPECT_EQ_I64(pp_subrec_batch(rd.got.bytes, i), (int64_t)n);
            break;
        }
        n++;
    }
    EXPECT(n >= 100);
    EXPECT(n <= (size_t)at_close);
    EXPECT_EQ_U64(st.delivered, n);
    EXPECT_EQ_U64(st.lost, 0);
    pp_session_stats ss;
    pp_session_stats_get(s, &ss);
    EXPECT_EQ_U64(ss.recorded, (uint64_t)atomic_load(&r.done));
    received_free(&rd.got);
    pp_session_close(s);
}

#define MANY 8
#define MANY_THREADS 4
#define MANY_SPANS 3000

/* Eight subscribers (pipes and callbacks, execs or user spans) on one
 * session while four threads record: each gets every span its filter
 * selects, once. */
static void test_many_subscribers_each_get_their_spans(void) {
    pp_session *s = open_session(NULL, 1);
    pipe_reader rd[MANY];
    received cb[MANY];
    pp_subscription *sub[MANY];
    for (int i = 0; i < MANY; i++) {
        pp_subscription_config c = patient_config();
        c.roles = i % 2 ? PP_SUB_ROLE(PP_ROLE_USER) : PP_SUB_EXECS;
        if (i < MANY / 2) {
            c.fd = start_reader(&rd[i], 0);
        } else {
            received_init(&cb[i]);
            c.callback = on_records;
            c.ctx = &cb[i];
        }
        EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub[i], NULL), PP_OK);
    }
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    recorder r[MANY_THREADS];
    for (int t = 0; t < MANY_THREADS; t++)
        start_recorder(&r[t], s, MANY_SPANS, t % 2 ? PP_ROLE_USER : PP_ROLE_EXEC);
    for (int t = 0; t < MANY_THREADS; t++)
        pthread_join(r[t].th, NULL);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    for (int i = 0; i < MANY; i++) {
        pp_subscription_stats st;
        pp_subscription_close(sub[i], &st);
        received *got = &cb[i];
        if (i < MANY / 2) {
            finish_reader(&rd[i]);
            got = &rd[i].got;
        }
        long status;
        keys k = received_keys(got, &status);
        EXPECT_EQ_U64(k.n, MANY_THREADS / 2 * MANY_SPANS);
        EXPECT_EQ_U64(st.lost, 0);
        expect_seqs_distinct(got, k.n);
        int want_role = i % 2 ? PP_ROLE_USER : PP_ROLE_EXEC;
        for (size_t j = 0; j < pp_subrec_count(got->len); j++)
            if (pp_subrec_kind_of(got->bytes, j) == PP_SUBREC_SPAN)
                EXPECT_EQ_I64(pp_subrec_role(got->bytes, j), want_role);
        keys_free(&k);
        received_free(got);
    }
    pp_session_close(s);
}

/* ---- refusals ---- */

static void test_bad_configs_are_refused_with_a_message(void) {
    pp_session *s = open_session(NULL, 1);
    pp_subscription *sub = NULL;
    pp_subscription_config c;
    pp_error err = {{0}};

    pp_subscription_config_init(&c);
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "either a file descriptor or a callback");

    int fds[2];
    EXPECT_EQ_I64(pipe(fds), 0);
    c.fd = fds[1];
    c.callback = on_records;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "either a file descriptor or a callback");

    c.callback = NULL;
    c.fd = fds[0];
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "is not open for writing");

    c.fd = fds[1];
    c.roles = 1u << 12;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "only span roles");

    c.roles = 0;
    c.period_ms = 5000;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "period_ms 5000");
    close(fds[0]);
    close(fds[1]);
    pp_session_close(s);

    pp_session_config ring;
    pp_session_config_init(&ring);
    ring.overflow = PP_OVERFLOW_RING;
    EXPECT_EQ_I64(pp_session_open(&ring, &s), PP_OK);
    pp_subscription_config_init(&c);
    c.callback = on_records;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_EUNSUPPORTED);
    EXPECT_CONTAINS(err.msg, "ring overflow");
    pp_session_close(s);
    pp_subscription_close(NULL, NULL);

    /* nor can a subscribed session switch to the ring before it starts */
    s = open_session(NULL, 1);
    received got;
    received_init(&got);
    c.ctx = &got;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, &err), PP_OK);
    EXPECT_EQ_I64(pp_session_set_config(s, "overflow", "ring", &err), PP_ESTATE);
    EXPECT_CONTAINS(err.msg, "overflow ring: the session has live subscribers");
    pp_subscription_close(sub, NULL);
    EXPECT_EQ_I64(pp_session_set_config(s, "overflow", "ring", &err), PP_OK);
    received_free(&got);
    pp_session_close(s);
}

/* The record layout is fixed: a record written by this library reads back
 * field by field, and a text too long for its field is cut and flagged. */
static void test_records_have_the_documented_layout(void) {
    pp_session *s = open_session(NULL, 2);
    received got;
    received_init(&got);
    pp_subscription_config c = patient_config();
    c.callback = on_records;
    c.ctx = &got;
    pp_subscription *sub = NULL;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, NULL), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_track t;
    pp_track_device(s, "GPU.0", 3, "req 3", PP_TRACK_SIMULATED, &t);
    pp_span_rec rec;
    pp_span_rec_init(&rec);
    char long_name[100];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    rec = (pp_span_rec){.track = t, .name = pp_intern(long_name), .stage = pp_intern("Embed"),
                        .role = PP_ROLE_OP, .ts_ns = 1000, .dur_ns = 250, .batch = 7,
                        .hw_ns = 200, .xfer_ns = 50};
    EXPECT_EQ_I64(pp_span(s, &rec), PP_OK);
    EXPECT_EQ_I64(pp_annotate_str(s, pp_intern("type"), pp_intern("MatMul")), PP_OK);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_subscription_close(sub, NULL);

    EXPECT_EQ_U64(pp_subrec_size(), 256);
    EXPECT_EQ_U64(pp_subrec_count(got.len), 2); /* the span and the closing STATUS */
    const unsigned char *b = got.bytes;
    if (pp_subrec_count(got.len) == 2) {
        EXPECT_EQ_U64(b[0] | b[1] << 8, 256); /* the size field, little-endian */
        EXPECT_EQ_I64(b[8] | b[9] << 8, 1000); /* start_ns at offset 8 */
        EXPECT_EQ_I64(pp_subrec_kind_of(b, 0), PP_SUBREC_SPAN);
        EXPECT_EQ_I64(pp_subrec_role(b, 0), PP_ROLE_OP);
        EXPECT_EQ_I64(pp_subrec_start_ns(b, 0), 1000);
        EXPECT_EQ_I64(pp_subrec_end_ns(b, 0), 1250);
        EXPECT_EQ_I64(pp_subrec_duration_ns(b, 0), 250);
        EXPECT_EQ_I64(pp_subrec_batch(b, 0), 7);
        EXPECT_EQ_U64(pp_subrec_hw_ns(b, 0), 200);
        EXPECT_EQ_U64(pp_subrec_xfer_ns(b, 0), 50);
        EXPECT_EQ_I64(pp_subrec_stream(b, 0), 3);
        EXPECT_STR(pp_subrec_device(b, 0), "GPU.0");
        EXPECT_STR(pp_subrec_track(b, 0), "req 3");
        EXPECT_STR(pp_subrec_stage(b, 0), "Embed");
        EXPECT_STR(pp_subrec_type(b, 0), "MatMul");
        EXPECT_EQ_U64(strlen(pp_subrec_name(b, 0)), 63); /* 64-byte field with its NUL */
        EXPECT_EQ_U64(pp_subrec_flags(b, 0), PP_SUBREC_SIMULATED | PP_SUBREC_TRUNCATED);
        EXPECT_EQ_U64(pp_subrec_seq(b, 0), 0);
        EXPECT_EQ_I64(pp_subrec_kind_of(b, 1), PP_SUBREC_STATUS);
        EXPECT_EQ_U64(pp_subrec_seq(b, 1), 1);
        EXPECT_EQ_U64(pp_subrec_lost(b, 1), 0);
        EXPECT_EQ_U64(pp_subrec_session_dropped(b, 1), 0);
    }
    received_free(&got);
    pp_session_close(s);
}

int main(void) {
    RUN(test_pipe_delivers_every_span_of_the_trace_once);
    RUN(test_callback_gets_the_filtered_spans);
    RUN(test_slow_consumer_loses_only_what_is_counted);
    RUN(test_unsubscribe_mid_run_leaves_a_clean_prefix);
    RUN(test_many_subscribers_each_get_their_spans);
    RUN(test_bad_configs_are_refused_with_a_message);
    RUN(test_records_have_the_documented_layout);
    return pp_test_finish();
}
