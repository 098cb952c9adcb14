/* Merging the shards of one sweep into one directory, as if it had run
 * unsharded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "sweep/sweep_impl.h"

/* The config a sweep directory was run with, checked against its state. */
static int load_dir(const char *dir, sw_state *st, pp_sweep_config **c, pp_error *err) {
    int rc = sw_state_read(dir, st, err);
    if (rc == PP_ENOTFOUND)
        return pp_set_error(err, PP_EINVAL, "%s: not a sweep directory (no %s)", dir, SW_STATE);
    char path[4096];
    if (rc == PP_OK)
        rc = sw_path(path, sizeof path, dir, SW_CONFIG, err);
    if (rc == PP_OK)
        rc = sw_config_load(path, 0, c, err);
    if (rc == PP_OK && strcmp((*c)->fingerprint, st->fingerprint) != 0) {
        pp_sweep_config_free(*c);
        *c = NULL;
        return pp_set_error(err, PP_EINVAL, "%s: %s does not match the fingerprint in %s", dir,
                            SW_CONFIG, SW_STATE);
    }
    return rc;
}

static int missing_shard(int k, int shards, pp_error *err) {
    return pp_set_error(err, PP_EINVAL,
                        "shard %d/%d is missing (run it with --shard %d/%d and merge its directory "
                        "too)", k, shards, k, shards);
}

/* Every shard 1..N exactly once; dir_of[k] = the directory of shard k+1. */
static int check_shards(const char *const *dirs, size_t n, const sw_state *st, size_t *dir_of,
                        pp_error *err) {
    int shards = st[0].shards;
    for (int k = 0; k < shards; k++)
        dir_of[k] = n;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(st[i].fingerprint, st[0].fingerprint) != 0)
            return pp_set_error(err, PP_EINVAL,
                                "%s and %s are sweeps of different configs (fingerprints %s and "
                                "%s); only shards of one sweep merge",
                                dirs[0], dirs[i], st[0].fingerprint, st[i].fingerprint);
        if (st[i].shards != shards)
            return pp_set_error(err, PP_EINVAL,
                                "%s is shard %d/%d but %s is shard %d/%d: not shards of one split",
                                dirs[0], st[0].shard, shards, dirs[i], st[i].shard, st[i].shards);
        size_t *slot = &dir_of[st[i].shard - 1];
        if (*slot != n)
            return pp_set_error(err, PP_EINVAL, "shard %d/%d given twice: %s and %s", st[i].shard,
                                shards, dirs[*slot], dirs[i]);
        *slot = i;
    }
    for (int k = 0; k < shards; k++)
        if (dir_of[k] == n)
            return missing_shard(k + 1, shards, err);
    return PP_OK;
}

/* Reads every shard's records into recs; each shard must hold exactly its
 * own combinations, all of them. */
static int gather(const pp_sweep_config *c, const char *const *dirs, const sw_state *st,
                  const size_t *dir_of, json_t **recs, pp_error *err) {
    size_t n = pp_sweep_config_combinations(c);
    size_t shards = (size_t)st[0].shards;
    json_t **one = calloc(n, sizeof *one);
    int rc = one ? PP_OK : pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t k = 0; rc == PP_OK && k < shards; k++) {
        const char *dir = dirs[dir_of[k]];
        size_t have = 0, want = n / shards + (k < n % shards);
        off_t end;
        rc = sw_raw_read(dir, c, one, &have, &end, err);
        for (size_t i = 0; i < n; i++) {
            if (one[i] && i % shards != k && rc == PP_OK)
                rc = pp_set_error(err, PP_EINVAL,
                                  "%s/%s: holds combination %zu, not of shard %zu/%zu", dir,
                                  SW_RAW, i, k + 1, shards);
            recs[i] = recs[i] ? recs[i] : one[i];
            if (recs[i] != one[i])
                json_decref(one[i]);
            one[i] = NULL;
        }
        if (rc == PP_OK && have != want)
            rc = pp_set_error(err, PP_EINVAL,
                              "%s: shard %zu/%zu is incomplete: %zu of %zu combinations (finish it "
                              "with pipeprof sweep %s/%s --out %s --shard %zu/%zu --resume)",
                              dir, k + 1, shards, have, want, dir, SW_CONFIG, dir, k + 1, shards);
    }
    free(one);
    return rc;
}

int pp_sweep_merge(const char *const *dirs, size_t n, const char *out, pp_error *err) {
    if (n < 1)
        return pp_set_error(err, PP_EINVAL, "merge: no shard directories given");
    sw_state *st = calloc(n, sizeof *st);
    pp_sweep_config *c = NULL;
    int rc = st ? load_dir(dirs[0], &st[0], &c, err)
                : pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t i = 1; rc == PP_OK && i < n; i++) {
        rc = sw_state_read(dirs[i], &st[i], err);
        if (rc == PP_ENOTFOUND)
            rc = pp_set_error(err, PP_EINVAL, "%s: not a sweep directory (no %s)", dirs[i],
                              SW_STATE);
    }
    /* Every shard is one of the directories given: with fewer directories
     * than shards one is missing, found without allocating by the count in
     * fingerprint.json (200M once touched 1.57 GB before the refusal). */
    if (rc == PP_OK && (size_t)st[0].shards > n) {
        int k = 1; /* the first shard number no directory has */
        for (size_t i = 0; i < n;)
            i = st[i].shard == k ? (k++, 0) : i + 1;
        rc = missing_shard(k, st[0].shards, err);
    }
    size_t *dir_of = rc == PP_OK ? calloc((size_t)st[0].shards, sizeof *dir_of) : NULL;
    if (rc == PP_OK && !dir_of)
        rc = pp_set_error(err, PP_ENOMEM, "out of memory");
    if (rc == PP_OK)
        rc = check_shards(dirs, n, st, dir_of, err);
    size_t total = c ? pp_sweep_config_combinations(c) : 0;
    json_t **recs = rc == PP_OK ? calloc(total, sizeof *recs) : NULL;
    if (rc == PP_OK && !recs)
        rc = pp_set_error(err, PP_ENOMEM, "out of memory");
    if (rc == PP_OK)
        rc = gather(c, dirs, st, dir_of, recs, err);
    sw_state existing;
    pp_error ignored;
    if (rc == PP_OK && mkdir(out, 0777) != 0 && errno != EEXIST)
        rc = pp_set_error(err, PP_EIO, "%s: cannot create: %s", out, strerror(errno));
    if (rc == PP_OK && sw_state_read(out, &existing, &ignored) != PP_ENOTFOUND)
        rc = pp_set_error(err, PP_EINVAL, "%s: already holds a sweep; merge into a new directory",
                          out);
    if (rc == PP_OK)
        rc = sw_raw_write(out, c, recs, err);
    if (rc == PP_OK)
        rc = sw_tables_write(out, c, recs, err);
    if (rc == PP_OK)
        rc = sw_state_write(out, c, 1, 1, err);
    for (size_t i = 0; recs && i < total; i++)
        json_decref(recs[i]);
    free(recs);
    free(dir_of);
    free(st);
    pp_sweep_config_free(c);
    return rc;
}
