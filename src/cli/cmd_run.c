/* pipeprof run: run a pipeline described in a JSON file on its devices,
 * record it, write DIR/trace.json, DIR/trace.pptrace, DIR/trace.pftrace and
 * DIR/report.html and print the analysis. `demo` does the same with the
 * built-in pipeline, through cli_run_pipeline below. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/advise.h"
#include "cli/cli.h"
#include "pipeprof/analyze.h"
#include "pipeprof/model.h"
#include "pipeprof/pipeline.h"

/* Prints the analysis of what the session recorded, over the measured
 * batches (the window starts where the warm-up region ends), and writes it
 * as the HTML report `html`. */
static int print_report(pp_session *s, int warmup, const char *source, const char *html) {
    pp_model *m = NULL;
    int rc = pp_model_from_session(s, &m);
    if (rc != PP_OK) {
        cli_error("cannot read back the recording: %s", pp_strerror(rc));
        return CLI_FAIL;
    }
    pp_analyze_options opt;
    pp_analyze_options_init(&opt);
    opt.exclude_region = warmup > 0 ? "warm up" : NULL;
    opt.source = source;
    pp_report *r = NULL;
    pp_error err = {{0}};
    rc = pp_report_build(m, &opt, &r, &err);
    if (rc == PP_OK && cli_advise("analysis", r, m) != CLI_OK) {
        pp_report_free(r);
        pp_model_free(m);
        return CLI_FAIL;
    }
    if (rc == PP_OK)
        rc = pp_report_write_html(r, m, html, &err);
    if (rc == PP_OK)
        rc = pp_report_write_text(r, stdout);
    else
        cli_error("analysis: %s", err.msg);
    pp_report_free(r);
    pp_model_free(m);
    return rc == PP_OK ? CLI_OK : CLI_FAIL;
}

/* DIR/NAME into buf ("out/" and "out" give "out/NAME"); 0 when it fits. */
static int out_path(char *buf, size_t len, const char *dir, const char *name) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    int w = snprintf(buf, len, "%.*s/%s", (int)n, dir, name);
    return w >= 0 && (size_t)w < len ? 0 : -1;
}

int cli_run_pipeline(const char *cmd, pp_pipeline *p, const cli_run_args *a) {
    char json[4096], pptrace[4096], pftrace[4096], html[4096];
    if (out_path(json, sizeof json, a->out, "trace.json") != 0 ||
        out_path(pptrace, sizeof pptrace, a->out, "trace.pptrace") != 0 ||
        out_path(pftrace, sizeof pftrace, a->out, "trace.pftrace") != 0 ||
        out_path(html, sizeof html, a->out, "report.html") != 0) {
        cli_error("%s: --out: the folder's name is too long", cmd);
        return CLI_BADINPUT;
    }
    if (mkdir(a->out, 0777) != 0 && errno != EEXIST) {
        cli_error("%s: cannot create %s: %s", cmd, a->out, strerror(errno));
        return CLI_FAIL;
    }
    pp_session_config scfg;
    pp_session_config_init(&scfg);
    scfg.output = json;
    scfg.level = a->level;
    scfg.process_name = pp_pipeline_config_get(p)->name;
    pp_session *s = NULL;
    int rc = pp_session_open(&scfg, &s);
    if (rc == PP_OK)
        rc = pp_session_start(s);
    if (rc != PP_OK) {
        cli_error("%s: cannot start recording: %s", cmd, pp_strerror(rc));
        pp_session_close(s);
        return CLI_FAIL;
    }
    pp_run_options opt = {.serial = a->serial, .batches = a->batches, .warmup = -1};
    pp_pipeline_result res = {0};
    pp_error err = {{0}};
    rc = pp_pipeline_run(p, s, &opt, &res, &err);
    if (rc != PP_OK) {
        cli_error("%s: %s", cmd, err.msg);
        pp_session_close(s);
        return cli_exit_code(rc);
    }
    rc = pp_session_stop(s, &err);
    if (rc == PP_OK)
        rc = pp_session_write(s, pptrace, &err);
    if (rc == PP_OK)
        rc = pp_session_write(s, pftrace, &err);
    if (rc != PP_OK) {
        cli_error("%s: %s", cmd, err.msg);
        pp_session_close(s);
        return CLI_FAIL;
    }
    cli_viewer_limits_warn(json);
    cli_viewer_limits_warn(pftrace);
    printf("%s: %lld batches %s in %.3f s (%.1f batches/s); wrote %s, %s, %s and %s\n\n",
           pp_pipeline_config_get(p)->name, (long long)res.batches,
           a->serial ? "one at a time" : "streaming", (double)res.wall_ns / 1e9,
           res.batches_per_s, json, pptrace, pftrace, html);
    int warmup = pp_pipeline_config_get(p)->warmup;
    int code = print_report(s, warmup, json, html);
    pp_session_close(s);
    return code;
}

int cli_run_option(int argc, char **argv, int *i, cli_run_args *a) {
    const char *v;
    uint64_t n;
    int got;
    if (strcmp(argv[*i], "--serial") == 0) {
        a->serial = 1;
        return 1;
    }
    if ((got = cli_option(argc, argv, i, "--out", &v)) != 0) {
        a->out = v;
        return got;
    }
    if ((got = cli_option(argc, argv, i, "--batches", &v)) != 0) {
        if (got < 0 || cli_parse_u64(argv[0], "--batches", v, 1, 1000000, &n) != 0)
            return -1;
        a->batches = (int)n;
        return 1;
    }
    if ((got = cli_option(argc, argv, i, "--level", &v)) != 0) {
        if (got < 0 || cli_parse_u64(argv[0], "--level", v, 0, 2, &n) != 0)
            return -1;
        a->level = (int)n;
        return 1;
    }
    return 0;
}

static void run_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof run PIPELINE.json [--out DIR] [--batches N] [--level L] [--serial]\n\n"
            "Runs the pipeline the file describes (docs/pipeline.md) on its devices,\n"
            "records it, writes DIR/trace.json (Perfetto UI, chrome://tracing),\n"
            "DIR/trace.pptrace, DIR/trace.pftrace (Perfetto protobuf) and\n"
            "DIR/report.html (docs/report-html.md), and prints the analysis of the\n"
            "measured batches (warm-up excluded). Simulated devices are labeled\n"
            "\"(simulated)\".\n"
            "Exit status: 0 ok, 1 a failure of the machine, 2 bad input.\n\n"
            "options:\n"
            "  --out DIR      where the traces go (default: pipeprof-run)\n"
            "  --batches N    measured batches, overriding the file's\n"
            "  --level L      0 wall times, 1 + hardware times (default), 2 + per-op spans\n"
            "  --serial       one batch at a time through every stage, for comparison\n"
            "  -h, --help     this help\n\n"
            "example:\n"
            "  pipeprof run examples/demo_pipeline.json --out out --batches 100\n");
}

static int run_run(int argc, char **argv) {
    cli_run_args a = {.out = "pipeprof-run", .level = 1};
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        int got = cli_run_option(argc, argv, &i, &a);
        if (got < 0)
            return CLI_BADINPUT;
        if (got > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_unknown_option(argv[0], argv[i]);
        if (path) {
            cli_error("run: unexpected argument \"%s\": expected one PIPELINE.json", argv[i]);
            return CLI_BADINPUT;
        }
        path = argv[i];
    }
    if (!path) {
        cli_error("run: expected a pipeline file (pipeprof run PIPELINE.json --out DIR)");
        return CLI_BADINPUT;
    }
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    int rc = pp_pipeline_load(path, &p, &err);
    if (rc != PP_OK) {
        cli_error("%s", err.msg);
        return cli_exit_code(rc);
    }
    int code = cli_run_pipeline("run", p, &a);
    pp_pipeline_free(p);
    return code;
}

const pp_command pp_cmd_run = {
    .name = "run",
    .summary = "run a pipeline file on its devices, record and analyze it",
    .run = run_run,
    .help = run_help,
};
