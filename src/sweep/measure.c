/* Measuring one combination of a sweep: its workload alone on its device,
 * one request, `warmup` runs and then `iterations` timed ones, into a raw
 * record (docs/sweep.md gives the record's schema). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/grow.h"
#include "device/workload.h"
#include "pipeprof/analyze.h"
#include "sweep/sweep_impl.h"

uint64_t sw_bytes(const pp_workload *w) {
    if (!w->ninputs)
        return pp_wl_input_bytes(w) + pp_wl_output_bytes(w);
    /* a model file's inputs: every value counted as 4 bytes, whatever its type */
    uint64_t values = 0;
    for (size_t i = 0; i < w->ninputs; i++) {
        uint64_t n = 1;
        for (int k = 0; k < w->inputs[i].rank; k++)
            n *= (uint64_t)w->inputs[i].dims[k];
        values += n;
    }
    return 4 * values + pp_wl_output_bytes(w);
}

/* mean (floor, as every pipeprof mean), population std, min, max, p25, p50
 * and p75 (nearest rank) of n values; sorts them. NULL (unknown) when every
 * value is 0, as docs/architecture.md §4 reads a hardware time of 0. The
 * quartiles give the planner a spread that a few preempted runs do not
 * inflate as they do std (docs/sweep.md, "Time of a stage on a device"). */
static json_t *stats(int64_t *v, size_t n, int zero_is_unknown) {
    pp_summary s;
    pp_summary_compute(v, n, &s);
    if (zero_is_unknown && s.min == 0 && s.max == 0)
        return json_null();
    double mean = (double)s.total / (double)n, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += ((double)v[i] - mean) * ((double)v[i] - mean);
    return json_pack("{sIsfsIsIsIsIsI}", "mean", (json_int_t)s.mean, "std", sqrt(ss / (double)n),
                     "min", (json_int_t)s.min, "max", (json_int_t)s.max, "p25",
                     (json_int_t)pp_percentile(v, n, 25000), "p50", (json_int_t)s.p50, "p75",
                     (json_int_t)pp_percentile(v, n, 75000));
}

/* One timed run: wall, hardware and transfer ns. */
typedef struct timed_run {
    int64_t wall, hw, xfer;
} timed_run;

int sw_phase_done(const pp_sweep_config *c, size_t runs, int64_t elapsed_ns) {
    return runs >= SW_MAX_RUNS ||
           (runs >= (size_t)c->iterations && elapsed_ns >= (int64_t)c->min_time_ms * 1000000);
}

/* Runs the request `warmup` times, then times it until sw_phase_done; the
 * runs go to *out (malloc'd, *n of them). */
static int time_runs(const pp_sweep_config *c, pp_request *r, timed_run **out, size_t *n,
                     pp_error *err) {
    timed_run *v = NULL;
    size_t cap = 0, k = 0;
    int64_t start = 0;
    for (int i = -c->warmup; i < 0 || !sw_phase_done(c, k, pp_now() - start); i++) {
        if (i == 0)
            start = pp_now();
        int64_t t0 = pp_now();
        int rc = pp_request_start(r, NULL, NULL);
        if (rc == PP_OK)
            rc = pp_request_wait(r);
        int64_t t1 = pp_now();
        pp_request_profile prof;
        if (rc == PP_OK)
            rc = pp_request_profile_get(r, &prof);
        if (rc == PP_OK && i >= 0 && pp_grow((void **)&v, &cap, k, sizeof *v) != PP_OK)
            rc = PP_ENOMEM;
        if (rc != PP_OK) {
            free(v);
            return pp_set_error(err, rc, "run %d failed: %s", i + c->warmup + 1, pp_strerror(rc));
        }
        if (i >= 0)
            v[k++] = (timed_run){t1 - t0, (int64_t)prof.hw_ns, (int64_t)prof.xfer_ns};
    }
    *out = v, *n = k;
    return PP_OK;
}

/* The "wall_ns", "hw_ns" and "xfer_ns" stats of n runs into rec. */
static int put_stats(json_t *rec, const timed_run *runs, size_t n) {
    static const char *const names[] = {"wall_ns", "hw_ns", "xfer_ns"};
    int64_t *col = malloc(n * sizeof *col);
    if (!col)
        return PP_ENOMEM;
    for (int f = 0; f < 3; f++) {
        for (size_t i = 0; i < n; i++)
            col[i] = f == 0 ? runs[i].wall : f == 1 ? runs[i].hw : runs[i].xfer;
        json_object_set_new(rec, names[f], stats(col, n, f > 0));
    }
    free(col);
    return PP_OK;
}

static json_t *base_record(const pp_sweep_config *c, size_t i, const pp_workload *w,
                           pp_device *dev, size_t on) {
    size_t s, d, t;
    sw_combination(c, i, &s, &d, &t);
    char key[256];
    pp_sweep_config_key(c, i, key, sizeof key);
    json_t *rec = json_pack(
        "{sIsssIsIsIsssssssIsIsi}", "index", (json_int_t)i, "key", key, "nodes",
        (json_int_t)w->nodes, "edges", (json_int_t)w->edges, "in_dim", (json_int_t)w->in_dim,
        "device", c->devices[d], "stage", c->stages[t].name, "model", sw_model_name(w), "out_dim", (json_int_t)w->out_dim, "bytes",
        (json_int_t)sw_bytes(w), "layers", w->layers);
    if (rec && w->model_path)
        json_object_set_new(rec, "model_path", json_string(w->model_path));
    if (rec && on != d)
        json_object_set_new(rec, "measured_on", json_string(c->devices[on]));
    if (rec && dev) {
        char label[160];
        snprintf(label, sizeof label, "%s%s%s%s", pp_device_label(dev),
                 on != d ? " (fallback for " : "", on != d ? c->devices[d] : "", on != d ? ")" : "");
        json_object_set_new(rec, "device_name", json_string(pp_device_name(dev)));
        json_object_set_new(rec, "label", json_string(label));
        json_object_set_new(rec, "simulated",
                            json_boolean(pp_device_flags(dev) & PP_TRACK_SIMULATED));
        if (pp_device_hw_running_mean(dev))
            json_object_set_new(rec, "hw_running_mean", json_true());
    }
    return rec;
}

static int failed(json_t *rec, const char *why, json_t **out, pp_error *err) {
    if (json_object_set_new(rec, "status", json_string("failed")) != 0 ||
        json_object_set_new(rec, "reason", json_string(why)) != 0) {
        json_decref(rec);
        return pp_set_error(err, PP_ENOMEM, "sweep: out of memory");
    }
    *out = rec;
    return PP_OK;
}

/* DIR/exported_models/<stage>/<nodes>_<edges>.xml, its folders made. */
static int export_path(const char *dir, const char *stage, const pp_workload *w, char *path,
                       size_t len, char *rel, size_t rel_len, pp_error *err) {
    snprintf(rel, rel_len, "exported_models/%s/%lld_%lld.xml", stage, (long long)w->nodes,
             (long long)w->edges);
    int rc = sw_path(path, len, dir, rel, err);
    for (char *p = path + strlen(dir) + 1; rc == PP_OK && (p = strchr(p, '/')); p++) {
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            rc = pp_set_error(err, PP_EIO, "%s: cannot create: %s", path, strerror(errno));
        *p = '/';
    }
    return rc;
}

int sw_measure(const pp_sweep_config *c, size_t i, size_t on, pp_device *dev, const char *why,
               const char *dir, json_t **out, pp_error *err) {
    pp_workload w;
    pp_model_input inputs[PP_MODEL_INPUTS_MAX];
    sw_workload(c, i, &w, inputs);
    json_t *rec = base_record(c, i, &w, dev, on);
    if (!rec)
        return pp_set_error(err, PP_ENOMEM, "sweep: out of memory");
    if (!dev)
        return failed(rec, why, out, err);
    pp_error e;
    if (pp_workload_check(&w, &e) != PP_OK)
        return failed(rec, e.msg, out, err);
    char exported[4096], rel[256];
    if (w.model_path && c->static_shapes[on]) {
        size_t s, d, t;
        sw_combination(c, i, &s, &d, &t);
        int rc = export_path(dir, c->stages[t].name, &w, exported, sizeof exported, rel,
                             sizeof rel, err);
        if (rc != PP_OK) {
            json_decref(rec);
            return rc;
        }
        if (pp_model_export_static(&w, exported, &e) != PP_OK)
            return failed(rec, e.msg, out, err);
        json_object_set_new(rec, "exported", json_string(rel));
        w.model_path = exported;
    }
    pp_compiled *cm = NULL;
    /* level 1: hardware and transfer totals, without the per-op cost of 2 */
    if (pp_compiled_create_level(dev, &w, 1, 1, &cm, &e) != PP_OK)
        return failed(rec, e.msg, out, err);
    pp_request *r = pp_compiled_request(cm, 0);
    pp_wl_fill_input(&w, c->seed, pp_request_input(r));
    timed_run *runs = NULL;
    size_t n = 0;
    int rc = time_runs(c, r, &runs, &n, &e);
    pp_compiled_free(cm);
    if (rc != PP_OK)
        return failed(rec, e.msg, out, err);
    json_object_set_new(rec, "status", json_string("ok"));
    json_object_set_new(rec, "iterations", json_integer((json_int_t)n));
    rc = put_stats(rec, runs, n);
    free(runs);
    if (rc != PP_OK) {
        json_decref(rec);
        return pp_set_error(err, rc, "sweep: out of memory");
    }
    *out = rec;
    return PP_OK;
}
