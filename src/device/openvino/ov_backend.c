/* The openvino backend: any device OpenVINO offers ("openvino:CPU",
 * "openvino:GPU.0", "openvino:AUTO", "openvino:HETERO:GPU,CPU"), through
 * OpenVINO's C API.
 *
 * One ov_core per process, shared by every open device and held while one
 * is open. A compiled model is the dummy model built as IR in memory
 * (ov_ir.c) or a model file, compiled with PERF_COUNT=YES at level >= 1
 * only. Each request is an ov_infer_request whose input and output tensors
 * wrap the pp_request's own buffers (no copies on our side), and a waiter
 * thread: start() calls start_async on the caller's thread, the waiter
 * blocks in ov_infer_request_wait (which, unlike the C API's callback,
 * returns the run's status), reads the profiling info and finishes the
 * request. Track names are the spec ("openvino:CPU"), so that OpenVINO's
 * CPU never shares a row with the cpu backend's. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/openvino/ov_internal.h"

/* Device names fit the track name "openvino:<name>" (pp_device.name). */
#define MAX_NAME (sizeof ((pp_device *)0)->name - sizeof "openvino:")

static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static ov_core_t *core;
static int core_refs;

/* OpenVINO's last error message, cut to its last line (the first lines
 * name C++ source files). */
static const char *last_error(ov_status_e st) {
    const char *msg = ov_get_last_err_msg();
    if (!msg || !*msg)
        return ov_get_error_info(st);
    const char *end = msg + strlen(msg);
    while (end > msg && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *line = end;
    while (line > msg && line[-1] != '\n')
        line--;
    static _Thread_local char text[400];
    snprintf(text, sizeof text, "%.*s", (int)(end - line), line);
    return text;
}

static int core_acquire(ov_core_t **out, pp_error *err) {
    pthread_mutex_lock(&core_lock);
    ov_status_e st = OK;
    if (!core)
        st = ov_core_create(&core);
    if (st == OK)
        core_refs++;
    *out = core;
    pthread_mutex_unlock(&core_lock);
    if (st != OK)
        return pp_set_error(err, PP_EIO, "openvino: cannot create the runtime core: %s",
                            last_error(st));
    return PP_OK;
}

static void core_release(void) {
    pthread_mutex_lock(&core_lock);
    if (--core_refs == 0) {
        ov_core_free(core);
        core = NULL;
    }
    pthread_mutex_unlock(&core_lock);
}

/* Whether `name` ("GPU", "GPU.0") is one of the available devices, or the
 * family of one ("GPU" when OpenVINO lists "GPU.0"). */
static int available(const ov_available_devices_t *devs, const char *name, size_t len) {
    for (size_t i = 0; i < devs->size; i++) {
        const char *d = devs->devices[i];
        if (strncmp(d, name, len) == 0 && (d[len] == '\0' || d[len] == '.'))
            return 1;
    }
    return 0;
}

/* Checks a device name: a plain device must be available; a virtual one
 * (AUTO, HETERO, MULTI, BATCH, with or without ":A,B") must list available
 * devices. Fills `missing` with the first name that is not there. */
static int name_ok(const ov_available_devices_t *devs, const char *name, char *missing, size_t len) {
    static const char *const virtual[] = {"AUTO", "HETERO", "MULTI", "BATCH"};
    const char *list = NULL;
    for (size_t i = 0; i < sizeof virtual / sizeof virtual[0]; i++) {
        size_t n = strlen(virtual[i]);
        if (strncmp(name, virtual[i], n) == 0 && (name[n] == '\0' || name[n] == ':'))
            list = name + n;
    }
    if (!list) {
        snprintf(missing, len, "%s", name);
        return available(devs, name, strlen(name));
    }
    if (!*list) /* "AUTO": OpenVINO picks among what it has */
        return 1;
    for (list++;; list += strcspn(list, ",") + 1) {
        size_t n = strcspn(list, ",");
        if (n == 0 || !available(devs, list, n)) {
            snprintf(missing, len, "%.*s", (int)n, list);
            return 0;
        }
        if (!list[n])
            return 1;
    }
}

static int ov_check(const char *name, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    if (strlen(name) > MAX_NAME)
        return pp_set_error(err, PP_EINVAL, "openvino: device name \"%s\" is longer than %zu characters",
                            name, MAX_NAME);
    ov_core_t *c;
    int rc = core_acquire(&c, err);
    if (rc != PP_OK)
        return rc;
    ov_available_devices_t devs = {0};
    ov_status_e st = ov_core_get_available_devices(c, &devs);
    if (st != OK) {
        core_release();
        return pp_set_error(err, PP_EIO, "openvino: cannot list the devices: %s", last_error(st));
    }
    char missing[64];
    if (!name_ok(&devs, name, missing, sizeof missing)) {
        char have[256] = "";
        for (size_t i = 0; i < devs.size; i++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "",
                     devs.devices[i]);
        rc = pp_set_error(err, PP_ENOTFOUND, "openvino: device \"%s\" not found (available: %s)",
                          missing, devs.size ? have : "none");
    }
    ov_available_devices_free(&devs);
    core_release();
    return rc;
}

static int ov_open(pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    ov_core_t *c;
    int rc = core_acquire(&c, err);
    if (rc != PP_OK)
        return rc;
    d->impl = c;
    snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, d->spec); /* fits: checked */
    snprintf(d->label, sizeof d->label, "%s", d->spec);
    return PP_OK;
}

static int ov_same(const pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)d, (void)opt, (void)err;
    return 1;
}

static void ov_close(pp_device *d) {
    (void)d;
    core_release();
}

typedef struct ov_model_impl {
    pp_ov_ir ir;            /* the dummy model's XML and weights (they must outlive the model) */
    ov_tensor_t *weights;   /* wraps ir.bin */
    ov_compiled_model_t *compiled;
} ov_model_impl;

typedef struct ov_req {
    ov_infer_request_t *req;
    ov_tensor_t *input, *output;
    pthread_t thread;
    int have_thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int pending, quit; /* guarded by lock */
    int64_t start_ns;
    pp_ov_names names;
    pp_op_profile *ops; /* when the model reports more than PP_MAX_OPS ops */
    size_t ops_cap;
} ov_req;

/* "[1024,64]", "[?,64]" */
static void shape_text(const ov_partial_shape_t *s, char *out, size_t len) {
    if (ov_rank_is_dynamic(s->rank)) {
        snprintf(out, len, "[...]");
        return;
    }
    snprintf(out, len, "[");
    for (int64_t i = 0; i < s->rank.max; i++) {
        const ov_dimension_t *d = &s->dims[i];
        size_t at = strlen(out);
        if (ov_dimension_is_dynamic(*d))
            snprintf(out + at, len - at, "%s?", i ? "," : "");
        else
            snprintf(out + at, len - at, "%s%lld", i ? "," : "", (long long)d->min);
    }
    snprintf(out + strlen(out), len - strlen(out), "]");
}

/* Whether shape s can hold rows x cols: rank 2, each dimension equal or
 * dynamic over a range that includes it. */
static int shape_fits(const ov_partial_shape_t *s, int64_t rows, int64_t cols) {
    if (ov_rank_is_dynamic(s->rank) || s->rank.max != 2)
        return 0;
    int64_t want[2] = {rows, cols};
    for (int i = 0; i < 2; i++)
        if (want[i] < s->dims[i].min || (s->dims[i].max >= 0 && want[i] > s->dims[i].max))
            return 0;
    return 1;
}

/* The model's one input and one output: FP32, fitting nodes x in_dim and
 * nodes x out_dim; a dynamic input is reshaped to the workload's rows. */
static int check_shapes(ov_model_t *m, const pp_workload *w, const char *what, pp_error *err) {
    size_t nin = 0, nout = 0;
    ov_model_inputs_size(m, &nin);
    ov_model_outputs_size(m, &nout);
    if (nin != 1 || nout != 1)
        return pp_set_error(err, PP_EINVAL,
                            "openvino: %s has %zu inputs and %zu outputs (pipeprof feeds one input "
                            "and reads one output)", what, nin, nout);
    int rc = PP_OK;
    for (int pass = 0; pass < 2 && rc == PP_OK; pass++) {
        ov_output_const_port_t *port = NULL;
        ov_partial_shape_t s = {0};
        ov_element_type_e type = DYNAMIC;
        if (pass == 0)
            ov_model_const_input(m, &port);
        else
            ov_model_const_output(m, &port);
        if (!port || ov_port_get_partial_shape(port, &s) != OK ||
            ov_port_get_element_type(port, &type) != OK) {
            ov_output_const_port_free(port);
            return pp_set_error(err, PP_EINVAL, "openvino: %s: cannot read its %s shape", what,
                                pass ? "output" : "input");
        }
        int64_t cols = pass == 0 ? w->in_dim : w->out_dim;
        char have[96];
        shape_text(&s, have, sizeof have);
        if (type != F32)
            rc = pp_set_error(err, PP_EINVAL, "openvino: %s: %s %s is not f32", what,
                              pass ? "output" : "input", have);
        else if (!shape_fits(&s, w->nodes, cols))
            rc = pp_set_error(err, PP_EINVAL,
                              "openvino: %s: %s shape %s does not fit the stage's [%lld,%lld] "
                              "(nodes x %s)", what, pass ? "output" : "input", have,
                              (long long)w->nodes, (long long)cols, pass ? "out_dim" : "in_dim");
        else if (pass == 0 && ov_partial_shape_is_dynamic(s)) {
            ov_partial_shape_t fixed = {0};
            int64_t dims[2] = {w->nodes, w->in_dim};
            ov_status_e st = ov_partial_shape_create_static(2, dims, &fixed);
            if (st == OK)
                st = ov_model_reshape_single_input(m, fixed);
            ov_partial_shape_free(&fixed);
            if (st != OK)
                rc = pp_set_error(err, PP_EINVAL, "openvino: %s: cannot set its input to [%lld,%lld]: %s",
                                  what, (long long)w->nodes, (long long)w->in_dim, last_error(st));
        }
        ov_partial_shape_free(&s);
        ov_output_const_port_free(port);
    }
    return rc;
}

/* Reads the model file, or builds and reads the dummy model. */
static int read_model(ov_core_t *c, const pp_workload *w, ov_model_impl *m, ov_model_t **out,
                      pp_error *err) {
    if (w->model_path) {
        FILE *f = fopen(w->model_path, "rb");
        if (!f)
            return pp_set_error(err, errno == ENOENT ? PP_ENOTFOUND : PP_EIO,
                                "openvino: model %s: %s", w->model_path, strerror(errno));
        fclose(f);
        ov_status_e st = ov_core_read_model(c, w->model_path, NULL, out);
        if (st != OK)
            return pp_set_error(err, PP_EINVAL, "openvino: cannot read model %s: %s", w->model_path,
                                last_error(st));
        return PP_OK;
    }
    int rc = pp_ov_ir_build(w, 0, &m->ir, err);
    if (rc != PP_OK)
        return rc;
    int64_t len = (int64_t)m->ir.bin_len;
    ov_shape_t shape = {0};
    ov_status_e st = ov_shape_create(1, &len, &shape);
    if (st == OK)
        st = ov_tensor_create_from_host_ptr(U8, shape, m->ir.bin, &m->weights);
    ov_shape_free(&shape);
    if (st == OK)
        st = ov_core_read_model_from_memory_buffer(c, m->ir.xml, m->ir.xml_len, m->weights, out);
    if (st != OK)
        return pp_set_error(err, PP_EIO, "openvino: cannot read the %s model: %s",
                            pp_workload_kind_name(w->kind), last_error(st));
    return PP_OK;
}

static int compile_model(pp_compiled *c, ov_model_t *model, pp_error *err) {
    ov_model_impl *m = c->impl;
    const char *device = c->device->spec + strlen("openvino:");
    char nreq[16];
    snprintf(nreq, sizeof nreq, "%d", c->nrequests);
    /* One request: latency; more: throughput over that many requests
     * (e.g. one CPU stream each). PERF_COUNT only when profiles are read. */
    ov_property_t props[4];
    size_t n = 0;
    props[n++] = (ov_property_t){ov_property_key_hint_performance_mode,
                                 c->nrequests > 1 ? "THROUGHPUT" : "LATENCY"};
    if (c->nrequests > 1)
        props[n++] = (ov_property_t){ov_property_key_hint_num_requests, nreq};
    if (c->level >= 1)
        props[n++] = (ov_property_t){ov_property_key_enable_profiling, "YES"};
    ov_status_e st = ov_core_compile_model_props(c->device->impl, model, device, n, props,
                                                 &m->compiled);
    if (st != OK)
        return pp_set_error(err, PP_EINVAL, "openvino: cannot compile %s for %s: %s",
                            c->workload.model_path ? c->workload.model_path : "the dummy model",
                            device, last_error(st));
    return PP_OK;
}

static void request_free(pp_request *r) {
    ov_req *q = r->impl;
    if (!q)
        return;
    if (q->have_thread) {
        pthread_mutex_lock(&q->lock);
        q->quit = 1;
        pthread_cond_signal(&q->wake);
        pthread_mutex_unlock(&q->lock);
        pthread_join(q->thread, NULL);
    }
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->wake);
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

static void *waiter_main(void *arg) {
    pp_request *r = arg;
    ov_req *q = r->impl;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        while (!q->pending && !q->quit)
            pthread_cond_wait(&q->wake, &q->lock);
        int quit = q->quit && !q->pending;
        q->pending = 0;
        pthread_mutex_unlock(&q->lock);
        if (quit)
            return NULL;
        finish_run(r, ov_infer_request_wait(q->req));
    }
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

static int request_create(pp_request *r, ov_compiled_model_t *compiled, pp_error *err) {
    const pp_workload *w = &r->compiled->workload;
    ov_req *q = calloc(1, sizeof *q);
    if (!q)
        return pp_set_error(err, PP_ENOMEM, "openvino: out of memory");
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->wake, NULL);
    r->impl = q;
    ov_status_e st = ov_compiled_model_create_infer_request(compiled, &q->req);
    if (st == OK)
        st = tensor_on(r->input, w->nodes, w->in_dim, &q->input);
    if (st == OK)
        st = tensor_on(r->output, w->nodes, w->out_dim, &q->output);
    if (st == OK)
        st = ov_infer_request_set_input_tensor(q->req, q->input);
    if (st == OK)
        st = ov_infer_request_set_output_tensor(q->req, q->output);
    if (st != OK)
        return pp_set_error(err, PP_EIO, "openvino: request %d: %s", r->index, last_error(st));
    if (pthread_create(&q->thread, NULL, waiter_main, r) != 0)
        return pp_set_error(err, PP_ENOMEM, "openvino: cannot start the waiter thread of request %d",
                            r->index);
    q->have_thread = 1;
    char name[16];
    snprintf(name, sizeof name, "pp-ov-req%d", r->index % 100);
    pthread_setname_np(q->thread, name);
    return PP_OK;
}

static void ov_free_compiled(pp_compiled *c) {
    for (int i = 0; i < c->nrequests; i++)
        request_free(&c->requests[i]);
    ov_model_impl *m = c->impl;
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
    ov_model_impl *m = calloc(1, sizeof *m);
    if (!m)
        return pp_set_error(err, PP_ENOMEM, "openvino: out of memory");
    c->impl = m;
    ov_model_t *model = NULL;
    const char *what = c->workload.model_path ? c->workload.model_path : "the dummy model";
    int rc = read_model(c->device->impl, &c->workload, m, &model, err);
    if (rc == PP_OK)
        rc = check_shapes(model, &c->workload, what, err);
    if (rc == PP_OK)
        rc = compile_model(c, model, err);
    if (model)
        ov_model_free(model);
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
    pthread_mutex_lock(&q->lock);
    q->pending = 1;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
    return PP_OK;
}

static int ov_list(const pp_device_options *opt, pp_device_list_fn fn, void *ctx, pp_error *err) {
    (void)opt;
    ov_core_t *c;
    int rc = core_acquire(&c, err);
    if (rc != PP_OK)
        return rc;
    ov_available_devices_t devs = {0};
    ov_status_e st = ov_core_get_available_devices(c, &devs);
    if (st != OK)
        rc = pp_set_error(err, PP_EIO, "openvino: cannot list the devices: %s", last_error(st));
    for (size_t i = 0; rc == PP_OK && i < devs.size; i++) {
        char spec[64], *full = NULL;
        snprintf(spec, sizeof spec, "openvino:%s", devs.devices[i]);
        ov_core_get_property(c, devs.devices[i], ov_property_key_device_full_name, &full);
        fn(ctx, &(pp_device_info){.backend = "openvino", .spec = spec,
                                  .description = full ? full : devs.devices[i]});
        if (full)
            ov_free(full);
    }
    ov_available_devices_free(&devs);
    core_release();
    return rc;
}

int pp_ov_compiled_property(const pp_compiled *c, const char *key, char *out, size_t len,
                            pp_error *err) {
    const ov_model_impl *m = c->impl;
    char *value = NULL;
    ov_status_e st = ov_compiled_model_get_property(m->compiled, key, &value);
    if (st != OK)
        return pp_set_error(err, PP_EINVAL, "openvino: property %s: %s", key, last_error(st));
    snprintf(out, len, "%s", value);
    ov_free(value);
    return PP_OK;
}

const pp_backend pp_backend_openvino = {
    .name = "openvino",
    .default_name = "CPU",
    .runs_model_files = 1,
    .check = ov_check,
    .open = ov_open,
    .same = ov_same,
    .close = ov_close,
    .compile = ov_compile,
    .free_compiled = ov_free_compiled,
    .start = ov_start,
    .list = ov_list,
};
