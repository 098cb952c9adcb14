/* kernels.h — the cpu backend's compute kernels over FP32 row-major tensors:
 * MatMul is OpenBLAS's sgemm, the rest plain C loops that the compiler
 * vectorizes. Every kernel runs on the calling thread only, so that a
 * request's compute is its worker thread's CPU time (docs/backends.md). */
#ifndef PP_DEVICE_KERNELS_H
#define PP_DEVICE_KERNELS_H

#include <stdint.h>

/* Holds OpenBLAS to one thread, the caller's, process wide: the backend runs
 * one worker thread per request already, and a request's hardware time is
 * its worker's CPU time, which would miss work on BLAS threads. Call before
 * the first pp_k_matmul; later calls do nothing. */
void pp_k_init(void);
/* c (n x m) = a (n x k) times w (k x m); n, k, m < 2^31. */
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
