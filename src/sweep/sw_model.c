/* A sweep stage that measures the user's own model file (docs/sweep.md):
 * "model_path" (ONNX or OpenVINO IR, relative to the config's folder),
 * "inputs" giving each input's shape from a size
 * ({"x": ["nodes", "features"], "edge_index": [2, "edges"]}), and an
 * optional "fallback" device measured where the stage fails. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sweep/sweep_impl.h"

static const char *const dim_names[] = {"nodes", "edges", "features"};

/* The model file's path: relative to the config's folder, made absolute so
 * that config.json in a sweep directory reads back to the same file. */
static int resolve(pp_json_loader *ld, const char *where, const char *path, char **out) {
    char joined[PATH_MAX];
    const char *slash = strrchr(ld->path, '/');
    if (path[0] == '/' || !slash)
        snprintf(joined, sizeof joined, "%s", path);
    else
        snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - ld->path), ld->path, path);
    char abs[PATH_MAX];
    FILE *f = fopen(joined, "rb");
    if (!f || !realpath(joined, abs)) {
        if (f)
            fclose(f);
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.model_path: cannot open %s", ld->path,
                            where, joined);
    }
    fclose(f);
    *out = strdup(abs);
    return *out ? PP_OK : pp_set_error(ld->err, PP_ENOMEM, "%s: out of memory", ld->path);
}

static int read_dims(pp_json_loader *ld, const char *where, const char *name, json_t *list,
                     sw_input *in) {
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    if (n < 1 || n > PP_MODEL_INPUT_MAX_RANK)
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s.inputs.%s: expected a list of 1..%d dimensions (numbers or "
                            "\"nodes\", \"edges\", \"features\")",
                            ld->path, where, name, PP_MODEL_INPUT_MAX_RANK);
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(list, k);
        int64_t dim = json_is_integer(v) ? json_integer_value(v) : 0;
        for (int s = 0; json_is_string(v) && s < 3; s++)
            if (strcmp(json_string_value(v), dim_names[s]) == 0)
                dim = -1 - s;
        if (dim == 0 || (json_is_integer(v) && dim < 1))
            return pp_set_error(ld->err, PP_EINVAL,
                                "%s: %s.inputs.%s[%zu]: expected a number >= 1 or \"nodes\", "
                                "\"edges\", \"features\"",
                                ld->path, where, name, k);
        in->dims[k] = dim;
    }
    in->rank = (int)n;
    return PP_OK;
}

static int read_inputs(pp_json_loader *ld, const char *where, json_t *obj, sw_stage *s) {
    if (!json_is_object(obj) || json_object_size(obj) < 1 ||
        json_object_size(obj) > PP_MODEL_INPUTS_MAX)
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s.inputs: expected an object of 1..%d inputs, each name to its "
                            "shape (\"x\": [\"nodes\", \"features\"])",
                            ld->path, where, PP_MODEL_INPUTS_MAX);
    const char *name;
    json_t *dims;
    json_object_foreach(obj, name, dims) {
        sw_input *in = &s->inputs[s->ninputs];
        if (!*name || strlen(name) >= sizeof in->name)
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.inputs: a name of 1..%zu characters",
                                ld->path, where, sizeof in->name - 1);
        snprintf(in->name, sizeof in->name, "%s", name);
        int rc = read_dims(ld, where, name, dims, in);
        if (rc != PP_OK)
            return rc;
        s->ninputs++;
    }
    return PP_OK;
}

/* The index of spec in c->devices, added after the swept ones if new. */
static int fallback_index(pp_json_loader *ld, const char *where, const char *spec,
                          pp_sweep_config *c, int *out) {
    if (!*spec || strlen(spec) >= SW_NAME_MAX || strchr(spec, ','))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.fallback: expected a device spec", ld->path,
                            where);
    size_t n = c->ndevices + c->nfallback, i = 0;
    while (i < n && strcmp(c->devices[i], spec) != 0)
        i++;
    if (i == n) {
        char(*grown)[SW_NAME_MAX] = realloc(c->devices, (n + 1) * sizeof *c->devices);
        int *flags = grown ? realloc(c->static_shapes, (n + 1) * sizeof *flags) : NULL;
        if (grown)
            c->devices = grown;
        if (!flags)
            return pp_set_error(ld->err, PP_ENOMEM, "%s: out of memory", ld->path);
        c->static_shapes = flags;
        snprintf(c->devices[n], SW_NAME_MAX, "%s", spec);
        c->static_shapes[n] = 0;
        c->nfallback++;
    }
    *out = (int)i;
    return PP_OK;
}

int sw_model_read(pp_json_loader *ld, json_t *o, const char *where, pp_sweep_config *c,
                  sw_stage *s) {
    const char *path = NULL, *fallback = NULL;
    s->fallback = -1;
    int rc = pp_json_get_string(ld, o, where, "model_path", &path);
    if (rc == PP_OK)
        rc = pp_json_get_string(ld, o, where, "fallback", &fallback);
    if (rc != PP_OK)
        return rc;
    json_t *inputs = json_object_get(o, "inputs");
    if (!path && inputs)
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s.inputs: only for a stage with model_path",
                            ld->path, where);
    if (path && !inputs)
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s.inputs: missing (each input of the model file by name, with "
                            "its shape: {\"x\": [\"nodes\", \"features\"]})",
                            ld->path, where);
    if (path && json_object_get(o, "model"))
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: %s.model: a stage runs either a built-in model or model_path",
                            ld->path, where);
    if (path && (rc = resolve(ld, where, path, &s->model_path)) != PP_OK)
        return rc;
    if (path && (rc = read_inputs(ld, where, inputs, s)) != PP_OK)
        return rc;
    if (fallback && (rc = fallback_index(ld, where, fallback, c, &s->fallback)) != PP_OK)
        return rc;
    return PP_OK;
}

void sw_model_canonical(const pp_sweep_config *c, const sw_stage *s, json_t *o) {
    if (s->fallback >= 0)
        json_object_set_new(o, "fallback", json_string(c->devices[s->fallback]));
    if (!s->model_path)
        return;
    json_object_del(o, "model");
    json_object_set_new(o, "model_path", json_string(s->model_path));
    json_t *inputs = json_object();
    for (size_t i = 0; i < s->ninputs; i++) {
        json_t *dims = json_array();
        for (int k = 0; k < s->inputs[i].rank; k++) {
            int64_t d = s->inputs[i].dims[k];
            json_array_append_new(dims, d > 0 ? json_integer(d) : json_string(dim_names[-1 - d]));
        }
        json_object_set_new(inputs, s->inputs[i].name, dims);
    }
    json_object_set_new(o, "inputs", inputs);
}

static uint64_t digest_file(const char *path, uint64_t h) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return h ^ 0xffu; /* absent: differs from any content, and from present-but-empty */
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 0x100000001b3u;
    fclose(f);
    return h;
}

uint64_t sw_model_digest(const pp_sweep_config *c, uint64_t h) {
    for (size_t i = 0; i < c->nstages; i++) {
        const char *path = c->stages[i].model_path;
        if (!path)
            continue;
        h = digest_file(path, h);
        size_t len = strlen(path);
        if (len > 4 && strcmp(path + len - 4, ".xml") == 0) {
            char bin[PATH_MAX];
            snprintf(bin, sizeof bin, "%.*s.bin", (int)(len - 4), path);
            h = digest_file(bin, h);
        }
    }
    return h;
}
