/* pipeprof diff: two runs of a pipeline compared figure by figure, with
 * every change's interval and significance, findings first (docs/diff.md).
 * The comparison is the library's (pipeprof/diff.h); this file turns flags
 * into options and statuses into messages and exit codes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/diff_inputs.h"

static void diff_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof diff BASE NEW [--json] [--html FILE] [--map OLD=NEW]...\n"
            "                     [--save-baseline FILE] [window and labeling options]\n"
            "       pipeprof diff TRACE --save-baseline FILE\n\n"
            "Compares two runs of one pipeline: BASE and NEW are traces (analyzed with\n"
            "the same definitions) or baselines saved by --save-baseline. For the\n"
            "throughput, cycle and end-to-end latency, each stage's time, each stage's\n"
            "wall on each device, each device's penalty, busy time and bubbles, and the\n"
            "top ops: base, new, the change, its 95%% bootstrap interval and whether it\n"
            "is significant (Mann-Whitney per sample, Holm-corrected over all of them,\n"
            "and an interval that excludes 0). Findings come first; changes within noise\n"
            "are listed as such, never as findings. Method: docs/diff.md.\n\n"
            "options:\n"
            "  --json                 the diff as JSON (docs/diff.md, \"JSON\")\n"
            "  --html FILE            also write one self-contained HTML page: the two runs'\n"
            "                         per-batch distributions overlaid, changes highlighted\n"
            "  --save-baseline FILE   also save NEW's summary (TRACE's, given one input) to\n"
            "                         FILE: its samples and figures, a baseline that `diff`\n"
            "                         and `gate` take in place of a trace\n"
            "%s"
            "  -h, --help             this help\n\n"
            "Exit status: 0 ok, 1 I/O failure, 2 bad input (no stage in common, an empty\n"
            "window, an unreadable trace or baseline).\n\n"
            "examples:\n"
            "  pipeprof run examples/demo_pipeline.json --out a && \\\n"
            "  pipeprof run examples/demo_pipeline.json --out b\n"
            "  pipeprof diff a/trace.pptrace b/trace.pptrace --exclude-region \"warm up\" \\\n"
            "      --html diff.html\n"
            "  pipeprof diff a/trace.pptrace --exclude-region \"warm up\" \\\n"
            "      --save-baseline baseline.json\n"
            "  pipeprof diff baseline.json b/trace.pptrace --new-exclude-region \"warm up\"\n",
            cli_diff_inputs_help);
}

typedef struct diff_args {
    cli_diff_inputs in;
    const char *save, *html;
    int json;
} diff_args;

static int diff_parse(int argc, char **argv, diff_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got;
        if (strcmp(argv[i], "--json") == 0) {
            a->json = 1;
        } else if ((got = cli_option(argc, argv, &i, "--html", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->html = v;
        } else if ((got = cli_option(argc, argv, &i, "--save-baseline", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->save = v;
        } else if ((got = cli_diff_inputs_option(argc, argv, &i, &a->in)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_unknown_option(argv[0], argv[i]);
        } else if (cli_diff_inputs_add(argv[0], &a->in, argv[i]) != 0) {
            return CLI_BADINPUT;
        }
    }
    if (a->html && a->in.npaths < 2) {
        cli_error("diff: --html needs BASE and NEW");
        return CLI_BADINPUT;
    }
    if (a->in.npaths < (a->save ? 1u : 2u)) {
        cli_error("diff: expected BASE and NEW (pipeprof diff a/trace.pptrace b/trace.pptrace)");
        return CLI_BADINPUT;
    }
    if (cli_window_check(argv[0], &a->in.opt[0]) != 0 ||
        cli_window_check(argv[0], &a->in.opt[1]) != 0)
        return CLI_BADINPUT;
    return CLI_OK;
}

static int save_baseline(const pp_diff_summary *s, const char *path) {
    pp_error err = {{0}};
    int rc = pp_diff_summary_save(s, path, &err);
    if (rc != PP_OK) {
        cli_error("diff: --save-baseline %s", err.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int diff_output(const pp_diff *d, const diff_args *a) {
    int rc = a->json ? pp_diff_write_json(d, stdout) : pp_diff_write_text(d, stdout);
    if (rc != PP_OK || fflush(stdout) != 0) {
        cli_error("diff: writing the diff failed: %s", strerror(errno));
        return CLI_FAIL;
    }
    pp_error err = {{0}};
    if (a->html && (rc = pp_diff_write_html(d, a->html, &err)) != PP_OK) {
        cli_error("diff: --html %s", err.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int diff_run(int argc, char **argv) {
    diff_args a = {0};
    cli_diff_inputs_init(&a.in);
    pp_diff_summary *s[2] = {NULL, NULL};
    pp_diff *d = NULL;
    int code = diff_parse(argc, argv, &a);
    for (size_t k = 0; code == CLI_OK && k < a.in.npaths; k++)
        code = cli_diff_inputs_summary("diff", &a.in, (int)k, &s[k]);
    if (code == CLI_OK && a.in.npaths == 2)
        code = cli_diff_inputs_compare("diff", &a.in, s, &d);
    if (code == CLI_OK && d)
        code = diff_output(d, &a);
    if (code == CLI_OK && a.save)
        code = save_baseline(s[a.in.npaths - 1], a.save);
    if (code == CLI_OK && a.save && !d)
        printf("saved the baseline of %s to %s\n", a.in.path[0], a.save);
    pp_diff_free(d);
    pp_diff_summary_free(s[0]);
    pp_diff_summary_free(s[1]);
    cli_diff_inputs_free(&a.in);
    return code;
}

const pp_command pp_cmd_diff = {
    .name = "diff",
    .summary = "compare two runs: every figure's change, interval and significance",
    .run = diff_run,
    .help = diff_help,
};
