/* The dummy models as OpenVINO IR (v11): the XML text and the weights
 * buffer it points into, generated from the workload plan with the same
 * weights, bias and graph the cpu backend uses (workload.h).
 *
 *   matmul  input [rows, in] -> MatMul matmul_1 .. matmul_L -> Result
 *   sage    input -> Gather (x[src]) -> ScatterNDUpdate-15 (reduction sum,
 *           at dst, onto x: self + in-neighbours) -> Multiply "aggregate"
 *           (by 1 / (1 + in-degree)) -> MatMul "matmul" -> Add "bias" ->
 *           ReLU "relu" -> Result
 * Layers carry the plan's op names, so OpenVINO's profiling info names them
 * as the cpu backend's ops are named (where the plugin does not fuse them). */
#include "device/openvino/ov_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/kernels.h"
#include "device/workload.h"

typedef struct ir_writer {
    FILE *xml;
    unsigned char *bin;
    size_t bin_len, bin_cap;
    int failed;
} ir_writer;

/* A tensor's dims: -1 is a dynamic dimension. */
typedef struct dims {
    int rank;
    int64_t d[2];
} dims;

static void write_port(ir_writer *w, int id, const char *precision, dims s) {
    fprintf(w->xml, "<port id=\"%d\" precision=\"%s\">", id, precision);
    for (int i = 0; i < s.rank; i++)
        fprintf(w->xml, "<dim>%lld</dim>", (long long)s.d[i]);
    fputs("</port>\n", w->xml);
}

/* Appends `size` bytes to the weights and returns their offset (64-byte
 * aligned, as a mapped weights file would be). */
static size_t add_bytes(ir_writer *w, const void *data, size_t size) {
    size_t offset = (w->bin_len + 63) & ~(size_t)63;
    if (offset + size > w->bin_cap) {
        size_t cap = w->bin_cap ? w->bin_cap : 4096;
        while (cap < offset + size)
            cap *= 2;
        unsigned char *grown = realloc(w->bin, cap);
        if (!grown) {
            w->failed = 1;
            return 0;
        }
        w->bin = grown;
        w->bin_cap = cap;
    }
    memset(w->bin + w->bin_len, 0, offset - w->bin_len);
    memcpy(w->bin + offset, data, size);
    w->bin_len = offset + size;
    return offset;
}

static void dims_text(dims s, char *out, size_t len) {
    out[0] = '\0';
    for (int i = 0; i < s.rank; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%lld", i ? "," : "", (long long)s.d[i]);
}

/* A Const layer holding `data` (f32 or i32, by `precision`). */
static void write_const(ir_writer *w, int id, const char *name, const char *precision,
                        const void *data, dims s) {
    size_t count = 1;
    for (int i = 0; i < s.rank; i++)
        count *= (size_t)s.d[i];
    size_t size = count * 4;
    size_t offset = add_bytes(w, data, size);
    char shape[64];
    dims_text(s, shape, sizeof shape);
    fprintf(w->xml,
            "<layer id=\"%d\" name=\"%s\" type=\"Const\" version=\"opset1\">\n"
            "<data element_type=\"%s\" shape=\"%s\" offset=\"%zu\" size=\"%zu\"/>\n<output>\n",
            id, name, strcmp(precision, "FP32") == 0 ? "f32" : "i32", shape, offset, size);
    write_port(w, 0, precision, s);
    fputs("</output>\n</layer>\n", w->xml);
}

/* A compute layer: `nin` FP32/I32 inputs (ports 0..nin-1) and one FP32
 * output (port nin). `data` is its <data> attributes, or NULL. */
static void write_layer(ir_writer *w, int id, const char *name, const char *type,
                        const char *version, const char *data, int nin, const char *const *in_prec,
                        const dims *in, dims out) {
    fprintf(w->xml, "<layer id=\"%d\" name=\"%s\" type=\"%s\" version=\"%s\">\n", id, name, type,
            version);
    if (data)
        fprintf(w->xml, "<data %s/>\n", data);
    fputs("<input>\n", w->xml);
    for (int i = 0; i < nin; i++)
        write_port(w, i, in_prec ? in_prec[i] : "FP32", in[i]);
    fputs("</input>\n<output>\n", w->xml);
    write_port(w, nin, "FP32", out);
    fputs("</output>\n</layer>\n", w->xml);
}

static void write_parameter(ir_writer *w, dims s) {
    char shape[64];
    dims_text(s, shape, sizeof shape);
    fprintf(w->xml,
            "<layer id=\"0\" name=\"input\" type=\"Parameter\" version=\"opset1\">\n"
            "<data shape=\"%s\" element_type=\"f32\"/>\n<output>\n"
            "<port id=\"0\" precision=\"FP32\" names=\"input\">",
            shape);
    for (int i = 0; i < s.rank; i++)
        fprintf(w->xml, "<dim>%lld</dim>", (long long)s.d[i]);
    fputs("</port>\n</output>\n</layer>\n", w->xml);
}

static void write_result(ir_writer *w, int id, dims s) {
    fprintf(w->xml, "<layer id=\"%d\" name=\"output\" type=\"Result\" version=\"opset1\">\n<input>\n",
            id);
    write_port(w, 0, "FP32", s);
    fputs("</input>\n</layer>\n", w->xml);
}

typedef struct edge {
    int from, from_port, to, to_port;
} edge;

static void write_edges(ir_writer *w, const edge *e, size_t n) {
    fputs("</layers>\n<edges>\n", w->xml);
    for (size_t i = 0; i < n; i++)
        fprintf(w->xml, "<edge from-layer=\"%d\" from-port=\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n",
                e[i].from, e[i].from_port, e[i].to, e[i].to_port);
    fputs("</edges>\n</net>\n", w->xml);
}

static int write_matmul(ir_writer *w, const pp_workload *wl, int64_t rows) {
    edge edges[2 * PP_WL_MAX_LAYERS + 1];
    size_t ne = 0;
    dims x = {2, {rows, wl->in_dim}};
    write_parameter(w, x);
    float *weights = malloc((size_t)(wl->in_dim > wl->out_dim ? wl->in_dim : wl->out_dim) *
                            (size_t)wl->out_dim * sizeof(float));
    if (!weights)
        return PP_ENOMEM;
    int prev = 0, prev_port = 0;
    for (int l = 0; l < wl->layers; l++) {
        int64_t k = l == 0 ? wl->in_dim : wl->out_dim;
        char name[24];
        pp_wl_weights(wl, l, weights);
        snprintf(name, sizeof name, "weights_%d", l + 1);
        write_const(w, 2 * l + 1, name, "FP32", weights, (dims){2, {k, wl->out_dim}});
        snprintf(name, sizeof name, "matmul_%d", l + 1);
        dims out = {2, {rows, wl->out_dim}};
        write_layer(w, 2 * l + 2, name, "MatMul", "opset1",
                    "transpose_a=\"false\" transpose_b=\"false\"", 2, NULL,
                    (dims[]){{2, {rows, k}}, {2, {k, wl->out_dim}}}, out);
        edges[ne++] = (edge){prev, prev_port, 2 * l + 2, 0};
        edges[ne++] = (edge){2 * l + 1, 0, 2 * l + 2, 1};
        prev = 2 * l + 2;
        prev_port = 2;
    }
    free(weights);
    int result = 2 * wl->layers + 1;
    write_result(w, result, (dims){2, {rows, wl->out_dim}});
    edges[ne++] = (edge){prev, prev_port, result, 0};
    write_edges(w, edges, ne);
    return PP_OK;
}

/* Layer ids of the sage model. */
enum { S_INPUT, S_SRC, S_AXIS, S_GATHER, S_DST, S_SCATTER, S_INV, S_AGG, S_W, S_MATMUL, S_B,
       S_BIAS, S_RELU, S_RESULT };

static int write_sage(ir_writer *w, const pp_workload *wl) {
    int64_t n = wl->nodes, e = wl->edges, in = wl->in_dim, out = wl->out_dim;
    size_t ne_alloc = e ? (size_t)e : 1;
    int32_t *src = malloc(ne_alloc * sizeof *src), *dst = malloc(ne_alloc * sizeof *dst);
    float *inv = malloc((size_t)n * sizeof *inv), *wt = malloc((size_t)(in * out) * sizeof *wt);
    float *bias = malloc((size_t)out * sizeof *bias);
    int rc = src && dst && inv && wt && bias ? PP_OK : PP_ENOMEM;
    if (rc == PP_OK) {
        pp_wl_graph(wl, src, dst);
        pp_k_inv_count(dst, e, n, inv);
        pp_wl_weights(wl, 0, wt);
        pp_wl_bias(wl, bias);
        dims x = {2, {n, in}}, y = {2, {n, out}};
        edge edges[16];
        size_t ne = 0;
        write_parameter(w, x);
        int agg_from = S_INPUT, agg_port = 0;
        if (e > 0) { /* no edges: the mean is the node itself */
            write_const(w, S_SRC, "src", "I32", src, (dims){1, {e}});
            int32_t axis = 0;
            write_const(w, S_AXIS, "axis", "I32", &axis, (dims){0, {0}});
            write_layer(w, S_GATHER, "gather", "Gather", "opset8", "batch_dims=\"0\"", 3,
                        (const char *const[]){"FP32", "I32", "I32"},
                        (dims[]){x, {1, {e}}, {0, {0}}}, (dims){2, {e, in}});
            write_const(w, S_DST, "dst", "I32", dst, (dims){2, {e, 1}});
            write_layer(w, S_SCATTER, "scatter_add", "ScatterNDUpdate", "opset15",
                        "reduction=\"sum\"", 3, (const char *const[]){"FP32", "I32", "FP32"},
                        (dims[]){x, {2, {e, 1}}, {2, {e, in}}}, x);
            edges[ne++] = (edge){S_INPUT, 0, S_GATHER, 0};
            edges[ne++] = (edge){S_SRC, 0, S_GATHER, 1};
            edges[ne++] = (edge){S_AXIS, 0, S_GATHER, 2};
            edges[ne++] = (edge){S_INPUT, 0, S_SCATTER, 0};
            edges[ne++] = (edge){S_DST, 0, S_SCATTER, 1};
            edges[ne++] = (edge){S_GATHER, 3, S_SCATTER, 2};
            agg_from = S_SCATTER;
            agg_port = 3;
        }
        write_const(w, S_INV, "inv_count", "FP32", inv, (dims){2, {n, 1}});
        write_layer(w, S_AGG, "aggregate", "Multiply", "opset1", "auto_broadcast=\"numpy\"", 2, NULL,
                    (dims[]){x, {2, {n, 1}}}, x);
        write_const(w, S_W, "weights", "FP32", wt, (dims){2, {in, out}});
        write_layer(w, S_MATMUL, "matmul", "MatMul", "opset1",
                    "transpose_a=\"false\" transpose_b=\"false\"", 2, NULL,
                    (dims[]){x, {2, {in, out}}}, y);
        write_const(w, S_B, "bias_row", "FP32", bias, (dims){2, {1, out}});
        write_layer(w, S_BIAS, "bias", "Add", "opset1", "auto_broadcast=\"numpy\"", 2, NULL,
                    (dims[]){y, {2, {1, out}}}, y);
        write_layer(w, S_RELU, "relu", "ReLU", "opset1", NULL, 1, NULL, &y, y);
        write_result(w, S_RESULT, y);
        edges[ne++] = (edge){agg_from, agg_port, S_AGG, 0};
        edges[ne++] = (edge){S_INV, 0, S_AGG, 1};
        edges[ne++] = (edge){S_AGG, 2, S_MATMUL, 0};
        edges[ne++] = (edge){S_W, 0, S_MATMUL, 1};
        edges[ne++] = (edge){S_MATMUL, 2, S_BIAS, 0};
        edges[ne++] = (edge){S_B, 0, S_BIAS, 1};
        edges[ne++] = (edge){S_BIAS, 2, S_RELU, 0};
        edges[ne++] = (edge){S_RELU, 1, S_RESULT, 0};
        write_edges(w, edges, ne);
    }
    free(src), free(dst), free(inv), free(wt), free(bias);
    return rc;
}

int pp_ov_ir_build(const pp_workload *wl, int dynamic_rows, pp_ov_ir *out, pp_error *err) {
    if (dynamic_rows && wl->kind != PP_WORKLOAD_MATMUL)
        return pp_set_error(err, PP_EINVAL, "openvino: only the matmul model has dynamic rows");
    memset(out, 0, sizeof *out);
    ir_writer w = {0};
    w.xml = open_memstream(&out->xml, &out->xml_len);
    if (!w.xml)
        return pp_set_error(err, PP_ENOMEM, "openvino: out of memory building the model");
    fprintf(w.xml, "<?xml version=\"1.0\"?>\n<net name=\"%s\" version=\"11\">\n<layers>\n",
            pp_workload_kind_name(wl->kind));
    int rc = wl->kind == PP_WORKLOAD_SAGE ? write_sage(&w, wl)
                                          : write_matmul(&w, wl, dynamic_rows ? -1 : wl->nodes);
    if (fclose(w.xml) != 0 || w.failed)
        rc = PP_ENOMEM;
    out->bin = w.bin;
    out->bin_len = w.bin_len;
    if (rc != PP_OK) {
        pp_ov_ir_free(out);
        return pp_set_error(err, rc, "openvino: out of memory building the %s model",
                            pp_workload_kind_name(wl->kind));
    }
    return PP_OK;
}

void pp_ov_ir_free(pp_ov_ir *ir) {
    free(ir->xml);
    free(ir->bin);
    memset(ir, 0, sizeof *ir);
}
