/* A stage: one step of a pipeline for one batch, on the host, on one device,
 * or data parallel over several.
 *
 * A batch's rows are cut into contiguous blocks, one per device by its split
 * share, and each device's block evenly over its request slots. Partition
 * (copying each block into its request's input) and merge (copying the
 * outputs back) are host work on the calling thread, so their spans go on
 * that thread's track and never on a device row; the devices' walls come
 * from the executors' windows. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "pipeprof/pipeline.h"
#include "pipeprof/sched.h"

typedef struct stage_device {
    pp_executor *ex;
    int64_t row0, rows;  /* the device's block of the batch */
    int64_t per_request; /* rows of each request but maybe the last */
    pp_request *acquired[16]; /* filled by the partition, started by dispatch */
} stage_device;

struct pp_stage {
    pp_session *s;
    pp_stage_config cfg;
    pp_str name, partition, merge;
    pp_str key_partition, key_device, key_merge, key_total;
    stage_device dev[PP_STAGE_MAX_DEVICES];
    int slots; /* request slots over all devices */
    int have_track;
    pp_track track; /* the host track of the thread that runs the stage */
};

/* Device d's block: boundaries at the rounded cumulative shares, so the
 * blocks tile the batch exactly. */
static void split_rows(const pp_stage_config *cfg, stage_device *dev) {
    double total = 0;
    for (int d = 0; d < cfg->ndevices; d++)
        total += cfg->split[d];
    double cum = 0;
    int64_t prev = 0, nodes = cfg->workload.nodes;
    for (int d = 0; d < cfg->ndevices; d++) {
        cum += total > 0 ? cfg->split[d] / total : 1.0 / cfg->ndevices;
        int64_t end = d + 1 == cfg->ndevices ? nodes : (int64_t)(cum * (double)nodes + 0.5);
        dev[d].row0 = prev;
        dev[d].rows = end - prev;
        prev = end;
    }
}

static int check_config(const pp_stage_config *cfg, pp_error *err) {
    const char *name = cfg->name ? cfg->name : "stage";
    if (cfg->ndevices < 0 || cfg->ndevices > PP_STAGE_MAX_DEVICES)
        return pp_set_error(err, PP_EINVAL, "%s: %d devices (expected 0..%d)", name, cfg->ndevices,
                            PP_STAGE_MAX_DEVICES);
    if (cfg->ndevices == 0 && !cfg->host)
        return pp_set_error(err, PP_EINVAL, "%s: a stage without devices needs a host function",
                            name);
    if (cfg->ndevices > 0 && (cfg->requests < 1 || cfg->requests > 16))
        return pp_set_error(err, PP_EINVAL, "%s: %d requests per device (expected 1..16)", name,
                            cfg->requests);
    for (int d = 0; d < cfg->ndevices; d++) {
        if (!cfg->devices[d])
            return pp_set_error(err, PP_EINVAL, "%s: device %d is NULL", name, d);
        if (!(cfg->split[d] >= 0))
            return pp_set_error(err, PP_EINVAL, "%s: split[%d] is negative", name, d);
    }
    return pp_workload_check(&cfg->workload, err);
}

static int create_executors(pp_stage *st, pp_error *err) {
    const pp_stage_config *cfg = &st->cfg;
    split_rows(cfg, st->dev);
    for (int d = 0; d < cfg->ndevices; d++) {
        stage_device *sd = &st->dev[d];
        if (sd->rows < cfg->requests)
            return pp_set_error(err, PP_EINVAL,
                                "%s: device %d gets %lld rows of %lld, fewer than its %d requests",
                                pp_str_text(st->name), d, (long long)sd->rows,
                                (long long)cfg->workload.nodes, cfg->requests);
        sd->per_request = (sd->rows + cfg->requests - 1) / cfg->requests;
        pp_executor_config ec = {.device = cfg->devices[d], .workload = cfg->workload,
                                 .requests = cfg->requests, .stage = cfg->name};
        ec.workload.nodes = sd->per_request;
        ec.workload.edges = cfg->workload.edges * sd->per_request / cfg->workload.nodes;
        int rc = pp_executor_create(st->s, &ec, &sd->ex, err);
        if (rc != PP_OK)
            return rc;
    }
    st->slots = cfg->ndevices * cfg->requests;
    return PP_OK;
}

int pp_stage_create(pp_session *s, const pp_stage_config *cfg, pp_stage **out, pp_error *err) {
    int rc = check_config(cfg, err);
    if (rc != PP_OK)
        return rc;
    pp_stage *st = calloc(1, sizeof *st);
    if (!st)
        return pp_set_error(err, PP_ENOMEM, "stage: out of memory");
    st->s = s;
    st->cfg = *cfg;
    st->name = pp_intern(cfg->name ? cfg->name : "stage");
    st->cfg.name = pp_str_text(st->name);
    st->partition = pp_intern("partition");
    st->merge = pp_intern("merge");
    st->key_partition = pp_intern("partition_ns");
    st->key_device = pp_intern("max_device_ns");
    st->key_merge = pp_intern("merge_ns");
    st->key_total = pp_intern("total_ns");
    rc = create_executors(st, err);
    if (rc != PP_OK) {
        pp_stage_free(st);
        return rc;
    }
    *out = st;
    return PP_OK;
}

void pp_stage_free(pp_stage *st) {
    if (!st)
        return;
    for (int d = 0; d < st->cfg.ndevices; d++)
        pp_executor_free(st->dev[d].ex);
    free(st);
}

/* The calling thread's scheduler counters at the moments that bound the
 * host spans of one stage run (PP_COLLECT_SCHED): its start (the
 * partition's too), the partition's end, the merge's start and the end.
 * `on` is 0 when the session does not collect them or a read failed. */
typedef struct stage_sched {
    int on;
    pp_sched_sample start, partitioned, merge_start, end;
} stage_sched;

/* The time now: the counters' own when they are read (so that a span's
 * bounds and its figures are the same moments), else pp_now(). */
static int64_t sched_mark(stage_sched *sc, pp_sched_sample *at) {
    if (sc->on && pp_sched_read(at) != PP_OK)
        sc->on = 0;
    return sc->on ? at->ts_ns : pp_now();
}

/* PP_OK when the span was kept; 1 when the session does not collect spans.
 * With `from` and `to` (NULL: none), the kept span carries the scheduler
 * figures between them. */
static int record_host_span(pp_stage *st, pp_track track, pp_str name, pp_role role,
                            int64_t batch, int64_t start, int64_t end,
                            const pp_sched_sample *from, const pp_sched_sample *to) {
    if (!(pp_session_collect(st->s) & PP_COLLECT_SPANS))
        return 1;
    pp_span_rec rec;
    pp_span_rec_init(&rec);
    rec.track = track;
    rec.name = name;
    rec.stage = st->name;
    rec.role = role;
    rec.ts_ns = start;
    rec.dur_ns = end - start;
    rec.batch = batch;
    int rc = pp_span(st->s, &rec);
    if (rc == PP_OK && from && to)
        pp_annotate_sched_between(st->s, from, to);
    return rc;
}

/* The partition: copies each request's rows into its input. Rows past the
 * end of a short last block are zero, so every request computes on defined
 * data. All slots are acquired before any starts: a request that finished
 * at once would otherwise be handed out again and its rows lost. */
static void partition(pp_stage *st, const float *in) {
    int64_t in_dim = st->cfg.workload.in_dim;
    for (int d = 0; d < st->cfg.ndevices; d++) {
        stage_device *sd = &st->dev[d];
        for (int r = 0; r < st->cfg.requests; r++) {
            pp_request *req = pp_executor_acquire(sd->ex);
            int64_t row0 = pp_request_index(req) * sd->per_request;
            int64_t rows = sd->rows - row0 < sd->per_request ? sd->rows - row0 : sd->per_request;
            float *dst = pp_request_input(req);
            memcpy(dst, in + (sd->row0 + row0) * in_dim, (size_t)(rows * in_dim) * sizeof *dst);
            memset(dst + rows * in_dim, 0,
                   (size_t)((sd->per_request - rows) * in_dim) * sizeof *dst);
            pp_executor_set_share(sd->ex, req, (double)rows / (double)st->cfg.workload.nodes);
            pp_executor_set_part(sd->ex, req, st->cfg.ndevices > 1 ? d : -1);
            sd->acquired[r] = req;
        }
    }
}

/* Starts every request the partition filled, device after device. When a
 * start fails, the requests not yet started are handed back unstarted (the
 * failed one is already), so that every slot is free again once the caller
 * has waited for those that did start. */
static int dispatch(pp_stage *st, int64_t batch, pp_error *err) {
    int rc = PP_OK;
    for (int d = 0; d < st->cfg.ndevices; d++) {
        stage_device *sd = &st->dev[d];
        for (int r = 0; r < st->cfg.requests; r++) {
            if (rc != PP_OK) {
                pp_executor_release(sd->ex, sd->acquired[r]);
                continue;
            }
            rc = pp_executor_start(sd->ex, sd->acquired[r], batch, NULL, NULL);
            if (rc != PP_OK)
                pp_set_error(err, rc, "%s: cannot start request %d on %s for batch %lld: %s",
                             pp_str_text(st->name), pp_request_index(sd->acquired[r]),
                             pp_device_name(st->cfg.devices[d]), (long long)batch,
                             pp_strerror(rc));
        }
    }
    return rc;
}

static void collect(pp_stage *st, float *out) {
    int64_t out_dim = st->cfg.workload.out_dim;
    for (int d = 0; d < st->cfg.ndevices; d++) {
        stage_device *sd = &st->dev[d];
        pp_compiled *c = pp_executor_compiled(sd->ex);
        for (int r = 0; r < st->cfg.requests; r++) {
            int64_t row0 = r * sd->per_request;
            int64_t rows = sd->rows - row0 < sd->per_request ? sd->rows - row0 : sd->per_request;
            memcpy(out + (sd->row0 + row0) * out_dim, pp_request_output(pp_compiled_request(c, r)),
                   (size_t)(rows * out_dim) * sizeof *out);
        }
    }
}

/* Waits for every executor, even after a failure, so that no request is
 * left running; reports the first failure. */
static int wait_devices(pp_stage *st, pp_stage_timing *t, pp_error *err) {
    int status = PP_OK;
    for (int d = 0; d < st->cfg.ndevices; d++) {
        pp_exec_window win;
        int rc = pp_executor_wait_all(st->dev[d].ex, &win, status == PP_OK ? err : NULL);
        if (rc != PP_OK && status == PP_OK)
            status = rc;
        t->device_ns[d] = win.count ? win.end_ns - win.start_ns : 0;
        if (t->device_ns[d] > t->max_device_ns)
            t->max_device_ns = t->device_ns[d];
    }
    return status;
}

static int run_devices(pp_stage *st, pp_track track, int64_t batch, const float *in, float *out,
                       pp_stage_timing *t, stage_sched *sc, pp_error *err) {
    partition(st, in);
    int64_t partitioned = sched_mark(sc, &sc->partitioned);
    int rc = dispatch(st, batch, err);
    int waited = wait_devices(st, t, rc == PP_OK ? err : NULL);
    if (rc == PP_OK)
        rc = waited;
    if (rc != PP_OK)
        return rc;
    int64_t merge_start = sched_mark(sc, &sc->merge_start);
    collect(st, out);
    t->end_ns = sched_mark(sc, &sc->end);
    if (st->slots > 1) {
        t->partition_ns = partitioned - t->start_ns;
        t->merge_ns = t->end_ns - merge_start;
        record_host_span(st, track, st->partition, PP_ROLE_PARTITION, batch, t->start_ns,
                         partitioned, sc->on ? &sc->start : NULL, &sc->partitioned);
        record_host_span(st, track, st->merge, PP_ROLE_MERGE, batch, merge_start, t->end_ns,
                         sc->on ? &sc->merge_start : NULL, &sc->end);
        t->total_ns = t->partition_ns + t->max_device_ns + t->merge_ns;
    } else {
        t->total_ns = t->end_ns - t->start_ns;
    }
    return PP_OK;
}

int pp_stage_run(pp_stage *st, int64_t batch, const float *in, float *out, pp_stage_timing *timing,
                 pp_error *err) {
    /* One thread runs a stage: its track is looked up (a lock) once. */
    if (st->s && !st->have_track) {
        if (pp_track_thread(st->s, pp_str_text(st->name), &st->track) != PP_OK)
            return pp_set_error(err, PP_ENOMEM, "%s: cannot create the host track",
                                pp_str_text(st->name));
        st->have_track = 1;
    }
    pp_track track = st->track;
    const pp_workload *w = &st->cfg.workload;
    pp_stage_timing t = {0};
    /* never per op: a few reads per stage run (pipeprof/sched.h gives the cost) */
    stage_sched sc = {.on = (pp_session_collect(st->s) & (PP_COLLECT_SPANS | PP_COLLECT_SCHED)) ==
                            (PP_COLLECT_SPANS | PP_COLLECT_SCHED)};
    t.start_ns = sched_mark(&sc, &sc.start);
    int rc;
    if (st->cfg.ndevices == 0) {
        rc = st->cfg.host(st->cfg.host_ctx, batch, in, out, w->nodes, w->in_dim, w->out_dim);
        t.end_ns = sched_mark(&sc, &sc.end);
        t.total_ns = t.end_ns - t.start_ns;
        if (rc != PP_OK)
            pp_set_error(err, rc, "%s: the host function failed on batch %lld: %s",
                         pp_str_text(st->name), (long long)batch, pp_strerror(rc));
    } else {
        rc = run_devices(st, track, batch, in, out, &t, &sc, err);
    }
    if (rc != PP_OK)
        return rc;
    /* Annotations go to the thread's last record: only onto a kept span. */
    if (record_host_span(st, track, st->name, PP_ROLE_STAGE, batch, t.start_ns, t.end_ns,
                         sc.on ? &sc.start : NULL, &sc.end) == PP_OK) {
        pp_annotate_int(st->s, st->key_partition, t.partition_ns);
        pp_annotate_int(st->s, st->key_device, t.max_device_ns);
        pp_annotate_int(st->s, st->key_merge, t.merge_ns);
        pp_annotate_int(st->s, st->key_total, t.total_ns);
    }
    if (timing)
        *timing = t;
    return PP_OK;
}
