/* The files of a sweep directory: config.json and fingerprint.json, written
 * once at the start, and raw.jsonl, one record per finished combination.
 *
 * raw.jsonl is only ever appended to, one whole line per write() followed
 * by fsync(), so a kill leaves every earlier record intact and at most one
 * cut-off line at the end; reading drops that line and resuming truncates
 * it away before appending again. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "io/outfile.h"
#include "sweep/sweep_impl.h"

int sw_path(char *buf, size_t len, const char *dir, const char *name, pp_error *err) {
    if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
        return pp_set_error(err, PP_EINVAL, "%s: path too long", dir);
    return PP_OK;
}

int sw_json_write(const char *path, json_t *v, pp_error *err) {
    char *text = v ? json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (!text)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    size_t len = strlen(text);
    char *line = realloc(text, len + 2);
    if (!line) {
        free(text);
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    int rc = pp_outfile_write_file(path, line, len + 1, err);
    free(line);
    return rc;
}

int sw_state_write(const char *dir, const pp_sweep_config *c, int shard, int shards,
                   pp_error *err) {
    char path[4096];
    int rc = sw_path(path, sizeof path, dir, SW_CONFIG, err);
    if (rc == PP_OK) {
        size_t len = strlen(c->canonical);
        char *text = malloc(len + 2);
        if (!text)
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", dir);
        memcpy(text, c->canonical, len);
        text[len] = '\n';
        rc = pp_outfile_write_file(path, text, len + 1, err);
        free(text);
    }
    if (rc == PP_OK)
        rc = sw_path(path, sizeof path, dir, SW_STATE, err);
    if (rc != PP_OK)
        return rc;
    json_t *st = json_pack("{sssisisI}", "fingerprint", c->fingerprint, "shard", shard, "shards",
                           shards, "combinations", (json_int_t)pp_sweep_config_combinations(c));
    rc = sw_json_write(path, st, err);
    json_decref(st);
    return rc;
}

int sw_state_read(const char *dir, sw_state *st, pp_error *err) {
    char path[4096];
    int rc = sw_path(path, sizeof path, dir, SW_STATE, err);
    json_t *root = NULL;
    if (rc == PP_OK)
        rc = pp_json_load_file(path, &root, err);
    if (rc != PP_OK)
        return rc;
    const char *fp = NULL;
    int ok = json_unpack(root, "{s:s, s:i, s:i}", "fingerprint", &fp, "shard", &st->shard,
                         "shards", &st->shards) == 0 &&
             strlen(fp) == 16 && st->shards >= 1 && st->shard >= 1 && st->shard <= st->shards;
    if (ok)
        snprintf(st->fingerprint, sizeof st->fingerprint, "%s", fp);
    json_decref(root);
    if (!ok)
        return pp_set_error(err, PP_EINVAL,
                            "%s: expected {\"fingerprint\": 16 hex digits, \"shard\": i, "
                            "\"shards\": N} with 1 <= i <= N",
                            path);
    return PP_OK;
}

static int read_all(const char *path, char **text, size_t *len, pp_error *err) {
    FILE *f = fopen(path, "rb");
    *text = NULL;
    *len = 0;
    if (!f)
        return errno == ENOENT ? PP_OK
                               : pp_set_error(err, PP_EIO, "%s: cannot open: %s", path,
                                              strerror(errno));
    size_t cap = 0;
    for (;;) {
        if (*len + 65536 > cap) {
            char *p = realloc(*text, cap = 2 * cap + 65536);
            if (!p) {
                fclose(f);
                return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
            }
            *text = p;
        }
        size_t got = fread(*text + *len, 1, cap - *len - 1, f);
        *len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return pp_set_error(err, PP_EIO, "%s: read error", path);
    (*text)[*len] = '\0';
    return PP_OK;
}

int sw_raw_read(const char *dir, const pp_sweep_config *c, json_t **recs, size_t *count,
                off_t *good_end, pp_error *err) {
    char path[4096];
    char *text = NULL;
    size_t len = 0;
    int rc = sw_path(path, sizeof path, dir, SW_RAW, err);
    if (rc == PP_OK)
        rc = read_all(path, &text, &len, err);
    *count = 0;
    *good_end = 0;
    size_t pos = 0;
    for (size_t line = 1; rc == PP_OK && pos < len; line++) {
        char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        json_t *rec = json_loadb(text + pos, end - pos, JSON_REJECT_DUPLICATES, NULL);
        size_t index = 0;
        char why[200] = "not JSON";
        int ok = rec && sw_record_check(c, rec, &index, why, sizeof why);
        if (!nl || (!ok && end + 1 == len)) {
            json_decref(rec); /* the last line, cut off by a kill: measured again */
            break;
        }
        if (!ok || recs[index]) {
            json_decref(rec);
            rc = pp_set_error(err, PP_EINVAL, "%s:%zu: %s%s", path, line,
                              ok ? "a second record of the same combination"
                                 : "not a record of this sweep's config: ", ok ? "" : why);
            break;
        }
        recs[index] = rec;
        ++*count;
        pos = end + 1;
        *good_end = (off_t)pos;
    }
    free(text);
    return rc;
}

int sw_raw_append(int fd, const char *path, json_t *rec, pp_error *err) {
    char *text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    size_t len = strlen(text);
    char *line = realloc(text, len + 1);
    if (!line) {
        free(text);
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    line[len++] = '\n'; /* no NUL needed: written by length */
    sigset_t mask;
    pp_xfsz_block(&mask); /* past ulimit -f: EFBIG and a message, not SIGXFSZ */
    ssize_t put = write(fd, line, len);
    int saved = errno;
    pp_xfsz_restore(&mask);
    free(line);
    /* A short write leaves a cut-off line, which reading drops; a record
     * that is half on disk is never taken as measured. */
    if (put < 0 || (size_t)put != len)
        return pp_set_error(err, PP_EIO, "%s: write failed: %s", path,
                            put < 0 ? strerror(saved) : "disk full?");
    if (fsync(fd) != 0)
        return pp_set_error(err, PP_EIO, "%s: fsync failed: %s", path, strerror(errno));
    return PP_OK;
}

int sw_raw_write(const char *dir, const pp_sweep_config *c, json_t *const *recs, pp_error *err) {
    char path[4096];
    int rc = sw_path(path, sizeof path, dir, SW_RAW, err);
    pp_outfile o;
    if (rc == PP_OK)
        rc = pp_outfile_open(&o, path, err);
    if (rc != PP_OK)
        return rc;
    for (size_t i = 0; i < pp_sweep_config_combinations(c); i++) {
        char *text = json_dumps(recs[i], JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!text) {
            pp_outfile_abort(&o);
            return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
        }
        pp_outfile_write(&o, text, strlen(text));
        pp_outfile_write(&o, "\n", 1);
        free(text);
    }
    return pp_outfile_commit(&o, err);
}
