/* pipeprof analyze: read a trace, compute the metrics of docs/architecture.md §4 over a
 * window and print them: text for people, --json for programs, --csv DIR for
 * pandas. All the work is pp_report_build and the renderers; this file turns
 * flags into options and statuses into messages and exit codes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/advise.h"
#include "cli/cli.h"
#include "cli/load_traces.h"
#include "pipeprof/analyze.h"
#include "pipeprof/io.h"
#include "pipeprof/sweep.h"

static void analyze_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof analyze TRACE... [--json] [--csv DIR]\n"
            "                        [--region NAME | --exclude-region NAME]\n"
            "                        [--from NS] [--to NS] [--batch-pattern REGEX]\n"
            "                        [--stage-pattern REGEX] [--partition-pattern REGEX]\n"
            "                        [--merge-pattern REGEX]\n"
            "                        [--lookup LOOKUP.json [--lookup-size NODES,EDGES]]\n"
            "                        [--offset TRACE=TIME]... [--sync NAME]\n\n"
            "Reads TRACE (.pptrace, Chrome JSON or a PyTorch-profiler export) and reports\n"
            "where the pipeline's time goes: findings first, then per-device busy time,\n"
            "utilization and bubbles, stage times, cycle latency and its bottleneck,\n"
            "the data-parallel breakdown, and each stage's wall split into submit, queue,\n"
            "device, completion and unattributed time. Definitions: docs/analysis.md.\n"
            "Several TRACEs (the processes of one pipeline) are merged first, as\n"
            "`pipeprof merge` does, and the report states their clock alignment.\n\n"
            "options:\n"
            "  --json                 print the report as JSON (docs/report-json.md)\n"
            "  --csv DIR              also write devices.csv, tracks.csv, stages.csv,\n"
            "                         batches.csv, gaps.csv, ops.csv, op_types.csv,\n"
            "                         decomposition.csv, bandwidth.csv and\n"
            "                         pipelineprofiler.csv into DIR\n"
            "                         (created if missing)\n"
            "  --region NAME          window = the hull of the regions named NAME\n"
            "  --exclude-region NAME  window = from the end of the last region NAME to the\n"
            "                         trace end (leaves out a warm up recorded at the start)\n"
            "  --from NS, --to NS     clip the window to trace nanoseconds [NS, NS)\n"
            "  --batch-pattern REGEX  label a foreign trace by its annotations' names: POSIX\n"
            "                         extended regex with the groups (?<stage>...) and\n"
            "                         (?<batch>...) (unnamed: 1 = stage, 2 = batch); with\n"
            "                         a batch group alone (ProfilerStep#N) the batch goes\n"
            "                         to everything nested in the span and launched from it\n"
            "  --stage-pattern REGEX  names of stage annotations, group (?<stage>...) (and\n"
            "                         maybe (?<batch>...)); their batch may come from an\n"
            "                         enclosing --batch-pattern span\n"
            "  --partition-pattern REGEX, --merge-pattern REGEX\n"
            "                         spans that partition / merge the data-parallel stage\n"
            "                         they bracket (default: names beginning Partition /\n"
            "                         Merge); they name no stage of their own\n"
            "  --lookup LOOKUP.json   add the contention factor per stage and device: mean\n"
            "                         hw time here / hw time alone in a sweep's lookup table\n"
            "  --lookup-size N,E      the table's size to compare with (nodes,edges); needed\n"
            "                         when the table has several (docs/sweep.md)\n"
            "  --no-predict           leave advice without its predicted effect (by default\n"
            "                         the what-if model predicts each advice's throughput\n"
            "                         change, for traces of up to 4M events; docs/whatif.md)\n"
            "%s"
            "  -h, --help             this help\n\n"
            "Exit status: 0 ok, 1 I/O failure, 2 bad input (flags, unknown region, empty\n"
            "window, a trace without execs or stage spans).\n\n"
            "Annotations naming a stage and a batch with no device work of their own are\n"
            "host work: execs of the device \"CPU (host)\" on their threads' tracks.\n"
            "Without a pattern, the report says which pattern would label the trace.\n\n"
            "examples:\n"
            "  pipeprof analyze trace.pptrace --exclude-region \"warm up\"\n"
            "  pipeprof analyze pytorch.json \\\n"
            "      --batch-pattern '^(?<stage>.+)/batch(?<batch>[0-9]+)$' --json\n"
            "  pipeprof analyze steps.json \\\n"
            "      --batch-pattern '^ProfilerStep#(?<batch>[0-9]+)$' \\\n"
            "      --stage-pattern '^(?<stage>Stage[0-9]+_[A-Za-z]+)$'\n"
            "  pipeprof analyze out/trace.pptrace --lookup calib/lookup_table.json \\\n"
            "      --lookup-size 1024,8192\n"
            "  pipeprof analyze producer.pptrace consumer.pptrace\n",
            cli_traces_help);
}

typedef struct analyze_args {
    cli_traces traces;
    const char *csv_dir, *lookup;
    int64_t lookup_nodes, lookup_edges; /* 0: the table's only size */
    int json, no_predict;
    pp_analyze_options opt;
} analyze_args;

/* "NODES,EDGES", each part as strict as every number of the CLI
 * (cli_parse_u64: digits only, in range). */
static int parse_size(const char *text, int64_t *nodes, int64_t *edges) {
    const char *comma = strchr(text, ',');
    char head[32];
    size_t len = comma ? (size_t)(comma - text) : 0;
    if (!comma || len >= sizeof head) {
        cli_error("analyze: --lookup-size \"%s\": expected NODES,EDGES, e.g. 1024,8192", text);
        return -1;
    }
    memcpy(head, text, len);
    head[len] = '\0';
    uint64_t n, e;
    if (cli_parse_u64("analyze", "--lookup-size NODES", head, 1, INT64_MAX, &n) ||
        cli_parse_u64("analyze", "--lookup-size EDGES", comma + 1, 0, INT64_MAX, &e))
        return -1;
    *nodes = (int64_t)n, *edges = (int64_t)e;
    return 0;
}

static int analyze_parse(int argc, char **argv, analyze_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got;
        if (strcmp(argv[i], "--json") == 0) {
            a->json = 1;
        } else if (strcmp(argv[i], "--no-predict") == 0) {
            a->no_predict = 1;
        } else if ((got = cli_option(argc, argv, &i, "--csv", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->csv_dir = v;
        } else if ((got = cli_option(argc, argv, &i, "--lookup", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->lookup = v;
        } else if ((got = cli_option(argc, argv, &i, "--lookup-size", &v)) != 0) {
            if (got < 0 || parse_size(v, &a->lookup_nodes, &a->lookup_edges) != 0)
                return CLI_BADINPUT;
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
        cli_error("analyze: expected a TRACE (pipeprof analyze trace.pptrace)");
        return CLI_BADINPUT;
    }
    if (cli_window_check(argv[0], &a->opt) != 0)
        return CLI_BADINPUT;
    return CLI_OK;
}

static int analyze_output(const pp_report *r, const analyze_args *a) {
    int rc = a->json ? pp_report_write_json(r, stdout) : pp_report_write_text(r, stdout);
    if (rc != PP_OK || fflush(stdout) != 0) {
        cli_error("analyze: writing the report failed: %s", strerror(errno));
        return CLI_FAIL;
    }
    if (!a->csv_dir)
        return CLI_OK;
    if (mkdir(a->csv_dir, 0777) != 0 && errno != EEXIST) {
        cli_error("analyze: --csv %s: cannot create the directory: %s", a->csv_dir,
                  strerror(errno));
        return CLI_FAIL;
    }
    pp_error err = {{0}};
    rc = pp_report_write_csv(r, a->csv_dir, &err);
    if (rc != PP_OK) {
        cli_error("analyze: %s", err.msg[0] ? err.msg : pp_strerror(rc));
        return cli_exit_code(rc);
    }
    return CLI_OK;
}

static int analyze_trace(analyze_args *a) {
    pp_model *m = NULL;
    pp_error err = {{0}};
    char *source = NULL;
    int code = cli_traces_load("analyze", "analyzing", &a->traces, &m, &source);
    if (code != CLI_OK)
        return code;
    a->opt.source = source;
    pp_report *r = NULL;
    /* The prediction of advice reads the model again; without it the
     * owned build frees the model as it goes (docs/analysis.md, "Memory"). */
    int predict = !a->no_predict && pp_model_event_count(m) <= CLI_ADVISE_MAX_EVENTS;
    int rc = predict ? pp_report_build(m, &a->opt, &r, &err)
                     : pp_report_build_owned(m, &a->opt, &r, &err);
    if (!predict)
        m = NULL; /* the owned build freed it */
    if (rc != PP_OK) {
        cli_error("analyze: %s: %s", source, err.msg[0] ? err.msg : pp_strerror(rc));
        code = cli_exit_code(rc);
    } else {
        code = predict ? cli_advise("analyze", r, m) : CLI_OK;
        if (code == CLI_OK)
            code = analyze_output(r, a);
    }
    pp_report_free(r);
    pp_model_free(m);
    free(source);
    return code;
}

static int analyze_run(int argc, char **argv) {
    analyze_args a = {0};
    pp_analyze_options_init(&a.opt);
    int code = analyze_parse(argc, argv, &a);
    if (code != CLI_OK || !a.lookup) {
        code = code != CLI_OK ? code : analyze_trace(&a);
        cli_traces_free(&a.traces);
        return code;
    }
    /* --lookup: the isolated times point into the table, kept until the end */
    pp_lookup *l = NULL;
    pp_isolated_hw *iso = NULL;
    pp_error err = {{0}};
    int rc = pp_lookup_load(a.lookup, &l, &err);
    if (rc == PP_OK)
        rc = pp_lookup_isolated(l, a.lookup_nodes, a.lookup_edges, &iso, &a.opt.nisolated, &err);
    if (rc != PP_OK) {
        cli_error("analyze: --lookup %s", err.msg);
        code = cli_exit_code(rc);
    } else {
        a.opt.isolated = iso;
        code = analyze_trace(&a);
    }
    free(iso);
    pp_lookup_free(l);
    cli_traces_free(&a.traces);
    return code;
}

const pp_command pp_cmd_analyze = {
    .name = "analyze",
    .summary = "metrics, bottleneck and findings of a trace (text, JSON, CSV)",
    .run = analyze_run,
    .help = analyze_help,
};
