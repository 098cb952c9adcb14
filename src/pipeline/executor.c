/* The executor: one device, N request slots, async-infer-queue semantics.
 *
 * Each slot is a row of its own on the device ("NPU/req 0"), so requests in
 * flight at once never overlap on one track. The exec span's wall is taken
 * right before the backend's start and first thing in the completion
 * callback, as a user timing start_async() and the callback would see it;
 * recording is a handful of stores into the backend thread's buffer. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "pipeprof/pipeline.h"

typedef struct exec_slot {
    pp_executor *ex;
    int index;
    pp_track track;
    int64_t start_ns; /* written by the starting thread, read by the callback */
    int64_t batch;
    double share;     /* the part of its stage's batch; negative: none recorded */
    pp_exec_done_fn done;
    void *done_ctx;
} exec_slot;

struct pp_executor {
    pp_session *s;
    int level;
    pp_compiled *compiled;
    pp_str name, stage;
    pp_str key_type, key_exec_type, key_cpu_ns, key_share;
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

int pp_executor_create(pp_session *s, const pp_executor_config *cfg, pp_executor **out,
                       pp_error *err) {
    pp_executor *ex = calloc(1, sizeof *ex);
    if (!ex)
        return pp_set_error(err, PP_ENOMEM, "executor: out of memory");
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
    ex->stage = cfg->stage ? pp_intern(cfg->stage) : 0;
    ex->name = ex->stage ? ex->stage : pp_intern(pp_workload_kind_name(cfg->workload.kind));
    ex->key_type = pp_intern("type");
    ex->key_exec_type = pp_intern("exec_type");
    ex->key_cpu_ns = pp_intern("cpu_ns");
    ex->key_share = pp_intern("share");

    pp_device *d = cfg->device;
    int first = pp_device_reserve_streams(d, ex->nslots);
    for (int i = 0; i < ex->nslots; i++) {
        exec_slot *slot = &ex->slots[i];
        slot->ex = ex;
        slot->index = i;
        slot->share = -1;
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

/* The exec span and, at level 2, one op span per executed op with its type,
 * exec type and CPU time as annotations. */
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
    int have_profile = ex->level >= 1 && pp_request_profile_get(r, &prof) == PP_OK;
    if (have_profile) {
        rec.hw_ns = prof.hw_ns;
        rec.xfer_ns = prof.xfer_ns;
    }
    /* annotations go to the thread's last record: only onto a kept span */
    if (pp_span(ex->s, &rec) == PP_OK && slot->share >= 0)
        pp_annotate_double(ex->s, ex->key_share, slot->share);
    if (!have_profile || ex->level < 2)
        return;
    for (size_t i = 0; i < prof.nops; i++) {
        const pp_op_profile *op = &prof.ops[i];
        if (op->status != PP_OP_EXECUTED)
            continue;
        rec.name = op->name;
        rec.role = PP_ROLE_OP;
        rec.ts_ns = op->start_ns;
        rec.dur_ns = (int64_t)op->real_ns;
        rec.hw_ns = op->hw_ns;
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
    if (ex->s)
        record_exec(ex, slot, r, end);
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

int pp_executor_start(pp_executor *ex, pp_request *r, int64_t batch, pp_exec_done_fn done,
                      void *ctx) {
    exec_slot *slot = &ex->slots[pp_request_index(r)];
    slot->batch = batch;
    slot->done = done;
    slot->done_ctx = ctx;
    pthread_mutex_lock(&ex->lock);
    ex->inflight++;
    pthread_mutex_unlock(&ex->lock);
    slot->start_ns = pp_now();
    int rc = pp_request_start(r, on_request_done, slot);
    if (rc != PP_OK) {
        pthread_mutex_lock(&ex->lock);
        ex->inflight--;
        pthread_mutex_unlock(&ex->lock);
        release_slot(ex, slot->index);
    }
    return rc;
}

int pp_executor_wait_all(pp_executor *ex, pp_exec_window *win, pp_error *err) {
    pthread_mutex_lock(&ex->lock);
    while (ex->inflight > 0)
        pthread_cond_wait(&ex->changed, &ex->lock);
    if (win)
        *win = ex->win;
    ex->win = (pp_exec_window){0};
    int status = ex->status, slot = ex->failed_slot;
    ex->status = PP_OK;
    pthread_mutex_unlock(&ex->lock);
    if (status != PP_OK)
        return pp_set_error(err, status, "%s: request %d failed: %s",
                            pp_device_name(pp_compiled_device(ex->compiled)), slot,
                            pp_strerror(status));
    return PP_OK;
}
