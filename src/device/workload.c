/* The dummy models' plans, sizes and generated parameters. */
#include "device/workload.h"

#include <math.h>
#include <stdio.h>

#include "core/error.h"

void pp_workload_init(pp_workload *w) {
    *w = (pp_workload){.kind = PP_WORKLOAD_MATMUL, .nodes = 256, .edges = 1024,
                       .in_dim = 64, .out_dim = 64, .layers = 1, .seed = 1};
}

const char *pp_workload_kind_name(pp_workload_kind kind) {
    switch (kind) {
    case PP_WORKLOAD_MATMUL: return "matmul";
    case PP_WORKLOAD_SAGE: return "sage";
    }
    return "unknown";
}

/* The limits keep every tensor under 256 MiB and every index in int32. */
int pp_workload_check(const pp_workload *w, pp_error *err) {
    if (w->kind != PP_WORKLOAD_MATMUL && w->kind != PP_WORKLOAD_SAGE)
        return pp_set_error(err, PP_EINVAL, "workload kind: unknown kind %d (have: matmul, sage)",
                            (int)w->kind);
    if (w->nodes < 1 || w->nodes > (1 << 22))
        return pp_set_error(err, PP_EINVAL, "workload nodes: %lld is outside 1..%d",
                            (long long)w->nodes, 1 << 22);
    if (w->in_dim < 1 || w->in_dim > (1 << 14))
        return pp_set_error(err, PP_EINVAL, "workload in_dim: %lld is outside 1..%d",
                            (long long)w->in_dim, 1 << 14);
    if (w->out_dim < 1 || w->out_dim > (1 << 14))
        return pp_set_error(err, PP_EINVAL, "workload out_dim: %lld is outside 1..%d",
                            (long long)w->out_dim, 1 << 14);
    int64_t widest = w->in_dim > w->out_dim ? w->in_dim : w->out_dim;
    if (w->nodes * widest > ((int64_t)1 << 26))
        return pp_set_error(err, PP_EINVAL,
                            "workload: %lld nodes x %lld features is over 2^26 values per tensor",
                            (long long)w->nodes, (long long)widest);
    if (w->kind == PP_WORKLOAD_SAGE && (w->edges < 0 || w->edges > (1 << 26)))
        return pp_set_error(err, PP_EINVAL, "workload edges: %lld is outside 0..%d",
                            (long long)w->edges, 1 << 26);
    if (w->kind == PP_WORKLOAD_MATMUL && (w->layers < 1 || w->layers > PP_WL_MAX_LAYERS))
        return pp_set_error(err, PP_EINVAL, "workload layers: %d is outside 1..%d", w->layers,
                            PP_WL_MAX_LAYERS);
    if (w->ninputs > PP_MODEL_INPUTS_MAX || (w->ninputs && (!w->model_path || !w->inputs)))
        return pp_set_error(err, PP_EINVAL,
                            "workload inputs: %zu described (expected 0..%d, with a model file)",
                            w->ninputs, PP_MODEL_INPUTS_MAX);
    for (size_t i = 0; i < w->ninputs; i++) {
        const pp_model_input *in = &w->inputs[i];
        int64_t values = 1;
        int ok = in->name && *in->name && in->rank >= 1 && in->rank <= PP_MODEL_INPUT_MAX_RANK;
        for (int d = 0; ok && d < in->rank; d++) {
            ok = in->dims[d] >= 1 && in->dims[d] <= ((int64_t)1 << 26);
            values *= ok ? in->dims[d] : 1;
            ok = ok && values <= ((int64_t)1 << 26);
        }
        if (!ok)
            return pp_set_error(err, PP_EINVAL,
                                "workload inputs[%zu] \"%s\": needs a name, rank 1..%d and dims "
                                ">= 1 with at most 2^26 values",
                                i, in->name ? in->name : "", PP_MODEL_INPUT_MAX_RANK);
    }
    if (w->kind == PP_WORKLOAD_SAGE && w->layers != 1)
        return pp_set_error(err, PP_EINVAL, "workload layers: a sage model has 1 layer (got %d)",
                            w->layers);
    return PP_OK;
}

static pp_wl_op make_op(pp_wl_op_kind kind, const char *name, const char *type, uint64_t flops) {
    pp_wl_op op = {.kind = kind, .type = type, .flops = flops};
    snprintf(op.name, sizeof op.name, "%s", name);
    return op;
}

size_t pp_wl_plan(const pp_workload *w, pp_wl_op *ops) {
    uint64_t n = (uint64_t)w->nodes, in = (uint64_t)w->in_dim, out = (uint64_t)w->out_dim;
    size_t count = 0;
    if (w->kind == PP_WORKLOAD_SAGE) {
        /* one add per edge and feature, plus the self term and the scaling */
        ops[count] = make_op(PP_WL_AGGREGATE, "aggregate", "Aggregate",
                             ((uint64_t)w->edges + 2 * n) * in);
        ops[count++].cols = (int64_t)in;
        ops[count] = make_op(PP_WL_MATMUL, "matmul", "MatMul", 2 * n * in * out);
        ops[count].k = (int64_t)in;
        ops[count++].cols = (int64_t)out;
        ops[count] = make_op(PP_WL_BIAS, "bias", "Add", n * out);
        ops[count++].cols = (int64_t)out;
        ops[count] = make_op(PP_WL_RELU, "relu", "Relu", n * out);
        ops[count++].cols = (int64_t)out;
        return count;
    }
    for (int l = 0; l < w->layers; l++) {
        char name[24];
        snprintf(name, sizeof name, "matmul_%d", l + 1);
        uint64_t k = l == 0 ? in : out;
        ops[count] = make_op(PP_WL_MATMUL, name, "MatMul", 2 * n * k * out);
        ops[count].layer = l;
        ops[count].k = (int64_t)k;
        ops[count++].cols = (int64_t)out;
    }
    return count;
}

uint64_t pp_workload_flops(const pp_workload *w) {
    pp_wl_op ops[PP_WL_MAX_OPS];
    size_t n = pp_wl_plan(w, ops);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += ops[i].flops;
    return total;
}

uint64_t pp_wl_input_bytes(const pp_workload *w) {
    return (uint64_t)w->nodes * (uint64_t)w->in_dim * sizeof(float);
}

uint64_t pp_wl_output_bytes(const pp_workload *w) {
    return (uint64_t)w->nodes * (uint64_t)w->out_dim * sizeof(float);
}

/* splitmix64: a tiny, well-mixed generator so that the same seed gives the
 * same model on every machine. */
static uint64_t next_u64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static float next_unit(uint64_t *state) {
    return (float)((double)(next_u64(state) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

/* Distinct streams for distinct purposes, so that e.g. the bias does not
 * repeat the first weights. */
static uint64_t stream_seed(uint64_t seed, uint64_t purpose) {
    uint64_t s = seed ^ (purpose * 0xd1b54a32d192ed03u);
    return next_u64(&s);
}

void pp_wl_weights(const pp_workload *w, int layer, float *out) {
    int64_t rows = layer == 0 ? w->in_dim : w->out_dim, cols = w->out_dim;
    uint64_t state = stream_seed(w->seed, 16 + (uint64_t)layer);
    float scale = (float)sqrt(3.0 / (double)rows);
    for (int64_t i = 0; i < rows * cols; i++)
        out[i] = scale * next_unit(&state);
}

void pp_wl_bias(const pp_workload *w, float *out) {
    uint64_t state = stream_seed(w->seed, 1);
    for (int64_t i = 0; i < w->out_dim; i++)
        out[i] = 0.1f * next_unit(&state);
}

void pp_wl_graph(const pp_workload *w, int32_t *src, int32_t *dst) {
    uint64_t state = stream_seed(w->seed ^ (uint64_t)w->nodes, 2);
    for (int64_t e = 0; e < w->edges; e++) {
        src[e] = (int32_t)(next_u64(&state) % (uint64_t)w->nodes);
        dst[e] = (int32_t)(next_u64(&state) % (uint64_t)w->nodes);
    }
}

void pp_wl_fill_input(const pp_workload *w, uint64_t seed, float *out) {
    uint64_t state = stream_seed(seed, 3);
    for (int64_t i = 0; i < w->nodes * w->in_dim; i++)
        out[i] = next_unit(&state);
}
