/* pipeprof demo: the built-in pipeline (graph prep on the CPU, an embedding
 * data parallel over the CPU and a simulated NPU, a classifier on a
 * simulated GPU), recorded and analyzed: a first look without any setup. */
#include <stdio.h>

#include "cli/cli.h"
#include "pipeprof/pipeline.h"

static void demo_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof demo [--out DIR] [--batches N] [--level L] [--serial]\n"
            "                     [--backend cpu|openvino]\n\n"
            "Runs the built-in pipeline\n"
            "  GraphPrep (cpu) -> Embedding (cpu + sim:NPU, data parallel) -> Classifier (sim:GPU)\n"
            "on 1024-node graphs, writes DIR/trace.json and DIR/trace.pftrace (open\n"
            "either in ui.perfetto.dev), DIR/trace.pptrace and DIR/report.html (the\n"
            "analysis with a timeline, one page that works offline), and prints the\n"
            "analysis: per stage its devices, time and how often it was the\n"
            "bottleneck. The NPU and GPU are simulated (a latency model,\n"
            "docs/backends.md) and every output says so.\n"
            "--backend openvino runs the CPU work through OpenVINO instead (device\n"
            "openvino:CPU, models compiled by OpenVINO; hardware times from its\n"
            "PERF_COUNT profiling).\n"
            "Exit status: 0 ok, 1 a failure of the machine, 2 bad input.\n\n"
            "options:\n"
            "  --out DIR      where the traces go (default: pipeprof-demo)\n"
            "  --batches N    measured batches (default 50)\n"
            "  --level L      0 wall times, 1 + hardware times (default), 2 + per-op spans\n"
            "  --serial       one batch at a time through every stage, for comparison\n"
            "  --backend B    what runs the CPU stages: cpu (default) or openvino\n"
            "  -h, --help     this help\n\n"
            "example:\n"
            "  pipeprof demo --out demo && pipeprof demo --out demo-serial --serial\n"
            "  pipeprof demo --backend openvino --level 2 --out demo-ov\n");
}

static int demo_run(int argc, char **argv) {
    cli_run_args a = {.out = "pipeprof-demo", .level = 1};
    const char *backend = "cpu";
    for (int i = 1; i < argc; i++) {
        int got = cli_option(argc, argv, &i, "--backend", &backend);
        if (got == 0)
            got = cli_run_option(argc, argv, &i, &a);
        if (got < 0)
            return CLI_BADINPUT;
        if (got == 0)
            return cli_unknown_option(argv[0], argv[i]);
    }
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    int rc = pp_pipeline_demo_backend(backend, &p, &err);
    if (rc != PP_OK) {
        cli_error("demo: %s", err.msg);
        return cli_exit_code(rc);
    }
    int code = cli_run_pipeline("demo", p, &a);
    pp_pipeline_free(p);
    return code;
}

const pp_command pp_cmd_demo = {
    .name = "demo",
    .summary = "run and analyze a built-in pipeline (CPU + simulated NPU/GPU)",
    .run = demo_run,
    .help = demo_help,
};
