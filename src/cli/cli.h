/* cli.h — what every subcommand file shares.
 *
 * Each subcommand is one file (cmd_<name>.c) defining one pp_command. The
 * CLI prints; the library never does. Exit codes: 0 ok, 1 a failure of the
 * machine (I/O, a device that died), 2 bad input (flags, files, configs). */
#ifndef PP_CLI_H
#define PP_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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

/* --from NS / --to NS (trace nanoseconds, 0 to INT64_MAX) at argv[*i]: 1
 * when it was one (its value stored and its flag set), 0 when not, -1
 * after printing an error. */
int cli_range_option(int argc, char **argv, int *i, int *has_from, int64_t *from_ns,
                     int *has_to, int64_t *to_ns);

struct pp_analyze_options;
/* The window options analyze, export and report share: --region,
 * --exclude-region, --from, --to and the name patterns (--batch-pattern,
 * --stage-pattern, --partition-pattern, --merge-pattern), stored into `opt`. Returns 1 when argv[*i] was one
 * (and consumed its value), 0 when it was none, -1 after printing an error. */
int cli_window_option(int argc, char **argv, int *i, struct pp_analyze_options *opt);
/* -1 after printing an error when the options conflict (both --region and
 * --exclude-region), else 0. */
int cli_window_check(const char *cmd, const struct pp_analyze_options *opt);

/* The output directory of `pipeprof report` (report_dir.c): files are
 * written into a staging directory and moved into DIR only when every one
 * is complete; on failure the staging directory is removed, so DIR never
 * holds a partial set. */
typedef struct cli_out_dir {
    const char *dir;   /* DIR as given */
    char *staging;     /* "DIR.tmp-XXXXXX", or "DIR/.tmp-XXXXXX" when DIR exists */
    int existed;       /* DIR was there: files are moved into it one by one */
} cli_out_dir;
/* Creates the staging directory. Returns a CLI exit code after printing why
 * (DIR names a file: bad input; DIR's folder cannot be written: failure). */
int cli_out_dir_open(const char *cmd, const char *dir, cli_out_dir *o);
/* The malloc'd path of `name` in the staging directory; NULL on no memory. */
char *cli_out_dir_path(const cli_out_dir *o, const char *name);
/* In a forked child, before exec: the child gets SIGTERM when pipeprof
 * (`parent`, its pid before the fork) dies; exits 127 if it already has. */
void cli_die_with_parent(pid_t parent);
/* From a signal handler (async-signal-safe): removes the staging directory
 * being filled, if any, and the files in it. */
void cli_out_dir_remove_pending(void);
/* Moves the staged files into DIR and removes the staging directory. */
int cli_out_dir_commit(const char *cmd, cli_out_dir *o);
/* Removes the staging directory and everything in it. */
void cli_out_dir_abort(cli_out_dir *o);

extern const pp_command pp_cmd_record;
extern const pp_command pp_cmd_convert;
extern const pp_command pp_cmd_analyze;
extern const pp_command pp_cmd_demo;
extern const pp_command pp_cmd_run;
extern const pp_command pp_cmd_export;
extern const pp_command pp_cmd_sql;
extern const pp_command pp_cmd_devices;
extern const pp_command pp_cmd_sweep;
extern const pp_command pp_cmd_plan;
extern const pp_command pp_cmd_top;
extern const pp_command pp_cmd_report;
extern const pp_command pp_cmd_merge;
extern const pp_command pp_cmd_diff;
extern const pp_command pp_cmd_gate;
extern const pp_command pp_cmd_whatif;

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
