/* record_log.c — record's check that no session's trace replaced another's,
 * and the merge of the traces of several libpipeprof copies in one process
 * (record_log.h; docs/recording.md "One session per process"). */
#include "cli/record_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pipeprof/io.h"
#include "pipeprof/merge.h"

int record_log_open(char *path, size_t cap) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, cap, "%s/pipeprof-record-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0 || setenv("PIPEPROF_RECORD_LOG", path, 1) != 0) {
        cli_error("record: cannot create the session log %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd), unlink(path);
        return CLI_FAIL;
    }
    close(fd);
    return 0;
}

/* "session pid=P copy=C index=K records=R dropped=D rc=X path=FILE" */
static int parse(const char *line, record_session *l) {
    int at = 0;
    if (sscanf(line, "session pid=%lld copy=%31s index=%u records=%llu dropped=%*u rc=%*d path=%n",
               &l->pid, l->copy, &l->index, &l->records, &at) < 4 || at == 0)
        return -1;
    snprintf(l->path, sizeof l->path, "%s", line + at);
    l->path[strcspn(l->path, "\n")] = '\0';
    return strcmp(l->path, "-") == 0 ? -1 : 0; /* wrote nothing */
}

void record_log_read(const char *path, record_log *out) {
    out->v = NULL;
    out->n = 0;
    FILE *f = fopen(path, "r");
    size_t cap = 0;
    char line[4400];
    while (f && fgets(line, sizeof line, f)) {
        if (out->n == cap) {
            record_session *grown = realloc(out->v, (cap = cap ? 2 * cap : 8) * sizeof *grown);
            if (!grown)
                break;
            out->v = grown;
        }
        if (parse(line, &out->v[out->n]) == 0)
            out->n++;
    }
    if (f)
        fclose(f);
    unlink(path);
}

void record_log_free(record_log *l) {
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* The file copy `index` would have written as the first copy: "t.copy1.json"
 * -> "t.json". 0, or -1 when the name is not a part's. */
static int primary_of(const record_session *s, char *buf, size_t cap) {
    char tag[32];
    snprintf(tag, sizeof tag, ".copy%u", s->index);
    const char *at = NULL;
    for (const char *p = strstr(s->path, tag); p; p = strstr(p + 1, tag))
        at = p; /* the last one: the name's own text may hold the tag too */
    if (!at || s->index == 0)
        return -1;
    snprintf(buf, cap, "%.*s%s", (int)(at - s->path), s->path, at + strlen(tag));
    return 0;
}

/* Merges parts[0..n) into `primary` (which may not exist: a first copy
 * that recorded nothing still writes, so normally it does). */
static int merge_into(const char *cmd, const char *primary, const char **parts, size_t n) {
    pp_model **m = calloc(n + 1, sizeof *m);
    pp_merge_input *in = calloc(n + 1, sizeof *in);
    size_t k = 0;
    int rc = m && in ? PP_OK : PP_ENOMEM;
    pp_error err = {{0}};
    if (rc == PP_OK && access(primary, F_OK) == 0 && (rc = pp_trace_read(primary, &m[k], &err)) == PP_OK)
        in[k] = (pp_merge_input){.model = m[k], .name = primary}, k++;
    for (size_t i = 0; rc == PP_OK && i < n; i++)
        if ((rc = pp_trace_read(parts[i], &m[k], &err)) == PP_OK)
            in[k] = (pp_merge_input){.model = m[k], .name = parts[i]}, k++;
    pp_model *merged = NULL;
    if (rc == PP_OK)
        rc = pp_model_merge(in, k, NULL, &merged, &err);
    if (rc == PP_OK)
        rc = pp_trace_write(merged, primary, &err);
    pp_model_free(merged);
    for (size_t i = 0; m && i <= n; i++)
        pp_model_free(m[i]);
    free(m), free(in);
    if (rc != PP_OK) {
        cli_error("record: %s: cannot merge the traces of %s's libpipeprof copies into it: %s "
                  "(they stay beside it)", primary, cmd, err.msg[0] ? err.msg : pp_strerror(rc));
        return CLI_FAIL;
    }
    for (size_t i = 0; i < n; i++)
        unlink(parts[i]);
    fprintf(stderr, "pipeprof: %s: merged the traces of %zu copies of libpipeprof in one process "
                    "into %s\n", cmd, n + 1, primary);
    return 0;
}

int record_log_merge(const char *cmd, record_log *l) {
    int rc = 0;
    char primary[4096], other[4096];
    for (size_t i = 0; i < l->n; i++) {
        if (primary_of(&l->v[i], primary, sizeof primary) != 0)
            continue;
        /* every part of this primary (from copies 1, 2, ... of one process) */
        const char **parts = calloc(l->n, sizeof *parts);
        size_t n = 0;
        int first = 1;
        for (size_t k = 0; parts && k < l->n; k++) {
            if (primary_of(&l->v[k], other, sizeof other) != 0 || strcmp(other, primary) != 0)
                continue;
            first &= k >= i;
            parts[n++] = l->v[k].path;
        }
        if (parts && first && pp_format_from_path(primary) != PP_FORMAT_PERFETTO)
            rc |= merge_into(cmd, primary, parts, n);
        else if (parts && first)
            cli_error("record: %s: the traces of other libpipeprof copies in the process are "
                      "beside it (a .pftrace cannot be read back to merge them)", primary);
        free(parts);
    }
    return rc ? CLI_FAIL : 0;
}

int record_log_check(const char *cmd, const record_log *l) {
    const record_session *v = l->v;
    size_t n = l->n;
    int rc = 0;
    /* each file once (at its first line); the last session to write it is
     * the one whose records it holds */
    for (size_t i = 0; i < n; i++) {
        size_t writers = 0, last = i, seen_before = 0;
        unsigned long long lost = 0;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(v[k].path, v[i].path) != 0)
                continue;
            writers++;
            seen_before |= k < i;
            last = k;
        }
        if (writers < 2 || seen_before)
            continue;
        for (size_t k = 0; k < n; k++)
            if (strcmp(v[k].path, v[i].path) == 0 && k != last)
                lost += v[k].records;
        cli_error("record: %zu sessions of %s wrote %s, each replacing the file of the one before: "
                  "the trace holds the last one's %llu records (process %lld, library copy %s); "
                  "%llu records of the others are lost:",
                  writers, cmd, v[i].path, v[last].records, v[last].pid, v[last].copy, lost);
        for (size_t k = 0; k < n; k++)
            if (strcmp(v[k].path, v[i].path) == 0 && k != last)
                cli_error("record:   lost: %llu records of process %lld, library copy %s",
                          v[k].records, v[k].pid, v[k].copy);
        cli_error("record: several processes writing one file need %%p (or %%n) in the output "
                  "name (-o 'trace-%%p.pptrace')");
        rc = CLI_FAIL;
    }
    return rc;
}
