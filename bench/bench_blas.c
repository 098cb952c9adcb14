/* bench_blas — the cpu backend's MatMul kernel, OpenBLAS's cblas_sgemm
 * (Debian's libopenblas, pp_k_matmul), against the plain-C kernel the backend
 * had before it, which is kept here: the figures are why the backend uses
 * OpenBLAS (docs/backends.md), and rerunning this shows whether they still
 * hold on a new machine or compiler.
 *
 * Sizes are the MatMuls the cpu models run: the demo pipeline's (1024-node
 * batches, 64 features: GraphPrep 1024x64x64, the cpu half of Embedding
 * 512x64x64, Classifier 1024x64x16) and the seeds' GNN test cases (1k..10k
 * nodes, 500 features). Both run the way the backend runs a request: one
 * compute on the calling thread. OpenBLAS is therefore held to one thread
 * (pp_k_init: openblas_set_num_threads(1)), as in the backend: it runs one
 * worker per request slot already, so BLAS threads would oversubscribe the
 * cores, and hw_ns is the worker's own CPU time (CLOCK_THREAD_CPUTIME_ID),
 * which would not see work done on OpenBLAS's threads.
 *
 * Each figure is the median over samples of the thread CPU time of one call
 * (CPU time, like hw_ns, is not inflated by other processes taking the core);
 * the two kernels alternate sample by sample. The results are compared first.
 * Prints per size (below 1: OpenBLAS is faster):
 *   BENCH matmul_<n>x<k>x<m> value=<blas us> unit=us baseline=plain_c:<us> ratio=<blas/plain> */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include "device/kernels.h"

#define SAMPLES 9
#define SAMPLE_FLOPS 4e7 /* calls per sample: at least this much work, so clock reads do not count */

typedef struct mm_size {
    const char *what;
    int64_t n, k, m;
} mm_size;

static const mm_size sizes[] = {
    {"demo Embedding, cpu share", 512, 64, 64},
    {"demo GraphPrep", 1024, 64, 64},
    {"demo Classifier", 1024, 64, 16},
    {"seed 1k nodes, 500 features", 1000, 500, 500},
    {"seed 10k nodes, 500 -> 64", 10000, 500, 64},
};

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The plain-C kernel: four rows at a time, so that each loaded row of w
 * feeds four accumulating rows of c (twice the rate of the i-p-j loop); the
 * compiler vectorizes the inner loop. */
static void plain_matmul(const float *a, const float *w, float *c, int64_t n, int64_t k,
                         int64_t m) {
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

typedef void (*matmul_fn)(const float *, const float *, float *, int64_t, int64_t, int64_t);

/* Thread CPU time of one call, averaged over `calls`. */
static double sample_us(matmul_fn f, const mm_size *s, const float *a, const float *w, float *c,
                        int calls) {
    int64_t t0 = thread_cpu_ns();
    for (int i = 0; i < calls; i++)
        f(a, w, c, s->n, s->k, s->m);
    return (double)(thread_cpu_ns() - t0) / calls / 1e3;
}

static void fill(float *v, int64_t count, unsigned seed) {
    for (int64_t i = 0; i < count; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

/* 1 when the two results agree to FP32 rounding of a k-term sum. */
static int same_result(const float *x, const float *y, int64_t count, int64_t k) {
    double tol = 1e-5 * (double)k;
    for (int64_t i = 0; i < count; i++)
        if (fabs((double)x[i] - (double)y[i]) > tol)
            return 0;
    return 1;
}

int main(void) {
    pp_k_init();
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        const mm_size *s = &sizes[z];
        float *a = malloc((size_t)(s->n * s->k) * sizeof *a);
        float *w = malloc((size_t)(s->k * s->m) * sizeof *w);
        float *c_plain = malloc((size_t)(s->n * s->m) * sizeof *c_plain);
        float *c_blas = malloc((size_t)(s->n * s->m) * sizeof *c_blas);
        if (!a || !w || !c_plain || !c_blas) {
            fprintf(stderr, "bench_blas: out of memory\n");
            return 1;
        }
        fill(a, s->n * s->k, 1);
        fill(w, s->k * s->m, 2);
        plain_matmul(a, w, c_plain, s->n, s->k, s->m);
        pp_k_matmul(a, w, c_blas, s->n, s->k, s->m);
        if (!same_result(c_plain, c_blas, s->n * s->m, s->k)) {
            fprintf(stderr, "bench_blas: %lldx%lldx%lld: the kernels disagree\n", (long long)s->n,
                    (long long)s->k, (long long)s->m);
            return 1;
        }
        double flops = 2.0 * (double)(s->n * s->k * s->m);
        int calls = flops >= SAMPLE_FLOPS ? 1 : (int)ceil(SAMPLE_FLOPS / flops);
        double plain[SAMPLES], blas[SAMPLES];
        for (int i = 0; i < SAMPLES; i++) {
            plain[i] = sample_us(plain_matmul, s, a, w, c_plain, calls);
            blas[i] = sample_us(pp_k_matmul, s, a, w, c_blas, calls);
        }
        double p = bench_median(plain, SAMPLES), b = bench_median(blas, SAMPLES);
        printf("BENCH matmul_%lldx%lldx%lld value=%.1f unit=us baseline=plain_c:%.1f ratio=%.3f\n",
               (long long)s->n, (long long)s->k, (long long)s->m, b, p, b / p);
        fprintf(stderr, "bench_blas: %s: plain C %.1f GFLOP/s, OpenBLAS %.1f GFLOP/s\n", s->what,
                flops / p / 1e3, flops / b / 1e3);
        free(a);
        free(w);
        free(c_plain);
        free(c_blas);
    }
    return 0;
}
