/* diff_inputs.h — what `pipeprof diff` and `pipeprof gate` share: their
 * two inputs (a trace or a saved baseline each), the window and labeling
 * options for both or for one side (--base-region, --new-batch-pattern),
 * the device map, and the comparison itself. */
#ifndef PP_CLI_DIFF_INPUTS_H
#define PP_CLI_DIFF_INPUTS_H

#include <stddef.h>

#include "pipeprof/analyze.h"
#include "pipeprof/diff.h"

typedef struct cli_diff_inputs {
    const char *path[2];          /* BASE, NEW (NEW may be NULL for diff --save-baseline) */
    size_t npaths;
    pp_analyze_options opt[2];    /* per side */
    pp_diff_map *map;
    size_t nmap;
    double min_change;            /* --min-change, a fraction */
} cli_diff_inputs;

/* The options' help lines. */
extern const char cli_diff_inputs_help[];

void cli_diff_inputs_init(cli_diff_inputs *in);
/* Takes a window option (for both sides, or --base-X / --new-X for one),
 * --min-change PCT or --map OLD=NEW at argv[*i]: 1 when it was one, 0 when not, -1 after an
 * error. */
int cli_diff_inputs_option(int argc, char **argv, int *i, cli_diff_inputs *in);
/* Takes a positional BASE / NEW; -1 after an error when there are two. */
int cli_diff_inputs_add(const char *cmd, cli_diff_inputs *in, const char *path);
/* Summarizes side k (0 base, 1 new): a baseline file is read, a trace is
 * analyzed with that side's options. Returns a CLI_* code after a message. */
int cli_diff_inputs_summary(const char *cmd, cli_diff_inputs *in, int k, pp_diff_summary **out);
/* Both summaries compared; a CLI_* code after a message. */
int cli_diff_inputs_compare(const char *cmd, cli_diff_inputs *in, pp_diff_summary *s[2],
                            pp_diff **out);
void cli_diff_inputs_free(cli_diff_inputs *in);

#endif
