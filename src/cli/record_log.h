/* record_log.h — what `pipeprof record` learns from the program's sessions
 * (record_log.c): each default session of the program's processes appends
 * one line to the file PIPEPROF_RECORD_LOG names when it writes its trace
 * (capture/env.c), and record checks the lines against the files. */
#ifndef PP_CLI_RECORD_LOG_H
#define PP_CLI_RECORD_LOG_H

#include <stddef.h>

/* One session's line. */
typedef struct record_session {
    long long pid;
    char copy[32];          /* the library copy (an address in it) */
    unsigned index;         /* its place among its process's copies; 0: the first */
    unsigned long long records;
    char path[4096];        /* the file it wrote */
} record_session;

typedef struct record_log {
    record_session *v;
    size_t n;
} record_log;

/* Creates the log (in $TMPDIR, else /tmp) and sets PIPEPROF_RECORD_LOG for
 * the child; its path goes to path[cap]. 0 or CLI_FAIL after a message. */
int record_log_open(char *path, size_t cap);

/* Reads the log's lines of sessions that wrote a file, and removes it. */
void record_log_read(const char *path, record_log *out);
void record_log_free(record_log *l);

/* The parts other library copies of a process wrote ("t.copy1.json")
 * merged into the file its first copy wrote (same clock), and removed.
 * 0 or CLI_FAIL after a message. */
int record_log_merge(const char *cmd, record_log *l);

/* When two or more sessions wrote one file, each replaced the one before:
 * says which sessions' records were lost and returns CLI_FAIL (exit 1);
 * else 0. */
int record_log_check(const char *cmd, const record_log *l);

#endif
