/* run.c — what `pipeprof whatif` does after parsing its flags, as one
 * library call the CLI and the bindings share: the replay, each scenario,
 * the causal profile, written as text or JSON (to a FILE*, or for the
 * Python package into memory). */
/* open_memstream: POSIX 2008, _GNU_SOURCE from the build */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif_impl.h"

int pp_whatif_run(const pp_whatif_costs *c, const pp_whatif_change *changes, size_t n,
                  int combine, int causal, const pp_whatif_options *o, int json, FILE *out,
                  pp_error *err) {
    size_t ns = combine ? (n > 0) : n;
    const pp_whatif_change **lists = calloc(ns ? ns : 1, sizeof *lists);
    size_t *counts = calloc(ns ? ns : 1, sizeof *counts);
    pp_whatif_scenario *sc = calloc(ns ? ns : 1, sizeof *sc);
    pp_whatif_causal_row *rows = calloc(c->nstages + c->ndevices + 1, sizeof *rows);
    int rc = lists && counts && sc && rows ? PP_OK : wi_error(err, PP_ENOMEM, "whatif: out of memory");
    for (size_t i = 0; rc == PP_OK && i < ns; i++) {
        lists[i] = combine ? changes : &changes[i];
        counts[i] = combine ? n : 1;
    }
    pp_whatif_replay replay;
    size_t nrows = 0;
    if (rc == PP_OK)
        rc = pp_whatif_predict(c, lists, counts, ns, o, &replay, sc, err);
    if (rc == PP_OK && causal && !replay.refused)
        rc = pp_whatif_causal(c, o, rows, &nrows, err);
    if (rc == PP_OK) {
        rc = json ? pp_whatif_write_json(c, &replay, lists, counts, sc, ns, rows, nrows, out)
                  : pp_whatif_write_text(c, &replay, lists, counts, sc, ns, rows, nrows, out);
        if (rc != PP_OK)
            wi_error(err, rc, "whatif: writing the output failed");
    }
    free(lists), free(counts), free(sc), free(rows);
    return rc;
}

int pp_whatif_json(const pp_report *r, const pp_model *m, const char *const *kinds,
                   const char *const *texts, size_t n, int combine, int causal,
                   const pp_whatif_options *o, char **out, size_t *len, pp_error *err) {
    *out = NULL;
    pp_whatif_change *changes = calloc(n ? n : 1, sizeof *changes);
    if (!changes)
        return wi_error(err, PP_ENOMEM, "whatif: out of memory");
    int rc = PP_OK;
    for (size_t i = 0; rc == PP_OK && i < n; i++) {
        rc = pp_whatif_change_parse(kinds[i], texts[i], &changes[i], err);
        if (rc == PP_OK && changes[i].kind == PP_WHATIF_MOVE)
            rc = wi_error(err, PP_EINVAL, "whatif: a move needs the stage's times on its new "
                                          "device (pp_whatif_change_move_samples): use the C API "
                                          "or `pipeprof whatif --move --lookup`");
    }
    pp_whatif_costs *c = NULL;
    if (rc == PP_OK)
        rc = pp_whatif_costs_from_report(r, m, &c, err);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = rc == PP_OK ? open_memstream(&buf, &size) : NULL;
    if (rc == PP_OK && !f)
        rc = wi_error(err, PP_ENOMEM, "whatif: out of memory");
    if (rc == PP_OK) {
        rc = pp_whatif_run(c, changes, n, combine, causal, o, 1, f, err);
        if (fclose(f) != 0 && rc == PP_OK)
            rc = wi_error(err, PP_ENOMEM, "whatif: out of memory");
    }
    if (rc == PP_OK) {
        *out = buf;
        if (len)
            *len = size;
    } else {
        free(buf);
    }
    pp_whatif_costs_free(c);
    for (size_t i = 0; i < n; i++)
        pp_whatif_change_clear(&changes[i]);
    free(changes);
    return rc;
}

void pp_whatif_json_free(char *json) {
    free(json);
}
