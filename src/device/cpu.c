/* The cpu backend: real compute of the workload plan on one worker thread
 * per request (a request slot is a CPU "stream").
 *
 * Hardware time here is the worker thread's CPU time over the compute
 * (CLOCK_THREAD_CPUTIME_ID around each op): the time the request really held
 * a core. Wall time beyond it is waiting for a core, i.e. contention with the
 * other threads of the machine. The first op copies the request's input into
 * the model's own buffer (the "reorder" that real runtimes do to change
 * layout); it is the transfer part. MatMuls run on OpenBLAS, held to the
 * worker thread (kernels.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cpus.h"
#include "core/error.h"
#include "device/backend.h"
#include "device/kernels.h"

typedef struct cpu_model {
    float *weights[PP_WL_MAX_LAYERS];
    float *bias;
    int32_t *src, *dst;
    float *inv_count;
    pp_str op_name[PP_MAX_OPS], op_type[PP_MAX_OPS], op_exec_type[PP_MAX_OPS];
} cpu_model;

typedef struct cpu_worker {
    pp_req_thread thread;
    float *work[2]; /* nodes x max(in, out) each */
} cpu_worker;

static int cpu_check(const char *name, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    if (strcmp(name, "CPU") != 0)
        return pp_set_error(err, PP_ENOTFOUND, "cpu: no device \"%s\" (have: CPU)", name);
    return PP_OK;
}

static int cpu_open(pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)d, (void)opt, (void)err;
    return PP_OK;
}

static int cpu_same(const pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)d, (void)opt, (void)err;
    return 1;
}

static void cpu_close(pp_device *d) {
    (void)d;
}

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Index of the plan's last MatMul: it writes the request's output, and the
 * element-wise ops after it work there in place. */
static size_t last_matmul(const pp_compiled *c) {
    size_t last = 0;
    for (size_t i = 0; i < c->nplan; i++)
        if (c->plan[i].kind == PP_WL_MATMUL)
            last = i;
    return last;
}

static void run_op(const pp_compiled *c, const cpu_model *m, const pp_wl_op *op, const float *in,
                   float *out) {
    const pp_workload *w = &c->workload;
    switch (op->kind) {
    case PP_WL_AGGREGATE:
        pp_k_aggregate(in, m->src, m->dst, w->edges, m->inv_count, out, w->nodes, op->cols);
        break;
    case PP_WL_MATMUL:
        pp_k_matmul(in, m->weights[op->layer], out, w->nodes, op->k, op->cols);
        break;
    case PP_WL_BIAS:
        pp_k_bias(out, m->bias, w->nodes, op->cols);
        break;
    case PP_WL_RELU:
        pp_k_relu(out, w->nodes * op->cols);
        break;
    }
}

/* One timed op: fills the profile entry from wall and thread CPU clocks. */
static void profile_begin(pp_op_profile *p, int64_t *cpu0) {
    p->start_ns = pp_now();
    *cpu0 = thread_cpu_ns();
}

static void profile_end(pp_op_profile *p, int64_t cpu0) {
    int64_t cpu1 = thread_cpu_ns(), t1 = pp_now();
    p->real_ns = (uint64_t)(t1 - p->start_ns);
    p->cpu_ns = (uint64_t)(cpu1 - cpu0);
    p->hw_ns = p->cpu_ns;
}

static void compute(pp_request *r) {
    const pp_compiled *c = r->compiled;
    const cpu_model *m = c->impl;
    cpu_worker *wk = r->impl;
    const pp_workload *w = &c->workload;
    int64_t cpu0;

    /* the worker has the request: the hand-off from the starting thread is
     * its submit part; compute wall beyond CPU time is waiting for a core */
    r->queued_ns = r->dev_start_ns = pp_now();
    pp_op_profile *p = &r->ops[0];
    profile_begin(p, &cpu0);
    memcpy(wk->work[0], r->input, (size_t)(w->nodes * w->in_dim) * sizeof(float));
    profile_end(p, cpu0);
    r->hw_ns = r->xfer_ns = p->hw_ns;

    size_t final = last_matmul(c);
    int cur = 0;
    const float *in = wk->work[0];
    for (size_t i = 0; i < c->nplan; i++) {
        const pp_wl_op *op = &c->plan[i];
        float *out;
        if (op->kind == PP_WL_BIAS || op->kind == PP_WL_RELU)
            out = (float *)in; /* in place */
        else if (i == final)
            out = r->output;
        else
            out = wk->work[cur ^= 1];
        p = &r->ops[1 + i];
        profile_begin(p, &cpu0);
        run_op(c, m, op, in, out);
        profile_end(p, cpu0);
        r->hw_ns += p->hw_ns;
        in = out;
    }
    r->dev_end_ns = pp_now();
}

/* One run, on the request's thread. */
static void worker_run(pp_request *r) {
    compute(r);
    pp_request_finish(r, PP_OK);
}

static int cpu_start(pp_request *r) {
    pp_req_thread_kick(&((cpu_worker *)r->impl)->thread);
    return PP_OK;
}

static void worker_free(pp_request *r) {
    cpu_worker *wk = r->impl;
    if (!wk)
        return;
    pp_req_thread_stop(&wk->thread);
    free(wk->work[0]);
    free(wk->work[1]);
    free(wk);
    r->impl = NULL;
}

static int worker_create(pp_request *r) {
    const pp_workload *w = &r->compiled->workload;
    size_t widest = (size_t)(w->in_dim > w->out_dim ? w->in_dim : w->out_dim);
    cpu_worker *wk = calloc(1, sizeof *wk);
    if (!wk)
        return PP_ENOMEM;
    wk->work[0] = malloc((size_t)w->nodes * widest * sizeof(float));
    wk->work[1] = malloc((size_t)w->nodes * widest * sizeof(float));
    if (!wk->work[0] || !wk->work[1]) {
        free(wk->work[0]);
        free(wk->work[1]);
        free(wk);
        return PP_ENOMEM;
    }
    r->impl = wk; /* before the thread starts: it reads it */
    if (pp_req_thread_start(&wk->thread, r, worker_run, "cpu") != PP_OK) {
        free(wk->work[0]);
        free(wk->work[1]);
        free(wk);
        r->impl = NULL;
        return PP_ENOMEM;
    }
    return PP_OK;
}

static void model_free(cpu_model *m) {
    if (!m)
        return;
    for (int l = 0; l < PP_WL_MAX_LAYERS; l++)
        free(m->weights[l]);
    free(m->bias);
    free(m->src);
    free(m->dst);
    free(m->inv_count);
    free(m);
}

/* Generates the weights (and for sage the bias and graph) of the plan. */
static cpu_model *model_create(const pp_compiled *c) {
    const pp_workload *w = &c->workload;
    cpu_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    for (size_t i = 0; i < c->nplan; i++) {
        const pp_wl_op *op = &c->plan[i];
        if (op->kind != PP_WL_MATMUL)
            continue;
        m->weights[op->layer] = malloc((size_t)(op->k * op->cols) * sizeof(float));
        if (!m->weights[op->layer])
            goto fail;
        pp_wl_weights(w, op->layer, m->weights[op->layer]);
    }
    if (w->kind == PP_WORKLOAD_SAGE) {
        size_t ne = w->edges ? (size_t)w->edges : 1;
        m->bias = malloc((size_t)w->out_dim * sizeof(float));
        m->src = malloc(ne * sizeof(int32_t));
        m->dst = malloc(ne * sizeof(int32_t));
        m->inv_count = malloc((size_t)w->nodes * sizeof(float));
        if (!m->bias || !m->src || !m->dst || !m->inv_count)
            goto fail;
        pp_wl_bias(w, m->bias);
        pp_wl_graph(w, m->src, m->dst);
        pp_k_inv_count(m->dst, w->edges, w->nodes, m->inv_count);
    }
    /* exec types say which code ran the op, as OpenVINO's do */
    pp_str plain = pp_intern("ref_c_FP32"), blas = pp_intern("openblas_FP32");
    m->op_name[0] = pp_intern("reorder_input");
    m->op_type[0] = pp_intern("Reorder");
    m->op_exec_type[0] = plain;
    for (size_t i = 0; i < c->nplan; i++) {
        m->op_name[1 + i] = pp_intern(c->plan[i].name);
        m->op_type[1 + i] = pp_intern(c->plan[i].type);
        m->op_exec_type[1 + i] = c->plan[i].kind == PP_WL_MATMUL ? blas : plain;
    }
    return m;
fail:
    model_free(m);
    return NULL;
}

static void cpu_free_compiled(pp_compiled *c) {
    for (int i = 0; i < c->nrequests; i++)
        worker_free(&c->requests[i]);
    model_free(c->impl);
    c->impl = NULL;
}

static int cpu_compile(pp_compiled *c, pp_error *err) {
    pp_k_init();
    cpu_model *m = model_create(c);
    if (!m)
        return pp_set_error(err, PP_ENOMEM, "cpu: out of memory building the %s model",
                            pp_workload_kind_name(c->workload.kind));
    c->impl = m;
    for (int i = 0; i < c->nrequests; i++) {
        pp_request *r = &c->requests[i];
        r->nops = 1 + c->nplan;
        for (size_t k = 0; k < r->nops; k++)
            r->ops[k] = (pp_op_profile){.name = m->op_name[k], .type = m->op_type[k],
                                        .exec_type = m->op_exec_type[k],
                                        .status = PP_OP_EXECUTED,
                                        .transfer = k == 0};
        if (worker_create(r) != PP_OK) {
            cpu_free_compiled(c);
            return pp_set_error(err, PP_ENOMEM, "cpu: cannot start a worker thread for request %d", i);
        }
    }
    return PP_OK;
}

static int cpu_list(const pp_device_options *opt, pp_device_list_fn fn, void *ctx, pp_error *err) {
    (void)opt, (void)err;
    char text[96];
    snprintf(text, sizeof text, "worker threads of this process (%u cores online), OpenBLAS",
             pp_cpus_online());
    fn(ctx, &(pp_device_info){.backend = "cpu", .spec = "cpu", .description = text});
    return PP_OK;
}

const pp_backend pp_backend_cpu = {
    .name = "cpu",
    .default_name = "CPU",
    .check = cpu_check,
    .open = cpu_open,
    .same = cpu_same,
    .close = cpu_close,
    .compile = cpu_compile,
    .free_compiled = cpu_free_compiled,
    .start = cpu_start,
    .list = cpu_list,
};
