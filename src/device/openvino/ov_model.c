/* The openvino backend's models: the dummy model (IR built in memory,
 * ov_ir.c) or a model file, its one input and output checked against the
 * workload's shapes (a dynamic input set to them) or its described inputs
 * set to their static shapes, compiled for the device
 * with PERF_COUNT=YES at profiling level >= 1 only. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "device/openvino/ov_internal.h"

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
                                  what, (long long)w->nodes, (long long)w->in_dim, pp_ov_last_error(st));
        }
        ov_partial_shape_free(&s);
        ov_output_const_port_free(port);
    }
    return rc;
}

/* A model file's described inputs: each one the model has, all set at once
 * to their static shapes (one reshape, so that shapes that depend on each
 * other are checked together), and their element types kept for the
 * requests' tensors. Floats and integers only: the fills of device.h. */
static int reshape_inputs(ov_model_t *m, const pp_workload *w, const char *what,
                          ov_element_type_e *types, pp_error *err) {
    size_t nin = 0;
    ov_model_inputs_size(m, &nin);
    if (nin != w->ninputs)
        return pp_set_error(err, PP_EINVAL,
                            "openvino: %s has %zu inputs; the stage describes %zu (give each of "
                            "them a shape)", what, nin, w->ninputs);
    const char *names[PP_MODEL_INPUTS_MAX];
    ov_partial_shape_t shapes[PP_MODEL_INPUTS_MAX];
    memset(shapes, 0, sizeof shapes);
    int rc = PP_OK;
    size_t made = 0;
    for (; rc == PP_OK && made < w->ninputs; made++) {
        const pp_model_input *in = &w->inputs[made];
        ov_output_const_port_t *port = NULL;
        names[made] = in->name;
        if (ov_model_const_input_by_name(m, in->name, &port) != OK || !port) {
            rc = pp_set_error(err, PP_EINVAL, "openvino: %s has no input \"%s\"", what, in->name);
            break;
        }
        ov_status_e st = ov_port_get_element_type(port, &types[made]);
        ov_output_const_port_free(port);
        int known = types[made] == F32 || types[made] == I64 || types[made] == I32;
        if (st != OK || !known) {
            rc = pp_set_error(err, PP_EINVAL,
                              "openvino: %s: input \"%s\" is not f32, i64 or i32 (pipeprof fills "
                              "floats and node indices only)", what, in->name);
            break;
        }
        if (ov_partial_shape_create_static(in->rank, in->dims, &shapes[made]) != OK) {
            rc = pp_set_error(err, PP_ENOMEM, "openvino: out of memory");
            break;
        }
    }
    if (rc == PP_OK) {
        ov_status_e st = ov_model_reshape(m, names, shapes, w->ninputs);
        if (st != OK)
            rc = pp_set_error(err, PP_EINVAL, "openvino: %s cannot take the size %lld nodes, "
                              "%lld edges: %s", what, (long long)w->nodes, (long long)w->edges,
                              pp_ov_last_error(st));
    }
    for (size_t i = 0; i < made; i++)
        ov_partial_shape_free(&shapes[i]);
    return rc;
}

/* Reads the model file, or builds and reads the dummy model. */
static int read_model(ov_core_t *c, const pp_workload *w, pp_ov_model *m, ov_model_t **out,
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
                                pp_ov_last_error(st));
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
                            pp_workload_kind_name(w->kind), pp_ov_last_error(st));
    return PP_OK;
}

static int compile_model(pp_compiled *c, ov_model_t *model, pp_error *err) {
    pp_ov_model *m = c->impl;
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
                            device, pp_ov_last_error(st));
    return PP_OK;
}

int pp_ov_model_compile(pp_compiled *c, pp_ov_model *m, pp_error *err) {
    ov_model_t *model = NULL;
    const char *what = c->workload.model_path ? c->workload.model_path : "the dummy model";
    int rc = read_model(c->device->impl, &c->workload, m, &model, err);
    if (rc == PP_OK && c->workload.ninputs)
        rc = reshape_inputs(model, &c->workload, what, m->input_types, err);
    else if (rc == PP_OK)
        rc = check_shapes(model, &c->workload, what, err);
    if (rc == PP_OK)
        rc = compile_model(c, model, err);
    if (model)
        ov_model_free(model);
    return rc;
}
