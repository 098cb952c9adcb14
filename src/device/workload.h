/* workload.h — the dummy models as data: their op list (what each backend
 * runs or models) and their deterministic weights and graph.
 *
 * Every backend runs the same plan: the cpu backend computes it with the
 * kernels of kernels.h, the sim backend turns each op's FLOPs into modeled
 * time. Weights depend only on (seed, layer, dims), never on `nodes`, so the
 * requests of a data-parallel stage hold the same model over different rows. */
#ifndef PP_DEVICE_WORKLOAD_H
#define PP_DEVICE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof/device.h"

#define PP_WL_MAX_LAYERS 64
#define PP_WL_MAX_OPS (PP_WL_MAX_LAYERS + 3)

typedef enum pp_wl_op_kind {
    PP_WL_AGGREGATE = 0, /* mean over self and in-neighbours: nodes x cols -> same */
    PP_WL_MATMUL = 1,    /* nodes x rows_w times rows_w x cols -> nodes x cols */
    PP_WL_BIAS = 2,      /* adds the bias row */
    PP_WL_RELU = 3
} pp_wl_op_kind;

typedef struct pp_wl_op {
    pp_wl_op_kind kind;
    char name[24];    /* "matmul_1" */
    const char *type; /* "MatMul" */
    int layer;        /* MatMul: which weight matrix */
    int64_t k;        /* MatMul: inner dimension */
    int64_t cols;     /* columns of the op's output */
    uint64_t flops;
} pp_wl_op;

/* Fills ops (room for PP_WL_MAX_OPS) with the plan of a checked workload and
 * returns how many. */
size_t pp_wl_plan(const pp_workload *w, pp_wl_op *ops);

/* Bytes of the input and output feature tensors (FP32). */
uint64_t pp_wl_input_bytes(const pp_workload *w);
uint64_t pp_wl_output_bytes(const pp_workload *w);

/* Weight matrix `layer` (rows x cols, row-major): layer 0 is in_dim x out_dim,
 * later ones out_dim x out_dim. Values are uniform in +-sqrt(3/rows), which
 * keeps activations near unit scale through the chain. */
void pp_wl_weights(const pp_workload *w, int layer, float *out);
/* The sage bias row (out_dim values, uniform in +-0.1). */
void pp_wl_bias(const pp_workload *w, float *out);
/* The sage graph: `edges` (src, dst) pairs over [0, nodes). */
void pp_wl_graph(const pp_workload *w, int32_t *src, int32_t *dst);
/* An input tensor (nodes x in_dim, uniform in +-1) from `seed`. */
void pp_wl_fill_input(const pp_workload *w, uint64_t seed, float *out);

#endif
