/* pipeprof whatif: build the pipeline model of a trace (pp_whatif_costs),
 * replay it against the measurement, predict each change given, and print
 * the causal profile. All the work is in the whatif layer; this file turns
 * flags into changes and statuses into messages and exit codes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/load_traces.h"
#include "pipeprof/analyze.h"
#include "pipeprof/sweep.h"
#include "pipeprof/whatif.h"

static void whatif_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof whatif TRACE... [CHANGE...] [--combine] [--json]\n"
            "                       [--lookup LOOKUP.json [--lookup-size NODES,EDGES]]\n"
            "                       [--seeds N] [--seed S] [--batches N] [--no-causal]\n"
            "                       [analyze's window and labeling options]\n\n"
            "Builds a model of the pipeline from TRACE (its stages, servers, parts,\n"
            "hand-offs and queues, each with its measured per-batch times), simulates it\n"
            "unchanged and compares that replay with the measurement, then predicts what\n"
            "each CHANGE would do, and prints the causal profile: the throughput gained if\n"
            "each stage or device were 1.1x, 1.25x, 1.5x or 2x faster. A replay further\n"
            "than 10%% from the measured throughput refuses to predict and says why.\n"
            "Each change is a scenario of its own; --combine makes them one. The model,\n"
            "what it infers and its measured errors: docs/whatif.md.\n\n"
            "changes:\n"
            "  --speedup STAGE=F      the stage F times faster (2 halves its time)\n"
            "  --speedup STAGE@DEV=F  only its part on device DEV; @DEV=F: all work on DEV\n"
            "  --split STAGE=DEV:SHARE,DEV:SHARE\n"
            "                         a data-parallel stage's work split anew\n"
            "  --requests DEV=N       N request slots share each batch's work on DEV\n"
            "  --queue-depth N        N batches may wait between two stages\n"
            "  --move STAGE=DEV       the stage alone on DEV, its time from --lookup\n\n"
            "options:\n"
            "  --json                 print JSON: model, measured, replay, scenarios, causal\n"
            "  --lookup LOOKUP.json   a sweep's lookup table (for --move)\n"
            "  --lookup-size N,E      the table's size to use, when it has several\n"
            "  --seeds N              simulations per figure (default: enough for 20,000\n"
            "                         batches, 20..1000; the interval is the 2.5%%..97.5%%\n"
            "                         of their values)\n"
            "  --seed S               the first seed (default fixed: reruns agree)\n"
            "  --batches N            batches per simulation (default: as measured)\n"
            "  --no-causal            leave out the causal profile\n"
            "  --region, --exclude-region, --from, --to, --batch-pattern,\n"
            "  --stage-pattern, --partition-pattern, --merge-pattern: as for analyze\n"
            "%s"
            "  -h, --help             this help\n\n"
            "Exit status: 0 ok (also when the replay refuses: the output says why),\n"
            "1 I/O failure, 2 bad input (flags, a stage or device not in the trace).\n\n"
            "example (a real run):\n"
            "  pipeprof demo --out out\n"
            "  pipeprof whatif out/trace.pptrace --exclude-region \"warm up\" \\\n"
            "      --speedup GraphPrep=2 --split Embedding=CPU:0.7,NPU:0.3\n",
            cli_traces_help);
}

typedef struct whatif_args {
    cli_traces traces;
    pp_analyze_options opt;
    pp_whatif_options wopt;
    pp_whatif_change *changes;
    size_t nchanges;
    const char *lookup;
    long long lookup_nodes, lookup_edges;
    int json, combine, no_causal;
} whatif_args;

static int add_change(whatif_args *a, const char *kind, const char *text) {
    pp_whatif_change *grown = realloc(a->changes, (a->nchanges + 1) * sizeof *grown);
    if (!grown) {
        cli_error("whatif: out of memory");
        return CLI_FAIL;
    }
    a->changes = grown;
    pp_error err = {{0}};
    if (pp_whatif_change_parse(kind, text, &a->changes[a->nchanges], &err) != PP_OK) {
        cli_error("whatif: %s", err.msg);
        return CLI_BADINPUT;
    }
    a->nchanges++;
    return CLI_OK;
}

static int whatif_parse(int argc, char **argv, whatif_args *a) {
    static const char *const kinds[] = {"speedup", "split", "requests", "queue-depth", "move"};
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got = 0;
        uint64_t n;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && got == 0; k++) {
            char flag[32];
            snprintf(flag, sizeof flag, "--%s", kinds[k]);
            if ((got = cli_option(argc, argv, &i, flag, &v)) > 0) {
                int code = add_change(a, kinds[k], v);
                if (code != CLI_OK)
                    return code;
            }
        }
        if (got < 0)
            return CLI_BADINPUT;
        if (got > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0) {
            a->json = 1;
        } else if (strcmp(argv[i], "--combine") == 0) {
            a->combine = 1;
        } else if (strcmp(argv[i], "--no-causal") == 0) {
            a->no_causal = 1;
        } else if ((got = cli_option(argc, argv, &i, "--lookup", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->lookup = v;
        } else if ((got = cli_option(argc, argv, &i, "--lookup-size", &v)) != 0) {
            char tail;
            if (got < 0 || sscanf(v, "%lld,%lld%c", &a->lookup_nodes, &a->lookup_edges, &tail) != 2 ||
                a->lookup_nodes < 1 || a->lookup_edges < 0) {
                if (got > 0)
                    cli_error("whatif: --lookup-size \"%s\": expected NODES,EDGES, e.g. 1024,8192", v);
                return CLI_BADINPUT;
            }
        } else if ((got = cli_option(argc, argv, &i, "--seeds", &v)) != 0) {
            if (got < 0 || cli_parse_u64(argv[0], "--seeds", v, 2, 10000, &n) != 0)
                return CLI_BADINPUT;
            a->wopt.seeds = (unsigned)n;
        } else if ((got = cli_option(argc, argv, &i, "--seed", &v)) != 0) {
            if (got < 0 || cli_parse_u64(argv[0], "--seed", v, 0, UINT64_MAX, &n) != 0)
                return CLI_BADINPUT;
            a->wopt.seed = n;
        } else if ((got = cli_option(argc, argv, &i, "--batches", &v)) != 0) {
            if (got < 0 || cli_parse_u64(argv[0], "--batches", v, 1, 1000000, &n) != 0)
                return CLI_BADINPUT;
            a->wopt.batches = n;
        } else if ((got = cli_window_option(argc, argv, &i, &a->opt)) != 0 ||
                   (got = cli_traces_option(argc, argv, &i, &a->traces)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_unknown_option(argv[0], argv[i]);
        } else if (cli_traces_add(&a->traces, argv[i]) != 0) {
            return CLI_FAIL;
        }
    }
    if (!a->traces.n) {
        cli_error("whatif: expected a TRACE (pipeprof whatif trace.pptrace --speedup STAGE=2)");
        return CLI_BADINPUT;
    }
    return cli_window_check(argv[0], &a->opt) != 0 ? CLI_BADINPUT : CLI_OK;
}

/* --move: each moved stage's wall on its new device, from the table. */
static int move_times(whatif_args *a) {
    int moves = 0;
    for (size_t i = 0; i < a->nchanges; i++)
        moves += a->changes[i].kind == PP_WHATIF_MOVE;
    if (!moves)
        return CLI_OK;
    if (!a->lookup) {
        cli_error("whatif: --move needs the stage's times on its new device: --lookup TABLE");
        return CLI_BADINPUT;
    }
    pp_lookup *l = NULL;
    pp_error err = {{0}};
    int rc = pp_lookup_load(a->lookup, &l, &err);
    for (size_t i = 0; rc == PP_OK && i < a->nchanges; i++) {
        pp_whatif_change *c = &a->changes[i];
        pp_lookup_wall w;
        if (c->kind != PP_WHATIF_MOVE)
            continue;
        rc = pp_lookup_stage_wall(l, c->stage, c->device, a->lookup_nodes, a->lookup_edges, &w,
                                  &err);
        if (rc == PP_OK) {
            snprintf(c->device, sizeof c->device, "%s", w.device_name);
            rc = pp_whatif_change_move_samples(c, w.mean_ns, w.sd_ns, 0);
        }
    }
    pp_lookup_free(l);
    if (rc != PP_OK) {
        cli_error("whatif: --lookup %s: %s", a->lookup, err.msg[0] ? err.msg : pp_strerror(rc));
        return cli_exit_code(rc);
    }
    return CLI_OK;
}

static int whatif_predict(whatif_args *a, const pp_whatif_costs *c) {
    pp_error err = {{0}};
    int rc = pp_whatif_run(c, a->changes, a->nchanges, a->combine, !a->no_causal, &a->wopt,
                           a->json, stdout, &err);
    if (rc == PP_OK && fflush(stdout) != 0)
        rc = PP_EIO;
    if (rc == PP_EIO) {
        cli_error("whatif: writing the output failed: %s", strerror(errno));
        return CLI_FAIL;
    }
    if (rc != PP_OK) {
        cli_error("%s", err.msg[0] ? err.msg : pp_strerror(rc));
        return cli_exit_code(rc);
    }
    return CLI_OK;
}

static int whatif_trace(whatif_args *a) {
    pp_model *m = NULL;
    char *source = NULL;
    int code = cli_traces_load("whatif", "modeling", &a->traces, &m, &source);
    if (code != CLI_OK)
        return code;
    a->opt.source = source;
    pp_report *r = NULL;
    pp_whatif_costs *c = NULL;
    pp_error err = {{0}};
    /* not _owned: the model is read again for each batch's times */
    int rc = pp_report_build(m, &a->opt, &r, &err);
    if (rc == PP_OK)
        rc = pp_whatif_costs_from_report(r, m, &c, &err);
    if (rc != PP_OK) {
        cli_error("whatif: %s: %s", source, err.msg[0] ? err.msg : pp_strerror(rc));
        code = cli_exit_code(rc);
    } else {
        code = whatif_predict(a, c);
    }
    pp_whatif_costs_free(c);
    pp_report_free(r);
    pp_model_free(m);
    free(source);
    return code;
}

static int whatif_run(int argc, char **argv) {
    whatif_args a = {0};
    pp_analyze_options_init(&a.opt);
    pp_whatif_options_init(&a.wopt);
    int code = whatif_parse(argc, argv, &a);
    if (code == CLI_OK)
        code = move_times(&a);
    if (code == CLI_OK)
        code = whatif_trace(&a);
    for (size_t i = 0; i < a.nchanges; i++)
        pp_whatif_change_clear(&a.changes[i]);
    free(a.changes);
    cli_traces_free(&a.traces);
    return code;
}

const pp_command pp_cmd_whatif = {
    .name = "whatif",
    .summary = "model a trace's pipeline and predict the effect of a change",
    .run = whatif_run,
    .help = whatif_help,
};
