/* pipeprof gate: rules on the diff of two runs, for CI. A rule fails only
 * when its figure changed beyond the limit AND significantly, so noise
 * never fails a build; exit 0 all pass, 1 one failed, 2 bad input; JUnit
 * XML for CI systems to display (docs/diff.md, "Gates"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/diff_inputs.h"

static void gate_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof gate BASE NEW RULE... [--junit FILE] [--map OLD=NEW]...\n"
            "                     [window and labeling options]\n\n"
            "Compares NEW with BASE as `pipeprof diff` does (each a trace or a baseline\n"
            "saved by `pipeprof diff --save-baseline`) and judges each RULE:\n"
            "  KEY>=LIMIT%%  or  KEY<=LIMIT%%   on the relative change of figure KEY\n"
            "A rule fails only when the change is beyond LIMIT and significant (docs/diff.md,\n"
            "\"Significance\"); beyond LIMIT within noise passes, and says so. Keys:\n"
            "throughput, cycle.mean|p50|p95, e2e.mean|p50|p95, stage:NAME.mean|p50|p95,\n"
            "exec:STAGE@DEVICE.mean|p95, penalty:DEVICE, op:DEVICE/NAME (no statistic:\n"
            "the mean). `pipeprof diff --json` lists every key.\n\n"
            "options:\n"
            "  --junit FILE           write the verdicts as JUnit XML (one test case a rule)\n"
            "%s"
            "  -h, --help             this help\n\n"
            "Exit status: 0 every rule passed, 1 a rule failed (or I/O failed), 2 bad input\n"
            "(a bad rule, an unknown figure, no stage in common, an empty window).\n\n"
            "example:\n"
            "  pipeprof gate baseline.json b/trace.pptrace --new-exclude-region \"warm up\" \\\n"
            "      'throughput>=-5%%' 'stage:Embedding.p95<=+10%%' 'e2e.p50<=+3%%' \\\n"
            "      --junit gate.xml\n",
            cli_diff_inputs_help);
}

typedef struct gate_args {
    cli_diff_inputs in;
    const char *junit;
    pp_gate_rule *rules;
    size_t nrules;
} gate_args;

static int is_rule(const char *s) { return strstr(s, ">=") || strstr(s, "<="); }

static int add_rule(gate_args *a, const char *text) {
    pp_gate_rule *g = realloc(a->rules, (a->nrules + 1) * sizeof *g);
    if (!g) {
        cli_error("gate: out of memory");
        return CLI_FAIL;
    }
    a->rules = g;
    pp_error err = {{0}};
    if (pp_gate_rule_parse(text, &a->rules[a->nrules], &err) != PP_OK) {
        cli_error("gate: %s", err.msg);
        return CLI_BADINPUT;
    }
    a->nrules++;
    return CLI_OK;
}

static int gate_parse(int argc, char **argv, gate_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got, code;
        if ((got = cli_option(argc, argv, &i, "--junit", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->junit = v;
        } else if ((got = cli_diff_inputs_option(argc, argv, &i, &a->in)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_unknown_option(argv[0], argv[i]);
        } else if (is_rule(argv[i])) {
            if ((code = add_rule(a, argv[i])) != CLI_OK)
                return code;
        } else if (cli_diff_inputs_add(argv[0], &a->in, argv[i]) != 0) {
            return CLI_BADINPUT;
        }
    }
    if (a->in.npaths < 2 || a->nrules == 0) {
        cli_error("gate: expected BASE NEW and at least one RULE "
                  "(pipeprof gate a.pptrace b.pptrace 'throughput>=-5%%')");
        return CLI_BADINPUT;
    }
    if (cli_window_check(argv[0], &a->in.opt[0]) != 0 ||
        cli_window_check(argv[0], &a->in.opt[1]) != 0)
        return CLI_BADINPUT;
    return CLI_OK;
}

static int write_junit(const char *path, const pp_gate_result *res, size_t n) {
    FILE *f = fopen(path, "w");
    int rc = f ? pp_gate_write_junit(res, n, f) : PP_EIO;
    if (f && fclose(f) != 0)
        rc = PP_EIO;
    if (rc != PP_OK) {
        cli_error("gate: --junit %s: cannot write: %s", path, strerror(errno));
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int judge(const pp_diff *d, gate_args *a) {
    static const char *const verdicts[] = {"pass", "pass (noise)", "FAIL"};
    pp_gate_result *res = calloc(a->nrules, sizeof *res);
    if (!res) {
        cli_error("gate: out of memory");
        return CLI_FAIL;
    }
    int code = CLI_OK;
    size_t failed = 0;
    for (size_t i = 0; i < a->nrules; i++) {
        pp_error err = {{0}};
        int rc = pp_gate_check(d, &a->rules[i], &res[i], &err);
        if (rc != PP_OK) {
            cli_error("gate: %s", err.msg);
            free(res);
            return cli_exit_code(rc);
        }
        failed += res[i].verdict == PP_GATE_FAIL;
    }
    for (size_t i = 0; i < a->nrules; i++)
        printf("%-12s %s\n             %s\n", verdicts[res[i].verdict], a->rules[i].text,
               res[i].message);
    printf("gate: %s (%zu of %zu rules failed)\n", failed ? "FAILED" : "passed", failed,
           a->nrules);
    if (fflush(stdout) != 0)
        code = CLI_FAIL;
    if (code == CLI_OK && a->junit)
        code = write_junit(a->junit, res, a->nrules);
    free(res);
    return code == CLI_OK && failed ? CLI_FAIL : code;
}

static int gate_run(int argc, char **argv) {
    gate_args a = {0};
    cli_diff_inputs_init(&a.in);
    pp_diff_summary *s[2] = {NULL, NULL};
    pp_diff *d = NULL;
    int code = gate_parse(argc, argv, &a);
    for (int k = 0; code == CLI_OK && k < 2; k++)
        code = cli_diff_inputs_summary("gate", &a.in, k, &s[k]);
    if (code == CLI_OK)
        code = cli_diff_inputs_compare("gate", &a.in, s, &d);
    if (code == CLI_OK)
        code = judge(d, &a);
    pp_diff_free(d);
    pp_diff_summary_free(s[0]);
    pp_diff_summary_free(s[1]);
    for (size_t i = 0; i < a.nrules; i++)
        pp_gate_rule_clear(&a.rules[i]);
    free(a.rules);
    cli_diff_inputs_free(&a.in);
    return code;
}

const pp_command pp_cmd_gate = {
    .name = "gate",
    .summary = "CI gate: rules on the changes between two runs, JUnit XML",
    .run = gate_run,
    .help = gate_help,
};
