/* Reading a sweep config (JSON, docs/sweep.md), its canonical form and its
 * fingerprint. Every message names the file and the key the way the file
 * spells it: "sweep.json: sizes[2].nodes: missing". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sweep/sweep_impl.h"

#define SW_MAX_ITEMS 4096

static const char *const kinds[] = {"matmul", "sage"};

static int read_sizes(pp_json_loader *ld, json_t *list, pp_sweep_config *c, int64_t features) {
    static const char *const keys[] = {"nodes", "edges", "features", NULL};
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    if (n < 1 || n > SW_MAX_ITEMS)
        return pp_set_error(ld->err, PP_EINVAL, "%s: sizes: expected a list of 1..%d sizes",
                            ld->path, SW_MAX_ITEMS);
    c->sizes = calloc(n, sizeof *c->sizes);
    if (!c->sizes)
        return pp_set_error(ld->err, PP_ENOMEM, "%s: out of memory", ld->path);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(list, i);
        char where[32];
        snprintf(where, sizeof where, "sizes[%zu]", i);
        if (!json_is_object(o))
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s: expected an object", ld->path, where);
        sw_size *s = &c->sizes[i];
        s->nodes = s->edges = -1;
        s->features = features;
        int rc = pp_json_check_keys(ld, o, where, keys);
        if (rc == PP_OK)
            rc = pp_json_get_int(ld, o, where, "nodes", &s->nodes);
        if (rc == PP_OK)
            rc = pp_json_get_int(ld, o, where, "edges", &s->edges);
        if (rc == PP_OK)
            rc = pp_json_get_int(ld, o, where, "features", &s->features);
        if (rc != PP_OK)
            return rc;
        if (s->nodes < 1 || s->edges < 0)
            return pp_set_error(ld->err, PP_EINVAL,
                                "%s: %s: needs \"nodes\" >= 1 and \"edges\" >= 0", ld->path, where);
        if (s->features < 1)
            return pp_set_error(ld->err, PP_EINVAL,
                                "%s: %s.features: missing or < 1 (and no top-level \"features\")",
                                ld->path, where);
        for (size_t j = 0; j < i; j++)
            if (c->sizes[j].nodes == s->nodes && c->sizes[j].edges == s->edges)
                return pp_set_error(ld->err, PP_EINVAL,
                                    "%s: %s: nodes %lld, edges %lld repeats sizes[%zu] (the "
                                    "lookup key is \"nodes,edges,device,stage\")",
                                    ld->path, where, (long long)s->nodes, (long long)s->edges, j);
    }
    c->nsizes = n;
    return PP_OK;
}

/* Whether a device compiles static shapes only unless the config says:
 * NPUs, the simulated one included (it stands for the real one). */
static int static_by_default(const char *spec) {
    return strcmp(spec, "sim:NPU") == 0 || strncmp(spec, "openvino:NPU", 12) == 0;
}

/* devices[i]: a spec, or {"spec": ..., "static_shapes": bool}. */
static int read_device(pp_json_loader *ld, json_t *v, size_t i, const char **spec, int *flag) {
    static const char *const keys[] = {"spec", "static_shapes", NULL};
    char where[32];
    snprintf(where, sizeof where, "devices[%zu]", i);
    *spec = json_is_string(v) ? json_string_value(v) : NULL;
    if (!json_is_object(v)) {
        *flag = *spec ? static_by_default(*spec) : 0;
        return PP_OK;
    }
    int rc = pp_json_check_keys(ld, v, where, keys);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, v, where, "spec", spec);
    json_t *st = json_object_get(v, "static_shapes");
    if (rc == PP_OK && st && !json_is_boolean(st))
        rc = pp_set_error(ld->err, PP_EINVAL, "%s: %s.static_shapes: expected true or false",
                          ld->path, where);
    *flag = st ? json_is_true(st) : *spec ? static_by_default(*spec) : 0;
    return rc;
}

static int read_devices(pp_json_loader *ld, json_t *list, pp_sweep_config *c, int check) {
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    if (n < 1 || n > SW_MAX_ITEMS)
        return pp_set_error(ld->err, PP_EINVAL, "%s: devices: expected a list of 1..%d specs",
                            ld->path, SW_MAX_ITEMS);
    c->devices = calloc(n, sizeof *c->devices);
    c->static_shapes = calloc(n, sizeof *c->static_shapes);
    if (!c->devices || !c->static_shapes)
        return pp_set_error(ld->err, PP_ENOMEM, "%s: out of memory", ld->path);
    for (size_t i = 0; i < n; i++) {
        const char *spec = NULL;
        int rc = read_device(ld, json_array_get(list, i), i, &spec, &c->static_shapes[i]);
        if (rc != PP_OK)
            return rc;
        if (!spec || !*spec || strlen(spec) >= SW_NAME_MAX || strchr(spec, ','))
            return pp_set_error(ld->err, PP_EINVAL,
                                "%s: devices[%zu]: expected a device spec (\"cpu\", \"sim:NPU\") "
                                "of 1..%d characters without ','",
                                ld->path, i, SW_NAME_MAX - 1);
        pp_error why;
        if (check && pp_device_check(spec, &c->devopt, &why) != PP_OK)
            return pp_set_error(ld->err, PP_EINVAL, "%s: devices[%zu]: %s", ld->path, i, why.msg);
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->devices[j], spec) == 0)
                return pp_set_error(ld->err, PP_EINVAL,
                                    "%s: devices[%zu]: \"%s\" repeats devices[%zu]", ld->path, i,
                                    spec, j);
        snprintf(c->devices[i], SW_NAME_MAX, "%s", spec);
    }
    c->ndevices = n;
    return PP_OK;
}

static int read_stage(pp_json_loader *ld, json_t *o, size_t i, pp_sweep_config *c) {
    static const char *const keys[] = {"name",       "model",  "in_dim",   "out_dim", "layers",
                                       "model_path", "inputs", "fallback", NULL};
    char where[32];
    snprintf(where, sizeof where, "stages[%zu]", i);
    if (!json_is_object(o))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s: expected an object", ld->path, where);
    sw_stage *s = &c->stages[i];
    const char *name = NULL, *model = "matmul";
    s->layers = 1;
    s->out_dim = -1;
    int rc = pp_json_check_keys(ld, o, where, keys);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, o, where, "name", &name);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, o, where, "model", &model);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, o, where, "in_dim", &s->in_dim);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, o, where, "out_dim", &s->out_dim);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, o, where, "layers", &s->layers);
    if (rc == PP_OK)
        rc = sw_model_read(ld, o, where, c, s);
    if (rc != PP_OK)
        return rc;
    if (s->model_path && (s->in_dim || s->layers != 1))
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s: in_dim and layers describe the built-in models; a model "
                            "file's shapes come from \"inputs\"",
                            ld->path, where);
    if (!name || !*name || strlen(name) >= SW_NAME_MAX || strchr(name, ','))
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s.name: expected 1..%d characters without ','", ld->path, where,
                            SW_NAME_MAX - 1);
    if (s->model_path && (strchr(name, '/') || name[0] == '.'))
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s.name: names a folder of exported_models/, so it may not hold "
                            "'/' or start with '.'", ld->path, where);
    snprintf(s->name, sizeof s->name, "%s", name);
    if (strcmp(model, kinds[0]) == 0)
        s->kind = PP_WORKLOAD_MATMUL;
    else if (strcmp(model, kinds[1]) == 0)
        s->kind = PP_WORKLOAD_SAGE;
    else
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s.model: unknown model \"%s\" (have: matmul, sage)", ld->path,
                            where, model);
    if (s->out_dim < 1)
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.out_dim: missing or < 1", ld->path, where);
    if (s->in_dim < 0 || s->layers < 1)
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s: needs in_dim >= 1 and layers >= 1",
                            ld->path, where);
    for (size_t j = 0; j < i; j++)
        if (strcmp(c->stages[j].name, s->name) == 0)
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.name: \"%s\" repeats stages[%zu]",
                                ld->path, where, s->name, j);
    return PP_OK;
}

static int read_stages(pp_json_loader *ld, json_t *list, pp_sweep_config *c) {
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    if (n < 1 || n > SW_MAX_ITEMS)
        return pp_set_error(ld->err, PP_EINVAL, "%s: stages: expected a list of 1..%d stages",
                            ld->path, SW_MAX_ITEMS);
    c->stages = calloc(n, sizeof *c->stages);
    if (!c->stages)
        return pp_set_error(ld->err, PP_ENOMEM, "%s: out of memory", ld->path);
    for (size_t i = 0; i < n; i++) {
        c->nstages = i + 1; /* what pp_sweep_config_free frees, should this one fail */
        int rc = read_stage(ld, json_array_get(list, i), i, c);
        if (rc != PP_OK)
            return rc;
    }
    return PP_OK;
}

static int read_top(pp_json_loader *ld, json_t *root, pp_sweep_config *c, int check) {
    static const char *const keys[] = {"name",       "features", "sizes",        "devices",
                                       "stages",     "warmup",   "iterations",   "min_time_ms",
                                       "seed",     "sim_bus_gbps", "sim_devices", "shared",
                                       NULL};
    if (!json_is_object(root))
        return pp_set_error(ld->err, PP_EINVAL, "%s: expected an object at the top", ld->path);
    const char *name = "sweep";
    int64_t features = 0, seed = 1;
    c->warmup = 10;
    c->iterations = 50;
    c->min_time_ms = SW_MIN_TIME_MS;
    int rc = pp_json_check_keys(ld, root, "", keys);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, root, "", "name", &name);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, root, "", "features", &features);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, root, "", "warmup", &c->warmup);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, root, "", "iterations", &c->iterations);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, root, "", "min_time_ms", &c->min_time_ms);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, root, "", "seed", &seed);
    if (rc == PP_OK)
        rc = pp_json_get_sim_bus(ld, root, &c->devopt.sim_bus_gbps);
    json_t *sim = json_object_get(root, "sim_devices");
    if (rc == PP_OK && sim)
        rc = pp_json_read_sim_devices(ld, sim, c->sim, &c->devopt.nsim);
    if (rc != PP_OK)
        return rc;
    c->devopt.sim = c->sim;
    if (strlen(name) >= SW_NAME_MAX)
        return pp_set_error(ld->err, PP_EINVAL, "%s: name: longer than %d characters", ld->path,
                            SW_NAME_MAX - 1);
    snprintf(c->name, sizeof c->name, "%s", name);
    if (c->warmup < 0 || c->warmup > 1000000)
        return pp_set_error(ld->err, PP_EINVAL, "%s: warmup: %d (expected 0..1000000)", ld->path,
                            c->warmup);
    if (c->iterations < 1 || c->iterations > 1000000)
        return pp_set_error(ld->err, PP_EINVAL, "%s: iterations: %d (expected 1..1000000)",
                            ld->path, c->iterations);
    if (c->min_time_ms < 0 || c->min_time_ms > 60000)
        return pp_set_error(ld->err, PP_EINVAL, "%s: min_time_ms: %d (expected 0..60000)",
                            ld->path, c->min_time_ms);
    c->seed = (uint64_t)seed;
    rc = read_sizes(ld, json_object_get(root, "sizes"), c, features);
    if (rc == PP_OK)
        rc = read_devices(ld, json_object_get(root, "devices"), c, check);
    if (rc == PP_OK)
        rc = read_stages(ld, json_object_get(root, "stages"), c);
    if (rc == PP_OK)
        rc = sw_sharing_read(ld, json_object_get(root, "shared"), c);
    for (size_t i = c->ndevices; rc == PP_OK && check && i < c->ndevices + c->nfallback; i++) {
        pp_error why;
        if (pp_device_check(c->devices[i], &c->devopt, &why) != PP_OK)
            rc = pp_set_error(ld->err, PP_EINVAL, "%s: fallback \"%s\": %s", ld->path,
                              c->devices[i], why.msg);
    }
    return rc;
}

/* The config with every default written out, in the file format, so that
 * two files that measure the same thing get one fingerprint and a sweep
 * directory's config.json reads back as a config. */
static json_t *canonical(const pp_sweep_config *c) {
    json_t *sizes = json_array(), *devices = json_array(), *stages = json_array();
    json_t *sim = json_array();
    for (size_t i = 0; i < c->nsizes; i++)
        json_array_append_new(sizes, json_pack("{sIsIsI}", "nodes", (json_int_t)c->sizes[i].nodes,
                                               "edges", (json_int_t)c->sizes[i].edges, "features",
                                               (json_int_t)c->sizes[i].features));
    for (size_t i = 0; i < c->ndevices; i++)
        json_array_append_new(devices, json_pack("{sssb}", "spec", c->devices[i], "static_shapes",
                                                 c->static_shapes[i]));
    for (size_t i = 0; i < c->nstages; i++) {
        const sw_stage *s = &c->stages[i];
        json_t *o = json_pack("{sssssIsi}", "name", s->name, "model", kinds[s->kind], "out_dim",
                              (json_int_t)s->out_dim, "layers", s->layers);
        if (s->in_dim > 0)
            json_object_set_new(o, "in_dim", json_integer(s->in_dim));
        sw_model_canonical(c, s, o);
        json_array_append_new(stages, o);
    }
    for (size_t i = 0; i < c->devopt.nsim; i++)
        json_array_append_new(sim, json_pack("{sssIsfsi}", "name", c->sim[i].name, "launch_ns",
                                             (json_int_t)c->sim[i].launch_ns, "gflops",
                                             c->sim[i].gflops, "units", c->sim[i].units));
    return json_pack("{sssosososisisisIsfsoso}", "name", c->name, "sizes", sizes, "devices",
                     devices, "stages", stages, "warmup", c->warmup, "iterations", c->iterations,
                     "min_time_ms", c->min_time_ms, "seed",
                     (json_int_t)c->seed, "sim_bus_gbps", c->devopt.sim_bus_gbps, "sim_devices",
                     sim, "shared", sw_sharing_json(c));
}

/* FNV-1a, 64 bits, of the canonical config and then of the model files it
 * names: a fingerprint, not a defence against forgery. */
static void fingerprint(const pp_sweep_config *c, char out[17]) {
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *p = (const unsigned char *)c->canonical; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    h = sw_model_digest(c, h);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int sw_config_load(const char *path, int check_devices, pp_sweep_config **out, pp_error *err) {
    json_t *root = NULL;
    int rc = pp_json_load_file(path, &root, err);
    if (rc != PP_OK)
        return rc;
    pp_sweep_config *c = calloc(1, sizeof *c);
    if (!c) {
        json_decref(root);
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    pp_json_loader ld = {.path = path, .err = err};
    rc = read_top(&ld, root, c, check_devices);
    json_decref(root);
    if (rc == PP_OK) {
        json_t *canon = canonical(c);
        c->canonical = canon ? json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(canon);
        if (!c->canonical)
            rc = pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    if (rc != PP_OK) {
        pp_sweep_config_free(c);
        return rc;
    }
    fingerprint(c, c->fingerprint);
    *out = c;
    return PP_OK;
}

int pp_sweep_config_load(const char *path, pp_sweep_config **out, pp_error *err) {
    return sw_config_load(path, 1, out, err);
}

void pp_sweep_config_free(pp_sweep_config *c) {
    if (!c)
        return;
    free(c->sizes);
    free(c->devices);
    free(c->static_shapes);
    free(c->group);
    for (size_t i = 0; c->stages && i < c->nstages; i++)
        free(c->stages[i].model_path);
    free(c->stages);
    free(c->canonical);
    free(c);
}

size_t pp_sweep_config_combinations(const pp_sweep_config *c) {
    return c->nsizes * c->ndevices * c->nstages;
}

const char *pp_sweep_config_fingerprint(const pp_sweep_config *c) {
    return c->fingerprint;
}

void sw_combination(const pp_sweep_config *c, size_t i, size_t *size, size_t *device,
                    size_t *stage) {
    *stage = i % c->nstages;
    *device = i / c->nstages % c->ndevices;
    *size = i / c->nstages / c->ndevices;
}

void pp_sweep_config_key(const pp_sweep_config *c, size_t i, char *buf, size_t len) {
    size_t s, d, t;
    sw_combination(c, i, &s, &d, &t);
    snprintf(buf, len, "%lld,%lld,%s,%s", (long long)c->sizes[s].nodes,
             (long long)c->sizes[s].edges, c->devices[d], c->stages[t].name);
}

void sw_workload(const pp_sweep_config *c, size_t i, pp_workload *w, pp_model_input *inputs) {
    size_t s, d, t;
    sw_combination(c, i, &s, &d, &t);
    const sw_stage *st = &c->stages[t];
    pp_workload_init(w);
    w->kind = st->kind;
    w->nodes = c->sizes[s].nodes;
    w->edges = c->sizes[s].edges;
    w->in_dim = st->in_dim > 0 ? st->in_dim : c->sizes[s].features;
    w->out_dim = st->out_dim;
    w->layers = st->layers;
    w->seed = c->seed;
    w->model_path = st->model_path;
    if (!st->model_path)
        return;
    const int64_t size_dims[3] = {c->sizes[s].nodes, c->sizes[s].edges, c->sizes[s].features};
    for (size_t k = 0; k < st->ninputs; k++) {
        const sw_input *in = &st->inputs[k];
        inputs[k] = (pp_model_input){.name = in->name, .rank = in->rank};
        for (int j = 0; j < in->rank; j++)
            inputs[k].dims[j] = in->dims[j] > 0 ? in->dims[j] : size_dims[-1 - in->dims[j]];
    }
    w->ninputs = st->ninputs;
    w->inputs = inputs;
}
