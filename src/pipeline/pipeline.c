/* A pipeline's description: its config and stages, validated as they are
 * added so that every mistake is reported against the field that holds it,
 * named as the pipeline file names it ("stages[1].devices[0]"). Running it
 * is run.c; reading it from a file is config.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/pipeline_impl.h"

void pp_pipeline_config_init(pp_pipeline_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->nodes = 1024;
    cfg->edges = 8192;
    cfg->features = 64;
    cfg->batches = 20;
    cfg->warmup = 2;
    cfg->queue_depth = 2;
    cfg->seed = 1;
}

static int check_config(const pp_pipeline_config *cfg, pp_error *err) {
    if (cfg->name && strlen(cfg->name) >= 64)
        return pp_set_error(err, PP_EINVAL, "name: longer than 63 characters");
    if (cfg->batches < 1)
        return pp_set_error(err, PP_EINVAL, "batches: %d (expected at least 1)", cfg->batches);
    if (cfg->warmup < 0)
        return pp_set_error(err, PP_EINVAL, "warmup: %d (expected 0 or more)", cfg->warmup);
    if (cfg->queue_depth < 1 || cfg->queue_depth > 64)
        return pp_set_error(err, PP_EINVAL, "queue_depth: %d (expected 1..64)", cfg->queue_depth);
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = cfg->nodes;
    w.edges = cfg->edges;
    w.in_dim = w.out_dim = cfg->features;
    pp_error why;
    if (pp_workload_check(&w, &why) != PP_OK)
        return pp_set_error(err, PP_EINVAL, "graph: %s", why.msg);
    if (cfg->devices.sim_bus_gbps < 0)
        return pp_set_error(err, PP_EINVAL, "sim_bus_gbps: negative");
    return PP_OK;
}

int pp_pipeline_create(const pp_pipeline_config *cfg, pp_pipeline **out, pp_error *err) {
    int rc = check_config(cfg, err);
    if (rc != PP_OK)
        return rc;
    pp_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return pp_set_error(err, PP_ENOMEM, "pipeline: out of memory");
    p->cfg = *cfg;
    snprintf(p->name, sizeof p->name, "%s", cfg->name ? cfg->name : "pipeline");
    p->cfg.name = p->name;
    if (cfg->devices.nsim > 0) {
        p->sim = malloc(cfg->devices.nsim * sizeof *p->sim);
        if (!p->sim) {
            free(p);
            return pp_set_error(err, PP_ENOMEM, "pipeline: out of memory");
        }
        memcpy(p->sim, cfg->devices.sim, cfg->devices.nsim * sizeof *p->sim);
    }
    p->cfg.devices.sim = p->sim;
    *out = p;
    return PP_OK;
}

void pp_pipeline_free(pp_pipeline *p) {
    if (!p)
        return;
    free(p->sim);
    free(p);
}

const pp_pipeline_config *pp_pipeline_config_get(const pp_pipeline *p) {
    return &p->cfg;
}

int pp_pipeline_stage_count(const pp_pipeline *p) {
    return p->nstages;
}

/* The stage's workload on one whole batch, given what flows into it. */
static void stage_workload(const pp_pipeline *p, const pp_stage_spec *spec, int index,
                           pp_workload *w) {
    pp_workload_init(w);
    w->kind = spec->kind;
    w->nodes = p->cfg.nodes;
    w->edges = p->cfg.edges;
    w->in_dim = index == 0 ? p->cfg.features : p->stages[index - 1].spec.out_dim;
    w->out_dim = spec->out_dim;
    w->layers = spec->kind == PP_WORKLOAD_SAGE ? 1 : (spec->layers ? spec->layers : 1);
    w->seed = p->cfg.seed + (uint64_t)index;
    w->model_path = spec->model_path;
}

/* A model file needs openvino devices only, and must be readable now. */
static int check_model_path(const pp_stage_spec *spec, int i, pp_error *err) {
    if (!spec->model_path)
        return PP_OK;
    if (!*spec->model_path || strlen(spec->model_path) >= 4096)
        return pp_set_error(err, PP_EINVAL, "stages[%d].model_path: expected 1..4095 characters", i);
    for (int d = 0; d < spec->ndevices; d++) {
        const char *dev = spec->devices[d];
        if (strncmp(dev, "openvino", 8) != 0 || (dev[8] != '\0' && dev[8] != ':'))
            return pp_set_error(err, PP_EINVAL,
                                "stages[%d].model_path: devices[%d] \"%s\" runs the dummy models "
                                "only (model files run on openvino devices)", i, d, dev);
    }
    FILE *f = fopen(spec->model_path, "rb");
    if (!f)
        return pp_set_error(err, errno == ENOENT ? PP_ENOTFOUND : PP_EIO,
                            "stages[%d].model_path: cannot open %s: %s", i, spec->model_path,
                            strerror(errno));
    fclose(f);
    return PP_OK;
}

static int check_devices(const pp_pipeline *p, const pp_stage_spec *spec, int i, pp_error *err) {
    if (spec->ndevices == 0 && !spec->host)
        return pp_set_error(err, PP_EINVAL, "stages[%d].devices: none given (name at least one)", i);
    if (spec->ndevices < 0 || spec->ndevices > PP_STAGE_MAX_DEVICES)
        return pp_set_error(err, PP_EINVAL, "stages[%d].devices: %d devices (expected 1..%d)", i,
                            spec->ndevices, PP_STAGE_MAX_DEVICES);
    double total = 0;
    for (int d = 0; d < spec->ndevices; d++) {
        if (!spec->devices[d] || strlen(spec->devices[d]) >= 64)
            return pp_set_error(err, PP_EINVAL,
                                "stages[%d].devices[%d]: expected a spec of 1..63 characters", i, d);
        pp_error why;
        int rc = pp_device_check(spec->devices[d], &p->cfg.devices, &why);
        if (rc != PP_OK)
            return pp_set_error(err, rc, "stages[%d].devices[%d]: %s", i, d, why.msg);
        if (!(spec->split[d] >= 0))
            return pp_set_error(err, PP_EINVAL, "stages[%d].split[%d]: %g (expected 0 or more)", i, d,
                                spec->split[d]);
        total += spec->split[d];
    }
    for (int d = 0; d < spec->ndevices && total > 0; d++)
        if (spec->split[d] == 0)
            return pp_set_error(err, PP_EINVAL,
                                "stages[%d].split[%d]: 0 (give every device a share, or none)", i, d);
    int requests = spec->requests ? spec->requests : 1;
    if (requests < 1 || requests > 16)
        return pp_set_error(err, PP_EINVAL, "stages[%d].requests: %d (expected 1..16)", i,
                            spec->requests);
    return PP_OK;
}

int pp_pipeline_add_stage(pp_pipeline *p, const pp_stage_spec *spec, pp_error *err) {
    int i = p->nstages;
    if (i == PP_PIPELINE_MAX_STAGES)
        return pp_set_error(err, PP_EINVAL, "stages: more than %d", PP_PIPELINE_MAX_STAGES);
    if (!spec->name || !*spec->name || strlen(spec->name) >= 64)
        return pp_set_error(err, PP_EINVAL, "stages[%d].name: expected 1..63 characters", i);
    for (int k = 0; k < i; k++)
        if (strcmp(p->stages[k].name, spec->name) == 0)
            return pp_set_error(err, PP_EINVAL, "stages[%d].name: \"%s\" is also stages[%d]", i,
                                spec->name, k);
    int rc = check_devices(p, spec, i, err);
    if (rc == PP_OK)
        rc = check_model_path(spec, i, err);
    if (rc != PP_OK)
        return rc;
    if (spec->out_dim < 1 || spec->out_dim > (1 << 14))
        return pp_set_error(err, PP_EINVAL, "stages[%d].out_dim: %lld (expected 1..%d)", i,
                            (long long)spec->out_dim, 1 << 14);
    if (spec->layers < 0 || spec->layers > 64)
        return pp_set_error(err, PP_EINVAL, "stages[%d].layers: %d (expected 1..64)", i,
                            spec->layers);
    pp_workload w;
    stage_workload(p, spec, i, &w);
    pp_error why;
    if (pp_workload_check(&w, &why) != PP_OK)
        return pp_set_error(err, PP_EINVAL, "stages[%d]: %s", i, why.msg);
    pipeline_stage *ps = &p->stages[i];
    memset(ps, 0, sizeof *ps);
    ps->spec = *spec;
    snprintf(ps->name, sizeof ps->name, "%s", spec->name);
    ps->spec.name = ps->name;
    for (int d = 0; d < spec->ndevices; d++) {
        snprintf(ps->devices[d], sizeof ps->devices[d], "%s", spec->devices[d]);
        ps->spec.devices[d] = ps->devices[d];
    }
    if (spec->model_path) {
        snprintf(ps->model_path, sizeof ps->model_path, "%s", spec->model_path);
        ps->spec.model_path = ps->model_path;
    }
    if (!ps->spec.requests)
        ps->spec.requests = 1;
    p->nstages++;
    return PP_OK;
}

void pp_pipeline_stage_workload(const pp_pipeline *p, int i, pp_workload *w) {
    stage_workload(p, &p->stages[i].spec, i, w);
}

int pp_pipeline_stage_summary(const pp_pipeline *p, int i, pp_stage_summary *out) {
    if (i < 0 || i >= p->nstages)
        return PP_EINVAL;
    *out = p->stages[i].summary;
    return PP_OK;
}

int pp_pipeline_demo(pp_pipeline **out, pp_error *err) {
    return pp_pipeline_demo_backend("cpu", out, err);
}

int pp_pipeline_demo_backend(const char *backend, pp_pipeline **out, pp_error *err) {
    const char *cpu;
    if (strcmp(backend, "cpu") == 0)
        cpu = "cpu";
    else if (strcmp(backend, "openvino") == 0)
        cpu = "openvino:CPU";
    else
        return pp_set_error(err, PP_ENOTFOUND, "unknown backend \"%s\" for the demo (have: cpu, openvino)",
                            backend);
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    cfg.name = "demo";
    cfg.batches = 50;
    pp_pipeline *p;
    int rc = pp_pipeline_create(&cfg, &p, err);
    if (rc != PP_OK)
        return rc;
    const pp_stage_spec stages[] = {
        {.name = "GraphPrep", .ndevices = 1, .devices = {cpu}, .kind = PP_WORKLOAD_SAGE,
         .out_dim = 64},
        {.name = "Embedding", .ndevices = 2, .devices = {cpu, "sim:NPU"},
         .kind = PP_WORKLOAD_MATMUL, .out_dim = 64, .layers = 2},
        {.name = "Classifier", .ndevices = 1, .devices = {"sim:GPU"}, .requests = 2,
         .kind = PP_WORKLOAD_MATMUL, .out_dim = 16},
    };
    for (size_t i = 0; i < sizeof stages / sizeof stages[0] && rc == PP_OK; i++)
        rc = pp_pipeline_add_stage(p, &stages[i], err);
    if (rc != PP_OK) {
        pp_pipeline_free(p);
        return rc;
    }
    *out = p;
    return PP_OK;
}
