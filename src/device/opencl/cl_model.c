/* The opencl backend's compiled models and requests.
 *
 * A compiled model builds kernels.cl once and uploads the workload's weights
 * (and for sage its graph, by destination node) as read-only buffers. Each
 * request has its own in-order command queue, so N requests are N commands
 * streams in flight at once, and its own kernels bound to its own buffers. A
 * run is: write the input (a transfer), one kernel per plan op, read the
 * output (a transfer), flushed from the caller's thread; the request's
 * waiter thread blocks on the last command and then finishes it.
 *
 * At level >= 1 the queues profile: each command's QUEUED / START / END,
 * mapped into the session clock by the device's alignment, become the
 * request's op list (one op per command, the device's own times), hw_ns
 * (sum of END - START over its commands), xfer_ns (that of the two
 * transfers) and the device times of the wall decomposition. At level 0 the
 * queues do not profile (bench/bench_opencl measures what that saves). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/kernels.h"
#include "device/opencl/cl_internal.h"

extern const char *const pp_cl_kernels_source;

typedef struct cl_model {
    cl_program program;
    cl_mem weights[PP_WL_MAX_LAYERS];
    cl_mem bias, row_start, col, inv_count;
    pp_str name[PP_MAX_OPS], type[PP_MAX_OPS], exec_type;
} cl_model;

typedef struct cl_req {
    cl_command_queue queue;
    cl_mem in, work[2], out;
    cl_kernel kernel[PP_WL_MAX_OPS];
    size_t global[PP_WL_MAX_OPS][2];
    cl_uint dims[PP_WL_MAX_OPS];
    cl_event events[PP_MAX_OPS]; /* of the running request's commands */
    size_t nevents;
    pp_req_thread waiter; /* waits for each started run */
} cl_req;

static int cl_fail(pp_error *err, const char *what, cl_int rc) {
    char text[48];
    return pp_set_error(err, rc == CL_OUT_OF_HOST_MEMORY ? PP_ENOMEM : PP_EIO, "opencl: %s: %s",
                        what, pp_cl_status_text(rc, text));
}

static cl_mem buffer(cl_context ctx, cl_mem_flags flags, size_t bytes, void *host, cl_int *rc) {
    if (*rc != CL_SUCCESS)
        return NULL;
    return clCreateBuffer(ctx, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 4, host, rc);
}

static void release_mem(cl_mem *m) {
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
}

/* The sage graph as in-edges by destination node: the in-edges of node i
 * are col[row_start[i] .. row_start[i+1]). */
static cl_int upload_graph(cl_context ctx, const pp_workload *w, cl_model *m) {
    size_t ne = w->edges > 0 ? (size_t)w->edges : 1, n = (size_t)w->nodes;
    int32_t *src = malloc(ne * sizeof *src), *dst = malloc(ne * sizeof *dst);
    int32_t *start = calloc(n + 1, sizeof *start), *col = malloc(ne * sizeof *col);
    int32_t *fill = calloc(n, sizeof *fill);
    float *inv = malloc(n * sizeof *inv), *bias = malloc((size_t)w->out_dim * sizeof *bias);
    cl_int rc = CL_OUT_OF_HOST_MEMORY;
    if (src && dst && start && col && fill && inv && bias) {
        pp_wl_graph(w, src, dst);
        for (int64_t e = 0; e < w->edges; e++)
            start[dst[e] + 1]++;
        for (size_t i = 0; i < n; i++)
            start[i + 1] += start[i];
        for (int64_t e = 0; e < w->edges; e++)
            col[start[dst[e]] + fill[dst[e]]++] = src[e];
        pp_k_inv_count(dst, w->edges, w->nodes, inv);
        pp_wl_bias(w, bias);
        rc = CL_SUCCESS;
        m->row_start = buffer(ctx, CL_MEM_READ_ONLY, (n + 1) * sizeof *start, start, &rc);
        m->col = buffer(ctx, CL_MEM_READ_ONLY, ne * sizeof *col, col, &rc);
        m->inv_count = buffer(ctx, CL_MEM_READ_ONLY, n * sizeof *inv, inv, &rc);
        m->bias = buffer(ctx, CL_MEM_READ_ONLY, (size_t)w->out_dim * sizeof *bias, bias, &rc);
    }
    free(src), free(dst), free(start), free(col), free(fill), free(inv), free(bias);
    return rc;
}

static int model_build(pp_compiled *c, cl_model *m, pp_error *err) {
    const cl_dev *cd = c->device->impl;
    const pp_workload *w = &c->workload;
    cl_int rc;
    const char *source = pp_cl_kernels_source;
    m->program = clCreateProgramWithSource(cd->ctx, 1, &source, NULL, &rc);
    if (rc != CL_SUCCESS)
        return cl_fail(err, "cannot create the kernels' program", rc);
    rc = clBuildProgram(m->program, 1, &cd->device, "-cl-std=CL1.2", NULL, NULL);
    if (rc != CL_SUCCESS) {
        char log[512] = "";
        clGetProgramBuildInfo(m->program, cd->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        return pp_set_error(err, PP_EIO, "opencl: %s: building the kernels failed: %s", cd->device_name,
                            log);
    }
    for (size_t i = 0; i < c->nplan && rc == CL_SUCCESS; i++) {
        const pp_wl_op *op = &c->plan[i];
        if (op->kind != PP_WL_MATMUL)
            continue;
        size_t count = (size_t)(op->k * op->cols);
        float *host = malloc(count * sizeof *host);
        if (!host)
            return pp_set_error(err, PP_ENOMEM, "opencl: out of memory");
        pp_wl_weights(w, op->layer, host);
        m->weights[op->layer] = buffer(cd->ctx, CL_MEM_READ_ONLY, count * sizeof *host, host, &rc);
        free(host);
    }
    if (rc == CL_SUCCESS && w->kind == PP_WORKLOAD_SAGE)
        rc = upload_graph(cd->ctx, w, m);
    if (rc != CL_SUCCESS)
        return cl_fail(err, "cannot upload the model's weights", rc);
    m->exec_type = pp_intern("opencl");
    m->name[0] = pp_intern("write_input");
    m->name[c->nplan + 1] = pp_intern("read_output");
    m->type[0] = m->type[c->nplan + 1] = pp_intern("Transfer");
    for (size_t i = 0; i < c->nplan; i++) {
        m->name[1 + i] = pp_intern(c->plan[i].name);
        m->type[1 + i] = pp_intern(c->plan[i].type);
    }
    return PP_OK;
}

static void model_free(cl_model *m) {
    if (!m)
        return;
    for (int l = 0; l < PP_WL_MAX_LAYERS; l++)
        release_mem(&m->weights[l]);
    release_mem(&m->bias);
    release_mem(&m->row_start);
    release_mem(&m->col);
    release_mem(&m->inv_count);
    if (m->program)
        clReleaseProgram(m->program);
    free(m);
}

/* Index of the plan's last MatMul: it writes the output buffer, and the
 * element-wise ops after it work there in place (as the cpu backend). */
static size_t last_matmul(const pp_compiled *c) {
    size_t last = 0;
    for (size_t i = 0; i < c->nplan; i++)
        if (c->plan[i].kind == PP_WL_MATMUL)
            last = i;
    return last;
}

/* Creates op i's kernel reading `in` and writing `out`. */
static cl_int bind_op(const pp_compiled *c, const cl_model *m, cl_req *q, size_t i, cl_mem in,
                      cl_mem out) {
    static const char *const names[] = {[PP_WL_AGGREGATE] = "pp_aggregate",
                                        [PP_WL_MATMUL] = "pp_matmul", [PP_WL_BIAS] = "pp_bias",
                                        [PP_WL_RELU] = "pp_relu"};
    const pp_wl_op *op = &c->plan[i];
    cl_int rc;
    cl_kernel k = clCreateKernel(m->program, names[op->kind], &rc);
    if (rc != CL_SUCCESS)
        return rc;
    q->kernel[i] = k;
    int cols = (int)op->cols, inner = (int)op->k;
    q->dims[i] = 2;
    q->global[i][0] = (size_t)c->workload.nodes;
    q->global[i][1] = (size_t)op->cols;
    switch (op->kind) {
    case PP_WL_AGGREGATE:
        rc = clSetKernelArg(k, 0, sizeof in, &in);
        rc |= clSetKernelArg(k, 1, sizeof m->row_start, &m->row_start);
        rc |= clSetKernelArg(k, 2, sizeof m->col, &m->col);
        rc |= clSetKernelArg(k, 3, sizeof m->inv_count, &m->inv_count);
        rc |= clSetKernelArg(k, 4, sizeof out, &out);
        rc |= clSetKernelArg(k, 5, sizeof cols, &cols);
        break;
    case PP_WL_MATMUL:
        rc = clSetKernelArg(k, 0, sizeof in, &in);
        rc |= clSetKernelArg(k, 1, sizeof m->weights[op->layer], &m->weights[op->layer]);
        rc |= clSetKernelArg(k, 2, sizeof out, &out);
        rc |= clSetKernelArg(k, 3, sizeof inner, &inner);
        rc |= clSetKernelArg(k, 4, sizeof cols, &cols);
        break;
    case PP_WL_BIAS:
        rc = clSetKernelArg(k, 0, sizeof out, &out);
        rc |= clSetKernelArg(k, 1, sizeof m->bias, &m->bias);
        rc |= clSetKernelArg(k, 2, sizeof cols, &cols);
        break;
    case PP_WL_RELU:
        rc = clSetKernelArg(k, 0, sizeof out, &out);
        q->dims[i] = 1;
        q->global[i][0] = (size_t)(c->workload.nodes * op->cols);
        break;
    }
    return rc == CL_SUCCESS ? CL_SUCCESS : CL_INVALID_VALUE;
}

static cl_int req_build(pp_compiled *c, const cl_model *m, cl_req *q) {
    const cl_dev *cd = c->device->impl;
    const pp_workload *w = &c->workload;
    cl_int rc = CL_SUCCESS;
    size_t widest = (size_t)(w->in_dim > w->out_dim ? w->in_dim : w->out_dim);
    size_t nodes = (size_t)w->nodes;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    q->queue = clCreateCommandQueueWithProperties(cd->ctx, cd->device, c->level >= 1 ? props : NULL,
                                                  &rc);
    q->in = buffer(cd->ctx, CL_MEM_READ_ONLY, nodes * (size_t)w->in_dim * sizeof(float), NULL, &rc);
    q->work[0] = buffer(cd->ctx, CL_MEM_READ_WRITE, nodes * widest * sizeof(float), NULL, &rc);
    q->work[1] = buffer(cd->ctx, CL_MEM_READ_WRITE, nodes * widest * sizeof(float), NULL, &rc);
    q->out = buffer(cd->ctx, CL_MEM_READ_WRITE, nodes * (size_t)w->out_dim * sizeof(float), NULL, &rc);
    size_t final = last_matmul(c);
    int cur = 0;
    cl_mem in = q->in;
    for (size_t i = 0; i < c->nplan && rc == CL_SUCCESS; i++) {
        cl_mem out;
        if (c->plan[i].kind == PP_WL_BIAS || c->plan[i].kind == PP_WL_RELU)
            out = in;
        else if (i == final)
            out = q->out;
        else
            out = q->work[cur ^= 1];
        rc = bind_op(c, m, q, i, in, out);
        in = out;
    }
    return rc;
}

/* Fills the request's profile from its finished commands' timestamps. */
static int read_profile(pp_request *r, cl_req *q) {
    const cl_dev *cd = r->compiled->device->impl;
    const cl_model *m = r->compiled->impl;
    int64_t off = cd->clock.offset_ns;
    r->hw_ns = r->xfer_ns = 0;
    for (size_t i = 0; i < q->nevents; i++) {
        cl_ulong queued, start, end;
        cl_int rc = clGetEventProfilingInfo(q->events[i], CL_PROFILING_COMMAND_QUEUED, sizeof queued,
                                            &queued, NULL);
        rc |= clGetEventProfilingInfo(q->events[i], CL_PROFILING_COMMAND_START, sizeof start, &start,
                                      NULL);
        rc |= clGetEventProfilingInfo(q->events[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
        if (rc != CL_SUCCESS || end < start)
            return PP_EIO;
        uint64_t dur = (uint64_t)(end - start);
        int transfer = i == 0 || i == q->nevents - 1;
        r->ops[i] = (pp_op_profile){.name = m->name[i], .type = m->type[i],
                                    .exec_type = m->exec_type, .status = PP_OP_EXECUTED,
                                    .transfer = transfer, .start_ns = (int64_t)start + off,
                                    .real_ns = dur, .hw_ns = dur};
        r->hw_ns += dur;
        if (transfer)
            r->xfer_ns += dur;
        if (i == 0) {
            r->queued_ns = (int64_t)queued + off;
            r->dev_start_ns = (int64_t)start + off;
        }
        r->dev_end_ns = (int64_t)end + off;
    }
    r->nops = q->nevents;
    return PP_OK;
}

static void release_events(cl_req *q) {
    for (size_t i = 0; i < q->nevents; i++)
        clReleaseEvent(q->events[i]);
    q->nevents = 0;
}

/* One run's end, on the request's waiter thread. */
static void wait_run(pp_request *r) {
    cl_req *q = r->impl;
    int status = clWaitForEvents(1, &q->events[q->nevents - 1]) == CL_SUCCESS ? PP_OK : PP_EIO;
    if (status == PP_OK && r->compiled->level >= 1)
        status = read_profile(r, q);
    release_events(q);
    pp_request_finish(r, status);
}

int pp_cl_start(pp_request *r) {
    const pp_compiled *c = r->compiled;
    cl_req *q = r->impl;
    const pp_workload *w = &c->workload;
    size_t in_bytes = (size_t)(w->nodes * w->in_dim) * sizeof(float);
    size_t out_bytes = (size_t)(w->nodes * w->out_dim) * sizeof(float);
    r->nops = 0;
    r->hw_ns = r->xfer_ns = 0;
    r->queued_ns = r->dev_start_ns = r->dev_end_ns = 0;
    cl_int rc = clEnqueueWriteBuffer(q->queue, q->in, CL_FALSE, 0, in_bytes, r->input, 0, NULL,
                                     &q->events[0]);
    q->nevents = rc == CL_SUCCESS;
    for (size_t i = 0; i < c->nplan && rc == CL_SUCCESS; i++) {
        rc = clEnqueueNDRangeKernel(q->queue, q->kernel[i], q->dims[i], NULL, q->global[i], NULL, 0,
                                    NULL, &q->events[q->nevents]);
        q->nevents += rc == CL_SUCCESS;
    }
    if (rc == CL_SUCCESS) {
        rc = clEnqueueReadBuffer(q->queue, q->out, CL_FALSE, 0, out_bytes, r->output, 0, NULL,
                                 &q->events[q->nevents]);
        q->nevents += rc == CL_SUCCESS;
    }
    if (rc == CL_SUCCESS)
        rc = clFlush(q->queue);
    if (rc != CL_SUCCESS) {
        clFinish(q->queue); /* what was enqueued ends before the buffers are reused */
        release_events(q);
        return rc == CL_OUT_OF_HOST_MEMORY ? PP_ENOMEM : PP_EIO;
    }
    pp_req_thread_kick(&q->waiter);
    return PP_OK;
}

static void req_free(pp_request *r) {
    cl_req *q = r->impl;
    if (!q)
        return;
    pp_req_thread_stop(&q->waiter);
    for (size_t i = 0; i < PP_WL_MAX_OPS; i++)
        if (q->kernel[i])
            clReleaseKernel(q->kernel[i]);
    release_mem(&q->in);
    release_mem(&q->work[0]);
    release_mem(&q->work[1]);
    release_mem(&q->out);
    if (q->queue)
        clReleaseCommandQueue(q->queue);
    free(q);
    r->impl = NULL;
}

static int req_create(pp_compiled *c, const cl_model *m, pp_request *r, pp_error *err) {
    cl_req *q = calloc(1, sizeof *q);
    if (!q)
        return pp_set_error(err, PP_ENOMEM, "opencl: out of memory");
    r->impl = q;
    cl_int rc = req_build(c, m, q);
    if (rc != CL_SUCCESS)
        return cl_fail(err, "cannot create a request's queue, buffers and kernels", rc);
    if (pp_req_thread_start(&q->waiter, r, wait_run, "cl") != PP_OK)
        return pp_set_error(err, PP_ENOMEM, "opencl: cannot start a waiter thread");
    return PP_OK;
}

int pp_cl_run_device_end(const pp_request *r, int64_t *end_ns) {
    if (r->dev_end_ns == 0)
        return PP_ENOTFOUND; /* a run without profiling (level 0) has no device times */
    *end_ns = r->dev_end_ns;
    return PP_OK;
}

void pp_cl_free_compiled(pp_compiled *c) {
    for (int i = 0; i < c->nrequests; i++)
        req_free(&c->requests[i]);
    model_free(c->impl);
    c->impl = NULL;
}

int pp_cl_compile(pp_compiled *c, pp_error *err) {
    cl_model *m = calloc(1, sizeof *m);
    if (!m)
        return pp_set_error(err, PP_ENOMEM, "opencl: out of memory");
    c->impl = m;
    int rc = model_build(c, m, err);
    for (int i = 0; i < c->nrequests && rc == PP_OK; i++)
        rc = req_create(c, m, &c->requests[i], err);
    if (rc != PP_OK)
        pp_cl_free_compiled(c);
    return rc;
}
