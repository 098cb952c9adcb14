/* The tables of a complete sweep in the layout the user's GNX profiling
 * scripts read (docs/sweep.md, "--compat gnx"), derived from the versioned
 * DIR/lookup_table.json and DIR/bandwidth_table.json so that the two can
 * never disagree:
 *   DIR/gnx/lookup_table.json     "nodes,edges,PU,stage": {compute_time,
 *                                 transfer_time, total_time, std} in ms
 *   DIR/gnx/bandwidth_table.json  "PU_stageN": MB/s (1024^2 bytes/s)
 * PU is a processing-unit name per device spec, stage the stage's 1-based
 * position in the config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "sweep/sweep_impl.h"

/* The PU name of device spec `spec`: from map ("SPEC=PU"), else what
 * follows the backend ("sim:NPU" -> "NPU", "openvino:GPU.0" -> "GPU.0"),
 * "cpu" -> "CPU". */
static void pu_name(const char *spec, const char *const *map, size_t nmap, char *out) {
    size_t len = strlen(spec);
    for (size_t i = 0; i < nmap; i++)
        if (strncmp(map[i], spec, len) == 0 && map[i][len] == '=') {
            snprintf(out, SW_NAME_MAX, "%s", map[i] + len + 1);
            return;
        }
    const char *colon = strrchr(spec, ':');
    snprintf(out, SW_NAME_MAX, "%s", colon ? colon + 1 : spec);
    for (char *p = out; !colon && *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
}

/* Every device's PU name; two devices with one name are an error, and so is
 * a map entry naming no device of the sweep. */
static int pu_names(const pp_sweep_config *c, const char *const *map, size_t nmap,
                    char (*pu)[SW_NAME_MAX], pp_error *err) {
    for (size_t i = 0; i < nmap; i++) {
        const char *eq = strchr(map[i], '=');
        size_t d = 0;
        while (eq && d < c->ndevices &&
               (strlen(c->devices[d]) != (size_t)(eq - map[i]) ||
                strncmp(c->devices[d], map[i], (size_t)(eq - map[i])) != 0))
            d++;
        if (!eq || d == c->ndevices || !eq[1] || strlen(eq + 1) >= SW_NAME_MAX ||
            strpbrk(eq + 1, ",_"))
            return pp_set_error(err, PP_EINVAL,
                                "--pu %s: expected SPEC=NAME with SPEC a device of the sweep and "
                                "NAME of 1..%d characters without ',' or '_'",
                                map[i], SW_NAME_MAX - 1);
    }
    for (size_t d = 0; d < c->ndevices; d++) {
        pu_name(c->devices[d], map, nmap, pu[d]);
        for (size_t e = 0; e < d; e++)
            if (strcmp(pu[e], pu[d]) == 0)
                return pp_set_error(err, PP_EINVAL,
                                    "--compat gnx: devices %s and %s both have the PU name \"%s\"; "
                                    "name one with --pu %s=NAME",
                                    c->devices[e], c->devices[d], pu[d], c->devices[d]);
    }
    return PP_OK;
}

static size_t index_of(const pp_sweep_config *c, const char *spec, int stage) {
    size_t n = stage ? c->nstages : c->ndevices, i = 0;
    while (i < n && strcmp(stage ? c->stages[i].name : c->devices[i], spec) != 0)
        i++;
    return i;
}

static json_t *ms(json_t *ns) {
    return json_is_number(ns) ? json_real(json_number_value(ns) / 1e6) : json_null();
}

static json_t *gnx_lookup(const pp_sweep_config *c, json_t *entries, char (*pu)[SW_NAME_MAX]) {
    json_t *out = json_object();
    const char *key;
    json_t *e;
    json_object_foreach(entries, key, e) {
        if (!json_is_integer(json_object_get(e, "total_ns")))
            continue; /* failed: the GNX table has no row for it */
        size_t d = index_of(c, json_string_value(json_object_get(e, "device")), 0);
        size_t t = index_of(c, json_string_value(json_object_get(e, "stage")), 1);
        const char *from = json_string_value(json_object_get(e, "total_from"));
        json_t *std = json_object_get(json_object_get(e, strcmp(from, "hw") == 0 ? "hw_ns"
                                                                                 : "wall_ns"),
                                      "std");
        char k[4 * SW_NAME_MAX];
        snprintf(k, sizeof k, "%lld,%lld,%s,%zu",
                 (long long)json_integer_value(json_object_get(e, "nodes")),
                 (long long)json_integer_value(json_object_get(e, "edges")), pu[d], t + 1);
        json_object_set_new(out, k,
                            json_pack("{sosososo}", "compute_time",
                                      ms(json_object_get(e, "compute_ns")), "transfer_time",
                                      ms(json_object_get(e, "transfer_ns")), "total_time",
                                      ms(json_object_get(e, "total_ns")), "std", ms(std)));
    }
    return out;
}

static json_t *gnx_bandwidth(const pp_sweep_config *c, json_t *entries, char (*pu)[SW_NAME_MAX]) {
    json_t *out = json_object();
    const char *key;
    json_t *e;
    json_object_foreach(entries, key, e) {
        size_t d = index_of(c, json_string_value(json_object_get(e, "device")), 0);
        size_t t = index_of(c, json_string_value(json_object_get(e, "stage")), 1);
        json_t *bps = json_object_get(json_object_get(e, "latency"), "bandwidth_bytes_per_s");
        char k[2 * SW_NAME_MAX];
        snprintf(k, sizeof k, "%s_stage%zu", pu[d], t + 1);
        json_object_set_new(out, k,
                            json_is_number(bps)
                                ? json_real(json_number_value(bps) / (1024.0 * 1024.0))
                                : json_null());
    }
    return out;
}

/* The "entries" of DIR/name, which `format` must be. */
static int read_entries(const char *dir, const char *name, const char *format, json_t **root,
                        json_t **entries, pp_error *err) {
    char path[4096];
    int rc = sw_path(path, sizeof path, dir, name, err);
    if (rc == PP_OK)
        rc = pp_json_load_file(path, root, err);
    if (rc != PP_OK)
        return rc;
    json_t *f = json_object_get(*root, "format");
    *entries = json_object_get(*root, "entries");
    if (!json_is_string(f) || strcmp(json_string_value(f), format) != 0 || !json_is_object(*entries))
        return pp_set_error(err, PP_EINVAL, "%s: not a %s table (pipeprof sweep writes one)", path,
                            format);
    return PP_OK;
}

int pp_sweep_compat_write(const char *dir, const char *format, const char *const *pu_map,
                          size_t npu, pp_error *err) {
    if (strcmp(format, "gnx") != 0)
        return pp_set_error(err, PP_EINVAL, "--compat %s: unknown table layout (have: gnx)",
                            format);
    char path[4096], gnx[4096];
    pp_sweep_config *c = NULL;
    json_t *lk = NULL, *bw = NULL, *lke = NULL, *bwe = NULL;
    int rc = sw_path(path, sizeof path, dir, SW_CONFIG, err);
    if (rc == PP_OK)
        rc = sw_config_load(path, 0, &c, err);
    if (rc == PP_OK)
        rc = read_entries(dir, SW_LOOKUP, "pipeprof-lookup", &lk, &lke, err);
    if (rc == PP_OK)
        rc = read_entries(dir, SW_BANDWIDTH, "pipeprof-bandwidth", &bw, &bwe, err);
    char(*pu)[SW_NAME_MAX] = c ? calloc(c->ndevices, sizeof *pu) : NULL;
    if (rc == PP_OK && !pu)
        rc = pp_set_error(err, PP_ENOMEM, "out of memory");
    if (rc == PP_OK)
        rc = pu_names(c, pu_map, npu, pu, err);
    if (rc == PP_OK)
        rc = sw_path(gnx, sizeof gnx, dir, "gnx", err);
    if (rc == PP_OK && mkdir(gnx, 0777) != 0 && errno != EEXIST)
        rc = pp_set_error(err, PP_EIO, "%s: cannot create: %s", gnx, strerror(errno));
    json_t *tables[2] = {NULL, NULL};
    if (rc == PP_OK) {
        tables[0] = gnx_lookup(c, lke, pu);
        tables[1] = gnx_bandwidth(c, bwe, pu);
    }
    for (int i = 0; rc == PP_OK && i < 2; i++) {
        rc = sw_path(path, sizeof path, gnx, i ? SW_BANDWIDTH : SW_LOOKUP, err);
        if (rc == PP_OK)
            rc = sw_json_write(path, tables[i], err);
    }
    json_decref(tables[0]);
    json_decref(tables[1]);
    json_decref(lk);
    json_decref(bw);
    free(pu);
    pp_sweep_config_free(c);
    return rc;
}
