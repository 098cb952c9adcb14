/* Clock alignment of an OpenCL device: the offset that maps its profiling
 * timestamps (device nanoseconds) into the session clock (pp_now).
 *
 * A paired read brackets one device timestamp with two session reads h0, h1:
 * the device stamped somewhere inside [h0, h1], so offset = (h0 + h1) / 2 -
 * device is off by at most (h1 - h0) / 2. The device timestamp comes from
 * clGetDeviceAndHostTimer where the platform has it (OpenCL 2.1; its host
 * half is not used, since that host clock need not be ours), else from the
 * QUEUED timestamp of a marker command, which the runtime takes inside the
 * enqueue call (PoCL 3.1 answers CL_INVALID_OPERATION to the timer). Of
 * ROUNDS pairs the tightest one is kept; its half-width is the stated error
 * bound. The bound holds when it was measured: bench/bench_opencl measures
 * how far the offset drifts over a run. */
#include "core/error.h"
#include "device/opencl/cl_internal.h"

#define ROUNDS 64

typedef struct pair {
    int64_t offset, error;
} pair;

static void keep_tightest(pair *best, int64_t h0, int64_t h1, cl_ulong dev) {
    int64_t half = (h1 - h0 + 1) / 2;
    if (best->error < 0 || half < best->error)
        *best = (pair){.offset = h0 + (h1 - h0) / 2 - (int64_t)dev, .error = half};
}

static int by_timer(cl_dev *d, pair *best) {
    for (int i = 0; i < ROUNDS; i++) {
        cl_ulong dev, host;
        int64_t h0 = pp_now();
        cl_int rc = clGetDeviceAndHostTimer(d->device, &dev, &host);
        int64_t h1 = pp_now();
        if (rc != CL_SUCCESS)
            return 0;
        keep_tightest(best, h0, h1, dev);
    }
    return 1;
}

static int by_marker(cl_dev *d, pair *best, pp_error *err) {
    char text[48];
    cl_int rc;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(d->ctx, d->device, props, &rc);
    if (rc != CL_SUCCESS)
        return pp_set_error(err, PP_EIO, "opencl: cannot create a profiling queue: %s",
                            pp_cl_status_text(rc, text));
    for (int i = 0; i < ROUNDS && rc == CL_SUCCESS; i++) {
        cl_event ev;
        cl_ulong queued = 0;
        int64_t h0 = pp_now();
        rc = clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
        int64_t h1 = pp_now();
        if (rc != CL_SUCCESS)
            break;
        rc = clWaitForEvents(1, &ev);
        if (rc == CL_SUCCESS)
            rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued,
                                         NULL);
        clReleaseEvent(ev);
        if (rc == CL_SUCCESS)
            keep_tightest(best, h0, h1, queued);
    }
    clReleaseCommandQueue(q);
    if (rc != CL_SUCCESS)
        return pp_set_error(err, PP_EIO, "opencl: cannot time a marker command: %s",
                            pp_cl_status_text(rc, text));
    return PP_OK;
}

int pp_cl_clock_measure(cl_dev *d, pp_device_clock *out, pp_error *err) {
    pair best = {.error = -1};
    const char *method = "clGetDeviceAndHostTimer";
    if (!by_timer(d, &best)) {
        int rc = by_marker(d, &best, err);
        if (rc != PP_OK)
            return rc;
        method = "marker QUEUED";
    }
    *out = (pp_device_clock){.method = method, .offset_ns = best.offset, .error_ns = best.error};
    return PP_OK;
}
