/* Co-run calibration (`pipeprof sweep --co-run`, docs/sweep.md): devices
 * that share hardware slow each other down, which measuring each stage
 * alone cannot see. For every pair of swept devices that share (the
 * host's cores: `cpu`, `openvino:` CPU and AUTO devices; the simulated
 * bus: every `sim:` device), every size and every pair of stages, stage A
 * runs on the first device and stage B on the second at the same time,
 * and so do two stages on one device of the host's cores (each stage of a
 * pipeline opens its own instance there, whose threads run at once),
 * each in a loop, and each one's mean wall time while the other was still
 * running is compared with its mean alone, timed right before while the
 * other waited: slowdown = together / alone. Records go to DIR/co_run.jsonl as they
 * finish (a killed co-run resumes), and into the lookup table's "co_run".
 * Key: "nodes,edges,deviceA,stageA+deviceB,stageB". */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "device/workload.h"
#include "sweep/sweep_impl.h"

typedef struct runner {
    const pp_sweep_config *c;
    pp_request *r;
    int turn;                      /* 0 or 1: which of the two is alone first */
    int64_t alone_ns, together_ns; /* sums of the timed runs */
    size_t alone, together;        /* how many */
    atomic_int done;               /* it has timed its runs together */
    struct runner *other;
    pthread_barrier_t *step;
    int status;
} runner;

static int64_t timed_run(runner *u) {
    int64_t t0 = pp_now();
    if ((u->status = pp_request_start(u->r, NULL, NULL)) == PP_OK)
        u->status = pp_request_wait(u->r);
    return pp_now() - t0;
}

/* Two turns alone, one runner each while the other waits at the barrier
 * (warm-up, then timed runs), then both together: each runs until both
 * have timed their runs together, so neither stops while the other still
 * times and every timed run overlaps the other's load. Each timed phase
 * lasts as sw_phase_done says (iterations and min_time_ms). Alone and
 * together are measured moments apart, so drift of a shared machine hits
 * both alike. */
static void *run_loop(void *arg) {
    runner *u = arg;
    for (int turn = 0; turn < 2; turn++) {
        if (turn == u->turn) {
            for (int i = 0; i < u->c->warmup && u->status == PP_OK; i++)
                timed_run(u);
            int64_t t0 = pp_now();
            while (u->status == PP_OK && !sw_phase_done(u->c, u->alone, pp_now() - t0))
                u->alone_ns += timed_run(u), u->alone++;
        }
        pthread_barrier_wait(u->step);
    }
    int64_t t0 = pp_now();
    while (u->status == PP_OK && !(atomic_load(&u->done) && atomic_load(&u->other->done))) {
        int64_t t = timed_run(u);
        if (!atomic_load(&u->done)) {
            u->together_ns += t, u->together++;
            if (sw_phase_done(u->c, u->together, pp_now() - t0))
                atomic_store(&u->done, 1);
        }
    }
    atomic_store(&u->done, 1);
    return NULL;
}

/* Whether combination (s, d, t) ran alone, on its own device. */
static int ran_alone(const pp_sweep_config *c, json_t *const *recs, size_t s, size_t d, size_t t) {
    json_t *rec = recs[(s * c->ndevices + d) * c->nstages + t];
    return strcmp(json_string_value(json_object_get(rec, "status")), "ok") == 0 &&
           !json_object_get(rec, "measured_on");
}

static json_t *side(const char *device, const char *stage, const runner *u) {
    int64_t alone = u->alone ? u->alone_ns / (int64_t)u->alone : 0;
    int64_t together = u->together ? u->together_ns / (int64_t)u->together : 0;
    return json_pack("{sssssIsIsIsf}", "device", device, "stage", stage, "alone_ns",
                     (json_int_t)alone, "together_ns", (json_int_t)together, "runs",
                     (json_int_t)u->together, "slowdown",
                     (double)together / (double)(alone > 0 ? alone : 1));
}

/* Runs stage ta on da and tb on db together at size s into *out. */
static int co_measure(const pp_sweep_config *c, size_t s, size_t da, size_t ta, size_t db,
                      size_t tb, json_t **out, pp_error *err) {
    size_t idx[2] = {(s * c->ndevices + da) * c->nstages + ta,
                     (s * c->ndevices + db) * c->nstages + tb};
    pp_device *dev[2] = {NULL, NULL};
    pp_compiled *cm[2] = {NULL, NULL};
    pp_model_input inputs[2][PP_MODEL_INPUTS_MAX];
    pp_workload w[2];
    runner u[2];
    memset(u, 0, sizeof u);
    int rc = PP_OK;
    for (int k = 0; rc == PP_OK && k < 2; k++) {
        sw_workload(c, idx[k], &w[k], inputs[k]);
        rc = pp_device_open(c->devices[k ? db : da], &c->devopt, &dev[k], err);
        if (rc == PP_OK)
            rc = pp_compiled_create_level(dev[k], &w[k], 1, 1, &cm[k], err);
        if (rc == PP_OK) {
            u[k] = (runner){.c = c, .r = pp_compiled_request(cm[k], 0), .turn = k,
                            .other = &u[1 - k]};
            pp_wl_fill_input(&w[k], c->seed, pp_request_input(u[k].r));
        }
    }
    if (rc == PP_OK) {
        pthread_barrier_t step;
        pthread_barrier_init(&step, NULL, 2);
        pthread_t th;
        u[0].step = u[1].step = &step;
        if (pthread_create(&th, NULL, run_loop, &u[1]) != 0) {
            rc = pp_set_error(err, PP_ENOMEM, "co-run: cannot start a thread");
        } else {
            run_loop(&u[0]);
            pthread_join(th, NULL);
        }
        pthread_barrier_destroy(&step);
        if (rc == PP_OK && (u[0].status != PP_OK || u[1].status != PP_OK))
            rc = pp_set_error(err, PP_EIO, "co-run: a request failed: %s",
                              pp_strerror(u[0].status ? u[0].status : u[1].status));
    }
    if (rc == PP_OK) {
        char key[4 * SW_NAME_MAX + 64];
        snprintf(key, sizeof key, "%lld,%lld,%s,%s+%s,%s", (long long)c->sizes[s].nodes,
                 (long long)c->sizes[s].edges, c->devices[da], c->stages[ta].name,
                 c->devices[db], c->stages[tb].name);
        *out = json_pack("{sssIsIsoso}", "key", key, "nodes", (json_int_t)c->sizes[s].nodes,
                         "edges", (json_int_t)c->sizes[s].edges, "a",
                         side(c->devices[da], c->stages[ta].name, &u[0]), "b",
                         side(c->devices[db], c->stages[tb].name, &u[1]));
    }
    for (int k = 0; k < 2; k++) {
        pp_compiled_free(cm[k]);
        pp_device_close(dev[k]);
    }
    return rc;
}

/* The records in DIR/co_run.jsonl by key (a line a kill cut off is left
 * out, and measured again). */
static json_t *done_keys(const char *path) {
    json_t *done = json_object();
    FILE *f = fopen(path, "r");
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
        json_t *rec = strchr(line, '\n') ? json_loads(line, 0, NULL) : NULL;
        json_t *key = json_object_get(rec, "key");
        if (json_is_string(key))
            json_object_set(done, json_string_value(key), rec);
        json_decref(rec);
    }
    if (f)
        fclose(f);
    return done;
}

int sw_co_run(const pp_sweep_config *c, const char *dir, json_t *const *recs, size_t *ran,
              pp_error *err) {
    char path[4096];
    int rc = sw_path(path, sizeof path, dir, SW_CO_RUN, err);
    if (rc != PP_OK)
        return rc;
    json_t *done = done_keys(path);
    FILE *f = fopen(path, "a+");
    if (!f) {
        json_decref(done);
        return pp_set_error(err, PP_EIO, "%s: cannot write", path);
    }
    /* a line a kill cut off is ended, so that it stays one unreadable line */
    if (fseek(f, -1, SEEK_END) == 0 && fgetc(f) != '\n')
        fputc('\n', f);
    *ran = 0;
    for (size_t s = 0; rc == PP_OK && s < c->nsizes; s++)
        for (size_t da = 0; rc == PP_OK && da < c->ndevices; da++)
            for (size_t db = da; rc == PP_OK && db < c->ndevices; db++) {
                int same = da == db;
                if (same ? !sw_spec_on_host_cores(c->devices[da])
                         : !c->group[da] || c->group[da] != c->group[db])
                    continue;
                for (size_t ta = 0; rc == PP_OK && ta < c->nstages; ta++)
                    /* on one device, (ta, tb) also tells (tb, ta) */
                    for (size_t tb = same ? ta : 0; rc == PP_OK && tb < c->nstages; tb++) {
                        char k[4 * SW_NAME_MAX + 64];
                        snprintf(k, sizeof k, "%lld,%lld,%s,%s+%s,%s",
                                 (long long)c->sizes[s].nodes, (long long)c->sizes[s].edges,
                                 c->devices[da], c->stages[ta].name, c->devices[db],
                                 c->stages[tb].name);
                        if (!ran_alone(c, recs, s, da, ta) || !ran_alone(c, recs, s, db, tb) ||
                            json_object_get(done, k))
                            continue;
                        json_t *out = NULL;
                        rc = co_measure(c, s, da, ta, db, tb, &out, err);
                        char *text = rc == PP_OK ? json_dumps(out, JSON_COMPACT) : NULL;
                        if (rc == PP_OK && (!text || fprintf(f, "%s\n", text) < 0 || fflush(f)))
                            rc = pp_set_error(err, PP_EIO, "%s: cannot write", path);
                        free(text);
                        json_decref(out);
                        *ran += rc == PP_OK;
                    }
            }
    if (fclose(f) != 0 && rc == PP_OK)
        rc = pp_set_error(err, PP_EIO, "%s: cannot write", path);
    json_decref(done);
    return rc;
}

json_t *sw_co_run_read(const char *dir) {
    char path[4096];
    if (sw_path(path, sizeof path, dir, SW_CO_RUN, NULL) != PP_OK)
        return json_object();
    return done_keys(path);
}
