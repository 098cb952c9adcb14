/* Which swept devices share hardware (docs/sweep.md, "Devices that share
 * hardware"): detected from their specs, and declared in the config's
 * "shared" for what pipeprof cannot see (an AI PC's CPU, GPU and NPU on one
 * memory). Each device is in at most one group; a declared group takes its
 * devices out of the detected ones. `sweep --co-run` measures the pairs of
 * each group together, and the planner reads the groups from the lookup
 * table: devices sharing "cores" take turns on them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sweep/sweep_impl.h"

static const char *const kinds[] = {"cores", "bus", "memory"};

/* The detected group of a spec, an index into kinds: the host's cores
 * (cpu, openvino's CPU and AUTO, which may run there) or the simulated bus
 * (every sim: device); -1 none. */
static int detected(const char *spec) {
    if (strcmp(spec, "cpu") == 0 || strcmp(spec, "openvino:AUTO") == 0 ||
        (strncmp(spec, "openvino:", 9) == 0 && strstr(spec, "CPU")))
        return 0;
    return strncmp(spec, "sim:", 4) == 0 ? 1 : -1;
}

int sw_spec_on_host_cores(const char *spec) {
    return detected(spec) == 0;
}

static size_t device_index(const pp_sweep_config *c, const char *spec) {
    size_t d = 0;
    while (d < c->ndevices && strcmp(c->devices[d], spec) != 0)
        d++;
    return d;
}

static int add_group(pp_json_loader *ld, pp_sweep_config *c, const char *kind) {
    if (c->ngroups == SW_MAX_GROUPS)
        return pp_set_error(ld->err, PP_EINVAL, "%s: shared: more than %d groups", ld->path,
                            SW_MAX_GROUPS);
    snprintf(c->group_hw[c->ngroups++], sizeof c->group_hw[0], "%s", kind);
    return PP_OK;
}

int sw_sharing_read(pp_json_loader *ld, json_t *list, pp_sweep_config *c) {
    static const char *const keys[] = {"hardware", "devices", NULL};
    c->group = calloc(c->ndevices, sizeof *c->group);
    if (!c->group)
        return pp_set_error(ld->err, PP_ENOMEM, "%s: out of memory", ld->path);
    if (list && !json_is_array(list))
        return pp_set_error(ld->err, PP_EINVAL,
                            "%s: shared: expected a list of {\"hardware\": \"cores\" | \"bus\" | "
                            "\"memory\", \"devices\": [...]}",
                            ld->path);
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) {
        char where[32];
        snprintf(where, sizeof where, "shared[%zu]", i);
        const char *hw = NULL;
        json_t *devs = json_object_get(o, "devices");
        int rc = json_is_object(o) ? pp_json_check_keys(ld, o, where, keys)
                                   : pp_set_error(ld->err, PP_EINVAL, "%s: %s: expected an object",
                                                  ld->path, where);
        if (rc == PP_OK)
            rc = pp_json_get_string(ld, o, where, "hardware", &hw);
        if (rc != PP_OK)
            return rc;
        int k = 0;
        while (hw && k < 3 && strcmp(hw, kinds[k]) != 0)
            k++;
        if (!hw || k == 3)
            return pp_set_error(ld->err, PP_EINVAL,
                                "%s: %s.hardware: expected \"cores\", \"bus\" or \"memory\"",
                                ld->path, where);
        if (!json_is_array(devs) || json_array_size(devs) < 2)
            return pp_set_error(ld->err, PP_EINVAL,
                                "%s: %s.devices: expected two or more of the swept devices",
                                ld->path, where);
        if ((rc = add_group(ld, c, hw)) != PP_OK)
            return rc;
        size_t j;
        json_t *v;
        json_array_foreach(devs, j, v) {
            size_t d = json_is_string(v) ? device_index(c, json_string_value(v)) : c->ndevices;
            if (d == c->ndevices)
                return pp_set_error(ld->err, PP_EINVAL,
                                    "%s: %s.devices[%zu]: not one of the config's devices",
                                    ld->path, where, j);
            if (c->group[d])
                return pp_set_error(ld->err, PP_EINVAL,
                                    "%s: %s.devices[%zu]: \"%s\" is already in shared[%d]",
                                    ld->path, where, j, c->devices[d], c->group[d] - 1);
            c->group[d] = (int)c->ngroups;
        }
    }
    /* the detected groups of the devices no declared group holds */
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        for (size_t d = 0; d < c->ndevices; d++)
            n += !c->group[d] && detected(c->devices[d]) == k;
        if (n < 2)
            continue;
        int rc = add_group(ld, c, kinds[k]);
        if (rc != PP_OK)
            return rc;
        for (size_t d = 0; d < c->ndevices; d++)
            if (!c->group[d] && detected(c->devices[d]) == k)
                c->group[d] = (int)c->ngroups;
    }
    return PP_OK;
}

json_t *sw_sharing_json(const pp_sweep_config *c) {
    json_t *groups = json_array();
    for (size_t g = 1; g <= c->ngroups; g++) {
        json_t *list = json_array();
        for (size_t d = 0; d < c->ndevices; d++)
            if (c->group[d] == (int)g)
                json_array_append_new(list, json_string(c->devices[d]));
        json_array_append_new(groups,
                              json_pack("{ssso}", "hardware", c->group_hw[g - 1], "devices", list));
    }
    return groups;
}
