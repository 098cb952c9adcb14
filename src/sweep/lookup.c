/* Reading a lookup_table.json (docs/sweep.md) for the planner and for the
 * contention factor of `pipeprof analyze --lookup`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/grow.h"
#include "sweep/lookup.h"

/* A cell's runs are unstable when their spread makes its mean a poor
 * summary: a coefficient of variation above 0.25, a mean more than 10% from
 * the median, or a maximum above 3x the median (heavy outliers). The
 * reason into why ("" when stable, or the table lacks the figures). */
static void lk_unstable(json_t *wall, char *why, size_t len) {
    json_t *jm = json_object_get(wall, "mean"), *js = json_object_get(wall, "std");
    json_t *jp = json_object_get(wall, "p50"), *jx = json_object_get(wall, "max");
    double mean = json_is_number(jm) ? json_number_value(jm) : 0;
    double sd = json_is_number(js) ? json_number_value(js) : 0;
    double p50 = json_is_number(jp) ? json_number_value(jp) : 0;
    double max = json_is_number(jx) ? json_number_value(jx) : 0;
    why[0] = '\0';
    if (mean > 0 && sd / mean > 0.25)
        snprintf(why, len, "CV %.2f above 0.25", sd / mean);
    else if (p50 > 0 && (mean - p50 > 0.10 * p50 || p50 - mean > 0.10 * p50))
        snprintf(why, len, "mean %+.0f%% from the median", 100 * (mean / p50 - 1));
    else if (p50 > 0 && max > 3 * p50)
        snprintf(why, len, "max %.1fx the median", max / p50);
}

static int read_entry(const char *path, const char *key, json_t *o, lk_entry *e, pp_error *err) {
    const char *device, *stage, *model, *status, *name = "";
    json_int_t nodes, edges, in_dim, out_dim, bytes;
    int layers;
    json_error_t jerr;
    if (json_unpack_ex(o, &jerr, 0, "{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:i, s?s}",
                       "status", &status, "device", &device, "stage", &stage, "model", &model,
                       "nodes", &nodes, "edges", &edges, "in_dim", &in_dim, "out_dim", &out_dim,
                       "bytes", &bytes, "layers", &layers, "device_name", &name) != 0)
        return pp_set_error(err, PP_EINVAL, "%s: entries[\"%s\"]: %s", path, key, jerr.text);
    memset(e, 0, sizeof *e);
    snprintf(e->device, sizeof e->device, "%s", device);
    snprintf(e->device_name, sizeof e->device_name, "%s", name);
    snprintf(e->stage, sizeof e->stage, "%s", stage);
    snprintf(e->model, sizeof e->model, "%s", model);
    e->nodes = nodes, e->edges = edges, e->in_dim = in_dim, e->out_dim = out_dim;
    e->bytes = bytes, e->layers = layers;
    /* measured on a stage's fallback: the device itself cannot run it */
    e->ok = strcmp(status, "ok") == 0 && !json_object_get(o, "measured_on");
    e->simulated = json_is_true(json_object_get(o, "simulated"));
    e->wall_ns = e->hw_ns = -1;
    if (!e->ok)
        return PP_OK;
    json_t *wall = json_object_get(json_object_get(o, "wall_ns"), "mean");
    json_t *hw = json_object_get(json_object_get(o, "hw_ns"), "mean");
    if (!json_is_integer(wall) || json_integer_value(wall) < 0)
        return pp_set_error(err, PP_EINVAL, "%s: entries[\"%s\"].wall_ns.mean: expected a whole "
                                            "number of nanoseconds", path, key);
    e->wall_ns = json_integer_value(wall);
    /* the quartiles: both or neither (tables of sweeps before them) */
    json_t *p25 = json_object_get(json_object_get(o, "wall_ns"), "p25");
    json_t *p75 = json_object_get(json_object_get(o, "wall_ns"), "p75");
    if ((p25 || p75) &&
        (!json_is_integer(p25) || !json_is_integer(p75) || json_integer_value(p25) < 0 ||
         json_integer_value(p75) < json_integer_value(p25)))
        return pp_set_error(err, PP_EINVAL, "%s: entries[\"%s\"].wall_ns: expected whole "
                                            "numbers 0 <= p25 <= p75, or neither", path, key);
    if (p25)
        e->wall_sd_ns = (double)(json_integer_value(p75) - json_integer_value(p25)) / 1.349;
    lk_unstable(json_object_get(o, "wall_ns"), e->unstable, sizeof e->unstable);
    /* a running mean is no time of this request: the entry calibrates on wall */
    int running = json_is_true(json_object_get(o, "hw_running_mean"));
    e->hw_ns = json_is_integer(hw) && !running ? json_integer_value(hw) : -1;
    return PP_OK;
}

/* "co_run" (sweep --co-run) and "shared": absent in tables of sweeps
 * without them. */
static int read_sharing(const char *path, json_t *root, pp_lookup *l, pp_error *err) {
    json_t *groups = json_object_get(root, "shared"), *co = json_object_get(root, "co_run");
    size_t n = 0, g;
    json_t *grp, *v;
    json_array_foreach(groups, g, grp) n += json_array_size(json_object_get(grp, "devices"));
    l->shared = calloc(n + 1, sizeof *l->shared);
    l->group = calloc(n + 1, sizeof *l->group);
    l->cores = calloc(n + 1, sizeof *l->cores);
    l->corun = calloc(json_object_size(co) + 1, sizeof *l->corun);
    if (!l->shared || !l->group || !l->cores || !l->corun)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    json_array_foreach(groups, g, grp) {
        const char *hw = NULL;
        json_t *list = NULL;
        if (json_unpack(grp, "{s:s, s:o}", "hardware", &hw, "devices", &list) != 0 ||
            !json_is_array(list))
            return pp_set_error(err, PP_EINVAL,
                                "%s: shared[%zu]: expected {\"hardware\": \"cores\" or \"bus\", "
                                "\"devices\": [...]}",
                                path, g);
        size_t i;
        json_array_foreach(list, i, v) {
            if (!json_is_string(v))
                return pp_set_error(err, PP_EINVAL,
                                    "%s: shared[%zu].devices[%zu]: expected a device spec", path,
                                    g, i);
            snprintf(l->shared[l->nshared], SW_NAME_MAX, "%s", json_string_value(v));
            l->cores[l->nshared] = strcmp(hw, "cores") == 0;
            l->group[l->nshared++] = (int)g;
        }
    }
    const char *key;
    json_object_foreach(co, key, v) {
        lk_corun *c = &l->corun[l->ncorun];
        json_int_t nodes;
        const char *d[2], *s[2];
        json_error_t jerr;
        if (json_unpack_ex(v, &jerr, 0, "{s:I, s:{s:s, s:s, s:F}, s:{s:s, s:s, s:F}}", "nodes",
                           &nodes, "a", "device", &d[0], "stage", &s[0], "slowdown",
                           &c->slowdown[0], "b", "device", &d[1], "stage", &s[1], "slowdown",
                           &c->slowdown[1]) != 0)
            return pp_set_error(err, PP_EINVAL, "%s: co_run[\"%s\"]: %s", path, key, jerr.text);
        c->nodes = nodes;
        for (int k = 0; k < 2; k++) {
            snprintf(c->device[k], SW_NAME_MAX, "%s", d[k]);
            snprintf(c->stage[k], SW_NAME_MAX, "%s", s[k]);
        }
        l->ncorun++;
    }
    return PP_OK;
}

double lk_slowdown(const pp_lookup *l, const char *s1, const char *d1, const char *s2,
                   const char *d2, int64_t nodes) {
    double best = 0.0;
    int64_t dist = -1;
    for (size_t i = 0; i < l->ncorun; i++) {
        const lk_corun *c = &l->corun[i];
        for (int k = 0; k < 2; k++) {
            if (strcmp(c->stage[k], s1) != 0 || strcmp(c->device[k], d1) != 0 ||
                strcmp(c->stage[1 - k], s2) != 0 || strcmp(c->device[1 - k], d2) != 0)
                continue;
            int64_t dd = c->nodes > nodes ? c->nodes - nodes : nodes - c->nodes;
            if (dist < 0 || dd < dist)
                dist = dd, best = c->slowdown[k];
        }
    }
    return best;
}

int lk_on_cores(const pp_lookup *l, const char *d) {
    for (size_t i = 0; i < l->nshared; i++)
        if (strcmp(l->shared[i], d) == 0)
            return l->cores[i];
    return 0;
}

int lk_shared(const pp_lookup *l, const char *d1, const char *d2) {
    int g1 = -1, g2 = -2;
    for (size_t i = 0; i < l->nshared; i++) {
        if (strcmp(l->shared[i], d1) == 0)
            g1 = l->group[i];
        if (strcmp(l->shared[i], d2) == 0)
            g2 = l->group[i];
    }
    return g1 == g2;
}

static int read_lookup(const char *path, json_t *root, pp_lookup *l, pp_error *err) {
    const char *format = NULL;
    json_t *entries = NULL;
    if (json_unpack(root, "{s:s, s:o}", "format", &format, "entries", &entries) != 0 ||
        strcmp(format, "pipeprof-lookup") != 0 || !json_is_object(entries))
        return pp_set_error(err, PP_EINVAL,
                            "%s: not a lookup table (expected \"format\": \"pipeprof-lookup\" "
                            "and an \"entries\" object; pipeprof sweep writes one)",
                            path);
    const char *key;
    json_t *o;
    size_t cap = 0;
    json_object_foreach(entries, key, o) {
        if (pp_grow((void **)&l->entries, &cap, l->n, sizeof *l->entries) != PP_OK)
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
        int rc = read_entry(path, key, o, &l->entries[l->n], err);
        if (rc != PP_OK)
            return rc;
        l->n++;
    }
    if (l->n == 0)
        return pp_set_error(err, PP_EINVAL, "%s: the table has no entries", path);
    return read_sharing(path, root, l, err);
}

int pp_lookup_load(const char *path, pp_lookup **out, pp_error *err) {
    json_t *root = NULL;
    int rc = pp_json_load_file(path, &root, err);
    if (rc != PP_OK)
        return rc;
    pp_lookup *l = calloc(1, sizeof *l);
    rc = l ? read_lookup(path, root, l, err) : pp_set_error(err, PP_ENOMEM, "out of memory");
    json_decref(root);
    if (rc != PP_OK) {
        pp_lookup_free(l);
        return rc;
    }
    *out = l;
    return PP_OK;
}

void pp_lookup_free(pp_lookup *l) {
    if (!l)
        return;
    free(l->entries);
    free(l->corun);
    free(l->shared);
    free(l->group);
    free(l->cores);
    free(l);
}

int pp_lookup_isolated(const pp_lookup *l, int64_t nodes, int64_t edges, pp_isolated_hw **out,
                       size_t *n, pp_error *err) {
    const lk_entry **pick = calloc(l->n, sizeof *pick);
    if (!pick)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const lk_entry *e = &l->entries[i];
        if (!e->ok || e->hw_ns <= 0 || (nodes > 0 && (e->nodes != nodes || e->edges != edges)))
            continue;
        size_t j = 0;
        while (j < k && (strcmp(pick[j]->stage, e->stage) != 0 ||
                         strcmp(pick[j]->device_name, e->device_name) != 0))
            j++;
        if (j < k) { /* a second size of the same stage and device */
            const lk_entry *first = pick[j];
            free(pick);
            return pp_set_error(err, PP_EINVAL,
                                "the table has stage \"%s\" on %s at more than one size "
                                "(%lld,%lld and %lld,%lld); choose one with --lookup-size "
                                "NODES,EDGES",
                                e->stage, e->device, (long long)first->nodes,
                                (long long)first->edges, (long long)e->nodes,
                                (long long)e->edges);
        }
        pick[k++] = e;
    }
    pp_isolated_hw *iso = calloc(k ? k : 1, sizeof *iso);
    if (!iso) {
        free(pick);
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < k; i++)
        iso[i] = (pp_isolated_hw){.stage = pick[i]->stage, .device = pick[i]->device_name,
                                  .hw_ns = pick[i]->hw_ns};
    free(pick);
    *out = iso;
    *n = k;
    return PP_OK;
}

int pp_lookup_simulated(const pp_lookup *l, const char *device) {
    for (size_t i = 0; i < l->n; i++)
        if (l->entries[i].simulated && strcmp(l->entries[i].device, device) == 0)
            return 1;
    return 0;
}

int pp_lookup_stage_wall(const pp_lookup *l, const char *stage, const char *device,
                         int64_t nodes, int64_t edges, pp_lookup_wall *out, pp_error *err) {
    const lk_entry *found = NULL;
    for (size_t i = 0; i < l->n; i++) {
        const lk_entry *e = &l->entries[i];
        if (strcmp(e->stage, stage) != 0 ||
            (strcmp(e->device, device) != 0 && strcmp(e->device_name, device) != 0) ||
            (nodes > 0 && (e->nodes != nodes || e->edges != edges)))
            continue;
        if (found)
            return pp_set_error(err, PP_EINVAL,
                                "the table has stage \"%s\" on %s at more than one size "
                                "(%lld,%lld and %lld,%lld); choose one with --lookup-size "
                                "NODES,EDGES",
                                stage, device, (long long)found->nodes, (long long)found->edges,
                                (long long)e->nodes, (long long)e->edges);
        found = e;
    }
    if (!found)
        return pp_set_error(err, PP_ENOTFOUND, "the table has no stage \"%s\" on device \"%s\"%s",
                            stage, device, nodes > 0 ? " at that size" : "");
    if (!found->ok)
        return pp_set_error(err, PP_EINVAL, "the table's stage \"%s\" failed on %s", stage,
                            found->device);
    *out = (pp_lookup_wall){.mean_ns = (double)found->wall_ns, .sd_ns = found->wall_sd_ns,
                            .simulated = found->simulated};
    snprintf(out->device_name, sizeof out->device_name, "%s",
             found->device_name[0] ? found->device_name : found->device);
    return PP_OK;
}
