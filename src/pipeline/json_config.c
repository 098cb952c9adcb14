/* Reading the small JSON files users write (pipeline files, sweep configs)
 * with jansson. Every message names the file and the key the way the file
 * spells it: "sweep.json: stages[1].out_dim: expected a whole number". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "pipeline/json_config.h"

/* Unknown keys are errors: a misspelt key silently ignored would run
 * something other than what the user wrote. */
int pp_json_check_keys(pp_json_loader *ld, json_t *obj, const char *where,
                       const char *const *known) {
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        int found = 0;
        for (const char *const *k = known; *k && !found; k++)
            found = strcmp(*k, key) == 0;
        if (!found) {
            char have[256] = "";
            for (const char *const *k = known; *k; k++)
                snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s",
                         k == known ? "" : ", ", *k);
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s%s%s: unknown key (have: %s)", ld->path,
                                where, *where ? "." : "", key, have);
        }
    }
    return PP_OK;
}

/* Reads integer `key` of `obj` into *out when present. */
int pp_json_get_int(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                    int64_t *out) {
    json_t *v = json_object_get(obj, key);
    if (!v)
        return PP_OK;
    if (!json_is_integer(v))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s%s%s: expected a whole number", ld->path,
                            where, *where ? "." : "", key);
    *out = json_integer_value(v);
    return PP_OK;
}

int pp_json_get_int32(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                      int *out) {
    int64_t v = *out;
    int rc = pp_json_get_int(ld, obj, where, key, &v);
    if (rc == PP_OK && (v < -1000000000 || v > 1000000000))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s%s%s: %lld is out of range", ld->path, where,
                            *where ? "." : "", key, (long long)v);
    *out = (int)v;
    return rc;
}

int pp_json_get_number(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                       double *out) {
    json_t *v = json_object_get(obj, key);
    if (!v)
        return PP_OK;
    if (!json_is_number(v))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s%s%s: expected a number", ld->path, where,
                            *where ? "." : "", key);
    *out = json_number_value(v);
    return PP_OK;
}

int pp_json_get_string(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                      const char **out) {
    json_t *v = json_object_get(obj, key);
    if (!v)
        return PP_OK;
    if (!json_is_string(v))
        return pp_set_error(ld->err, PP_EINVAL, "%s: %s%s%s: expected a string", ld->path, where,
                            *where ? "." : "", key);
    *out = json_string_value(v);
    return PP_OK;
}

int pp_json_get_sim_bus(pp_json_loader *ld, json_t *root, double *gbps) {
    int rc = pp_json_get_number(ld, root, "", "sim_bus_gbps", gbps);
    if (rc == PP_OK && *gbps != 0 && !(*gbps >= PP_SIM_BUS_GBPS_MIN && *gbps <= PP_SIM_BUS_GBPS_MAX))
        rc = pp_set_error(ld->err, PP_EINVAL, "%s: sim_bus_gbps: %g (expected 0 for the default, "
                          "or %g..%g)", ld->path, *gbps, PP_SIM_BUS_GBPS_MIN, PP_SIM_BUS_GBPS_MAX);
    return rc;
}

int pp_json_read_sim_devices(pp_json_loader *ld, json_t *list, pp_sim_device_params *sim,
                             size_t *n) {
    static const char *const keys[] = {"name", "launch_ns", "gflops", "units", NULL};
    if (!json_is_array(list) || json_array_size(list) > PP_JSON_MAX_SIM_DEVICES)
        return pp_set_error(ld->err, PP_EINVAL, "%s: sim_devices: expected a list of at most %d",
                            ld->path, PP_JSON_MAX_SIM_DEVICES);
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *d = json_array_get(list, i);
        char where[48];
        snprintf(where, sizeof where, "sim_devices[%zu]", i);
        if (!json_is_object(d))
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s: expected an object", ld->path, where);
        const char *name = NULL;
        int64_t launch = 0;
        pp_sim_device_params *p = &sim[i];
        memset(p, 0, sizeof *p);
        p->units = 1;
        int rc = pp_json_check_keys(ld, d, where, keys);
        if (rc == PP_OK)
            rc = pp_json_get_string(ld, d, where, "name", &name);
        if (rc == PP_OK)
            rc = pp_json_get_int(ld, d, where, "launch_ns", &launch);
        if (rc == PP_OK)
            rc = pp_json_get_number(ld, d, where, "gflops", &p->gflops);
        if (rc == PP_OK)
            rc = pp_json_get_int32(ld, d, where, "units", &p->units);
        if (rc != PP_OK)
            return rc;
        if (!name || !*name || strlen(name) >= sizeof p->name)
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.name: expected 1..%zu characters",
                                ld->path, where, sizeof p->name - 1);
        snprintf(p->name, sizeof p->name, "%s", name);
        if (launch < 0 || launch > PP_SIM_LAUNCH_NS_MAX)
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.launch_ns: %lld (expected 0..%lld)",
                                ld->path, where, (long long)launch, (long long)PP_SIM_LAUNCH_NS_MAX);
        if (!(p->gflops >= PP_SIM_GFLOPS_MIN && p->gflops <= PP_SIM_GFLOPS_MAX))
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.gflops: %g (expected %g..%g)", ld->path,
                                where, p->gflops, PP_SIM_GFLOPS_MIN, PP_SIM_GFLOPS_MAX);
        if (p->units < 1 || p->units > 64)
            return pp_set_error(ld->err, PP_EINVAL, "%s: %s.units: %d (expected 1..64)", ld->path,
                                where, p->units);
        p->launch_ns = launch;
    }
    *n = json_array_size(list);
    return PP_OK;
}

int pp_json_load_file(const char *path, json_t **root, pp_error *err) {
    /* Opened here rather than by jansson, so that errno says whether the
     * file is missing (bad input, as for every command) or unreadable. */
    FILE *f = fopen(path, "rb");
    if (!f)
        return pp_set_error(err, errno == ENOENT ? PP_ENOTFOUND : PP_EIO, "%s: cannot open: %s",
                            path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return pp_set_error(err, PP_EINVAL, "%s: is a directory, not a JSON file", path);
    }
    json_error_t jerr;
    errno = 0;
    *root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
    int read_failed = ferror(f), e = errno;
    fclose(f);
    if (read_failed) {
        json_decref(*root);
        *root = NULL;
        return pp_set_error(err, PP_EIO, "%s: read failed: %s", path, strerror(e ? e : EIO));
    }
    if (!*root)
        return pp_set_error(err, PP_EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column,
                            jerr.text);
    return PP_OK;
}
