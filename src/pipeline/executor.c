/* The executor: one device, N request slots, async-infer-queue semantics.
 *
 * Each slot is a row of its own on the device ("NPU/req 0"), so requests in
 * flight at once never overlap on one track. The exec span's wall is taken
 * right before the backend's start and first thing in the completion
 * callback, as a user timing start_async() and the callback would see it;
 * recording is a handful of stores into the backend thread's buffer.
 *
 * Where the backend reports the device's times, the exec carries the split
 * of its wall (docs/analysis.md, wall decomposition) as annotations
 * submit_ns, queue_ns and completion_ns: device is its hw_ns, unattributed
 * the rest. A device with a clock of its own gets a "clock alignment" mark
 * on its first row saying how its times were mapped and how well. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/session.h"
#include "pipeprof/pipeline.h"
#include "pipeprof/sched.h"

typedef struct exec_slot {
    pp_executor *ex;
    int index;
    pp_track track;
    int64_t start_ns; /* written by the starting thread, read by the callback */
    int64_t batch;
    double share;     /* the part of its stage's batch; negative: none recorded */
    int64_t part;     /* which executor of its data-parallel stage; negative: none */
    pp_exec_done_fn done;
    void *done_ctx;
} exec_slot;

struct pp_executor {
    pp_session *s;   /* NULL when not recording, or the device is not among the session's */
    int level;
    unsigned collect; /* the session's PP_COLLECT_* bits */
    pp_compiled *compiled;
    pp_str name, stage;
    pp_str key_type, key_exec_type, key_cpu_ns, key_share, key_part, key_bytes_in, key_bytes_out;
    pp_str api_start, api_wait;
    pp_str key_submit, key_queue, key_completion, key_shift, key_clock,
        key_method, key_error;
    pp_device_clock clock;  /* method NULL: the device stamps with the session clock */
    atomic_int clock_marked;
    int nslots;
    exec_slot *slots;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned char *idle; /* per slot, guarded by lock */
    int inflight;        /* guarded by lock */
    int status;          /* first failure since the last wait, guarded by lock */
    int failed_slot;
    pp_exec_window win;  /* guarded by lock */
};

/* The device's clock alignment as a mark with its method and error bound,
 * once per executor, at the start of its first exec (so that it lies in
 * the exec's window); nothing for devices that stamp with the session
 * clock, or when hardware times are not collected. */
static void mark_clock(pp_executor *ex, const exec_slot *slot) {
    if (!ex->clock.method || !(ex->collect & PP_COLLECT_HW) ||
        atomic_exchange(&ex->clock_marked, 1))
        return;
    if (pp_mark(ex->s, slot->track, ex->key_clock, slot->start_ns) != PP_OK)
        return;
    pp_annotate_str(ex->s, ex->key_method, pp_intern(ex->clock.method));
    pp_annotate_int(ex->s, ex->key_error, ex->clock.error_ns);
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* The shift that puts the device's times inside the host's wall [t0, t1]:
 * a device cannot queue a request before the host called, nor finish it
 * after the host saw it finish, so where a mapped time says otherwise the
 * difference is the clock alignment's error, which the shift takes out
 * (it stays within the stated bound; the exec records it as
 * clock_shift_ns). Device times are all moved alike, so durations stay. */
static int64_t fit_shift(int64_t t0, int64_t t1, const pp_request_profile *p) {
    int64_t shift = 0;
    if (p->dev_end_ns > t1)
        shift = t1 - p->dev_end_ns;
    if (p->queued_ns + shift < t0)
        shift = t0 - p->queued_ns;
    return shift;
}

/* Splits the wall [t0, t1] at the device's (shifted) times, each clamped
 * into the wall after the one before it: submit = t0 -> queued, queue =
 * queued -> device start plus any time the device span holds beyond
 * hw_ns, completion = device end -> t1. */
static void split_wall(int64_t t0, int64_t t1, const pp_request_profile *p, int64_t shift,
                       int64_t *submit, int64_t *queue, int64_t *completion) {
    int64_t q = clamp(p->queued_ns + shift, t0, t1), st = clamp(p->dev_start_ns + shift, q, t1);
    int64_t en = clamp(p->dev_end_ns + shift, st, t1);
    int64_t span = en - st, hw = p->hw_ns < (uint64_t)span ? (int64_t)p->hw_ns : span;
    *submit = q - t0;
    *queue = (st - q) + (span - hw);
    *completion = t1 - en;
}

int pp_executor_create(pp_session *s, const pp_executor_config *cfg, pp_executor **out,
                       pp_error *err) {
    pp_executor *ex = calloc(1, sizeof *ex);
    if (!ex)
        return pp_set_error(err, PP_ENOMEM, "executor: out of memory");
    /* a session that leaves this device out records nothing of it */
    if (s && !pp_session_records_device(s, pp_device_name(cfg->device)))
        s = NULL;
    /* the session's level decides what the backend profiles (openvino's PERF_COUNT) */
    int level = s ? pp_session_level(s) : 0;
    int rc = pp_compiled_create_level(cfg->device, &cfg->workload, cfg->requests, level,
                                      &ex->compiled, err);
    if (rc != PP_OK) {
        free(ex);
        return rc;
    }
    ex->nslots = cfg->requests;
    ex->slots = calloc((size_t)ex->nslots, sizeof *ex->slots);
    ex->idle = malloc((size_t)ex->nslots);
    if (!ex->slots || !ex->idle) {
        pp_executor_free(ex);
        return pp_set_error(err, PP_ENOMEM, "executor: out of memory");
    }
    pthread_mutex_init(&ex->lock, NULL);
    pthread_cond_init(&ex->changed, NULL);
    ex->s = s;
    ex->level = level;
    ex->collect = pp_session_collect(s);
    ex->api_start = pp_intern("start_async");
    ex->api_wait = pp_intern("wait");
    ex->stage = cfg->stage ? pp_intern(cfg->stage) : 0;
    ex->name = ex->stage ? ex->stage : pp_intern(pp_workload_kind_name(cfg->workload.kind));
    ex->key_type = pp_intern("type");
    ex->key_exec_type = pp_intern("exec_type");
    ex->key_cpu_ns = pp_intern("cpu_ns");
    ex->key_share = pp_intern("share");
    ex->key_part = pp_intern("part");
    ex->key_bytes_in = pp_intern("bytes_in");
    ex->key_bytes_out = pp_intern("bytes_out");
    ex->key_submit = pp_intern("submit_ns");
    ex->key_queue = pp_intern("queue_ns");
    ex->key_completion = pp_intern("completion_ns");
    ex->key_shift = pp_intern("clock_shift_ns");
    ex->key_clock = pp_intern("clock alignment");
    ex->key_method = pp_intern("method");
    ex->key_error = pp_intern("error_ns");

    pp_device *d = cfg->device;
    int first = pp_device_reserve_streams(d, ex->nslots);
    for (int i = 0; i < ex->nslots; i++) {
        exec_slot *slot = &ex->slots[i];
        slot->ex = ex;
        slot->index = i;
        slot->share = -1;
        slot->part = -1;
        ex->idle[i] = 1;
        if (!s)
            continue;
        char row[32];
        snprintf(row, sizeof row, "req %d", first + i);
        rc = pp_track_device(s, pp_device_name(d), first + i, row, pp_device_flags(d), &slot->track);
        if (rc != PP_OK) {
            pp_executor_free(ex);
            return pp_set_error(err, rc, "executor: cannot create the track of %s/%s: %s",
                                pp_device_name(d), row, pp_strerror(rc));
        }
    }
    if (pp_device_clock_get(d, 0, &ex->clock, NULL) != PP_OK ||
        strcmp(ex->clock.method, "session clock") == 0)
        ex->clock.method = NULL;
    *out = ex;
    return PP_OK;
}

void pp_executor_free(pp_executor *ex) {
    if (!ex)
        return;
    if (ex->slots && ex->idle) {
        pp_executor_wait_all(ex, NULL, NULL);
        pthread_mutex_destroy(&ex->lock);
        pthread_cond_destroy(&ex->changed);
    }
    pp_compiled_free(ex->compiled);
    free(ex->slots);
    free(ex->idle);
    free(ex);
}

pp_compiled *pp_executor_compiled(pp_executor *ex) {
    return ex->compiled;
}

pp_request *pp_executor_acquire(pp_executor *ex) {
    pthread_mutex_lock(&ex->lock);
    for (;;) {
        for (int i = 0; i < ex->nslots; i++) {
            if (ex->idle[i]) {
                ex->idle[i] = 0;
                pthread_mutex_unlock(&ex->lock);
                return pp_compiled_request(ex->compiled, i);
            }
        }
        pthread_cond_wait(&ex->changed, &ex->lock);
    }
}

/* Marks slot i idle and wakes acquirers and waiters. */
static void release_slot(pp_executor *ex, int i) {
    pthread_mutex_lock(&ex->lock);
    ex->idle[i] = 1;
    pthread_cond_broadcast(&ex->changed);
    pthread_mutex_unlock(&ex->lock);
}

void pp_executor_release(pp_executor *ex, pp_request *r) {
    release_slot(ex, pp_request_index(r));
}

/* The exec span (with the split of its wall where the backend reports
 * device times) and, at level 2, one op span per executed op with its
 * type, exec type and CPU time as annotations. */
static void record_exec(pp_executor *ex, const exec_slot *slot, pp_request *r, int64_t end) {
    pp_span_rec rec;
    pp_span_rec_init(&rec);
    rec.track = slot->track;
    rec.name = ex->name;
    rec.stage = ex->stage;
    rec.role = PP_ROLE_EXEC;
    rec.ts_ns = slot->start_ns;
    rec.dur_ns = end - slot->start_ns;
    rec.batch = slot->batch;
    pp_request_profile prof;
    unsigned want = ex->collect;
    int have_profile = ex->level >= 1 && pp_request_profile_get(r, &prof) == PP_OK;
    if (have_profile) {
        rec.hw_ns = want & PP_COLLECT_HW ? prof.hw_ns : 0;
        rec.xfer_ns = want & PP_COLLECT_TRANSFERS ? prof.xfer_ns : 0;
    }
    /* annotations go to the thread's last record: only onto a kept span */
    int recorded = (want & PP_COLLECT_SPANS) && pp_span(ex->s, &rec) == PP_OK;
    if (recorded && slot->share >= 0)
        pp_annotate_double(ex->s, ex->key_share, slot->share);
    if (recorded && slot->part >= 0)
        pp_annotate_int(ex->s, ex->key_part, slot->part);
    /* the bytes its tensors moved (docs/analysis.md, bandwidth): data
     * movement, so they follow the transfers setting */
    if (recorded && have_profile && (want & PP_COLLECT_TRANSFERS)) {
        if (prof.bytes_in)
            pp_annotate_int(ex->s, ex->key_bytes_in, (int64_t)prof.bytes_in);
        if (prof.bytes_out)
            pp_annotate_int(ex->s, ex->key_bytes_out, (int64_t)prof.bytes_out);
    }
    int64_t shift = 0;
    /* the split is hardware information: it follows the hw setting */
    if (recorded && have_profile && (want & PP_COLLECT_HW) && prof.queued_ns != 0) {
        int64_t submit, queue, completion;
        shift = fit_shift(rec.ts_ns, end, &prof);
        split_wall(rec.ts_ns, end, &prof, shift, &submit, &queue, &completion);
        pp_annotate_int(ex->s, ex->key_submit, submit);
        pp_annotate_int(ex->s, ex->key_queue, queue);
        pp_annotate_int(ex->s, ex->key_completion, completion);
        if (shift != 0)
            pp_annotate_int(ex->s, ex->key_shift, shift);
    }
    if (!have_profile || !(want & PP_COLLECT_OPS))
        return;
    for (size_t i = 0; i < prof.nops; i++) {
        const pp_op_profile *op = &prof.ops[i];
        if (op->status != PP_OP_EXECUTED || (op->transfer && !(want & PP_COLLECT_TRANSFERS)))
            continue;
        /* inside the exec, so that the row nests (a device span longer
         * than the host's wall would be cut here) */
        int64_t op_start = clamp(op->start_ns + shift, slot->start_ns, end);
        rec.name = op->name;
        rec.role = PP_ROLE_OP;
        rec.ts_ns = op_start;
        rec.dur_ns = clamp(op->start_ns + shift + (int64_t)op->real_ns, op_start, end) - op_start;
        rec.hw_ns = want & PP_COLLECT_HW ? op->hw_ns : 0;
        rec.xfer_ns = op->transfer ? op->hw_ns : 0;
        if (pp_span(ex->s, &rec) != PP_OK)
            continue;
        pp_annotate_str(ex->s, ex->key_type, op->type);
        pp_annotate_str(ex->s, ex->key_exec_type, op->exec_type);
        if (op->cpu_ns)
            pp_annotate_int(ex->s, ex->key_cpu_ns, (int64_t)op->cpu_ns);
    }
}

static void on_request_done(void *ctx, pp_request *r, int status) {
    int64_t end = pp_now();
    exec_slot *slot = ctx;
    pp_executor *ex = slot->ex;
    if (ex->s) {
        record_exec(ex, slot, r, end);
        mark_clock(ex, slot);
    }
    if (slot->done)
        slot->done(slot->done_ctx, r, slot->batch, status);
    pthread_mutex_lock(&ex->lock);
    if (ex->win.count == 0 || slot->start_ns < ex->win.start_ns)
        ex->win.start_ns = slot->start_ns;
    if (ex->win.count == 0 || end > ex->win.end_ns)
        ex->win.end_ns = end;
    ex->win.count++;
    if (status != PP_OK && ex->status == PP_OK) {
        ex->status = status;
        ex->failed_slot = slot->index;
    }
    ex->idle[slot->index] = 1;
    ex->inflight--;
    pthread_cond_broadcast(&ex->changed);
    pthread_mutex_unlock(&ex->lock);
}

void pp_executor_set_share(pp_executor *ex, pp_request *r, double share) {
    ex->slots[pp_request_index(r)].share = share;
}

void pp_executor_set_part(pp_executor *ex, pp_request *r, int64_t part) {
    ex->slots[pp_request_index(r)].part = part;
}

/* A host API call (PP_COLLECT_API) as a span on the calling thread's row.
 * The row is looked up once per thread and session. */
static void record_api_call(pp_executor *ex, pp_str name, int64_t batch, int64_t start, int64_t end,
                            const pp_sched_sample *at) {
    static _Thread_local struct {
        uint64_t session_id;
        pp_track track;
    } row;
    if (row.session_id != ex->s->id) {
        if (pp_track_thread(ex->s, NULL, &row.track) != PP_OK)
            return;
        row.session_id = ex->s->id;
    }
    pp_span_rec rec;
    pp_span_rec_init(&rec);
    rec.track = row.track;
    rec.name = name;
    rec.stage = ex->stage;
    rec.ts_ns = start;
    rec.dur_ns = end - start;
    rec.batch = batch;
    if (pp_span(ex->s, &rec) == PP_OK && at)
        pp_annotate_sched(ex->s, at);
}

/* The calling thread's scheduler counters before an API call, when the
 * session collects both (NULL otherwise, or when they cannot be read). */
static const pp_sched_sample *api_sched_start(const pp_executor *ex, pp_sched_sample *at) {
    unsigned both = PP_COLLECT_API | PP_COLLECT_SCHED;
    return ex->s && (ex->collect & both) == both && pp_sched_read(at) == PP_OK ? at : NULL;
}

int pp_executor_start(pp_executor *ex, pp_request *r, int64_t batch, pp_exec_done_fn done,
                      void *ctx) {
    exec_slot *slot = &ex->slots[pp_request_index(r)];
    slot->batch = batch;
    slot->done = done;
    slot->done_ctx = ctx;
    pthread_mutex_lock(&ex->lock);
    ex->inflight++;
    pthread_mutex_unlock(&ex->lock);
    pp_sched_sample sched;
    const pp_sched_sample *at = api_sched_start(ex, &sched);
    int64_t start = pp_now();
    slot->start_ns = start;
    int rc = pp_request_start(r, on_request_done, slot);
    if (ex->s && (ex->collect & PP_COLLECT_API))
        record_api_call(ex, ex->api_start, batch, start, pp_now(), at);
    if (rc != PP_OK) {
        pthread_mutex_lock(&ex->lock);
        ex->inflight--;
        pthread_mutex_unlock(&ex->lock);
        release_slot(ex, slot->index);
    }
    return rc;
}

int pp_executor_wait_all(pp_executor *ex, pp_exec_window *win, pp_error *err) {
    pp_sched_sample sched;
    const pp_sched_sample *at = api_sched_start(ex, &sched);
    int64_t start = pp_now();
    pthread_mutex_lock(&ex->lock);
    int waited = ex->inflight > 0;
    while (ex->inflight > 0)
        pthread_cond_wait(&ex->changed, &ex->lock);
    if (win)
        *win = ex->win;
    ex->win = (pp_exec_window){0};
    int status = ex->status, slot = ex->failed_slot;
    ex->status = PP_OK;
    pthread_mutex_unlock(&ex->lock);
    if (waited && ex->s && (ex->collect & PP_COLLECT_API))
        record_api_call(ex, ex->api_wait, -1, start, pp_now(), at);
    if (status != PP_OK)
        return pp_set_error(err, status, "%s: request %d failed: %s",
                            pp_device_name(pp_compiled_device(ex->compiled)), slot,
                            pp_strerror(status));
    return PP_OK;
}
