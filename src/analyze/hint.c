/* hint.c — when a trace has annotations but no pattern was given, a pattern
 * that would label them.
 *
 * Annotations that label batches end in a number: "Stage1_GraphPrep/batch7",
 * "embed_batch7", "ProfilerStep#7". Each span name ending in digits is cut
 * into a stage part, a tail (from the last '/', '#', ':', '_', '-' or ' ' of
 * what precedes the number) and the number. The tail shared by the most
 * distinct stage parts (two or more) gives a stage-and-batch pattern; else a
 * tail with one stage part (ProfilerStep#) gives a batch pattern, which
 * needs a stage pattern beside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"

#define MAX_TAILS 16
#define TAIL_LEN 32
#define STAGE_LEN 48

typedef struct tail_seen {
    char tail[TAIL_LEN];
    char stage[STAGE_LEN];     /* the first stage part seen with it */
    char example[STAGE_LEN + TAIL_LEN + 24];
    size_t stages;             /* distinct stage parts: 1, or 2 meaning "several" */
} tail_seen;

/* Cuts `name` into stage and tail; 0 when it does not end in digits or a
 * part does not fit. Names of partitions and merges label no stage. */
static int cut_name(const char *name, char *stage, char *tail) {
    size_t n = strlen(name), d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d == n || d == 0 || strchr(name, '\''))
        return 0;
    size_t sep = d;
    while (sep > 0 && !strchr("/#:_- ", name[sep - 1]))
        sep--;
    if (sep == 0)
        sep = d; /* no separator: the whole prefix is the tail ("batch7") */
    else
        sep--;
    if (sep >= STAGE_LEN || d - sep >= TAIL_LEN)
        return 0;
    memcpy(stage, name, sep);
    stage[sep] = '\0';
    memcpy(tail, name + sep, d - sep);
    tail[d - sep] = '\0';
    return strncmp(stage, "Partition", 9) != 0 && strncmp(stage, "Merge", 5) != 0;
}

static void note(tail_seen *seen, size_t *nseen, const char *name, const char *stage,
                 const char *tail) {
    size_t k = 0;
    while (k < *nseen && strcmp(seen[k].tail, tail) != 0)
        k++;
    if (k == *nseen) {
        if (*nseen == MAX_TAILS)
            return;
        (*nseen)++;
        memset(&seen[k], 0, sizeof seen[k]);
        strcpy(seen[k].tail, tail);
        strcpy(seen[k].stage, stage);
        snprintf(seen[k].example, sizeof seen[k].example, "%s", name);
        seen[k].stages = 1;
        return;
    }
    if (strcmp(seen[k].stage, stage) != 0)
        seen[k].stages = 2;
}

/* `text` with the regex specials escaped. */
static void escape(const char *text, char *out, size_t len) {
    size_t o = 0;
    for (; *text && o + 3 < len; text++) {
        if (strchr(".[](){}*+?|^$\\", *text))
            out[o++] = '\\';
        out[o++] = *text;
    }
    out[o] = '\0';
}

int an_pattern_hint(pp_report *r) {
    if (r->hint)
        return PP_OK;
    const pp_cols *c = &r->c;
    size_t nstr = pp_model_string_count(r->m), nseen = 0;
    uint8_t *used = calloc(nstr ? nstr : 1, 1);
    tail_seen *seen = calloc(MAX_TAILS, sizeof *seen);
    if (!used || !seen) {
        free(used), free(seen);
        return PP_ENOMEM;
    }
    for (size_t i = 0; i < c->count; i++)
        if (c->kind[i] == PP_EV_SPAN && c->role[i] != PP_ROLE_EXEC && c->role[i] != PP_ROLE_OP &&
            pp_cols_stage(c, i) == 0)
            used[pp_cols_name(c, i)] = 1;
    for (uint32_t id = 1; id < nstr; id++) {
        char stage[STAGE_LEN], tail[TAIL_LEN];
        if (used[id] && cut_name(pp_model_string(r->m, id), stage, tail))
            note(seen, &nseen, pp_model_string(r->m, id), stage, tail);
    }
    const tail_seen *both = NULL, *batch_only = NULL;
    for (size_t k = 0; k < nseen; k++) {
        if (seen[k].stages > 1 && !both)
            both = &seen[k];
        if (seen[k].stages == 1 && !batch_only)
            batch_only = &seen[k];
    }
    char t[2 * TAIL_LEN], s[2 * STAGE_LEN];
    if (both) {
        escape(both->tail, t, sizeof t);
        r->hint = an_strdupf("its annotations look like \"%s\": label them with "
                             "--batch-pattern '^(?<stage>.+)%s(?<batch>[0-9]+)$'",
                             both->example, t);
    } else if (batch_only) {
        escape(batch_only->tail, t, sizeof t);
        escape(batch_only->stage, s, sizeof s);
        r->hint = an_strdupf("its annotations look like \"%s\": take the batch from them with "
                             "--batch-pattern '^%s%s(?<batch>[0-9]+)$', and name your stage "
                             "annotations with --stage-pattern (e.g. '^(?<stage>Stage.*)$')",
                             batch_only->example, s, t);
    }
    int rc = (both || batch_only) && !r->hint ? PP_ENOMEM : PP_OK;
    free(used), free(seen);
    return rc;
}
