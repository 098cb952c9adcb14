/* Reading a pipeline file (JSON, docs/pipeline.md) into a pipeline. Every
 * message names the file and the key, the way the file spells it:
 * "pipeline.json: stages[1].split: 3 values for 2 devices". Range checks
 * are left to pp_pipeline_create and pp_pipeline_add_stage, whose messages
 * use the same key names. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/json_config.h"
#include "pipeline/pipeline_impl.h"

static int read_config(pp_json_loader *ld, json_t *root, pp_pipeline_config *cfg,
                       pp_sim_device_params *sim) {
    static const char *const keys[] = {"name", "nodes", "edges", "features", "batches", "warmup",
                                       "queue_depth", "seed", "sim_bus_gbps", "sim_devices",
                                       "stages", NULL};
    int64_t seed = (int64_t)cfg->seed;
    int rc = pp_json_check_keys(ld, root, "", keys);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, root, "", "name", &cfg->name);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, root, "", "nodes", &cfg->nodes);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, root, "", "edges", &cfg->edges);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, root, "", "features", &cfg->features);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, root, "", "batches", &cfg->batches);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, root, "", "warmup", &cfg->warmup);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, root, "", "queue_depth", &cfg->queue_depth);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, root, "", "seed", &seed);
    if (rc == PP_OK)
        rc = pp_json_get_sim_bus(ld, root, &cfg->devices.sim_bus_gbps);
    json_t *list = json_object_get(root, "sim_devices");
    if (rc == PP_OK && list)
        rc = pp_json_read_sim_devices(ld, list, sim, &cfg->devices.nsim);
    cfg->devices.sim = sim;
    cfg->seed = (uint64_t)seed;
    return rc;
}

static int read_devices(pp_json_loader *ld, json_t *st, const char *where, pp_stage_spec *spec) {
    json_t *one = json_object_get(st, "device"), *list = json_object_get(st, "devices");
    if (one && list)
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s: give \"device\" or \"devices\", not both",
                            ld->path, where);
    if (one) {
        spec->ndevices = 1;
        return pp_json_get_string(ld, st, where, "device", &spec->devices[0]);
    }
    if (!list)
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s: no \"device\" (or \"devices\" list)",
                            ld->path, where);
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    if (n < 1 || n > PP_STAGE_MAX_DEVICES)
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.devices: expected a list of 1..%d specs",
                            ld->path, where, PP_STAGE_MAX_DEVICES);
    for (size_t d = 0; d < n; d++) {
        json_t *v = json_array_get(list, d);
        if (!json_is_string(v))
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.devices[%zu]: expected a string",
                                ld->path, where, d);
        spec->devices[d] = json_string_value(v);
    }
    spec->ndevices = (int)n;
    json_t *split = json_object_get(st, "split");
    if (!split)
        return PP_OK;
    if (!json_is_array(split) || json_array_size(split) != n)
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.split: %zu values for %zu devices",
                            ld->path, where, json_is_array(split) ? json_array_size(split) : 0, n);
    for (size_t d = 0; d < n; d++) {
        json_t *v = json_array_get(split, d);
        if (!json_is_number(v))
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.split[%zu]: expected a number",
                                ld->path, where, d);
        spec->split[d] = json_number_value(v);
    }
    return PP_OK;
}

/* A model_path relative to the pipeline file's folder, as a user reading
 * the file would take it. */
static void resolve_path(const pp_json_loader *ld, const char *path, char *out, size_t len) {
    const char *slash = strrchr(ld->path, '/');
    if (path[0] == '/' || !slash)
        snprintf(out, len, "%s", path);
    else
        snprintf(out, len, "%.*s/%s", (int)(slash - ld->path), ld->path, path);
}

/* `model_path` (room for 4096 bytes) holds the stage's resolved model path. */
static int read_stage(pp_json_loader *ld, json_t *st, int i, pp_stage_spec *spec,
                      char *model_path) {
    static const char *const keys[] = {"name", "device", "devices", "split", "requests", "model",
                                       "out_dim", "layers", "model_path", NULL};
    char where[32];
    snprintf(where, sizeof where, "stages[%d]", i);
    if (!json_is_object(st))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s: expected an object", ld->path, where);
    memset(spec, 0, sizeof *spec);
    const char *model = "matmul";
    int64_t out_dim = 0;
    int rc = pp_json_check_keys(ld, st, where, keys);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, st, where, "name", &spec->name);
    if (rc == PP_OK)
        rc = read_devices(ld, st, where, spec);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, st, where, "requests", &spec->requests);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, st, where, "model", &model);
    if (rc == PP_OK)
        rc = pp_json_get_int(ld, st, where, "out_dim", &out_dim);
    if (rc == PP_OK)
        rc = pp_json_get_int32(ld, st, where, "layers", &spec->layers);
    const char *path = NULL;
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, st, where, "model_path", &path);
    if (rc != PP_OK)
        return rc;
    if (path && *path) {
        resolve_path(ld, path, model_path, 4096);
        spec->model_path = model_path;
    } else if (path) {
        spec->model_path = path; /* "": pp_pipeline_add_stage names it */
    }
    if (strcmp(model, "matmul") == 0)
        spec->kind = PP_WORKLOAD_MATMUL;
    else if (strcmp(model, "sage") == 0)
        spec->kind = PP_WORKLOAD_SAGE;
    else
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.model: unknown model \"%s\" (have: matmul, sage)",
                            ld->path, where, model);
    if (!json_object_get(st, "out_dim"))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.out_dim: missing", ld->path, where);
    spec->out_dim = out_dim;
    return PP_OK;
}

static int read_pipeline(pp_json_loader *ld, json_t *root, pp_pipeline **out) {
    if (!json_is_object(root))
        return pp_set_error(ld->err, PP_EINVAL, "%s: expected an object at the top", ld->path);
    pp_pipeline_config cfg;
    pp_pipeline_config_init(&cfg);
    pp_sim_device_params sim[PP_JSON_MAX_SIM_DEVICES];
    int rc = read_config(ld, root, &cfg, sim);
    if (rc != PP_OK)
        return rc;
    json_t *stages = json_object_get(root, "stages");
    if (!json_is_array(stages) || json_array_size(stages) == 0)
        return pp_set_error(ld->err, PP_EINVAL, "%s: stages: expected a list of at least one stage",
                            ld->path);
    pp_error why;
    pp_pipeline *p = NULL;
    rc = pp_pipeline_create(&cfg, &p, &why);
    for (size_t i = 0; rc == PP_OK && i < json_array_size(stages); i++) {
        pp_stage_spec spec;
        char model_path[4096];
        rc = read_stage(ld, json_array_get(stages, i), (int)i, &spec, model_path);
        if (rc != PP_OK) {
            pp_pipeline_free(p);
            return rc;
        }
        rc = pp_pipeline_add_stage(p, &spec, &why);
    }
    if (rc != PP_OK) {
        pp_pipeline_free(p);
        return pp_set_error(ld->err, rc, "%s: %s", ld->path, why.msg);
    }
    *out = p;
    return PP_OK;
}

int pp_pipeline_load(const char *path, pp_pipeline **out, pp_error *err) {
    json_t *root = NULL;
    int rc = pp_json_load_file(path, &root, err);
    if (rc != PP_OK)
        return rc;
    pp_json_loader ld = {.path = path, .err = err};
    rc = read_pipeline(&ld, root, out);
    json_decref(root);
    return rc;
}
