/* pipeprof: the command-line tool. Dispatches to one file per subcommand. */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "io/outfile.h"
#include "pipeprof/common.h"

static const pp_command *const commands[] = {
    &pp_cmd_record,
    &pp_cmd_convert,
    &pp_cmd_merge,
    &pp_cmd_analyze,
    &pp_cmd_whatif,
    &pp_cmd_demo,
    &pp_cmd_run,
    &pp_cmd_export,
    &pp_cmd_report,
    &pp_cmd_diff,
    &pp_cmd_gate,
    &pp_cmd_devices,
    &pp_cmd_sweep,
    &pp_cmd_plan,
    &pp_cmd_top,
    &pp_cmd_sql,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

void cli_error(const char *fmt, ...) {
    va_list ap;
    fputs("pipeprof: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_exit_code(int status) {
    switch (status) {
    case PP_OK: return CLI_OK;
    case PP_EIO: case PP_ENOMEM: return CLI_FAIL;
    default: return CLI_BADINPUT;
    }
}

int cli_is_help(const char *arg) {
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_option(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=' && name[1] == '-') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc || strcmp(argv[*i + 1], "--") == 0) {
        cli_error("%s: option %s needs a value (pipeprof %s --help)", argv[0], name, argv[0]);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_parse_u64(const char *cmd, const char *option, const char *text, uint64_t min,
                  uint64_t max, uint64_t *out) {
    char *end;
    uintmax_t v = 0;
    /* strtoumax would accept a sign or leading blanks; a count has neither. */
    int ok = text[0] >= '0' && text[0] <= '9';
    if (ok) {
        errno = 0;
        v = strtoumax(text, &end, 10);
        ok = *end == '\0' && errno == 0 && v >= min && v <= max;
    }
    if (!ok && max == UINT64_MAX)
        cli_error("%s: %s \"%s\": expected a whole number of at least %" PRIu64, cmd, option, text, min);
    else if (!ok)
        cli_error("%s: %s \"%s\": expected a whole number from %" PRIu64 " to %" PRIu64, cmd, option,
                  text, min, max);
    if (!ok)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_same_file(const char *in, const char *out) {
    struct stat a, b;
    return stat(in, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int cli_unknown_option(const char *cmd, const char *arg) {
    cli_error("%s: unknown option \"%s\" (pipeprof %s --help lists the options)", cmd, arg, cmd);
    return CLI_BADINPUT;
}

/* SIGINT, SIGTERM or SIGHUP while pipeprof writes a file: the half-written
 * FILE.tmp.PID goes, and so does the staging directory of `report -o DIR`;
 * then pipeprof dies of the signal as it would have. */
static void on_terminating_signal(int sig) {
    int saved = errno; /* the removals may fail; the interrupted code keeps its errno */
    pp_outfile_remove_pending();
    cli_out_dir_remove_pending();
    errno = saved;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_partial_files_on_signals(void) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) /* nohup stays */
            signal(sigs[i], on_terminating_signal);
    }
}

static void usage(FILE *out) {
    fprintf(out,
            "pipeprof %s: where does the time of a multi-stage inference pipeline go?\n\n"
            "usage: pipeprof <command> [options]   (pipeprof <command> --help for details)\n\n"
            "commands:\n", pp_version());
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\noptions:\n  -h, --help     this help\n  --version      version and built-in features\n"
                 "\nexample:\n  pipeprof record -o trace.json -- ./my_pipeline --batches 100\n");
}

/* The large tables of a read or an analysis (a model's columns, the
 * analysis's views and scratch) are freed step by step. glibc raises its
 * mmap threshold to the size of each freed one, so the next tables come from
 * the heap, whose freed pages stay resident: with the threshold fixed,
 * every large table is its own mapping and its pages go back when it is
 * freed (10M events: 23 MB less peak, docs/analysis.md "Memory"). */
static void return_large_frees(void) {
#ifdef M_MMAP_THRESHOLD
    (void)mallopt(M_MMAP_THRESHOLD, 256 * 1024); /* a hint: failure changes no result */
#endif
}

int main(int argc, char **argv) {
    return_large_frees();
    remove_partial_files_on_signals();
    if (argc < 2) {
        usage(stderr);
        return CLI_BADINPUT;
    }
    if (cli_is_help(argv[1])) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pipeprof %s\nfeatures: %s\n", pp_version(), pp_features());
        return CLI_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(argv[1], commands[i]->name) != 0)
            continue;
        for (int a = 2; a < argc && strcmp(argv[a], "--") != 0; a++) {
            if (cli_is_help(argv[a])) {
                commands[i]->help(stdout);
                return CLI_OK;
            }
        }
        return commands[i]->run(argc - 1, argv + 1);
    }
    cli_error("unknown command \"%s\" (pipeprof --help lists them)", argv[1]);
    return CLI_BADINPUT;
}
