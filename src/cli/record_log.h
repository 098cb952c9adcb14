/* record_log.h — what `pipeprof record` learns from the program's sessions
 * (record_log.c): each default session of the program's processes appends
 * one line to the file PIPEPROF_RECORD_LOG names when it writes its trace
 * (capture/env.c), and record checks the lines against the files. */
#ifndef PP_CLI_RECORD_LOG_H
#define PP_CLI_RECORD_LOG_H

#include <stddef.h>

/* Creates the log (in $TMPDIR, else /tmp) and sets PIPEPROF_RECORD_LOG for
 * the child; its path goes to path[cap]. 0 or CLI_FAIL after a message. */
int record_log_open(char *path, size_t cap);

/* Reads the log and removes it. When two or more sessions wrote one file,
 * each replaced the one before: says which sessions' records were lost
 * and returns CLI_FAIL (exit 1); else 0. */
int record_log_check(const char *cmd, const char *path);

#endif
