/* record_log.c — record's check that no session's trace replaced another's
 * (record_log.h; docs/recording.md "One session per process"). */
#include "cli/record_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

typedef struct logged {
    long long pid;
    char copy[32];
    unsigned long long records;
    char path[4096];
} logged;

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

/* One line: "session pid=P copy=C records=R dropped=D rc=X path=FILE". */
static int parse(const char *line, logged *l) {
    int at = 0;
    if (sscanf(line, "session pid=%lld copy=%31s records=%llu dropped=%*u rc=%*d path=%n", &l->pid,
               l->copy, &l->records, &at) < 3 || at == 0)
        return -1;
    snprintf(l->path, sizeof l->path, "%s", line + at);
    l->path[strcspn(l->path, "\n")] = '\0';
    return 0;
}

int record_log_check(const char *cmd, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        unlink(path);
        return 0;
    }
    logged *v = NULL;
    size_t n = 0, cap = 0;
    char line[4400];
    while (fgets(line, sizeof line, f)) {
        if (n == cap) {
            logged *grown = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof *v);
            if (!grown)
                break;
            v = grown;
        }
        if (parse(line, &v[n]) == 0 && strcmp(v[n].path, "-") != 0)
            n++;
    }
    fclose(f);
    unlink(path);
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
        cli_error("record: several sessions in one process mean two copies of libpipeprof are "
                  "loaded (the Python package's and the one pipeprof's ITT/NVTX libraries use): "
                  "make the program load one (PIPEPROF_LIBRARY); several processes need %%p in "
                  "the output name");
        rc = CLI_FAIL;
    }
    free(v);
    return rc;
}
