/* kernels.cl — the workload plan's ops as OpenCL C 1.2 kernels, one kernel
 * per op kind (src/device/workload.h), over FP32 row-major tensors. The
 * opencl backend builds this once per compiled model and enqueues one
 * kernel per plan op, so each op is one command with its own device
 * timestamps. Results match the cpu backend's up to summation order. */

/* c (n x m) = a (n x k) times w (k x m): one work-item per output element. */
__kernel void pp_matmul(__global const float *a, __global const float *w, __global float *c,
                        int k, int m) {
    size_t i = get_global_id(0), j = get_global_id(1);
    float acc = 0.0f;
    for (int p = 0; p < k; p++)
        acc += a[i * (size_t)k + p] * w[(size_t)p * m + j];
    c[i * (size_t)m + j] = acc;
}

/* out row i = (x row i + sum of x rows src over i's in-edges) * inv_count[i];
 * the in-edges of node i are col[row_start[i] .. row_start[i+1]). */
__kernel void pp_aggregate(__global const float *x, __global const int *row_start,
                           __global const int *col, __global const float *inv_count,
                           __global float *out, int d) {
    size_t i = get_global_id(0), j = get_global_id(1);
    float acc = x[i * (size_t)d + j];
    for (int e = row_start[i]; e < row_start[i + 1]; e++)
        acc += x[(size_t)col[e] * d + j];
    out[i * (size_t)d + j] = acc * inv_count[i];
}

/* c row i += bias: one work-item per element. */
__kernel void pp_bias(__global float *c, __global const float *bias, int m) {
    size_t i = get_global_id(0), j = get_global_id(1);
    c[i * (size_t)m + j] += bias[j];
}

__kernel void pp_relu(__global float *c) {
    size_t i = get_global_id(0);
    c[i] = fmax(c[i], 0.0f);
}
