/* The openvino backend: any device OpenVINO offers ("openvino:CPU",
 * "openvino:GPU.0", "openvino:AUTO", "openvino:HETERO:GPU,CPU"), through
 * OpenVINO's C API. Devices are ov_device.c, models ov_model.c; this file
 * has the requests and the backend table.
 *
 * Each request is an ov_infer_request whose input and output tensors
 * wrap the pp_request's own buffers (no copies on our side), and a waiter
 * thread: start() calls start_async on the caller's thread, the waiter
 * blocks in ov_infer_request_wait (which, unlike the C API's callback,
 * returns the run's status), reads the profiling info and finishes the
 * request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/openvino/ov_internal.h"

typedef struct ov_req {
    ov_infer_request_t *req;
    ov_tensor_t *input, *output;
    pp_req_thread waiter; /* waits for each started run */
    int64_t start_ns;
    pp_ov_names names;
    pp_op_profile *ops; /* when the model reports more than PP_MAX_OPS ops */
    size_t ops_cap;
} ov_req;

static void request_free(pp_request *r) {
    ov_req *q = r->impl;
    if (!q)
        return;
    pp_req_thread_stop(&q->waiter);
    if (q->req)
        ov_infer_request_free(q->req);
    if (q->input)
        ov_tensor_free(q->input);
    if (q->output)
        ov_tensor_free(q->output);
    pp_ov_names_free(&q->names);
    free(q->ops);
    free(q);
    r->ops = r->inline_ops;
    r->impl = NULL;
}

/* Profile of the finished run (level >= 1), then the request is done. */
static void finish_run(pp_request *r, ov_status_e st) {
    ov_req *q = r->impl;
    int64_t end = pp_now();
    int status = st == OK ? PP_OK : PP_EIO;
    r->hw_ns = r->xfer_ns = 0;
    r->nops = 0;
    if (st == OK && r->compiled->level >= 1) {
        ov_profiling_info_list_t list = {0};
        if (ov_infer_request_get_profiling_info(q->req, &list) != OK)
            status = PP_EIO;
        else if (pp_ov_profile_fill(r, &list, q->start_ns, end, &q->names, &q->ops, &q->ops_cap))
            status = PP_ENOMEM;
        ov_profiling_info_list_free(&list);
    }
    pp_request_finish(r, status);
}

/* One run's end, on the request's waiter thread. */
static void wait_run(pp_request *r) {
    finish_run(r, ov_infer_request_wait(((ov_req *)r->impl)->req));
}

static int tensor_on(float *data, int64_t rows, int64_t cols, ov_tensor_t **out) {
    int64_t dims[2] = {rows, cols};
    ov_shape_t shape = {0};
    ov_status_e st = ov_shape_create(2, dims, &shape);
    if (st == OK)
        st = ov_tensor_create_from_host_ptr(F32, shape, data, out);
    ov_shape_free(&shape);
    return st;
}

/* splitmix64: the fills are the same for a seed on every machine */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A tensor for described input i of the model, made and filled by
 * OpenVINO's allocator: floats uniform in +-1, integers node indices in
 * [0, nodes) (device.h). */
static ov_status_e input_tensor(const pp_workload *w, size_t i, ov_element_type_e type,
                                ov_tensor_t **out) {
    const pp_model_input *in = &w->inputs[i];
    ov_shape_t shape = {0};
    ov_status_e st = ov_shape_create(in->rank, in->dims, &shape);
    if (st == OK)
        st = ov_tensor_create(type, shape, out);
    ov_shape_free(&shape);
    void *data = NULL;
    size_t n = 0;
    if (st == OK)
        st = ov_tensor_data(*out, &data);
    if (st == OK)
        st = ov_tensor_get_size(*out, &n);
    uint64_t state = w->seed * 0x100000001b3u + i;
    for (size_t k = 0; st == OK && k < n; k++) {
        uint64_t v = next_random(&state);
        if (type == F32)
            ((float *)data)[k] = (float)((double)(v >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        else if (type == I64)
            ((int64_t *)data)[k] = (int64_t)(v % (uint64_t)w->nodes);
        else
            ((int32_t *)data)[k] = (int32_t)(v % (uint64_t)w->nodes);
    }
    return st;
}

/* The bytes of the request's output tensors, as OpenVINO allocated them for
 * a model file's static shapes; 0 (not known) when it cannot say. */
static uint64_t output_bytes(ov_compiled_model_t *compiled, ov_req *q) {
    size_t n = 0, total = 0;
    if (ov_compiled_model_outputs_size(compiled, &n) != OK)
        return 0;
    for (size_t i = 0; i < n; i++) {
        ov_tensor_t *t = NULL;
        size_t bytes = 0;
        ov_status_e st = ov_infer_request_get_output_tensor_by_index(q->req, i, &t);
        if (st == OK)
            st = ov_tensor_get_byte_size(t, &bytes);
        if (t)
            ov_tensor_free(t);
        if (st != OK)
            return 0;
        total += bytes;
    }
    return total;
}

/* The request's tensors: the described inputs of a model file, made here
 * and handed to the request (it keeps a reference), with their bytes as the
 * request's; else the pp_request's own input and output buffers, wrapped. */
static ov_status_e bind_tensors(pp_request *r, ov_req *q, ov_compiled_model_t *compiled) {
    const pp_workload *w = &r->compiled->workload;
    const pp_ov_model *m = r->compiled->impl;
    ov_status_e st = OK;
    if (w->ninputs)
        r->bytes_in = 0;
    for (size_t i = 0; st == OK && i < w->ninputs; i++) {
        ov_tensor_t *t = NULL;
        size_t bytes = 0;
        st = input_tensor(w, i, m->input_types[i], &t);
        if (st == OK)
            st = ov_tensor_get_byte_size(t, &bytes);
        if (st == OK)
            st = ov_infer_request_set_tensor(q->req, w->inputs[i].name, t);
        r->bytes_in += bytes;
        if (t)
            ov_tensor_free(t);
    }
    if (w->ninputs) {
        r->bytes_out = st == OK ? output_bytes(compiled, q) : 0;
        return st;
    }
    st = tensor_on(r->input, w->nodes, w->in_dim, &q->input);
    if (st == OK)
        st = tensor_on(r->output, w->nodes, w->out_dim, &q->output);
    if (st == OK)
        st = ov_infer_request_set_input_tensor(q->req, q->input);
    if (st == OK)
        st = ov_infer_request_set_output_tensor(q->req, q->output);
    return st;
}

static int request_create(pp_request *r, ov_compiled_model_t *compiled, pp_error *err) {
    ov_req *q = calloc(1, sizeof *q);
    if (!q)
        return pp_set_error(err, PP_ENOMEM, "openvino: out of memory");
    r->impl = q;
    ov_status_e st = ov_compiled_model_create_infer_request(compiled, &q->req);
    if (st == OK)
        st = bind_tensors(r, q, compiled);
    if (st != OK)
        return pp_set_error(err, PP_EIO, "openvino: request %d: %s", r->index, pp_ov_last_error(st));
    if (pp_req_thread_start(&q->waiter, r, wait_run, "ov") != PP_OK)
        return pp_set_error(err, PP_ENOMEM, "openvino: cannot start the waiter thread of request %d",
                            r->index);
    return PP_OK;
}

static void ov_free_compiled(pp_compiled *c) {
    for (int i = 0; i < c->nrequests; i++)
        request_free(&c->requests[i]);
    pp_ov_model *m = c->impl;
    if (!m)
        return;
    if (m->compiled)
        ov_compiled_model_free(m->compiled);
    if (m->weights)
        ov_tensor_free(m->weights);
    pp_ov_ir_free(&m->ir);
    free(m);
    c->impl = NULL;
}

static int ov_compile(pp_compiled *c, pp_error *err) {
    pp_ov_model *m = calloc(1, sizeof *m);
    if (!m)
        return pp_set_error(err, PP_ENOMEM, "openvino: out of memory");
    c->impl = m;
    int rc = pp_ov_model_compile(c, m, err);
    for (int i = 0; rc == PP_OK && i < c->nrequests; i++)
        rc = request_create(&c->requests[i], m->compiled, err);
    if (rc != PP_OK)
        ov_free_compiled(c);
    return rc;
}

static int ov_start(pp_request *r) {
    ov_req *q = r->impl;
    q->start_ns = pp_now();
    if (ov_infer_request_start_async(q->req) != OK)
        return PP_EIO;
    pp_req_thread_kick(&q->waiter);
    return PP_OK;
}

int pp_ov_compiled_property(const pp_compiled *c, const char *key, char *out, size_t len,
                            pp_error *err) {
    const pp_ov_model *m = c->impl;
    char *value = NULL;
    ov_status_e st = ov_compiled_model_get_property(m->compiled, key, &value);
    if (st != OK)
        return pp_set_error(err, PP_EINVAL, "openvino: property %s: %s", key, pp_ov_last_error(st));
    snprintf(out, len, "%s", value);
    ov_free(value);
    return PP_OK;
}

const pp_backend pp_backend_openvino = {
    .name = "openvino",
    .default_name = "CPU",
    .runs_model_files = 1,
    .check = pp_ov_check,
    .open = pp_ov_open,
    .same = pp_ov_same,
    .close = pp_ov_close,
    .compile = ov_compile,
    .free_compiled = ov_free_compiled,
    .start = ov_start,
    .list = pp_ov_list,
};
