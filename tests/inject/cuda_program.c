/* A small CUDA pipeline that knows nothing of pipeprof, for
 * tests/inject/test_cupti_gpu.sh: for each of BATCHES batches, inside the
 * NVTX range "Stage1/batch<b>", each of two streams gets a 4 KiB host-to-
 * device copy, a kernel "spin" and a 4 KiB memset; then both streams are
 * synchronized.
 *
 * It uses the driver API with a PTX kernel (JIT-compiled by the driver), so
 * it builds from the CUDA headers alone, with no nvcc; libcuda.so.1 is
 * opened at run time. Exit 77 with the reason when there is no driver or
 * no GPU: the test then skips. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

#define BATCHES 4
#define STREAMS 2
#define BYTES 4096
#define SPIN 200000u

/* out[0] = the sum of 0..n-1 (mod 2^32), a loop long enough to be seen. */
static const char ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry spin(.param .u64 out, .param .u32 n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<5>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, 0;\n"
    "  mov.u32 %r3, 0;\n"
    "LOOP:\n"
    "  add.u32 %r3, %r3, %r2;\n"
    "  add.u32 %r2, %r2, 1;\n"
    "  setp.lt.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra LOOP;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  st.global.u32 [%rd2], %r3;\n"
    "  ret;\n"
    "}\n";

/* The driver's entry points, by their exported names (cuda.h maps the
 * unversioned names to these) and cudaTypedefs.h's types. */
static struct {
    PFN_cuInit_v2000 init;
    PFN_cuDeviceGetCount_v2000 device_count;
    PFN_cuDeviceGet_v2000 device_get;
    PFN_cuDevicePrimaryCtxRetain_v7000 ctx_retain;
    PFN_cuCtxSetCurrent_v4000 ctx_set;
    PFN_cuModuleLoadData_v2000 module_load;
    PFN_cuModuleGetFunction_v2000 function_get;
    PFN_cuStreamCreate_v2000 stream_create;
    PFN_cuStreamSynchronize_v2000 stream_sync;
    PFN_cuMemAlloc_v3020 alloc;
    PFN_cuMemcpyHtoDAsync_v3020 copy;
    PFN_cuMemsetD32Async_v3020 set;
    PFN_cuLaunchKernel_v4000 launch;
    PFN_cuGetErrorString_v6000 error_string;
} cu;

static void *need(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        printf("skipped: libcuda.so.1 has no %s\n", name);
        exit(77);
    }
    return p;
}

static void check(CUresult rc, const char *what) {
    if (rc == CUDA_SUCCESS)
        return;
    const char *why = NULL;
    if (cu.error_string)
        cu.error_string(rc, &why);
    fprintf(stderr, "cuda_program: %s: %s (%d)\n", what, why ? why : "?", (int)rc);
    exit(1);
}

static void open_driver(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        printf("skipped: no CUDA driver (dlopen libcuda.so.1: %s)\n", dlerror());
        exit(77);
    }
    *(void **)&cu.init = need(lib, "cuInit");
    *(void **)&cu.device_count = need(lib, "cuDeviceGetCount");
    *(void **)&cu.device_get = need(lib, "cuDeviceGet");
    *(void **)&cu.ctx_retain = need(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.ctx_set = need(lib, "cuCtxSetCurrent");
    *(void **)&cu.module_load = need(lib, "cuModuleLoadData");
    *(void **)&cu.function_get = need(lib, "cuModuleGetFunction");
    *(void **)&cu.stream_create = need(lib, "cuStreamCreate");
    *(void **)&cu.stream_sync = need(lib, "cuStreamSynchronize");
    *(void **)&cu.alloc = need(lib, "cuMemAlloc_v2");
    *(void **)&cu.copy = need(lib, "cuMemcpyHtoDAsync_v2");
    *(void **)&cu.set = need(lib, "cuMemsetD32Async");
    *(void **)&cu.launch = need(lib, "cuLaunchKernel");
    *(void **)&cu.error_string = need(lib, "cuGetErrorString");
}

int main(void) {
    open_driver();
    CUresult rc = cu.init(0);
    int count = 0;
    if (rc != CUDA_SUCCESS || cu.device_count(&count) != CUDA_SUCCESS || count == 0) {
        printf("skipped: the CUDA driver sees no GPU (cuInit: %d, devices: %d)\n", (int)rc, count);
        return 77;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction spin;
    check(cu.device_get(&dev, 0), "cuDeviceGet");
    check(cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cu.ctx_set(ctx), "cuCtxSetCurrent");
    check(cu.module_load(&mod, ptx), "cuModuleLoadData (PTX)");
    check(cu.function_get(&spin, mod, "spin"), "cuModuleGetFunction");

    static unsigned char host[BYTES];
    CUstream streams[STREAMS];
    CUdeviceptr buf[STREAMS], out[STREAMS];
    for (int s = 0; s < STREAMS; s++) {
        check(cu.stream_create(&streams[s], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        check(cu.alloc(&buf[s], BYTES), "cuMemAlloc");
        check(cu.alloc(&out[s], sizeof(unsigned)), "cuMemAlloc");
    }
    for (int b = 0; b < BATCHES; b++) {
        char name[32];
        snprintf(name, sizeof name, "Stage1/batch%d", b);
        nvtxRangePushA(name);
        for (int s = 0; s < STREAMS; s++) {
            unsigned n = SPIN;
            void *args[] = {&out[s], &n};
            check(cu.copy(buf[s], host, BYTES, streams[s]), "cuMemcpyHtoDAsync");
            check(cu.launch(spin, 1, 1, 1, 1, 1, 1, 0, streams[s], args, NULL), "cuLaunchKernel");
            check(cu.set(buf[s], 0, BYTES / 4, streams[s]), "cuMemsetD32Async");
        }
        for (int s = 0; s < STREAMS; s++)
            check(cu.stream_sync(streams[s]), "cuStreamSynchronize");
        nvtxRangePop();
    }
    printf("cuda_program: %d batches on %d streams\n", BATCHES, STREAMS);
    return 0;
}
