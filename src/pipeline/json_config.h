/* json_config.h — what the readers of user-written JSON files share
 * (pipeline files, sweep configs): loading with line/column errors, and
 * typed getters whose messages name the file and the key. */
#ifndef PP_PIPELINE_JSON_CONFIG_H
#define PP_PIPELINE_JSON_CONFIG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeprof/device.h"

#define PP_JSON_MAX_SIM_DEVICES 16

typedef struct pp_json_loader {
    const char *path; /* starts every message */
    pp_error *err;
} pp_json_loader;

/* Parses the file (duplicate keys rejected): PP_ENOTFOUND for a missing
 * file, PP_EIO when reading fails, PP_EINVAL with "path:line:col: what" for
 * a syntax error. The caller json_decrefs *root. */
int pp_json_load_file(const char *path, json_t **root, pp_error *err);
/* PP_EINVAL naming the first key of `obj` that is not in the NULL-ended
 * `known` list; `where` is the object's key path ("" at the top). */
int pp_json_check_keys(pp_json_loader *ld, json_t *obj, const char *where,
                       const char *const *known);
/* Each reads `key` of `obj` into *out when present and leaves *out alone
 * when absent; a value of the wrong type is PP_EINVAL naming where.key. */
int pp_json_get_int(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                    int64_t *out);
int pp_json_get_int32(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                      int *out);
int pp_json_get_number(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                       double *out);
int pp_json_get_string(pp_json_loader *ld, json_t *obj, const char *where, const char *key,
                       const char **out);
/* Reads "sim_bus_gbps" of `root` into *gbps when present: 0 (the default
 * bus) or PP_SIM_BUS_GBPS_MIN..MAX, else PP_EINVAL naming the range. */
int pp_json_get_sim_bus(pp_json_loader *ld, json_t *root, double *gbps);
/* Reads a "sim_devices" list (at most PP_JSON_MAX_SIM_DEVICES) into sim. */
int pp_json_read_sim_devices(pp_json_loader *ld, json_t *list, pp_sim_device_params *sim,
                             size_t *n);

#endif
