/* kernels.h — the cpu backend's compute kernels: plain C loops over FP32
 * row-major tensors, written so that the compiler vectorizes the inner loop.
 * docs/backends.md has the measured rates (and why not a BLAS). */
#ifndef PP_DEVICE_KERNELS_H
#define PP_DEVICE_KERNELS_H

#include <stdint.h>

/* c (n x m) = a (n x k) times w (k x m). */
void pp_k_matmul(const float *a, const float *w, float *c, int64_t n, int64_t k, int64_t m);
/* out (n x d): row i = mean of x's row i and of x's rows src[e] over the
 * edges e with dst[e] == i. */
void pp_k_aggregate(const float *x, const int32_t *src, const int32_t *dst, int64_t edges,
                    const float *inv_count, float *out, int64_t n, int64_t d);
/* 1 / (1 + in-degree) per node, for pp_k_aggregate. */
void pp_k_inv_count(const int32_t *dst, int64_t edges, int64_t n, float *inv_count);
/* Adds bias (m values) to every row of c (n x m). */
void pp_k_bias(float *c, const float *bias, int64_t n, int64_t m);
/* c = max(c, 0), elementwise over `count` values. */
void pp_k_relu(float *c, int64_t count);

#endif
