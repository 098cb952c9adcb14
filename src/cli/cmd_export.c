/* pipeprof export: write a trace as something else — a self-contained HTML
 * report (the analysis and a timeline, pp_report_write_html), or another
 * trace format (pp_trace_convert for one TRACE, as `pipeprof convert`;
 * pp_trace_write of the merged model for several). This file turns flags
 * into options and statuses into messages and exit codes. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/advise.h"
#include "cli/cli.h"
#include "cli/python_delegate.h"
#include "cli/load_traces.h"
#include "model/window_copy.h"
#include "pipeprof/analyze.h"
#include "pipeprof/io.h"

/* What --to names, and the extension the output gets. */
static const struct target {
    const char *name, *ext;
} targets[] = {
    {"html", ".html"},
    {"pptrace", ".pptrace"},
    {"json", ".json"},
    {"pftrace", ".pftrace"},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

static void export_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof export TRACE... --to html|pptrace|json|pftrace|parquet [-o OUT]\n"
            "                       [--from NS] [--to NS]\n"
            "                       [--region NAME | --exclude-region NAME]\n"
            "                       [--batch-pattern REGEX]\n"
            "                       [--offset TRACE=TIME]... [--sync NAME]\n\n"
            "Reads TRACE (.pptrace, Chrome JSON or a PyTorch-profiler export) and writes it\n"
            "as OUT. --to html writes one self-contained page that works offline: the\n"
            "findings, a timeline of every track with zoom, pan and hover (at most 20000\n"
            "spans in full, the rest summarized), utilization, bubble and stage latency\n"
            "histograms, the stage, cycle and data-parallel tables (docs/report-html.md).\n"
            "--to pptrace, json and pftrace (Perfetto protobuf) convert the trace as\n"
            "`pipeprof convert` does. --to parquet writes the directory OUT of one\n"
            "Parquet file per table (docs/tables.md), in Python (python -m pipeprof\n"
            "export: needs pip install \"pipeprof[sql]\"; PIPEPROF_PYTHON names the Python).\n"
            "OUT appears only when complete. Several TRACEs are merged first, as\n"
            "`pipeprof merge` does (then -o is required).\n\n"
            "options:\n"
            "  --to FORMAT            html, pptrace, json, pftrace or parquet (a name; --to with a\n"
            "                         number is the window's end, below)\n"
            "  -o, --output OUT       the file (default: TRACE with the format's extension)\n"
            "  --region NAME          html: window = the hull of the regions named NAME\n"
            "  --exclude-region NAME  html: window = from the end of the last region NAME\n"
            "  --from NS, --to NS     a window in trace nanoseconds [NS, NS): html clips\n"
            "                         the analysis to it; a trace format keeps the events\n"
            "                         that overlap it (as pipeprof convert --from --to)\n"
            "  --batch-pattern REGEX, --stage-pattern REGEX, --partition-pattern REGEX,\n"
            "  --merge-pattern REGEX  html: label a foreign trace (pipeprof analyze --help)\n"
            "%s"
            "  -h, --help             this help\n\n"
            "Exit status: 0 ok, 1 I/O failure, 2 bad input (flags, an unreadable trace,\n"
            "a trace without execs for html).\n\n"
            "examples:\n"
            "  pipeprof export trace.pptrace --to html -o report.html\n"
            "  pipeprof export trace.json --to html --exclude-region \"warm up\"\n"
            "  pipeprof export trace.pptrace --to pftrace\n"
            "  pipeprof export trace.pptrace --to parquet -o trace.parquet.d\n"
            "  pipeprof export trace.pptrace --to pftrace --from 4000000000 --to 5000000000\n"
            "  pipeprof export producer.pptrace consumer.pptrace --to html -o both.html\n",
            cli_traces_help);
}

typedef struct export_args {
    cli_traces traces;
    const char *out;
    const struct target *to;
    pp_analyze_options opt;
} export_args;

static int export_parse(int argc, char **argv, export_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got;
        if ((got = cli_option(argc, argv, &i, "--to", &v)) != 0) {
            uint64_t ns;
            if (got < 0)
                return CLI_BADINPUT;
            if (isdigit((unsigned char)v[0])) { /* --to NS, the window's end: formats are names */
                if (cli_parse_u64(argv[0], "--to", v, 0, INT64_MAX, &ns) != 0)
                    return CLI_BADINPUT;
                a->opt.has_to = 1;
                a->opt.to_ns = (int64_t)ns;
                continue;
            }
            if (a->to) {
                cli_error("export: --to \"%s\": the format is given twice (--to %s)", v,
                          a->to->name);
                return CLI_BADINPUT;
            }
            for (size_t k = 0; k < NTARGETS && !a->to; k++)
                if (strcmp(v, targets[k].name) == 0)
                    a->to = &targets[k];
            if (!a->to) {
                cli_error("export: --to \"%s\": unknown format (have: html, pptrace, json, pftrace)", v);
                return CLI_BADINPUT;
            }
        } else if ((got = cli_option(argc, argv, &i, "-o", &v)) != 0 ||
                   (got = cli_option(argc, argv, &i, "--output", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->out = v;
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
    if (!a->traces.n || !a->to) {
        cli_error("export: expected a TRACE and --to (pipeprof export trace.pptrace --to html "
                  "-o report.html)");
        return CLI_BADINPUT;
    }
    if (cli_window_check(argv[0], &a->opt) != 0)
        return CLI_BADINPUT;
    const pp_analyze_options *o = &a->opt;
    if (strcmp(a->to->name, "html") != 0 &&
        (o->region || o->exclude_region || o->batch_pattern || o->stage_pattern ||
         o->partition_pattern || o->merge_pattern)) {
        cli_error("export: --region, --exclude-region and the name patterns are for --to html; "
                  "a trace format takes --from and --to only");
        return CLI_BADINPUT;
    }
    if (o->has_from && o->has_to && o->from_ns >= o->to_ns) {
        cli_error("export: --from %lld is not before --to %lld", (long long)o->from_ns,
                  (long long)o->to_ns);
        return CLI_BADINPUT;
    }
    return CLI_OK;
}

/* The length of `path` without its extension (".json.gz" counts as one). */
static size_t stem_length(const char *path) {
    size_t n = strlen(path);
    if (n > 8 && strcmp(path + n - 8, ".json.gz") == 0)
        return n - 8;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? (size_t)(dot - path) : n;
}

/* OUT: as given, else TRACE with its extension replaced by the format's.
 * Returns a malloc'd path or NULL after printing why. */
static char *output_path(const export_args *a) {
    const char *ext = a->to->ext;
    if (a->out) {
        size_t n = strlen(a->out), k = strlen(ext);
        if (strcmp(a->to->name, "html") != 0 && (n < k || strcmp(a->out + n - k, ext) != 0)) {
            cli_error("export: -o %s: a %s trace's name ends in %s", a->out, a->to->name, ext);
            return NULL;
        }
        for (size_t i = 0; i < a->traces.n; i++) {
            if (cli_same_file(a->traces.paths[i], a->out)) {
                cli_error("export: -o %s is TRACE itself: writing it would destroy the input",
                          a->out);
                return NULL;
            }
        }
        return strdup(a->out);
    }
    if (a->traces.n > 1) {
        cli_error("export: several TRACEs are merged into one output: name it with -o");
        return NULL;
    }
    const char *trace = a->traces.paths[0];
    size_t stem = stem_length(trace);
    char *out = malloc(stem + strlen(ext) + 1);
    if (!out) {
        cli_error("export: out of memory");
        return NULL;
    }
    sprintf(out, "%.*s%s", (int)stem, trace, ext);
    if (strcmp(out, trace) == 0) {
        cli_error("export: writing %s would replace TRACE; name the output with -o", out);
        free(out);
        return NULL;
    }
    return out;
}

/* The window of --from and --to, as pp_trace_convert takes it. */
static pp_convert_options convert_window(const export_args *a) {
    return (pp_convert_options){a->opt.has_from, a->opt.has_to, a->opt.from_ns, a->opt.to_ns};
}

static int export_write(const export_args *a, const pp_model *m, const char *out,
                        const char *source) {
    pp_error err = {{0}};
    pp_model *cut = NULL;
    int rc;
    pp_convert_options w = convert_window(a);
    if (strcmp(a->to->name, "html") != 0 && (w.has_from || w.has_to)) {
        rc = pp_model_copy_head(m, &cut);
        if (rc == PP_OK)
            rc = pp_model_append_window(cut, m, w.has_from ? w.from_ns : INT64_MIN,
                                        w.has_to ? w.to_ns : INT64_MAX);
        if (rc != PP_OK) {
            pp_model_free(cut);
            cli_error("export: out of memory");
            return CLI_FAIL;
        }
        m = cut;
    }
    if (strcmp(a->to->name, "html") != 0) {
        rc = pp_trace_write(m, out, &err);
    } else {
        pp_report *r = NULL;
        rc = pp_report_build(m, &a->opt, &r, &err);
        if (rc != PP_OK) {
            cli_error("export: %s: %s", source, err.msg[0] ? err.msg : pp_strerror(rc));
            return cli_exit_code(rc);
        }
        int code = cli_advise("export", r, m);
        if (code != CLI_OK) {
            pp_report_free(r);
            pp_model_free(cut);
            return code;
        }
        rc = pp_report_write_html(r, m, out, &err);
        pp_report_free(r);
    }
    size_t events = pp_model_event_count(m);
    pp_model_free(cut);
    if (rc != PP_OK) {
        cli_error("export: %s", err.msg[0] ? err.msg : pp_strerror(rc));
        return cli_exit_code(rc);
    }
    fprintf(stderr, "pipeprof: %s -> %s (%s): %zu events\n", source, out, a->to->name, events);
    cli_viewer_limits_warn(out);
    return CLI_OK;
}

/* One TRACE to a trace format: as `pipeprof convert` does (a .pptrace to
 * .json or .pptrace in chunks, in a few MB at any size). */
static int export_convert(const export_args *a, const char *out) {
    const char *in = a->traces.paths[0];
    pp_error err = {{0}};
    pp_convert_info info;
    pp_convert_options w = convert_window(a);
    int rc = pp_trace_convert(in, out, &w, &info, &err);
    if (rc == PP_ETRUNCATED) {
        cli_error("warning: %s (exporting the rest; the output's metadata states the loss)",
                  err.msg);
    } else if (rc != PP_OK) {
        cli_error("export: %s", err.msg[0] ? err.msg : pp_strerror(rc));
        return cli_exit_code(rc);
    }
    fprintf(stderr, "pipeprof: %s -> %s (%s): %" PRIu64 " events\n", in, out, a->to->name,
            info.events);
    cli_viewer_limits_warn(out);
    return CLI_OK;
}

/* Whether the command line asks for --to parquet: a dataset of Parquet
 * files, which the Python package writes (python -m pipeprof export). */
static int wants_parquet(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if ((strcmp(argv[i], "--to") == 0 && i + 1 < argc && strcmp(argv[i + 1], "parquet") == 0) ||
            strcmp(argv[i], "--to=parquet") == 0)
            return 1;
    return 0;
}

static int export_run(int argc, char **argv) {
    if (wants_parquet(argc, argv))
        return cli_python_delegate("export", "sql", argc, argv);
    export_args a = {0};
    pp_analyze_options_init(&a.opt);
    int code = export_parse(argc, argv, &a);
    char *out = code == CLI_OK ? output_path(&a) : NULL;
    pp_model *m = NULL;
    char *source = NULL;
    if (code == CLI_OK && !out)
        code = CLI_BADINPUT;
    if (code == CLI_OK && a.traces.n == 1 && !a.traces.noffsets && !a.traces.sync &&
        strcmp(a.to->name, "html") != 0) {
        code = export_convert(&a, out);
        free(out);
        cli_traces_free(&a.traces);
        return code;
    }
    if (code == CLI_OK)
        code = cli_traces_load("export", "exporting", &a.traces, &m, &source);
    if (code == CLI_OK) {
        a.opt.source = source;
        code = export_write(&a, m, out, source);
    }
    pp_model_free(m);
    free(source);
    free(out);
    cli_traces_free(&a.traces);
    return code;
}

const pp_command pp_cmd_export = {
    .name = "export",
    .summary = "write a trace as a self-contained HTML report (or .pptrace, .json, .pftrace)",
    .run = export_run,
    .help = export_help,
};
