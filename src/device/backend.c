/* Devices, compiled models and requests: spec parsing, the registry of open
 * devices, tensor allocation and the request state machine shared by every
 * backend. */
#include "device/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MAX_BACKENDS 8

/* Open devices by canonical spec. A second open of a spec returns the same
 * device, so every user of "sim:NPU" in a process shares one NPU. The lock
 * also guards the backend list. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_device *registry;
static const pp_backend *backends[MAX_BACKENDS] = {
    &pp_backend_cpu,
    &pp_backend_sim,
#ifdef PP_HAVE_OPENVINO
    &pp_backend_openvino,
#endif
#ifdef PP_HAVE_OPENCL
    &pp_backend_opencl,
#endif
};
static size_t nbackends = 2
#ifdef PP_HAVE_OPENVINO
                          + 1
#endif
#ifdef PP_HAVE_OPENCL
                          + 1
#endif
    ;
/* Caller holds registry_lock. */
static const pp_backend *find_backend(const char *name, size_t len) {
    for (size_t i = 0; i < nbackends; i++)
        if (strlen(backends[i]->name) == len && strncmp(backends[i]->name, name, len) == 0)
            return backends[i];
    return NULL;
}

int pp_backend_add(const pp_backend *b, pp_error *err) {
    int rc = PP_OK;
    pthread_mutex_lock(&registry_lock);
    if (find_backend(b->name, strlen(b->name)))
        rc = pp_set_error(err, PP_EINVAL, "backend \"%s\" exists already", b->name);
    else if (nbackends == MAX_BACKENDS)
        rc = pp_set_error(err, PP_ENOMEM, "backend \"%s\": room for %d backends only", b->name,
                          MAX_BACKENDS);
    else
        backends[nbackends++] = b;
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

/* Splits a spec into its backend and device name (the backend's default
 * when there is no ':'). */
static int parse_spec(const char *spec, const pp_backend **backend, char name[32], pp_error *err) {
    if (!spec)
        return pp_set_error(err, PP_EINVAL, "device: no spec given");
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    char have[128] = "";
    pthread_mutex_lock(&registry_lock);
    const pp_backend *b = find_backend(spec, len);
    for (size_t i = 0; !b && i < nbackends; i++)
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "",
                 backends[i]->name);
    pthread_mutex_unlock(&registry_lock);
    if (!b)
        return pp_set_error(err, PP_ENOTFOUND, "unknown backend \"%.*s\" (have: %s)", (int)len,
                            spec, have);
    const char *arg = colon ? colon + 1 : NULL;
    if (arg && (!*arg || strlen(arg) >= 32))
        return pp_set_error(err, PP_EINVAL,
                            "device \"%s\": expected a device name of 1..31 characters after ':'",
                            spec);
    if (!arg && !b->default_name)
        return pp_set_error(err, PP_EINVAL, "device \"%s\": name a device (e.g. %s:NPU)", spec,
                            b->name);
    snprintf(name, 32, "%s", arg ? arg : b->default_name);
    *backend = b;
    return PP_OK;
}

int pp_device_check(const char *spec, const pp_device_options *opt, pp_error *err) {
    static const pp_device_options defaults;
    const pp_backend *b;
    char name[32];
    int rc = parse_spec(spec, &b, name, err);
    return rc == PP_OK ? b->check(name, opt ? opt : &defaults, err) : rc;
}

int pp_device_open(const char *spec, const pp_device_options *opt, pp_device **out, pp_error *err) {
    static const pp_device_options defaults;
    const pp_backend *b;
    char name[32];
    if (!opt)
        opt = &defaults;
    int rc = parse_spec(spec, &b, name, err);
    if (rc == PP_OK)
        rc = b->check(name, opt, err);
    if (rc != PP_OK)
        return rc;

    /* by canonical spec: a backend's open may rename the device's track name */
    char canonical[sizeof registry->spec];
    snprintf(canonical, sizeof canonical, "%s:%s", b->name, name);
    pthread_mutex_lock(&registry_lock);
    pp_device *d = registry;
    while (d && strcmp(d->spec, canonical) != 0)
        d = d->next;
    if (d) {
        if (b->same(d, opt, err))
            d->refs++;
        else
            rc = PP_EINVAL;
    } else if (!(d = calloc(1, sizeof *d))) {
        rc = pp_set_error(err, PP_ENOMEM, "device \"%s\": out of memory", spec);
    } else {
        d->backend = b;
        d->refs = 1;
        snprintf(d->name, sizeof d->name, "%s", name);
        snprintf(d->label, sizeof d->label, "%s", name);
        snprintf(d->spec, sizeof d->spec, "%s", canonical);
        rc = b->open(d, opt, err);
        if (rc == PP_OK) {
            d->next = registry;
            registry = d;
        } else {
            free(d);
        }
    }
    if (rc == PP_OK)
        *out = d;
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

void pp_device_close(pp_device *d) {
    if (!d)
        return;
    pthread_mutex_lock(&registry_lock);
    if (--d->refs == 0) {
        for (pp_device **p = &registry; *p; p = &(*p)->next) {
            if (*p == d) {
                *p = d->next;
                break;
            }
        }
        d->backend->close(d);
        free(d);
    }
    pthread_mutex_unlock(&registry_lock);
}

const char *pp_device_name(const pp_device *d) {
    return d->name;
}

const char *pp_device_label(const pp_device *d) {
    return d->label;
}

unsigned pp_device_flags(const pp_device *d) {
    return d->flags;
}

int pp_device_hw_running_mean(const pp_device *d) {
    return (d->flags & PP_TRACK_HW_MEAN) != 0;
}

int pp_device_reserve_streams(pp_device *d, int n) {
    pthread_mutex_lock(&registry_lock);
    int first = d->next_stream;
    d->next_stream += n;
    pthread_mutex_unlock(&registry_lock);
    return first;
}

int pp_compiled_create(pp_device *d, const pp_workload *w, int nrequests, pp_compiled **out,
                       pp_error *err) {
    return pp_compiled_create_level(d, w, nrequests, 2, out, err);
}

int pp_compiled_create_level(pp_device *d, const pp_workload *w, int nrequests, int level,
                             pp_compiled **out, pp_error *err) {
    int rc = pp_workload_check(w, err);
    if (rc != PP_OK)
        return rc;
    if (nrequests < 1 || nrequests > 64)
        return pp_set_error(err, PP_EINVAL, "requests: %d is outside 1..64", nrequests);
    if (level < 0 || level > 2)
        return pp_set_error(err, PP_EINVAL, "level: %d is outside 0..2", level);
    if (w->model_path && !d->backend->runs_model_files)
        return pp_set_error(err, PP_EINVAL,
                            "%s: runs the dummy models only (model file \"%s\" needs an openvino device)",
                            d->spec, w->model_path);
    pp_compiled *c = calloc(1, sizeof *c);
    if (!c)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", d->spec);
    c->device = d;
    c->workload = *w;
    c->nplan = pp_wl_plan(w, c->plan);
    c->nrequests = nrequests;
    c->level = level;
    c->requests = calloc((size_t)nrequests, sizeof *c->requests);
    if (!c->requests) {
        free(c);
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", d->spec);
    }
    int made = 0;
    for (; made < nrequests; made++) {
        pp_request *r = &c->requests[made];
        r->compiled = c;
        r->index = made;
        r->ops = r->inline_ops;
        r->bytes_in = pp_wl_input_bytes(w);
        r->bytes_out = pp_wl_output_bytes(w);
        /* zeroed, so that a device that does not compute (sim) returns zeros */
        r->input = calloc((size_t)(w->nodes * w->in_dim), sizeof(float));
        r->output = calloc((size_t)(w->nodes * w->out_dim), sizeof(float));
        if (!r->input || !r->output) {
            free(r->input);
            free(r->output);
            break;
        }
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->changed, NULL);
    }
    if (made == nrequests) {
        rc = d->backend->compile(c, err);
        if (rc == PP_OK) {
            *out = c;
            return PP_OK;
        }
    } else {
        rc = pp_set_error(err, PP_ENOMEM, "%s: out of memory for %d requests of %lld x %lld", d->spec,
                          nrequests, (long long)w->nodes, (long long)w->in_dim);
    }
    for (int i = 0; i < made; i++) {
        pp_request *r = &c->requests[i];
        free(r->input);
        free(r->output);
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->changed);
    }
    free(c->requests);
    free(c);
    return rc;
}

void pp_compiled_free(pp_compiled *c) {
    if (!c)
        return;
    for (int i = 0; i < c->nrequests; i++)
        pp_request_wait(&c->requests[i]);
    c->device->backend->free_compiled(c);
    for (int i = 0; i < c->nrequests; i++) {
        pp_request *r = &c->requests[i];
        free(r->input);
        free(r->output);
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->changed);
    }
    free(c->requests);
    free(c);
}

const pp_workload *pp_compiled_workload(const pp_compiled *c) {
    return &c->workload;
}

pp_device *pp_compiled_device(const pp_compiled *c) {
    return c->device;
}

int pp_compiled_request_count(const pp_compiled *c) {
    return c->nrequests;
}

pp_request *pp_compiled_request(pp_compiled *c, int i) {
    return i >= 0 && i < c->nrequests ? &c->requests[i] : NULL;
}

float *pp_request_input(pp_request *r) {
    return r->input;
}

const float *pp_request_output(const pp_request *r) {
    return r->output;
}

int pp_request_index(const pp_request *r) {
    return r->index;
}

int pp_request_start(pp_request *r, pp_request_done_fn done, void *ctx) {
    pthread_mutex_lock(&r->lock);
    if (r->state == PP_REQ_RUNNING) {
        pthread_mutex_unlock(&r->lock);
        return PP_ESTATE;
    }
    r->state = PP_REQ_RUNNING;
    r->done = done;
    r->done_ctx = ctx;
    pthread_mutex_unlock(&r->lock);
    int rc = r->compiled->device->backend->start(r);
    if (rc != PP_OK) {
        pthread_mutex_lock(&r->lock);
        r->state = PP_REQ_FINISHED;
        r->status = rc;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    return rc;
}

void pp_request_finish(pp_request *r, int status) {
    pthread_mutex_lock(&r->lock);
    pp_request_done_fn done = r->done;
    void *ctx = r->done_ctx;
    r->status = status;
    r->state = PP_REQ_FINISHED;
    struct pp_stream_mark *marks = r->marks;
    r->marks = NULL;
    /* pp_request_wait returns once the marks are recorded and the callback
     * has run: a caller that stops its session right after sees them all */
    int after = done != NULL || marks != NULL;
    r->callbacks += after;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    pp_request_record_marks(r, marks);
    if (!after)
        return;
    if (done)
        done(ctx, r, status);
    pthread_mutex_lock(&r->lock);
    r->callbacks--;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

int pp_request_wait(pp_request *r) {
    pthread_mutex_lock(&r->lock);
    while (r->state == PP_REQ_RUNNING || r->callbacks > 0)
        pthread_cond_wait(&r->changed, &r->lock);
    int status = r->status;
    pthread_mutex_unlock(&r->lock);
    return status;
}

int pp_request_poll(pp_request *r) {
    pthread_mutex_lock(&r->lock);
    int idle = r->state != PP_REQ_RUNNING;
    pthread_mutex_unlock(&r->lock);
    return idle;
}

int pp_request_profile_get(pp_request *r, pp_request_profile *out) {
    pthread_mutex_lock(&r->lock);
    int state = r->state;
    pthread_mutex_unlock(&r->lock);
    if (state != PP_REQ_FINISHED)
        return PP_ESTATE;
    *out = (pp_request_profile){.hw_ns = r->hw_ns, .xfer_ns = r->xfer_ns,
                                .queued_ns = r->queued_ns, .dev_start_ns = r->dev_start_ns,
                                .dev_end_ns = r->dev_end_ns, .bytes_in = r->bytes_in,
                                .bytes_out = r->bytes_out, .nops = r->nops, .ops = r->ops};
    return PP_OK;
}

int pp_device_clock_get(pp_device *d, int fresh, pp_device_clock *out, pp_error *err) {
    if (d->backend->clock)
        return d->backend->clock(d, fresh, out, err);
    *out = (pp_device_clock){.method = "session clock"};
    return PP_OK;
}

int pp_device_list(const char *backend, const pp_device_options *opt, pp_device_list_fn fn,
                   void *ctx, pp_error *err) {
    static const pp_device_options defaults;
    const pp_backend *list[MAX_BACKENDS];
    char have[128] = "";
    pthread_mutex_lock(&registry_lock);
    size_t n = nbackends;
    memcpy(list, backends, n * sizeof list[0]);
    pthread_mutex_unlock(&registry_lock);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "",
                 list[i]->name);
        if (backend && strcmp(backend, list[i]->name) != 0)
            continue;
        found = 1;
        int rc = list[i]->list ? list[i]->list(opt ? opt : &defaults, fn, ctx, err) : PP_OK;
        if (rc != PP_OK)
            return rc;
    }
    if (!found)
        return pp_set_error(err, PP_ENOTFOUND, "unknown backend \"%s\" (have: %s)", backend, have);
    return PP_OK;
}
