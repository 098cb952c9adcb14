/* Checking a raw.jsonl record as strictly as sw_measure writes it
 * (docs/sweep.md, raw.jsonl): a record of another config, a field missing
 * or of the wrong type, or a statistic out of order is refused, so that
 * `sweep merge` and `--resume` never build tables that `plan` and
 * `analyze --lookup` would then refuse. */
#include <stdio.h>
#include <string.h>

#include "device/workload.h"
#include "sweep/sweep_impl.h"

/* Sets `why` and returns 0. */
static int bad(char *why, size_t len, const char *fmt, const char *key) {
    snprintf(why, len, fmt, key);
    return 0;
}

static int int_is(json_t *rec, const char *key, int64_t want, char *why, size_t len) {
    json_t *v = json_object_get(rec, key);
    if (!json_is_integer(v))
        return bad(why, len, "%s: expected an integer", key);
    if ((int64_t)json_integer_value(v) != want)
        return bad(why, len, "%s: not this combination's value", key);
    return 1;
}

static int string_is(json_t *rec, const char *key, const char *want, char *why, size_t len) {
    json_t *v = json_object_get(rec, key);
    if (!json_is_string(v))
        return bad(why, len, "%s: expected a string", key);
    if (want && strcmp(json_string_value(v), want) != 0)
        return bad(why, len, "%s: not this combination's value", key);
    return 1;
}

/* {"mean", "std", "min", "max", "p25", "p50", "p75"}: whole numbers >= 0
 * (std a number >= 0) with min <= p25 <= p50 <= p75 <= max and min <= mean
 * <= max; null where allowed. Records of sweeps before the quartiles lack
 * p25 and p75 and still resume. */
static int stats_ok(json_t *rec, const char *key, int null_ok, char *why, size_t len) {
    static const char *const whole[] = {"mean", "min", "max", "p25", "p50", "p75"};
    json_t *s = json_object_get(rec, key);
    if (json_is_null(s) && null_ok)
        return 1;
    size_t nkeys = json_is_object(s) ? json_object_size(s) : 0;
    int quartiles = nkeys == 7;
    if (nkeys != 5 && nkeys != 7)
        return bad(why, len, "%s: expected {\"mean\", \"std\", \"min\", \"max\", \"p25\", "
                             "\"p50\", \"p75\"}", key);
    json_int_t v[6];
    for (int k = 0; k < 6; k++) {
        json_t *x = json_object_get(s, whole[k]);
        if (k == 3 || k == 5)
            x = quartiles ? x : json_object_get(s, "p50");
        if (!json_is_integer(x) || (v[k] = json_integer_value(x)) < 0)
            return bad(why, len, "%s: mean, min, max, p25, p50 and p75 must be whole numbers >= 0",
                       key);
    }
    json_t *std = json_object_get(s, "std");
    if (!json_is_number(std) || !(json_number_value(std) >= 0))
        return bad(why, len, "%s.std: expected a number >= 0", key);
    if (v[1] > v[3] || v[3] > v[4] || v[4] > v[5] || v[5] > v[2] || v[0] < v[1] || v[0] > v[2])
        return bad(why, len, "%s: expected min <= p25 <= p50 <= p75 <= max, min <= mean <= max",
                   key);
    return 1;
}

int sw_record_check(const pp_sweep_config *c, json_t *rec, size_t *index, char *why, size_t len) {
    json_t *iv = json_object_get(rec, "index");
    if (!json_is_object(rec))
        return bad(why, len, "%s", "expected a JSON object");
    if (!json_is_integer(iv) || json_integer_value(iv) < 0 ||
        (size_t)json_integer_value(iv) >= pp_sweep_config_combinations(c))
        return bad(why, len, "%s: expected a combination number of this config", "index");
    size_t i = (size_t)json_integer_value(iv), s, d, t;
    char key[256];
    pp_sweep_config_key(c, i, key, sizeof key);
    sw_combination(c, i, &s, &d, &t);
    pp_workload w;
    pp_model_input inputs[PP_MODEL_INPUTS_MAX];
    sw_workload(c, i, &w, inputs);
    if (!string_is(rec, "key", key, why, len) || !int_is(rec, "nodes", w.nodes, why, len) ||
        !int_is(rec, "edges", w.edges, why, len) || !int_is(rec, "in_dim", w.in_dim, why, len) ||
        !int_is(rec, "out_dim", w.out_dim, why, len) ||
        !int_is(rec, "bytes", (int64_t)sw_bytes(&w), why, len) ||
        !int_is(rec, "layers", w.layers, why, len) ||
        !string_is(rec, "device", c->devices[d], why, len) ||
        !string_is(rec, "stage", c->stages[t].name, why, len) ||
        !string_is(rec, "model", sw_model_name(&w), why, len))
        return 0;
    json_t *name = json_object_get(rec, "device_name");
    if (name && (!string_is(rec, "device_name", NULL, why, len) ||
                 !string_is(rec, "label", NULL, why, len)))
        return 0;
    json_t *sim = json_object_get(rec, "simulated");
    if ((name != NULL) != (sim != NULL) || (sim && !json_is_boolean(sim)))
        return bad(why, len, "%s: expected a boolean beside device_name and label", "simulated");
    if (!string_is(rec, "status", NULL, why, len))
        return 0;
    const char *status = json_string_value(json_object_get(rec, "status"));
    if (strcmp(status, "failed") == 0) {
        if (!string_is(rec, "reason", NULL, why, len))
            return 0;
    } else if (strcmp(status, "ok") == 0) {
        json_t *n = json_object_get(rec, "iterations");
        if (!name)
            return bad(why, len, "%s: an ok record names its device", "device_name");
        if (!json_is_integer(n) || json_integer_value(n) < c->iterations ||
            json_integer_value(n) > SW_MAX_RUNS)
            return bad(why, len, "%s: expected at least the config's number of runs",
                       "iterations");
        if (!stats_ok(rec, "wall_ns", 0, why, len) || !stats_ok(rec, "hw_ns", 1, why, len) ||
            !stats_ok(rec, "xfer_ns", 1, why, len))
            return 0;
    } else {
        return bad(why, len, "%s: expected \"ok\" or \"failed\"", "status");
    }
    *index = i;
    return 1;
}
