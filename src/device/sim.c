/* The sim backend: simulated devices ("sim:NPU", "sim:GPU") that run the
 * latency model of sim_model.h in real time.
 *
 * One engine thread per process drives the model for every simulated device,
 * because they all share one memory bus. It sleeps until the model's next
 * phase change, so a simulated request takes real wall time and composes with
 * real backends running beside it. The model only ever advances to the
 * current time (never ahead of it), and a request's arrival is stamped under
 * the engine lock, so the modeled times are exact for the arrival times that
 * happened; waking up late only delays completion, never changes hw_ns.
 *
 * Hardware time = the modeled device time (input transfer + compute + output
 * transfer), transfer part = the two transfers. Launch overhead and waiting
 * for a busy device are wall time but not hardware time: the request's
 * device times make them the submit and queue parts of its wall. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "device/backend.h"
#include "device/sim_model.h"

static const pp_sim_device_params builtin[] = {
    /* An NPU: slower to launch, fast on dense math. */
    {.name = "NPU", .launch_ns = 250000, .gflops = 48.0, .units = 1},
    /* An integrated GPU: cheaper launch, two requests at once. */
    {.name = "GPU", .launch_ns = 120000, .gflops = 32.0, .units = 2},
};
#define NBUILTIN (sizeof builtin / sizeof builtin[0])

typedef struct sim_engine {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* on CLOCK_MONOTONIC, the clock of pp_now */
    pthread_t thread;
    int devices;         /* open simulated devices; the engine runs while > 0 */
    int stop;
    double bus_gbps;
    int64_t origin;      /* model time 0 on the session clock */
    pp_sim_sched sched;
} sim_engine;

static sim_engine engine = {.lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct sim_device {
    pp_sim_device_params params;
    pp_sim_unit unit; /* guarded by engine.lock */
} sim_device;

typedef struct sim_ops {
    pp_str name[PP_MAX_OPS], type[PP_MAX_OPS], exec_type;
    double compute_ns[PP_WL_MAX_OPS];
} sim_ops;

static double bus_of(const pp_device_options *opt) {
    return opt->sim_bus_gbps > 0 ? opt->sim_bus_gbps : PP_SIM_BUS_GBPS_DEFAULT;
}

/* The parameters of device `name`: the options' definitions win. */
static int find_params(const char *name, const pp_device_options *opt, pp_sim_device_params *out) {
    for (size_t i = 0; i < opt->nsim; i++) {
        if (strcmp(opt->sim[i].name, name) == 0) {
            *out = opt->sim[i];
            return PP_OK;
        }
    }
    return pp_sim_device_defaults(name, out);
}

int pp_sim_device_defaults(const char *name, pp_sim_device_params *out) {
    for (size_t i = 0; i < NBUILTIN; i++) {
        if (strcmp(builtin[i].name, name) == 0) {
            *out = builtin[i];
            return PP_OK;
        }
    }
    return PP_ENOTFOUND;
}

static int64_t model_to_clock(double t) {
    return engine.origin + (int64_t)floor(t);
}

static double clock_to_model(int64_t t) {
    return (double)(t - engine.origin);
}

/* Turns a finished job's modeled times into the request's profile. Op
 * boundaries are rounded once, so the ops tile [dev_start, done] exactly and
 * hw_ns is their sum. */
static void fill_profile(pp_request *r, const pp_sim_job *j) {
    const pp_compiled *c = r->compiled;
    const sim_ops *ops = c->impl;
    int64_t t = model_to_clock(j->dev_start);
    int64_t in_end = model_to_clock(j->in_end), compute_end = model_to_clock(j->compute_end);
    int64_t done = model_to_clock(j->done);
    double total = 0.0, before = 0.0;
    for (size_t i = 0; i < c->nplan; i++)
        total += ops->compute_ns[i];

    r->nops = c->nplan + 2;
    for (size_t i = 0; i < r->nops; i++) {
        int64_t end;
        if (i == 0)
            end = in_end;
        else if (i == r->nops - 1)
            end = done;
        else if (i == r->nops - 2 || total <= 0.0)
            end = compute_end;
        else
            end = in_end + (int64_t)floor((double)(compute_end - in_end) *
                                          ((before += ops->compute_ns[i - 1]) / total));
        pp_op_profile *p = &r->ops[i];
        p->start_ns = t;
        p->real_ns = p->hw_ns = (uint64_t)(end - t);
        p->cpu_ns = 0;
        t = end;
    }
    r->hw_ns = (uint64_t)(done - model_to_clock(j->dev_start));
    r->xfer_ns = r->ops[0].hw_ns + r->ops[r->nops - 1].hw_ns;
    /* the launch ends when the device's queue has the request */
    r->queued_ns = model_to_clock(j->arrive + j->launch_ns);
    r->dev_start_ns = model_to_clock(j->dev_start);
    r->dev_end_ns = done;
}

static void *engine_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&engine.lock);
    while (!engine.stop) {
        pp_sim_sched_advance(&engine.sched, clock_to_model(pp_now()));
        pp_sim_job *done = pp_sim_sched_take_done(&engine.sched);
        if (done) {
            /* Callbacks run unlocked: they may start requests again. */
            pthread_mutex_unlock(&engine.lock);
            while (done) {
                pp_sim_job *next = done->next;
                pp_request *r = done->owner;
                fill_profile(r, done);
                pp_request_finish(r, PP_OK);
                done = next;
            }
            pthread_mutex_lock(&engine.lock);
            continue;
        }
        double next = pp_sim_sched_next(&engine.sched);
        if (isinf(next)) {
            pthread_cond_wait(&engine.wake, &engine.lock);
            continue;
        }
        int64_t at = model_to_clock(ceil(next));
        struct timespec ts = {.tv_sec = at / 1000000000, .tv_nsec = at % 1000000000};
        pthread_cond_timedwait(&engine.wake, &engine.lock, &ts);
    }
    pthread_mutex_unlock(&engine.lock);
    return NULL;
}

/* Starts the engine for the first simulated device; caller holds engine.lock. */
static int engine_start(double bus_gbps) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&engine.wake, &attr);
    pthread_condattr_destroy(&attr);
    engine.stop = 0;
    engine.bus_gbps = bus_gbps;
    engine.origin = pp_now();
    pp_sim_sched_init(&engine.sched, bus_gbps * 1e9, 0.0);
    if (pthread_create(&engine.thread, NULL, engine_main, NULL) != 0) {
        pthread_cond_destroy(&engine.wake);
        return PP_ENOMEM;
    }
    pthread_setname_np(engine.thread, "pp-sim-engine");
    return PP_OK;
}

static int sim_check(const char *name, const pp_device_options *opt, pp_error *err) {
    pp_sim_device_params p;
    if (find_params(name, opt, &p) != PP_OK) {
        char have[256] = "NPU, GPU";
        for (size_t i = 0; i < opt->nsim; i++)
            if (pp_sim_device_defaults(opt->sim[i].name, &p) != PP_OK)
                snprintf(have + strlen(have), sizeof have - strlen(have), ", %s", opt->sim[i].name);
        return pp_set_error(err, PP_ENOTFOUND, "sim: no simulated device \"%s\" (have: %s)", name,
                            have);
    }
    if (p.launch_ns < 0 || p.launch_ns > PP_SIM_LAUNCH_NS_MAX || !(p.gflops >= PP_SIM_GFLOPS_MIN) ||
        !(p.gflops <= PP_SIM_GFLOPS_MAX) || p.units < 1 || p.units > 64)
        return pp_set_error(err, PP_EINVAL,
                            "sim: device \"%s\" needs launch 0..%lld ns, gflops %g..%g and units 1..64",
                            name, (long long)PP_SIM_LAUNCH_NS_MAX, PP_SIM_GFLOPS_MIN, PP_SIM_GFLOPS_MAX);
    if (opt->sim_bus_gbps != 0 &&
        !(opt->sim_bus_gbps >= PP_SIM_BUS_GBPS_MIN && opt->sim_bus_gbps <= PP_SIM_BUS_GBPS_MAX))
        return pp_set_error(err, PP_EINVAL, "sim: the bus needs a bandwidth of %g..%g GB/s (got %g)",
                            PP_SIM_BUS_GBPS_MIN, PP_SIM_BUS_GBPS_MAX, opt->sim_bus_gbps);
    return PP_OK;
}

static int sim_open(pp_device *d, const pp_device_options *opt, pp_error *err) {
    pp_sim_device_params p;
    find_params(d->name, opt, &p); /* checked */
    sim_device *sd = calloc(1, sizeof *sd);
    if (!sd)
        return pp_set_error(err, PP_ENOMEM, "sim: out of memory");
    sd->params = p;
    sd->unit.units = p.units;

    double bus = bus_of(opt);
    int rc = PP_OK;
    pthread_mutex_lock(&engine.lock);
    if (engine.devices > 0 && engine.bus_gbps != bus)
        rc = pp_set_error(err, PP_EINVAL,
                          "sim: the shared bus is already open at %g GB/s; cannot open %s at %g GB/s",
                          engine.bus_gbps, d->name, bus);
    else if (engine.devices == 0 && engine_start(bus) != PP_OK)
        rc = pp_set_error(err, PP_ENOMEM, "sim: cannot start the simulation thread");
    if (rc == PP_OK)
        engine.devices++;
    pthread_mutex_unlock(&engine.lock);
    if (rc != PP_OK) {
        free(sd);
        return rc;
    }
    d->impl = sd;
    d->flags = PP_TRACK_SIMULATED;
    snprintf(d->label, sizeof d->label, "%s (simulated)", d->name);
    return PP_OK;
}

static int sim_same(const pp_device *d, const pp_device_options *opt, pp_error *err) {
    const sim_device *sd = d->impl;
    pp_sim_device_params p;
    if (find_params(d->name, opt, &p) != PP_OK || p.launch_ns != sd->params.launch_ns ||
        p.gflops != sd->params.gflops || p.units != sd->params.units) {
        pp_set_error(err, PP_EINVAL, "sim: device \"%s\" is already open with other parameters",
                     d->name);
        return 0;
    }
    pthread_mutex_lock(&engine.lock);
    double bus = engine.bus_gbps;
    pthread_mutex_unlock(&engine.lock);
    if (bus != bus_of(opt)) {
        pp_set_error(err, PP_EINVAL, "sim: the shared bus is already open at %g GB/s (asked: %g)",
                     bus, bus_of(opt));
        return 0;
    }
    return 1;
}

static void sim_close(pp_device *d) {
    pthread_mutex_lock(&engine.lock);
    int last = --engine.devices == 0;
    if (last) {
        engine.stop = 1;
        pthread_cond_signal(&engine.wake);
    }
    pthread_mutex_unlock(&engine.lock);
    if (last) {
        pthread_join(engine.thread, NULL);
        pthread_cond_destroy(&engine.wake);
    }
    free(d->impl);
    d->impl = NULL;
}

static int sim_compile(pp_compiled *c, pp_error *err) {
    const sim_device *sd = c->device->impl;
    sim_ops *ops = calloc(1, sizeof *ops);
    pp_sim_job *jobs = calloc((size_t)c->nrequests, sizeof *jobs);
    if (!ops || !jobs) {
        free(ops);
        free(jobs);
        return pp_set_error(err, PP_ENOMEM, "sim: out of memory");
    }
    size_t n = c->nplan + 2;
    ops->exec_type = pp_intern("simulated");
    ops->name[0] = pp_intern("input");
    ops->name[n - 1] = pp_intern("output");
    ops->type[0] = ops->type[n - 1] = pp_intern("Transfer");
    double compute = 0.0;
    for (size_t i = 0; i < c->nplan; i++) {
        ops->name[1 + i] = pp_intern(c->plan[i].name);
        ops->type[1 + i] = pp_intern(c->plan[i].type);
        ops->compute_ns[i] = (double)c->plan[i].flops / sd->params.gflops;
        compute += ops->compute_ns[i];
    }
    c->impl = ops;
    for (int i = 0; i < c->nrequests; i++) {
        pp_request *r = &c->requests[i];
        pp_sim_job *j = &jobs[i];
        *j = (pp_sim_job){.launch_ns = (double)sd->params.launch_ns, .compute_ns = compute,
                          .in_bytes = (double)pp_wl_input_bytes(&c->workload),
                          .out_bytes = (double)pp_wl_output_bytes(&c->workload), .owner = r};
        r->impl = j;
        r->nops = n;
        for (size_t k = 0; k < n; k++)
            r->ops[k] = (pp_op_profile){.name = ops->name[k], .type = ops->type[k],
                                        .exec_type = ops->exec_type, .status = PP_OP_EXECUTED,
                                        .transfer = k == 0 || k == n - 1};
    }
    return PP_OK;
}

static void sim_free_compiled(pp_compiled *c) {
    /* the jobs of all requests are one array, owned by request 0 */
    free(c->nrequests > 0 ? c->requests[0].impl : NULL);
    free(c->impl);
    c->impl = NULL;
}

static int sim_start(pp_request *r) {
    sim_device *sd = r->compiled->device->impl;
    pp_sim_job *j = r->impl;
    pthread_mutex_lock(&engine.lock);
    j->unit = &sd->unit;
    pp_sim_sched_add(&engine.sched, j, clock_to_model(pp_now()));
    pthread_cond_signal(&engine.wake);
    pthread_mutex_unlock(&engine.lock);
    return PP_OK;
}

/* The modeled end of r's last run: its output transfer's end. */
static int sim_run_device_end(const pp_request *r, int64_t *end_ns) {
    const pp_sim_job *j = r->impl;
    *end_ns = model_to_clock(j->done);
    return PP_OK;
}

static void list_one(const pp_sim_device_params *p, pp_device_list_fn fn, void *ctx) {
    char spec[48], text[160];
    snprintf(spec, sizeof spec, "sim:%s", p->name);
    snprintf(text, sizeof text, "simulated: launch %.0f us, %g GFLOP/s, %d unit%s", p->launch_ns / 1e3,
             p->gflops, p->units, p->units == 1 ? "" : "s");
    fn(ctx, &(pp_device_info){.backend = "sim", .spec = spec, .description = text,
                              .flags = PP_TRACK_SIMULATED});
}

/* The built-in devices (as the options redefine them), then the options'
 * own. */
static int sim_list(const pp_device_options *opt, pp_device_list_fn fn, void *ctx, pp_error *err) {
    (void)err;
    pp_sim_device_params p;
    for (size_t i = 0; i < NBUILTIN; i++) {
        find_params(builtin[i].name, opt, &p);
        list_one(&p, fn, ctx);
    }
    for (size_t i = 0; i < opt->nsim; i++)
        if (pp_sim_device_defaults(opt->sim[i].name, &p) != PP_OK)
            list_one(&opt->sim[i], fn, ctx);
    return PP_OK;
}

const pp_backend pp_backend_sim = {
    .name = "sim",
    .default_name = NULL,
    .check = sim_check,
    .open = sim_open,
    .same = sim_same,
    .close = sim_close,
    .compile = sim_compile,
    .free_compiled = sim_free_compiled,
    .start = sim_start,
    .list = sim_list,
    .run_device_end = sim_run_device_end,
};
