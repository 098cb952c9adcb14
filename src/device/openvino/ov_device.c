/* The openvino backend's devices: one ov_core per process, shared by every
 * open device and held while one is open (a check or a listing holds it for
 * the call); device names checked against what OpenVINO lists; track names
 * that are the whole spec ("openvino:CPU"), so that OpenVINO's CPU never
 * shares a row with the cpu backend's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/openvino/ov_internal.h"

/* Device names fit the track name "openvino:<name>" (pp_device.name). */
#define MAX_NAME (sizeof ((pp_device *)0)->name - sizeof "openvino:")

static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static ov_core_t *core;
static int core_refs;

/* OpenVINO's last error message, cut to its last line (the first lines
 * name C++ source files). */
const char *pp_ov_last_error(ov_status_e st) {
    const char *msg = ov_get_last_err_msg();
    if (!msg || !*msg)
        return ov_get_error_info(st);
    const char *end = msg + strlen(msg);
    while (end > msg && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *line = end;
    while (line > msg && line[-1] != '\n')
        line--;
    static _Thread_local char text[400];
    snprintf(text, sizeof text, "%.*s", (int)(end - line), line);
    return text;
}

static int core_acquire(ov_core_t **out, pp_error *err) {
    pthread_mutex_lock(&core_lock);
    ov_status_e st = OK;
    if (!core)
        st = ov_core_create(&core);
    if (st == OK)
        core_refs++;
    *out = core;
    pthread_mutex_unlock(&core_lock);
    if (st != OK)
        return pp_set_error(err, PP_EIO, "openvino: cannot create the runtime core: %s",
                            pp_ov_last_error(st));
    return PP_OK;
}

static void core_release(void) {
    pthread_mutex_lock(&core_lock);
    if (--core_refs == 0) {
        ov_core_free(core);
        core = NULL;
    }
    pthread_mutex_unlock(&core_lock);
}

/* Whether `name` ("GPU", "GPU.0") is one of the available devices, or the
 * family of one ("GPU" when OpenVINO lists "GPU.0"). */
static int available(const ov_available_devices_t *devs, const char *name, size_t len) {
    for (size_t i = 0; i < devs->size; i++) {
        const char *d = devs->devices[i];
        if (strncmp(d, name, len) == 0 && (d[len] == '\0' || d[len] == '.'))
            return 1;
    }
    return 0;
}

/* Checks a device name: a plain device must be available; a virtual one
 * (AUTO, HETERO, MULTI, BATCH, with or without ":A,B") must list available
 * devices. Fills `missing` with the first name that is not there. */
static int name_ok(const ov_available_devices_t *devs, const char *name, char *missing, size_t len) {
    static const char *const virtual[] = {"AUTO", "HETERO", "MULTI", "BATCH"};
    const char *list = NULL;
    for (size_t i = 0; i < sizeof virtual / sizeof virtual[0]; i++) {
        size_t n = strlen(virtual[i]);
        if (strncmp(name, virtual[i], n) == 0 && (name[n] == '\0' || name[n] == ':'))
            list = name + n;
    }
    if (!list) {
        snprintf(missing, len, "%s", name);
        return available(devs, name, strlen(name));
    }
    if (!*list) /* "AUTO": OpenVINO picks among what it has */
        return 1;
    for (list++;; list += strcspn(list, ",") + 1) {
        size_t n = strcspn(list, ",");
        if (n == 0 || !available(devs, list, n)) {
            snprintf(missing, len, "%.*s", (int)n, list);
            return 0;
        }
        if (!list[n])
            return 1;
    }
}

/* Acquires the core and lists OpenVINO's devices into *devs; on success the
 * caller frees the list and releases the core. */
static int available_devices(ov_core_t **c, ov_available_devices_t *devs, pp_error *err) {
    int rc = core_acquire(c, err);
    if (rc != PP_OK)
        return rc;
    ov_status_e st = ov_core_get_available_devices(*c, devs);
    if (st != OK) {
        core_release();
        return pp_set_error(err, PP_EIO, "openvino: cannot list the devices: %s", pp_ov_last_error(st));
    }
    return PP_OK;
}

int pp_ov_check(const char *name, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    if (strlen(name) > MAX_NAME)
        return pp_set_error(err, PP_EINVAL, "openvino: device name \"%s\" is longer than %zu characters",
                            name, MAX_NAME);
    ov_core_t *c;
    ov_available_devices_t devs = {0};
    int rc = available_devices(&c, &devs, err);
    if (rc != PP_OK)
        return rc;
    char missing[64];
    if (!name_ok(&devs, name, missing, sizeof missing)) {
        char have[256] = "";
        for (size_t i = 0; i < devs.size; i++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "",
                     devs.devices[i]);
        rc = pp_set_error(err, PP_ENOTFOUND, "openvino: device \"%s\" not found (available: %s)",
                          missing, devs.size ? have : "none");
    }
    ov_available_devices_free(&devs);
    core_release();
    return rc;
}

int pp_ov_open(pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)opt;
    ov_core_t *c;
    int rc = core_acquire(&c, err);
    if (rc != PP_OK)
        return rc;
    d->impl = c;
    snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, d->spec); /* fits: checked */
    snprintf(d->label, sizeof d->label, "%s", d->spec);
    /* The CPU plugin's PERF_COUNT times are running means over the runs of
     * a compiled model, not each request's own (docs/backends.md). */
    const char *colon = strrchr(d->spec, ':');
    if (strncmp(colon ? colon + 1 : d->spec, "CPU", 3) == 0)
        d->flags |= PP_TRACK_HW_MEAN;
    return PP_OK;
}

int pp_ov_same(const pp_device *d, const pp_device_options *opt, pp_error *err) {
    (void)d, (void)opt, (void)err;
    return 1;
}

void pp_ov_close(pp_device *d) {
    (void)d;
    core_release();
}

int pp_ov_list(const pp_device_options *opt, pp_device_list_fn fn, void *ctx, pp_error *err) {
    (void)opt;
    ov_core_t *c;
    ov_available_devices_t devs = {0};
    int rc = available_devices(&c, &devs, err);
    if (rc != PP_OK)
        return rc;
    for (size_t i = 0; i < devs.size; i++) {
        char spec[64], *full = NULL;
        snprintf(spec, sizeof spec, "openvino:%s", devs.devices[i]);
        ov_core_get_property(c, devs.devices[i], ov_property_key_device_full_name, &full);
        fn(ctx, &(pp_device_info){.backend = "openvino", .spec = spec,
                                  .description = full ? full : devs.devices[i]});
        if (full)
            ov_free(full);
    }
    ov_available_devices_free(&devs);
    core_release();
    return rc;
}

