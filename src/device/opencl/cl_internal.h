/* cl_internal.h — the opencl backend's shared structures.
 *
 * cl_device.c enumerates devices, opens them (a context each) and aligns
 * their clocks (cl_clock.c); cl_model.c builds the workload's kernels and
 * runs requests. Every OpenCL call goes through the ICD loader, so one build
 * runs on whatever platforms the machine has (PoCL on CPUs, a GPU's driver). */
#ifndef PP_DEVICE_OPENCL_INTERNAL_H
#define PP_DEVICE_OPENCL_INTERNAL_H

#include <CL/cl.h>

#include "device/backend.h"

typedef struct cl_dev {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    char platform_name[64], device_name[64];
    pp_device_clock clock; /* device ns + offset_ns = session ns */
} cl_dev;

/* Finds device `index` in the order of pp_device_list (platform by
 * platform): PP_ENOTFOUND when there is none, with a message listing those
 * that exist. */
int pp_cl_find(int index, cl_platform_id *platform, cl_device_id *device, pp_error *err);

/* Measures the offset from d's device clock to the session clock by paired
 * reads (cl_clock.c) into *out; its method is a static string. */
int pp_cl_clock_measure(cl_dev *d, pp_device_clock *out, pp_error *err);

/* "CL_OUT_OF_RESOURCES (-5)": for messages. */
const char *pp_cl_status_text(cl_int rc, char buf[48]);

int pp_cl_compile(pp_compiled *c, pp_error *err);
void pp_cl_free_compiled(pp_compiled *c);
int pp_cl_start(pp_request *r);
/* Marks on a device stream (backend.h): the mapped END of the last run's
 * last command, unshifted; PP_ENOTFOUND after a run at level 0. */
int pp_cl_run_device_end(const pp_request *r, int64_t *end_ns);

#endif
