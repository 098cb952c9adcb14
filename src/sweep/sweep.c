/* Running a sweep, or one shard of it, into a directory: every combination
 * not yet recorded there is measured and appended to raw.jsonl as soon as
 * it finishes; an unsharded sweep that completes writes its tables. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "sweep/sweep_impl.h"

/* Checks DIR against this run: a fresh DIR gets config.json and
 * fingerprint.json; a DIR holding a sweep must be resumed, by the same
 * config and shard. */
static int prepare_dir(const pp_sweep_config *c, const char *dir, int resume, int shard,
                       int shards, pp_error *err) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return pp_set_error(err, PP_EIO, "%s: cannot create: %s", dir, strerror(errno));
    sw_state st;
    pp_error why;
    int rc = sw_state_read(dir, &st, &why);
    if (rc == PP_ENOTFOUND) {
        char raw[4096];
        struct stat sb;
        rc = sw_path(raw, sizeof raw, dir, SW_RAW, err);
        if (rc == PP_OK && stat(raw, &sb) == 0)
            return pp_set_error(err, PP_EINVAL,
                                "%s: has %s but no %s, so which sweep it holds is unknown; "
                                "choose another --out",
                                dir, SW_RAW, SW_STATE);
        return rc == PP_OK ? sw_state_write(dir, c, shard, shards, err) : rc;
    }
    if (rc != PP_OK)
        return pp_set_error(err, rc, "%s", why.msg);
    if (!resume)
        return pp_set_error(err, PP_EINVAL,
                            "%s: already holds a sweep (config %s, shard %d/%d); --resume "
                            "continues it, or choose another --out",
                            dir, st.fingerprint, st.shard, st.shards);
    if (strcmp(st.fingerprint, c->fingerprint) != 0)
        return pp_set_error(err, PP_EINVAL,
                            "%s: holds a sweep of another config (fingerprint %s; this config: "
                            "%s); resume it with the config it was started with (%s/%s) or "
                            "choose another --out",
                            dir, st.fingerprint, c->fingerprint, dir, SW_CONFIG);
    if (st.shard != shard || st.shards != shards)
        return pp_set_error(err, PP_EINVAL,
                            "%s: holds shard %d/%d of this sweep; this run is shard %d/%d", dir,
                            st.shard, st.shards, shard, shards);
    return PP_OK;
}

/* Opens raw.jsonl for appending, cutting off a last line that a kill left
 * unfinished, and makes its directory entry durable. */
static int open_raw(const char *dir, off_t good_end, int *fd, pp_error *err) {
    char path[4096];
    int rc = sw_path(path, sizeof path, dir, SW_RAW, err);
    if (rc != PP_OK)
        return rc;
    *fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (*fd < 0)
        return pp_set_error(err, PP_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(*fd, &sb) != 0 || (sb.st_size > good_end && ftruncate(*fd, good_end) != 0)) {
        close(*fd);
        return pp_set_error(err, PP_EIO, "%s: cannot cut the unfinished last line: %s", path,
                            strerror(errno));
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return PP_OK;
}

typedef struct devices {
    pp_device **dev;
    pp_error *why;
    char *tried;
} devices;

/* The open device `d`, opened at first use; NULL when it cannot be opened,
 * and then every combination on it is recorded as failed with the reason. */
static pp_device *device_get(const pp_sweep_config *c, devices *ds, size_t d) {
    if (!ds->tried[d]) {
        pp_error e;
        ds->tried[d] = 1;
        if (pp_device_open(c->devices[d], &c->devopt, &ds->dev[d], &e) != PP_OK) {
            ds->dev[d] = NULL;
            ds->why[d] = e;
        }
    }
    return ds->dev[d];
}

/* Combination i, on its device and, where that fails and its stage names a
 * fallback, on the fallback: a failed fallback keeps both reasons. */
static int measure_one(const pp_sweep_config *c, devices *ds, size_t i, const char *dir,
                       json_t **rec, pp_error *err) {
    size_t s, d, t;
    sw_combination(c, i, &s, &d, &t);
    int rc = sw_measure(c, i, d, device_get(c, ds, d), ds->why[d].msg, dir, rec, err);
    int fb = c->stages[t].fallback;
    if (rc != PP_OK || fb < 0 || (size_t)fb == d ||
        strcmp(json_string_value(json_object_get(*rec, "status")), "ok") == 0)
        return rc;
    json_t *alt = NULL;
    rc = sw_measure(c, i, (size_t)fb, device_get(c, ds, (size_t)fb), ds->why[fb].msg, dir, &alt,
                    err);
    if (rc != PP_OK)
        return rc;
    const char *reason = json_string_value(json_object_get(*rec, "reason"));
    const char *alt_status = json_string_value(json_object_get(alt, "status"));
    char text[1024];
    if (strcmp(alt_status, "ok") == 0) {
        json_object_set_new(alt, "fallback_reason", json_string(reason));
    } else {
        snprintf(text, sizeof text, "%s; fallback %s: %s", reason, c->devices[fb],
                 json_string_value(json_object_get(alt, "reason")));
        json_object_set_new(alt, "reason", json_string(text));
    }
    json_decref(*rec);
    *rec = alt;
    return PP_OK;
}

static int measure_all(const pp_sweep_config *c, const pp_sweep_options *o, const char *dir,
                       int fd, const char *raw, json_t **recs, pp_sweep_result *res,
                       pp_error *err) {
    size_t nopen = c->ndevices + c->nfallback;
    devices ds = {.dev = calloc(nopen, sizeof *ds.dev),
                  .why = calloc(nopen, sizeof *ds.why),
                  .tried = calloc(nopen, 1)};
    int rc = ds.dev && ds.why && ds.tried ? PP_OK : pp_set_error(err, PP_ENOMEM, "out of memory");
    int64_t t0 = pp_now();
    size_t ran = 0;
    for (size_t i = (size_t)(o->shard - 1); rc == PP_OK && i < pp_sweep_config_combinations(c);
         i += (size_t)o->shards) {
        if (recs[i])
            continue;
        if (o->limit > 0 && ran == o->limit)
            break;
        json_t *rec = NULL;
        rc = measure_one(c, &ds, i, dir, &rec, err);
        if (rc == PP_OK)
            rc = sw_raw_append(fd, raw, rec, err);
        if (rc != PP_OK) {
            json_decref(rec);
            break;
        }
        recs[i] = rec;
        ran++;
        res->done++;
        int bad = strcmp(json_string_value(json_object_get(rec, "status")), "ok") != 0;
        res->failed += (size_t)bad;
        if (o->progress) {
            pp_sweep_progress p = {.done = res->done, .total = res->total, .ran = ran,
                                   .key = json_string_value(json_object_get(rec, "key")),
                                   .failed = bad,
                                   .simulated = json_is_true(json_object_get(rec, "simulated")),
                                   .elapsed_ns = pp_now() - t0};
            o->progress(o->progress_ctx, &p);
        }
    }
    for (size_t d = 0; ds.dev && d < nopen; d++)
        pp_device_close(ds.dev[d]);
    free(ds.dev);
    free(ds.why);
    free(ds.tried);
    return rc;
}

int pp_sweep_run(const pp_sweep_config *c, const char *dir, const pp_sweep_options *opt,
                 pp_sweep_result *res, pp_error *err) {
    pp_sweep_options o = *opt;
    if (o.shards == 0 && o.shard == 0)
        o.shard = o.shards = 1;
    if (o.shards < 1 || o.shard < 1 || o.shard > o.shards)
        return pp_set_error(err, PP_EINVAL, "shard %d/%d: expected i/N with 1 <= i <= N", o.shard,
                            o.shards);
    size_t n = pp_sweep_config_combinations(c);
    *res = (pp_sweep_result){
        .total = n / (size_t)o.shards + ((size_t)o.shard - 1 < n % (size_t)o.shards)};
    int rc = prepare_dir(c, dir, o.resume, o.shard, o.shards, err);
    json_t **recs = rc == PP_OK ? calloc(n, sizeof *recs) : NULL;
    if (rc == PP_OK && !recs)
        rc = pp_set_error(err, PP_ENOMEM, "out of memory");
    off_t good_end = 0;
    if (rc == PP_OK)
        rc = sw_raw_read(dir, c, recs, &res->resumed, &good_end, err);
    for (size_t i = 0; rc == PP_OK && i < n; i++) {
        if (recs[i] && i % (size_t)o.shards != (size_t)o.shard - 1)
            rc = pp_set_error(err, PP_EINVAL, "%s/%s: holds combination %zu, not of shard %d/%d",
                              dir, SW_RAW, i, o.shard, o.shards);
        if (recs[i] && strcmp(json_string_value(json_object_get(recs[i], "status")), "ok") != 0)
            res->failed++;
    }
    res->done = res->resumed;
    int fd = -1;
    if (rc == PP_OK)
        rc = open_raw(dir, good_end, &fd, err);
    char raw[4096];
    if (rc == PP_OK)
        rc = sw_path(raw, sizeof raw, dir, SW_RAW, err);
    if (rc == PP_OK)
        rc = measure_all(c, &o, dir, fd, raw, recs, res, err);
    if (fd >= 0)
        close(fd);
    res->complete = rc == PP_OK && res->done == res->total;
    if (res->complete && o.shards == 1)
        rc = sw_tables_write(dir, c, recs, err);
    if (rc == PP_OK && res->complete && o.shards == 1 && o.co_run) {
        rc = sw_co_run(c, dir, recs, &res->co_runs, err);
        if (rc == PP_OK)
            rc = sw_tables_write(dir, c, recs, err);
    }
    for (size_t i = 0; recs && i < n; i++)
        json_decref(recs[i]);
    free(recs);
    return rc;
}
