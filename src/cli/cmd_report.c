/* pipeprof report: every output of one analysis in one directory — the
 * text report as summary.txt, the HTML page, the xlsx workbook, the trace
 * as Perfetto protobuf and the CSV tables (docs/report.md). The analysis is
 * built once and every file renders it; the directory is written through
 * report_dir.c, so a failure leaves no partial set behind. */
#include <stdlib.h>
#include <string.h>

#include "cli/advise.h"
#include "cli/cli.h"
#include "cli/load_traces.h"
#include "core/error.h"
#include "io/outfile.h"
#include "pipeprof/analyze.h"
#include "pipeprof/io.h"

static void report_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof report TRACE... -o DIR [--no-summary] [--no-html] [--no-xlsx]\n"
            "                       [--no-pftrace] [--no-csv] [window and pattern options]\n"
            "                       [--offset TRACE=TIME] [--sync NAME]\n\n"
            "Analyzes TRACE (.pptrace, Chrome JSON or a PyTorch-profiler export; several\n"
            "are merged onto one clock first, docs/merging.md) once and writes every\n"
            "output into DIR (created if missing; docs/report.md):\n"
            "  summary.txt    the text report of pipeprof analyze, findings first\n"
            "  report.html    one self-contained page with a timeline (docs/report-html.md)\n"
            "  report.xlsx    a workbook: overview, a sheet per device and per stage, ops\n"
            "  trace.pftrace  the trace as Perfetto protobuf (ui.perfetto.dev)\n"
            "  *.csv          the report's tables (devices.csv, stages.csv, bandwidth.csv...)\n"
            "The files appear only when all of them are complete; files of an earlier\n"
            "run that this one does not write are left as they were.\n\n"
            "options:\n"
            "  -o, --output DIR       the directory (required)\n"
            "  --no-summary, --no-html, --no-xlsx, --no-pftrace, --no-csv\n"
            "                         leave that output out\n"
            "  --region NAME, --exclude-region NAME, --from NS, --to NS\n"
            "                         the window, as for pipeprof analyze\n"
            "  --batch-pattern REGEX, --stage-pattern REGEX, --partition-pattern REGEX,\n"
            "  --merge-pattern REGEX  label a foreign trace (pipeprof analyze --help)\n"
            "%s"
            "  -h, --help             this help\n\n"
            "Exit status: 0 ok, 1 I/O failure, 2 bad input (flags, an unreadable trace, a\n"
            "trace without execs, DIR naming a file).\n\n"
            "examples:\n"
            "  pipeprof report out/trace.pptrace -o out/report --exclude-region \"warm up\"\n"
            "  pipeprof report pytorch.json -o report --no-pftrace \\\n"
            "      --batch-pattern '^(?<stage>.+)/batch(?<batch>[0-9]+)$'\n"
            "  pipeprof report producer.pptrace consumer.pptrace -o report\n",
            cli_traces_help);
}

/* The outputs, each switchable off with --no-NAME. */
enum { OUT_SUMMARY, OUT_HTML, OUT_XLSX, OUT_PFTRACE, OUT_CSV, NOUTPUTS };
static const char *const output_names[NOUTPUTS] = {"summary", "html", "xlsx", "pftrace", "csv"};

typedef struct report_args {
    cli_traces traces;
    const char *dir;
    int skip[NOUTPUTS];
    pp_analyze_options opt;
} report_args;

/* 1 when arg is --no-NAME of an output (marked skipped), else 0. */
static int skip_option(const char *arg, report_args *a) {
    if (strncmp(arg, "--no-", 5) != 0)
        return 0;
    for (int k = 0; k < NOUTPUTS; k++)
        if (strcmp(arg + 5, output_names[k]) == 0) {
            a->skip[k] = 1;
            return 1;
        }
    return 0;
}

static int report_parse(int argc, char **argv, report_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got;
        if (skip_option(argv[i], a)) {
            continue;
        } else if ((got = cli_option(argc, argv, &i, "-o", &v)) != 0 ||
                   (got = cli_option(argc, argv, &i, "--output", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            a->dir = v;
        } else if ((got = cli_window_option(argc, argv, &i, &a->opt)) != 0 ||
                   (got = cli_traces_option(argc, argv, &i, &a->traces)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_unknown_option(argv[0], argv[i]);
        } else if (cli_traces_add(&a->traces, argv[i]) != CLI_OK) {
            return CLI_FAIL;
        }
    }
    if (a->traces.n == 0 || !a->dir) {
        cli_error("report: expected a TRACE and -o DIR (pipeprof report trace.pptrace -o "
                  "report/)");
        return CLI_BADINPUT;
    }
    if (cli_window_check(argv[0], &a->opt) != 0)
        return CLI_BADINPUT;
    return CLI_OK;
}

/* The text report, rendered in memory and written through pp_outfile, whose
 * writes fail cleanly on a full disk or past `ulimit -f`. */
static int write_summary(const pp_report *r, const char *path, pp_error *err) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    int rc = pp_report_write_text(r, mem);
    if (fclose(mem) != 0 || rc != PP_OK) {
        free(text);
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    }
    rc = pp_outfile_write_file(path, text, len, err);
    free(text);
    return rc;
}

/* Writes output k into the staging directory. PP_EUNSUPPORTED for an
 * output this build cannot write (the xlsx workbook without libxlsxwriter). */
static int write_output(int k, const pp_report *r, const pp_model *m, const cli_out_dir *o,
                        pp_error *err) {
    static const char *const files[NOUTPUTS] = {"summary.txt", "report.html", "report.xlsx",
                                                "trace.pftrace", NULL};
    if (k == OUT_CSV)
        return pp_report_write_csv(r, o->staging, err);
    char *path = cli_out_dir_path(o, files[k]);
    if (!path)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    int rc = k == OUT_SUMMARY ? write_summary(r, path, err)
             : k == OUT_HTML  ? pp_report_write_html(r, m, path, err)
             : k == OUT_XLSX  ? pp_report_write_xlsx(r, path, err)
                              : pp_trace_write(m, path, err);
    free(path);
    return rc;
}

static int report_write(const report_args *a, const pp_report *r, const pp_model *m) {
    cli_out_dir o;
    int code = cli_out_dir_open("report", a->dir, &o);
    if (code != CLI_OK)
        return code;
    char written[128] = "";
    for (int k = 0; k < NOUTPUTS; k++) {
        if (a->skip[k])
            continue;
        pp_error err = {{0}};
        int rc = write_output(k, r, m, &o, &err);
        if (rc == PP_EUNSUPPORTED) { /* the workbook, built without libxlsxwriter */
            cli_error("report: %s; report.xlsx is left out", err.msg);
            continue;
        }
        if (rc != PP_OK) { /* the input was good: writing it failed */
            cli_error("report: %s: %s", output_names[k], err.msg[0] ? err.msg : pp_strerror(rc));
            cli_out_dir_abort(&o);
            return CLI_FAIL;
        }
        snprintf(written + strlen(written), sizeof written - strlen(written), "%s%s",
                 written[0] ? ", " : "", output_names[k]);
    }
    code = cli_out_dir_commit("report", &o);
    if (code == CLI_OK)
        fprintf(stderr, "pipeprof: report %s: %s\n", a->dir, written[0] ? written : "nothing");
    return code;
}

static int report_run(int argc, char **argv) {
    report_args a = {0};
    pp_analyze_options_init(&a.opt);
    int code = report_parse(argc, argv, &a);
    pp_model *m = NULL;
    char *source = NULL;
    if (code == CLI_OK)
        code = cli_traces_load("report", "reporting", &a.traces, &m, &source);
    if (code == CLI_OK) {
        pp_report *r = NULL;
        pp_error err = {{0}};
        a.opt.source = source;
        int rc = pp_report_build(m, &a.opt, &r, &err);
        if (rc != PP_OK) {
            cli_error("report: %s: %s", source, err.msg[0] ? err.msg : pp_strerror(rc));
            code = cli_exit_code(rc);
        } else {
            code = cli_advise("report", r, m);
            if (code == CLI_OK)
                code = report_write(&a, r, m);
        }
        pp_report_free(r);
    }
    pp_model_free(m);
    free(source);
    cli_traces_free(&a.traces);
    return code;
}

const pp_command pp_cmd_report = {
    .name = "report",
    .summary = "every output in one directory: summary.txt, HTML, xlsx, Perfetto, CSV",
    .run = report_run,
    .help = report_help,
};
