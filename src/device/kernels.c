/* Compute kernels of the cpu backend. */
#include "device/kernels.h"

#include <cblas.h>
#include <pthread.h>
#include <string.h>

static pthread_once_t single_thread_once = PTHREAD_ONCE_INIT;

static void set_single_thread(void) {
    openblas_set_num_threads(1);
}

void pp_k_init(void) {
    pthread_once(&single_thread_once, set_single_thread);
}

/* OpenBLAS on the calling thread: about 10 times the rate of the plain-C
 * loop it replaced at the models' sizes (docs/backends.md, bench_blas). */
void pp_k_matmul(const float *a, const float *w, float *c, int64_t n, int64_t k, int64_t m) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0f, a, (int)k,
                w, (int)m, 0.0f, c, (int)m);
}

void pp_k_inv_count(const int32_t *dst, int64_t edges, int64_t n, float *inv_count) {
    for (int64_t i = 0; i < n; i++)
        inv_count[i] = 1.0f;
    for (int64_t e = 0; e < edges; e++)
        inv_count[dst[e]] += 1.0f;
    for (int64_t i = 0; i < n; i++)
        inv_count[i] = 1.0f / inv_count[i];
}

void pp_k_aggregate(const float *x, const int32_t *src, const int32_t *dst, int64_t edges,
                    const float *inv_count, float *out, int64_t n, int64_t d) {
    memcpy(out, x, (size_t)(n * d) * sizeof *out);
    for (int64_t e = 0; e < edges; e++) {
        float *restrict o = out + (int64_t)dst[e] * d;
        const float *restrict s = x + (int64_t)src[e] * d;
        for (int64_t j = 0; j < d; j++)
            o[j] += s[j];
    }
    for (int64_t i = 0; i < n; i++) {
        float *restrict o = out + i * d;
        float f = inv_count[i];
        for (int64_t j = 0; j < d; j++)
            o[j] *= f;
    }
}

void pp_k_bias(float *c, const float *bias, int64_t n, int64_t m) {
    for (int64_t i = 0; i < n; i++) {
        float *restrict ci = c + i * m;
        for (int64_t j = 0; j < m; j++)
            ci[j] += bias[j];
    }
}

/* On the bits: a value whose sign bit is set becomes +0, others stay. The
 * float compare `c > 0 ? c : 0` compiles to a branch (IEEE rules keep GCC
 * from using max), and on activations of random sign it mispredicts half
 * the time: 12x slower at the demo's sizes (300 us against 24 us). */
void pp_k_relu(float *c, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        uint32_t bits;
        memcpy(&bits, &c[i], sizeof bits);
        bits &= ~(uint32_t)((int32_t)bits >> 31);
        memcpy(&c[i], &bits, sizeof bits);
    }
}
