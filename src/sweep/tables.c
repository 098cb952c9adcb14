/* The tables of a complete sweep: lookup_table.json (one entry per
 * combination), bandwidth_table.json (one least-squares fit per device and
 * stage) and report.txt. docs/sweep.md gives their exact schemas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/outfile.h"
#include "sweep/sweep_impl.h"

/* The mean of stats object `name` of a record, or -1 when unknown. A
 * device whose hw_ns is a running mean has no hardware time to calibrate
 * on: its totals come from the wall (the record keeps what it reported). */
static int64_t mean_of(json_t *rec, const char *name) {
    if (strcmp(name, "wall_ns") != 0 && json_is_true(json_object_get(rec, "hw_running_mean")))
        return -1;
    json_t *m = json_object_get(json_object_get(rec, name), "mean");
    return json_is_integer(m) ? (int64_t)json_integer_value(m) : -1;
}

static int is_ok(json_t *rec) {
    return strcmp(json_string_value(json_object_get(rec, "status")), "ok") == 0;
}

/* The fits of one device and stage over the sizes it ran. */
typedef struct fits {
    int have_wall, have_hw, have_xfer;
    pp_fit wall, hw, xfer;
    json_t *any; /* an ok record, for the device's label */
} fits;

static int fit_pair(const pp_sweep_config *c, json_t *const *recs, size_t d, size_t t, fits *f) {
    size_t n = 0;
    double *x = malloc(4 * c->nsizes * sizeof *x);
    memset(f, 0, sizeof *f);
    if (!x)
        return PP_ENOMEM;
    double *yw = x + c->nsizes, *yh = yw + c->nsizes, *yx = yh + c->nsizes;
    int all_hw = 1, all_xfer = 1;
    for (size_t s = 0; s < c->nsizes; s++) {
        json_t *rec = recs[(s * c->ndevices + d) * c->nstages + t];
        if (!is_ok(rec))
            continue;
        f->any = rec;
        x[n] = (double)json_integer_value(json_object_get(rec, "bytes"));
        yw[n] = (double)mean_of(rec, "wall_ns");
        yh[n] = (double)mean_of(rec, "hw_ns");
        yx[n] = (double)mean_of(rec, "xfer_ns");
        all_hw &= yh[n] >= 0;
        all_xfer &= yx[n] >= 0;
        n++;
    }
    f->have_wall = pp_fit_linear(x, yw, n, &f->wall) == PP_OK;
    f->have_hw = all_hw && pp_fit_linear(x, yh, n, &f->hw) == PP_OK;
    f->have_xfer = all_xfer && pp_fit_linear(x, yx, n, &f->xfer) == PP_OK;
    free(x);
    return PP_OK;
}

static json_t *fit_json(int have, const pp_fit *f) {
    if (!have)
        return json_null();
    return json_pack("{sfsfsfsososIsIsI}", "a_ns_per_byte", f->a, "b_ns", f->b, "r2", f->r2,
                     "bandwidth_bytes_per_s", f->a > 0 ? json_real(1e9 / f->a) : json_null(),
                     "overhead_ns", json_real(f->b), "points", (json_int_t)f->n, "bytes_min",
                     (json_int_t)f->x_min, "bytes_max", (json_int_t)f->x_max);
}

/* total, transfer and compute of one ok record: the hardware total when the
 * device reports one, else the wall mean; the transfer the device reports,
 * else the fit's a * bytes (the seed's method), clipped to [0, total]. */
static void split_total(json_t *e, const fits *f) {
    int64_t hw = mean_of(e, "hw_ns"), xfer = mean_of(e, "xfer_ns");
    int64_t total = hw >= 0 ? hw : mean_of(e, "wall_ns");
    const pp_fit *fit = hw >= 0 ? (f->have_hw ? &f->hw : NULL) : (f->have_wall ? &f->wall : NULL);
    json_object_set_new(e, "total_ns", json_integer(total));
    json_object_set_new(e, "total_from", json_string(hw >= 0 ? "hw" : "wall"));
    const char *from = "device";
    if (xfer < 0 && fit) {
        double bytes = (double)json_integer_value(json_object_get(e, "bytes"));
        double t = fit->a * bytes;
        xfer = t < 0 ? 0 : t > (double)total ? total : (int64_t)(t + 0.5);
        from = "fit";
    }
    json_object_set_new(e, "transfer_ns", xfer >= 0 ? json_integer(xfer) : json_null());
    json_object_set_new(e, "transfer_from", xfer >= 0 ? json_string(from) : json_null());
    json_object_set_new(e, "compute_ns", xfer >= 0 ? json_integer(total - xfer) : json_null());
}

static json_t *tables_lookup(const pp_sweep_config *c, json_t *const *recs, const fits *f,
                             json_t *co_run) {
    json_t *entries = json_object();
    for (size_t i = 0; i < pp_sweep_config_combinations(c); i++) {
        size_t s, d, t;
        sw_combination(c, i, &s, &d, &t);
        json_t *e = json_deep_copy(recs[i]);
        json_object_del(e, "index");
        if (is_ok(e))
            split_total(e, &f[d * c->nstages + t]);
        json_object_set_new(entries, json_string_value(json_object_get(e, "key")), e);
    }
    json_t *t = json_pack("{sssisssssisisoso}", "format", "pipeprof-lookup", "version", 1,
                          "sweep", c->name, "fingerprint", c->fingerprint, "warmup", c->warmup,
                          "iterations", c->iterations, "entries", entries, "shared",
                          sw_sharing_json(c));
    if (json_object_size(co_run))
        json_object_set(t, "co_run", co_run);
    return t;
}

static json_t *tables_bandwidth(const pp_sweep_config *c, const fits *fs) {
    json_t *entries = json_object();
    for (size_t d = 0; d < c->ndevices; d++) {
        for (size_t t = 0; t < c->nstages; t++) {
            const fits *f = &fs[d * c->nstages + t];
            int hw = f->have_hw;
            json_t *latency = fit_json(hw ? 1 : f->have_wall, hw ? &f->hw : &f->wall);
            json_t *e = json_pack("{sssssssosososo}", "device", c->devices[d], "stage",
                                  c->stages[t].name, "latency_from", hw ? "hw" : "wall",
                                  "latency", latency,
                                  "wall", fit_json(f->have_wall, &f->wall), "hw",
                                  fit_json(f->have_hw, &f->hw), "transfer",
                                  fit_json(f->have_xfer, &f->xfer));
            json_t *label = f->any ? json_object_get(f->any, "label") : NULL;
            json_object_set_new(e, "label",
                                label ? json_incref(label) : json_string(c->devices[d]));
            json_object_set_new(e, "simulated",
                                json_boolean(f->any &&
                                             json_is_true(json_object_get(f->any, "simulated"))));
            char key[2 * SW_NAME_MAX + 2];
            snprintf(key, sizeof key, "%s,%s", c->devices[d], c->stages[t].name);
            json_object_set_new(entries, key, e);
        }
    }
    return json_pack("{sssissssso}", "format", "pipeprof-bandwidth", "version", 1, "sweep", c->name,
                     "fingerprint", c->fingerprint, "entries", entries);
}

static void put_us(FILE *f, json_t *rec, const char *name) {
    int64_t m = mean_of(rec, name);
    if (m < 0)
        fprintf(f, " %11s", "-");
    else
        fprintf(f, " %11.1f", (double)m / 1e3);
}

static void report_fit(FILE *f, const char *what, int have, const pp_fit *fit) {
    if (!have) {
        fprintf(f, "    %-9s needs two or more sizes that ran\n", what);
        return;
    }
    long long b = llround(fit->b);
    fprintf(f, "    %-9s %.6g ns/byte %c %lld ns, R^2 %.4f, ", what, fit->a, b < 0 ? '-' : '+',
            b < 0 ? -b : b, fit->r2);
    if (fit->a > 0)
        fprintf(f, "bandwidth %.1f MB/s\n", 1e3 / fit->a);
    else
        fprintf(f, "no bandwidth (slope <= 0)\n");
}

static void report_write(FILE *f, const pp_sweep_config *c, json_t *const *recs, const fits *fs) {
    size_t n = pp_sweep_config_combinations(c), bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !is_ok(recs[i]);
    fprintf(f, "pipeprof sweep \"%s\" (config %s): %zu combinations, %zu failed\n", c->name,
            c->fingerprint, n, bad);
    fprintf(f, "%zu sizes x %zu devices x %zu stages; %d warm-up and %d measured runs each\n\n",
            c->nsizes, c->ndevices, c->nstages, c->warmup, c->iterations);
    fprintf(f, "%-40s %11s %11s %11s %11s\n", "nodes,edges,device,stage", "wall us", "wall std",
            "hw us", "xfer us");
    for (size_t i = 0; i < n; i++) {
        json_t *r = recs[i];
        char key[300];
        snprintf(key, sizeof key, "%s%s", json_string_value(json_object_get(r, "key")),
                 json_is_true(json_object_get(r, "simulated")) ? " (simulated)" : "");
        fprintf(f, "%-40s", key);
        if (!is_ok(r)) {
            fprintf(f, " FAILED: %s\n", json_string_value(json_object_get(r, "reason")));
            continue;
        }
        put_us(f, r, "wall_ns");
        json_t *std = json_object_get(json_object_get(r, "wall_ns"), "std");
        fprintf(f, " %11.1f", json_real_value(std) / 1e3);
        put_us(f, r, "hw_ns");
        put_us(f, r, "xfer_ns");
        fputc('\n', f);
    }
    fprintf(f, "\nleast-squares fits, latency = a * bytes + b (bandwidth = 1/a, overhead = b):\n");
    for (size_t d = 0; d < c->ndevices; d++) {
        for (size_t t = 0; t < c->nstages; t++) {
            const fits *fi = &fs[d * c->nstages + t];
            json_t *label = fi->any ? json_object_get(fi->any, "label") : NULL;
            fprintf(f, "  %s, %s\n", label ? json_string_value(label) : c->devices[d],
                    c->stages[t].name);
            report_fit(f, "wall", fi->have_wall, &fi->wall);
            if (fi->have_hw)
                report_fit(f, "hw", 1, &fi->hw);
            if (fi->have_xfer)
                report_fit(f, "transfer", 1, &fi->xfer);
        }
    }
}

static int report_save(const char *dir, const pp_sweep_config *c, json_t *const *recs,
                       const fits *fs, pp_error *err) {
    char path[4096], *text = NULL;
    size_t len = 0;
    int rc = sw_path(path, sizeof path, dir, SW_REPORT, err);
    if (rc != PP_OK)
        return rc;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    report_write(mem, c, recs, fs);
    fclose(mem);
    rc = pp_outfile_write_file(path, text, len, err);
    free(text);
    return rc;
}

int sw_tables_write(const char *dir, const pp_sweep_config *c, json_t *const *recs,
                    pp_error *err) {
    size_t npairs = c->ndevices * c->nstages;
    fits *fs = calloc(npairs, sizeof *fs);
    if (!fs)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", dir);
    for (size_t k = 0; k < npairs; k++) {
        if (fit_pair(c, recs, k / c->nstages, k % c->nstages, &fs[k]) != PP_OK) {
            free(fs);
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", dir);
        }
    }
    char path[4096];
    json_t *co_run = sw_co_run_read(dir);
    json_t *lookup = tables_lookup(c, recs, fs, co_run), *bw = tables_bandwidth(c, fs);
    json_decref(co_run);
    int rc = sw_path(path, sizeof path, dir, SW_LOOKUP, err);
    if (rc == PP_OK)
        rc = sw_json_write(path, lookup, err);
    if (rc == PP_OK)
        rc = sw_path(path, sizeof path, dir, SW_BANDWIDTH, err);
    if (rc == PP_OK)
        rc = sw_json_write(path, bw, err);
    if (rc == PP_OK)
        rc = report_save(dir, c, recs, fs, err);
    json_decref(lookup);
    json_decref(bw);
    free(fs);
    return rc;
}
