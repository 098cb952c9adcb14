/* The opencl backend's devices: "opencl:N" is the N-th device over every
 * platform the ICD loader offers, in platform order, as `pipeprof devices`
 * lists them. Opening one creates its context and aligns its clock
 * (cl_clock.c); the device's track name is its spec, "opencl:N", as openvino's are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/opencl/cl_internal.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

const char *pp_cl_status_text(cl_int rc, char buf[48]) {
    static const struct {
        cl_int rc;
        const char *name;
    } names[] = {
        {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
        {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
        {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
        {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
        {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
        {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
        {CL_INVALID_OPERATION, "CL_INVALID_OPERATION"},
        {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
        {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
        {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].rc == rc) {
            snprintf(buf, 48, "%s (%d)", names[i].name, (int)rc);
            return buf;
        }
    snprintf(buf, 48, "OpenCL error %d", (int)rc);
    return buf;
}

/* Calls fn(ctx, index, platform, device) for every device in list order;
 * returns how many there are, or a negative PP_E* code with err filled. */
typedef void (*each_fn)(void *ctx, int index, cl_platform_id p, cl_device_id d);
static int each_device(each_fn fn, void *ctx, pp_error *err) {
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(MAX_PLATFORMS, platforms, &np);
    if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the loader found no ICD */ || np == 0)
        return 0;
    char text[48];
    if (rc != CL_SUCCESS)
        return pp_set_error(err, PP_EIO, "opencl: cannot list platforms: %s",
                            pp_cl_status_text(rc, text));
    int index = 0;
    for (cl_uint p = 0; p < np && p < MAX_PLATFORMS; p++) {
        cl_device_id devices[MAX_DEVICES];
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devices, &nd) != CL_SUCCESS)
            continue; /* a platform without devices */
        for (cl_uint d = 0; d < nd && d < MAX_DEVICES; d++)
            fn(ctx, index++, platforms[p], devices[d]);
    }
    return index;
}

typedef struct find_ctx {
    int want;
    cl_platform_id platform;
    cl_device_id device;
    char have[192];
} find_ctx;

static void device_name(cl_device_id d, char *out, size_t size) {
    if (clGetDeviceInfo(d, CL_DEVICE_NAME, size, out, NULL) != CL_SUCCESS)
        snprintf(out, size, "?");
}

static void find_one(void *ctx, int index, cl_platform_id p, cl_device_id d) {
    find_ctx *f = ctx;
    if (index == f->want) {
        f->platform = p;
        f->device = d;
    }
    char name[64];
    device_name(d, name, sizeof name);
    size_t len = strlen(f->have);
    snprintf(f->have + len, sizeof f->have - len, "%s%d (%s)", index ? ", " : "", index, name);
}

int pp_cl_find(int index, cl_platform_id *platform, cl_device_id *device, pp_error *err) {
    find_ctx f = {.want = index};
    int n = each_device(find_one, &f, err);
    if (n < 0)
        return n;
    if (n == 0)
        return pp_set_error(err, PP_ENOTFOUND,
                            "opencl: no OpenCL device found (no platform driver is installed; "
                            "PoCL's is the Debian package pocl-opencl-icd)");
    if (index < 0 || index >= n)
        return pp_set_error(err, PP_ENOTFOUND, "opencl: no device %d (have: %s)", index, f.have);
    *platform = f.platform;
    *device = f.device;
    return PP_OK;
}

/* The device index a name gives: decimal digits only. */
static int parse_index(const char *name, int *index) {
    char *end;
    long v = strtol(name, &end, 10);
    if (*name < '0' || *name > '9' || *end || v > MAX_PLATFORMS * MAX_DEVICES)
        return 0;
    *index = (int)v;
    return 1;
}

static int cl_check(const char *name, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    int index;
    if (!parse_index(name, &index))
        return pp_set_error(err, PP_EINVAL,
                            "opencl: device \"%s\": expected a device number (opencl:0; "
                            "`pipeprof devices --backend opencl` lists them)", name);
    cl_platform_id p;
    cl_device_id d;
    return pp_cl_find(index, &p, &d, err);
}

static int cl_open(pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    int index = 0;
    parse_index(d->name, &index); /* checked */
    cl_dev *cd = calloc(1, sizeof *cd);
    if (!cd)
        return pp_set_error(err, PP_ENOMEM, "opencl: out of memory");
    int rc = pp_cl_find(index, &cd->platform, &cd->device, err);
    cl_int status = CL_SUCCESS;
    char text[48];
    if (rc == PP_OK) {
        cd->ctx = clCreateContext(NULL, 1, &cd->device, NULL, NULL, &status);
        if (status != CL_SUCCESS)
            rc = pp_set_error(err, PP_EIO, "opencl: device %d: cannot create a context: %s", index,
                              pp_cl_status_text(status, text));
    }
    if (rc == PP_OK)
        rc = pp_cl_clock_measure(cd, &cd->clock, err);
    if (rc != PP_OK) {
        if (cd->ctx)
            clReleaseContext(cd->ctx);
        free(cd);
        return rc;
    }
    device_name(cd->device, cd->device_name, sizeof cd->device_name);
    d->impl = cd;
    snprintf(d->name, sizeof d->name, "opencl:%d", index);
    snprintf(d->label, sizeof d->label, "opencl:%d (%.30s)", index, cd->device_name);
    return PP_OK;
}

static int cl_same(const pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)d, (void)opt, (void)err;
    return 1;
}

static void cl_close(pp_device *d) {
    cl_dev *cd = d->impl;
    clReleaseContext(cd->ctx);
    free(cd);
    d->impl = NULL;
}

static int cl_clock(pp_device *d, int fresh, pp_device_clock *out, pp_error *err) {
    cl_dev *cd = d->impl;
    if (!fresh) {
        *out = cd->clock;
        return PP_OK;
    }
    return pp_cl_clock_measure(cd, out, err);
}

typedef struct list_ctx {
    pp_device_list_fn fn;
    void *ctx;
} list_ctx;

static void list_one(void *ctx, int index, cl_platform_id p, cl_device_id d) {
    list_ctx *l = ctx;
    char spec[48], text[256], platform[64] = "?", name[64], version[160] = "?";
    cl_uint units = 0;
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof platform, platform, NULL);
    device_name(d, name, sizeof name);
    clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof version, version, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    snprintf(spec, sizeof spec, "opencl:%d", index);
    /* "OpenCL 3.0 PoCL HSTR: pthread-...": the version, not the build string */
    snprintf(text, sizeof text, "%s, platform \"%s\", %.15s, %u compute units", name, platform,
             version, (unsigned)units);
    l->fn(l->ctx, &(pp_device_info){.backend = "opencl", .spec = spec, .description = text});
}

static int cl_list(const pp_device_options *opt, pp_device_list_fn fn, void *ctx, pp_error *err) {
    (void)opt;
    list_ctx l = {.fn = fn, .ctx = ctx};
    int n = each_device(list_one, &l, err);
    return n < 0 ? n : PP_OK;
}

const pp_backend pp_backend_opencl = {
    .name = "opencl",
    .default_name = "0",
    .check = cl_check,
    .open = cl_open,
    .same = cl_same,
    .close = cl_close,
    .compile = pp_cl_compile,
    .free_compiled = pp_cl_free_compiled,
    .start = pp_cl_start,
    .clock = cl_clock,
    .list = cl_list,
    .run_device_end = pp_cl_run_device_end,
};
