/* load_traces.h — the TRACE arguments of analyze, export and merge: one or
 * several traces read and, when several, merged into one model on one clock
 * (pp_model_merge; docs/merging.md), with --offset and --sync saying how to
 * align them. Every command that reads traces loads them here, so each
 * accepts several and aligns them the same way. */
#ifndef PP_CLI_LOAD_TRACES_H
#define PP_CLI_LOAD_TRACES_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof/model.h"

typedef struct cli_offset {
    const char *trace;   /* as the user named it: a TRACE argument or its file name */
    int64_t ns;
} cli_offset;

typedef struct cli_traces {
    const char **paths;  /* the TRACE arguments, in order; the first is the reference clock */
    size_t n, cap;
    const char *sync;    /* --sync NAME; NULL: "sync" */
    int dialect;         /* --dialect: a pp_json_dialect (PP_DIALECT_AUTO = 0) */
    cli_offset *offsets; /* --offset TRACE=TIME, in order */
    size_t noffsets, capoffsets;
} cli_traces;

/* The options' help lines, for the commands' --help. */
extern const char cli_traces_help[];

/* Takes --offset TRACE=TIME, --sync NAME or --dialect NAME at argv[*i]: 1 when it was one
 * (its value consumed), 0 when not, -1 after printing an error. */
int cli_traces_option(int argc, char **argv, int *i, cli_traces *t);
/* Adds a TRACE argument; 0, or CLI_FAIL after a message (no memory). */
int cli_traces_add(cli_traces *t, const char *path);
/* Warns when reading and analyzing the traces would take more memory than
 * this process can have (memory_check.c); `verb` names what the command
 * does with them ("analyzing"). cli_traces_load calls it first. */
void cli_memory_check(const char *verb, const cli_traces *t);

/* Reads the traces (a truncated one with a warning that `verb`s the rest,
 * e.g. "analyzing") and merges them when there are several. *out receives
 * the model, *source (malloc'd) the names for a report's header ("a.pptrace
 * + b.pptrace"). Returns a CLI_* code after printing what went wrong. */
int cli_traces_load(const char *cmd, const char *verb, const cli_traces *t, pp_model **out,
                    char **source);
void cli_traces_free(cli_traces *t);

#endif
