/* Compute kernels of the cpu backend. */
#include "device/kernels.h"

#include <string.h>

/* Four rows at a time: each loaded row of w feeds four accumulating rows of
 * c, which roughly doubles the rate of the plain i-p-j loop (memory traffic
 * on w is what limits it). */
void pp_k_matmul(const float *a, const float *w, float *c, int64_t n, int64_t k, int64_t m) {
    memset(c, 0, (size_t)(n * m) * sizeof *c);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float *restrict c0 = c + i * m, *restrict c1 = c0 + m, *restrict c2 = c1 + m,
                        *restrict c3 = c2 + m;
        const float *a0 = a + i * k;
        for (int64_t p = 0; p < k; p++) {
            const float *restrict wp = w + p * m;
            float v0 = a0[p], v1 = a0[k + p], v2 = a0[2 * k + p], v3 = a0[3 * k + p];
            for (int64_t j = 0; j < m; j++) {
                float x = wp[j];
                c0[j] += v0 * x;
                c1[j] += v1 * x;
                c2[j] += v2 * x;
                c3[j] += v3 * x;
            }
        }
    }
    for (; i < n; i++) {
        float *restrict ci = c + i * m;
        for (int64_t p = 0; p < k; p++) {
            const float *restrict wp = w + p * m;
            float v = a[i * k + p];
            for (int64_t j = 0; j < m; j++)
                ci[j] += v * wp[j];
        }
    }
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

void pp_k_relu(float *c, int64_t count) {
    for (int64_t i = 0; i < count; i++)
        c[i] = c[i] > 0.0f ? c[i] : 0.0f;
}
