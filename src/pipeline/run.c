/* Running a pipeline: streaming (one host thread per stage, bounded queues
 * between them, so that different batches overlap across stages) or serial
 * (one batch through every stage at a time, the naive loop).
 *
 * Stage k writes batch b's output into buffer b % nbuf of its ring. With
 * queue depth D, while stage k works on b its consumer is at b - D - 1 or
 * later, so a ring of D + 2 buffers is never overwritten while read. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/pipeline_impl.h"
#include "pipeline/queue.h"

typedef struct stage_sums {
    int64_t batches, span_ns, max_ns, partition_ns, merge_ns;
    int64_t device_ns[PP_STAGE_MAX_DEVICES];
} stage_sums;

typedef struct run_ctx {
    pp_pipeline *p;
    pp_session *s;
    int n;
    pp_device *devices[PP_PIPELINE_MAX_STAGES][PP_STAGE_MAX_DEVICES];
    pp_stage *stages[PP_PIPELINE_MAX_STAGES];
    float *input;
    float **bufs[PP_PIPELINE_MAX_STAGES];
    int nbuf;
    batch_queue queues[PP_PIPELINE_MAX_STAGES]; /* queues[k]: batches waiting for stage k */
    stage_sums sums[PP_PIPELINE_MAX_STAGES];
    int64_t first_measured;                      /* batches before it are warm-up */
    int64_t first_in_ns, last_out_ns;
    pp_str flow_name;
    pp_track tracks[PP_PIPELINE_MAX_STAGES]; /* stage k's host track, once it ran */
    int have_track[PP_PIPELINE_MAX_STAGES];
    uint64_t region; /* the open "warm up" region */
    int streaming;   /* stages joined by queues (not --serial) */
    pthread_mutex_t lock;
    pthread_cond_t drained;
    int64_t finished; /* batches that left the last stage, guarded by lock */
    int status;       /* first failure, guarded by lock */
    pp_error err;
} run_ctx;

typedef struct stage_thread {
    run_ctx *rc;
    int k;
} stage_thread;

static void fail(run_ctx *rc, int status, const pp_error *err) {
    pthread_mutex_lock(&rc->lock);
    if (rc->status == PP_OK) {
        rc->status = status;
        rc->err = *err;
    }
    pthread_cond_broadcast(&rc->drained);
    pthread_mutex_unlock(&rc->lock);
    for (int k = 0; k < rc->n; k++)
        batch_queue_close(&rc->queues[k]);
}

static int failed(run_ctx *rc) {
    pthread_mutex_lock(&rc->lock);
    int status = rc->status;
    pthread_mutex_unlock(&rc->lock);
    return status != PP_OK;
}

static void account(run_ctx *rc, int k, int64_t batch, const pp_stage_timing *t) {
    if (batch < rc->first_measured)
        return;
    stage_sums *sum = &rc->sums[k];
    int64_t span = t->end_ns - t->start_ns;
    sum->batches++;
    sum->span_ns += span;
    if (span > sum->max_ns)
        sum->max_ns = span;
    sum->partition_ns += t->partition_ns;
    sum->merge_ns += t->merge_ns;
    for (int d = 0; d < PP_STAGE_MAX_DEVICES; d++)
        sum->device_ns[d] += t->device_ns[d];
    if (k == 0 && batch == rc->first_measured)
        rc->first_in_ns = t->start_ns;
    if (k == rc->n - 1)
        rc->last_out_ns = t->end_ns;
}

/* Runs stage k on batch b and links the batch's flow through it. */
static int run_one(run_ctx *rc, int k, int64_t b) {
    const float *in = k == 0 ? rc->input : rc->bufs[k - 1][b % rc->nbuf];
    float *out = rc->bufs[k][b % rc->nbuf];
    pp_stage_timing t;
    pp_error err;
    int status = pp_stage_run(rc->stages[k], b, in, out, &t, &err);
    if (status != PP_OK) {
        fail(rc, status, &err);
        return status;
    }
    /* The stage's thread has its track now; stage k is run by one thread. */
    if (rc->s && !rc->have_track[k])
        rc->have_track[k] = pp_track_thread(rc->s, NULL, &rc->tracks[k]) == PP_OK;
    if (rc->n > 1 && rc->have_track[k]) {
        pp_flow_phase phase = k == 0 ? PP_FLOW_BEGIN : k == rc->n - 1 ? PP_FLOW_END : PP_FLOW_STEP;
        pp_flow(rc->s, rc->tracks[k], rc->flow_name, t.start_ns, (uint64_t)b + 1, phase);
    }
    /* The queues' depth, once, for a model of the run (docs/whatif.md): the
     * trace records what a pipeline file said, not only what it did. */
    if (rc->streaming && k == 0 && b == 0 && rc->have_track[0])
        pp_counter(rc->s, rc->tracks[0], pp_intern("queue_depth"), t.start_ns,
                   (double)rc->p->cfg.queue_depth);
    account(rc, k, b, &t);
    return PP_OK;
}

static void *stage_main(void *arg) {
    stage_thread *st = arg;
    run_ctx *rc = st->rc;
    int k = st->k;
    int64_t b;
    while (batch_queue_pop(&rc->queues[k], &b) && !failed(rc)) {
        if (run_one(rc, k, b) != PP_OK)
            break;
        if (k + 1 == rc->n) {
            pthread_mutex_lock(&rc->lock);
            rc->finished++;
            pthread_cond_broadcast(&rc->drained);
            pthread_mutex_unlock(&rc->lock);
        } else if (!batch_queue_push(&rc->queues[k + 1], b)) {
            break;
        }
    }
    if (k + 1 < rc->n)
        batch_queue_close(&rc->queues[k + 1]);
    return NULL;
}

static void warmup_begin(run_ctx *rc) {
    pp_region_begin(rc->s, pp_intern("warm up"), &rc->region);
}

static void warmup_end(run_ctx *rc) {
    pp_region_end(rc->s, rc->region);
}

/* Feeds batches [first, end) to the first stage; 0 if the run failed. */
static int feed(run_ctx *rc, int64_t first, int64_t end) {
    for (int64_t b = first; b < end; b++)
        if (!batch_queue_push(&rc->queues[0], b))
            return 0;
    return 1;
}

/* Warm-up batches, then the measured ones, through the same stage threads
 * (one host track per stage). The warm-up region closes when the last
 * warm-up batch has left the last stage, before any measured one enters. */
static void stream_batches(run_ctx *rc, int warmup, int batches) {
    if (warmup > 0) {
        warmup_begin(rc);
        int ok = feed(rc, 0, warmup);
        pthread_mutex_lock(&rc->lock);
        while (ok && rc->finished < warmup && rc->status == PP_OK)
            pthread_cond_wait(&rc->drained, &rc->lock);
        pthread_mutex_unlock(&rc->lock);
        warmup_end(rc);
        if (!ok)
            return;
    }
    feed(rc, warmup, (int64_t)warmup + batches);
}

static int run_streaming(run_ctx *rc, int warmup, int batches) {
    pthread_t threads[PP_PIPELINE_MAX_STAGES];
    stage_thread args[PP_PIPELINE_MAX_STAGES];
    int started = 0;
    for (int k = 0; k < rc->n; k++) {
        if (batch_queue_init(&rc->queues[k], rc->p->cfg.queue_depth) != PP_OK) {
            for (int j = 0; j < k; j++)
                batch_queue_destroy(&rc->queues[j]);
            rc->status = pp_set_error(&rc->err, PP_ENOMEM, "pipeline: out of memory");
            return rc->status;
        }
    }
    for (; started < rc->n; started++) {
        args[started] = (stage_thread){.rc = rc, .k = started};
        if (pthread_create(&threads[started], NULL, stage_main, &args[started]) != 0) {
            pp_error err;
            pp_set_error(&err, PP_ENOMEM, "pipeline: cannot start the thread of stage %d", started);
            fail(rc, PP_ENOMEM, &err);
            break;
        }
    }
    if (started == rc->n)
        stream_batches(rc, warmup, batches);
    batch_queue_close(&rc->queues[0]);
    for (int k = 0; k < started; k++)
        pthread_join(threads[k], NULL);
    for (int k = 0; k < rc->n; k++)
        batch_queue_destroy(&rc->queues[k]);
    return rc->status;
}

static int run_serial(run_ctx *rc, int warmup, int batches) {
    if (rc->s) {
        pp_track track;
        pp_track_thread(rc->s, "pipeline", &track);
    }
    if (warmup > 0)
        warmup_begin(rc);
    for (int64_t b = 0; b < (int64_t)warmup + batches; b++) {
        for (int k = 0; k < rc->n; k++) {
            if (run_one(rc, k, b) != PP_OK) {
                if (b < warmup)
                    warmup_end(rc);
                return rc->status;
            }
        }
        if (b + 1 == warmup)
            warmup_end(rc);
    }
    return PP_OK;
}

static int open_stage(run_ctx *rc, int k, pp_error *err) {
    pipeline_stage *ps = &rc->p->stages[k];
    pp_stage_config sc = {.name = ps->name, .ndevices = ps->spec.ndevices,
                          .requests = ps->spec.requests, .host = ps->spec.host,
                          .host_ctx = ps->spec.host_ctx};
    memcpy(sc.split, ps->spec.split, sizeof sc.split);
    pp_pipeline_stage_workload(rc->p, k, &sc.workload);
    for (int d = 0; d < sc.ndevices; d++) {
        pp_error why;
        int status = pp_device_open(ps->devices[d], &rc->p->cfg.devices, &rc->devices[k][d], &why);
        if (status != PP_OK)
            return pp_set_error(err, status, "stages[%d].devices[%d]: %s", k, d, why.msg);
        sc.devices[d] = rc->devices[k][d];
    }
    int status = pp_stage_create(rc->s, &sc, &rc->stages[k], err);
    if (status != PP_OK)
        return status;
    size_t out_floats = (size_t)(sc.workload.nodes * sc.workload.out_dim);
    rc->bufs[k] = calloc((size_t)rc->nbuf, sizeof *rc->bufs[k]);
    if (!rc->bufs[k])
        return pp_set_error(err, PP_ENOMEM, "pipeline: out of memory");
    for (int i = 0; i < rc->nbuf; i++)
        if (!(rc->bufs[k][i] = calloc(out_floats, sizeof(float))))
            return pp_set_error(err, PP_ENOMEM, "pipeline: out of memory");
    return PP_OK;
}

static void close_all(run_ctx *rc) {
    for (int k = 0; k < rc->n; k++) {
        pp_stage_free(rc->stages[k]);
        for (int d = 0; d < PP_STAGE_MAX_DEVICES; d++)
            pp_device_close(rc->devices[k][d]);
        for (int i = 0; rc->bufs[k] && i < rc->nbuf; i++)
            free(rc->bufs[k][i]);
        free(rc->bufs[k]);
    }
    free(rc->input);
    pthread_mutex_destroy(&rc->lock);
    pthread_cond_destroy(&rc->drained);
}

static int open_all(run_ctx *rc, pp_error *err) {
    const pp_pipeline_config *cfg = &rc->p->cfg;
    size_t nin = (size_t)(cfg->nodes * cfg->features);
    rc->input = malloc(nin * sizeof *rc->input);
    if (!rc->input)
        return pp_set_error(err, PP_ENOMEM, "pipeline: out of memory");
    uint64_t state = cfg->seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < nin; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        rc->input[i] = (float)(state >> 40) / (float)(1u << 24) - 0.5f;
    }
    for (int k = 0; k < rc->n; k++) {
        int status = open_stage(rc, k, err);
        if (status != PP_OK)
            return status;
    }
    return PP_OK;
}

static void summarize(run_ctx *rc) {
    for (int k = 0; k < rc->n; k++) {
        pipeline_stage *ps = &rc->p->stages[k];
        const stage_sums *sum = &rc->sums[k];
        pp_stage_summary *out = &ps->summary;
        int64_t n = sum->batches ? sum->batches : 1;
        *out = (pp_stage_summary){.name = ps->name, .ndevices = ps->spec.ndevices,
                                  .batches = sum->batches, .mean_ns = sum->span_ns / n,
                                  .max_ns = sum->max_ns,
                                  .mean_partition_ns = sum->partition_ns / n,
                                  .mean_merge_ns = sum->merge_ns / n};
        for (int d = 0; d < ps->spec.ndevices; d++) {
            snprintf(ps->labels[d], sizeof ps->labels[d], "%s", pp_device_label(rc->devices[k][d]));
            out->device_labels[d] = ps->labels[d];
            out->mean_device_ns[d] = sum->device_ns[d] / n;
        }
    }
}

int pp_pipeline_run(pp_pipeline *p, pp_session *s, const pp_run_options *opt,
                    pp_pipeline_result *result, pp_error *err) {
    if (p->nstages == 0)
        return pp_set_error(err, PP_EINVAL, "stages: the pipeline has none");
    int serial = opt ? opt->serial : 0;
    int batches = opt && opt->batches > 0 ? opt->batches : p->cfg.batches;
    int warmup = opt && opt->warmup >= 0 ? opt->warmup : p->cfg.warmup;
    run_ctx *rc = calloc(1, sizeof *rc);
    if (!rc)
        return pp_set_error(err, PP_ENOMEM, "pipeline: out of memory");
    rc->p = p;
    rc->s = s;
    rc->n = p->nstages;
    rc->nbuf = p->cfg.queue_depth + 2;
    rc->flow_name = pp_intern("batch");
    pthread_mutex_init(&rc->lock, NULL);
    pthread_cond_init(&rc->drained, NULL);
    int status = open_all(rc, err);
    if (status == PP_OK) {
        rc->first_measured = warmup;
        rc->streaming = !serial;
        status = serial ? run_serial(rc, warmup, batches) : run_streaming(rc, warmup, batches);
        if (status != PP_OK && err)
            *err = rc->err;
    }
    if (status == PP_OK) {
        summarize(rc);
        if (result) {
            result->batches = rc->sums[rc->n - 1].batches;
            result->wall_ns = rc->last_out_ns - rc->first_in_ns;
            result->batches_per_s =
                result->wall_ns > 0 ? (double)result->batches * 1e9 / (double)result->wall_ns : 0;
        }
    }
    close_all(rc);
    free(rc);
    return status;
}
