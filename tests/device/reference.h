/* reference.h — the dummy models computed the textbook way, from their
 * definitions (include/pipeprof/device.h), for checking what a backend
 * computed. Slow on purpose: no shared code with any backend's kernels. */
#ifndef PP_TEST_REFERENCE_H
#define PP_TEST_REFERENCE_H

#include <math.h>
#include <stdlib.h>

#include "device/workload.h"

/* c = a (n x k) times w (k x m), the textbook triple loop. */
static inline void naive_matmul(const float *a, const float *w, float *c, int64_t n, int64_t k,
                                int64_t m) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            double sum = 0.0;
            for (int64_t p = 0; p < k; p++)
                sum += (double)a[i * k + p] * (double)w[p * m + j];
            c[i * m + j] = (float)sum;
        }
}

/* Largest difference relative to the reference's largest magnitude. */
static inline double rel_error(const float *got, const float *want, int64_t count) {
    double worst = 0.0, scale = 1e-30;
    for (int64_t i = 0; i < count; i++)
        scale = fmax(scale, fabs((double)want[i]));
    for (int64_t i = 0; i < count; i++)
        worst = fmax(worst, fabs((double)got[i] - (double)want[i]));
    return worst / scale;
}

/* The matmul chain of w on input x (nodes x in_dim) into out (nodes x
 * out_dim). */
static inline void reference_matmul_chain(const pp_workload *w, const float *x, float *out) {
    int64_t n = w->nodes, widest = w->in_dim > w->out_dim ? w->in_dim : w->out_dim;
    float *a = malloc((size_t)(n * widest) * sizeof *a), *b = malloc((size_t)(n * widest) * sizeof *b);
    float *wt = malloc((size_t)(widest * w->out_dim) * sizeof *wt);
    for (int64_t i = 0; i < n * w->in_dim; i++)
        a[i] = x[i];
    for (int l = 0; l < w->layers; l++) {
        int64_t k = l == 0 ? w->in_dim : w->out_dim;
        pp_wl_weights(w, l, wt);
        naive_matmul(a, wt, b, n, k, w->out_dim);
        float *t = a;
        a = b, b = t;
    }
    for (int64_t i = 0; i < n * w->out_dim; i++)
        out[i] = a[i];
    free(a), free(b), free(wt);
}

/* h_i = ReLU(W^T mean(x_i, x_src for every edge src -> i) + b). */
static inline void reference_sage(const pp_workload *w, const float *x, float *out) {
    int64_t n = w->nodes, e = w->edges, in = w->in_dim, o = w->out_dim;
    size_t ne = e ? (size_t)e : 1;
    float *mean = malloc((size_t)(n * in) * sizeof *mean), *wt = malloc((size_t)(in * o) * sizeof *wt);
    float *bias = malloc((size_t)o * sizeof *bias);
    int32_t *src = malloc(ne * sizeof *src), *dst = malloc(ne * sizeof *dst);
    pp_wl_weights(w, 0, wt);
    pp_wl_bias(w, bias);
    pp_wl_graph(w, src, dst);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t f = 0; f < in; f++) {
            double sum = x[i * in + f];
            int count = 1;
            for (int64_t k = 0; k < e; k++) {
                if (dst[k] == i) {
                    sum += x[src[k] * in + f];
                    count++;
                }
            }
            mean[i * in + f] = (float)(sum / count);
        }
    }
    naive_matmul(mean, wt, out, n, in, o);
    for (int64_t i = 0; i < n * o; i++)
        out[i] = fmaxf(out[i] + bias[i % o], 0.0f);
    free(mean), free(wt), free(bias), free(src), free(dst);
}

#endif
