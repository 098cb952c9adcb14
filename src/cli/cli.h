/* cli.h — what every subcommand file shares.
 *
 * Each subcommand is one file (cmd_<name>.c) defining one pp_command. The
 * CLI prints; the library never does. Exit codes: 0 ok, 1 a failure of the
 * machine (I/O, a device that died), 2 bad input (flags, files, configs). */
#ifndef PP_CLI_H
#define PP_CLI_H

#include <stdint.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BADINPUT = 2 };

typedef struct pp_command {
    const char *name;
    const char *summary;                 /* one line for `pipeprof --help` */
    int (*run)(int argc, char **argv);   /* argv[0] is the subcommand name */
    void (*help)(FILE *out);             /* usage, options and an example */
} pp_command;

/* Prints "pipeprof: <message>\n" to stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Exit code for a library status: 2 for bad input, 1 otherwise. */
int cli_exit_code(int status);
/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);

/* Option parsing shared by the subcommands; argv[0] is the subcommand name,
 * which every message starts with. */

/* Takes the value of option `name` at argv[*i]: "--level 2" or "--level=2"
 * ("-o FILE" for one-letter options). Returns 1 with *value set (and *i moved
 * past a separate value), 0 when argv[*i] is not this option, -1 after
 * printing an error when the value is missing. */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);
/* Parses `text`, the value of `option`, as a decimal integer in [min, max];
 * prints an error and returns -1 otherwise. */
int cli_parse_u64(const char *cmd, const char *option, const char *text, uint64_t min,
                  uint64_t max, uint64_t *out);
/* True when `out` names the same existing file as `in` (also through
 * another path or a link): writing it would destroy the input. */
int cli_same_file(const char *in, const char *out);
/* After writing `path`: warns on stderr when it is a .pftrace or Chrome JSON
 * file too large for Perfetto to open (viewer_limits.c). */
void cli_viewer_limits_warn(const char *path);
/* Prints "<cmd>: unknown option ..." and returns CLI_BADINPUT. */
int cli_unknown_option(const char *cmd, const char *arg);

struct pp_analyze_options;
/* The window options analyze and export share: --region, --exclude-region
 * and --batch-pattern, stored into `opt`. Returns 1 when argv[*i] was one
 * (and consumed its value), 0 when it was none, -1 after printing an error. */
int cli_window_option(int argc, char **argv, int *i, struct pp_analyze_options *opt);
/* -1 after printing an error when the options conflict (both --region and
 * --exclude-region), else 0. */
int cli_window_check(const char *cmd, const struct pp_analyze_options *opt);

extern const pp_command pp_cmd_record;
extern const pp_command pp_cmd_convert;
extern const pp_command pp_cmd_analyze;
extern const pp_command pp_cmd_demo;
extern const pp_command pp_cmd_run;
extern const pp_command pp_cmd_export;
extern const pp_command pp_cmd_devices;
extern const pp_command pp_cmd_sweep;
extern const pp_command pp_cmd_plan;
extern const pp_command pp_cmd_top;

/* What `run` and `demo` share (cmd_run.c): their options, and running a
 * pipeline into DIR/trace.json + DIR/trace.pptrace + DIR/report.html with
 * the analysis on stdout. */
typedef struct cli_run_args {
    const char *out; /* the directory */
    int batches;     /* 0: the pipeline's */
    int level;
    int serial;
} cli_run_args;

/* Takes --out, --batches, --level or --serial at argv[*i]; returns as
 * cli_option does. */
int cli_run_option(int argc, char **argv, int *i, cli_run_args *a);
struct pp_pipeline;
/* Returns the exit code; `cmd` starts every message. */
int cli_run_pipeline(const char *cmd, struct pp_pipeline *p, const cli_run_args *a);

#endif
