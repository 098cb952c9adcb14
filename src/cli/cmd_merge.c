/* pipeprof merge: several traces (the processes of one pipeline, a host
 * trace and a device trace) into one, on one clock. The merge and its clock
 * alignment are the library's (pp_model_merge, docs/merging.md); this file
 * reads the arguments, writes the result and says how it was aligned. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/load_traces.h"
#include "pipeprof/io.h"

static void merge_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof merge TRACE TRACE... -o OUT\n"
            "                      [--offset TRACE=TIME]... [--sync NAME]\n\n"
            "Merges the traces into one timeline and writes OUT (.pptrace, .json or\n"
            ".pftrace, by its extension): each process keeps its own tracks (process ids\n"
            "that collide are renumbered), batch ids are shared, so a batch that passes\n"
            "through several processes is one batch of the merged trace, and its cycles\n"
            "and end-to-end latency span them all. Times are put on the first TRACE's\n"
            "clock: an --offset when given, else the same clock (CLOCK_MONOTONIC on one\n"
            "boot of one host, from the traces' metadata), else the sync marks both\n"
            "traces recorded. Traces with none of these are refused. The merged trace\n"
            "says how each input was aligned and the error bound, and so does every\n"
            "report of it (docs/merging.md). analyze and export merge several TRACEs\n"
            "the same way.\n\n"
            "options:\n"
            "  -o, --output OUT       the merged trace (.pptrace, .json or .pftrace)\n"
            "%s"
            "  -h, --help             this help\n\n"
            "Exit status: 0 ok, 1 I/O failure, 2 bad input (flags, unreadable traces,\n"
            "traces with no common clock).\n\n"
            "examples:\n"
            "  pipeprof record -o 'trace-%%p.pptrace' -- ./run_pipeline.sh\n"
            "  pipeprof merge trace-*.pptrace -o pipeline.pptrace\n"
            "  pipeprof merge host.pptrace gpu.json --offset gpu.json=-1520.25us -o all.json\n"
            "  pipeprof merge a.pptrace b.pptrace --sync handshake -o ab.pftrace\n",
            cli_traces_help);
}

static int merge_parse(int argc, char **argv, cli_traces *t, const char **out) {
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got;
        if ((got = cli_option(argc, argv, &i, "-o", &v)) != 0 ||
            (got = cli_option(argc, argv, &i, "--output", &v)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
            *out = v;
        } else if ((got = cli_traces_option(argc, argv, &i, t)) != 0) {
            if (got < 0)
                return CLI_BADINPUT;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_unknown_option(argv[0], argv[i]);
        } else if (cli_traces_add(t, argv[i]) != 0) {
            return CLI_FAIL;
        }
    }
    if (t->n < 2 || !*out) {
        cli_error("merge: expected two or more TRACEs and -o OUT (pipeprof merge a.pptrace "
                  "b.pptrace -o ab.pptrace)");
        return CLI_BADINPUT;
    }
    pp_format f = pp_format_from_path(*out);
    if (f != PP_FORMAT_PPTRACE && f != PP_FORMAT_CHROME_JSON && f != PP_FORMAT_PERFETTO) {
        cli_error("merge: -o %s: the merged trace is written as .pptrace, .json or .pftrace", *out);
        return CLI_BADINPUT;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (cli_same_file(t->paths[i], *out)) {
            cli_error("merge: -o %s is the TRACE %s: writing it would destroy an input", *out,
                      t->paths[i]);
            return CLI_BADINPUT;
        }
    }
    return CLI_OK;
}

static int merge_run(int argc, char **argv) {
    cli_traces t = {0};
    const char *out = NULL;
    pp_model *m = NULL;
    char *source = NULL;
    int code = merge_parse(argc, argv, &t, &out);
    if (code == CLI_OK)
        code = cli_traces_load("merge", "merging", &t, &m, &source);
    if (code == CLI_OK) {
        pp_error err = {{0}};
        int rc = pp_trace_write(m, out, &err);
        if (rc != PP_OK) {
            cli_error("merge: %s", err.msg[0] ? err.msg : pp_strerror(rc));
            code = cli_exit_code(rc);
        } else {
            const pp_model_meta *meta = pp_model_meta_get(m);
            fprintf(stderr, "pipeprof: merged %s -> %s: %zu events on %zu tracks\n"
                    "pipeprof: clock alignment: %s\n", source, out, pp_model_event_count(m),
                    pp_model_track_count(m), pp_model_string(m, meta->alignment));
        }
    }
    pp_model_free(m);
    free(source);
    cli_traces_free(&t);
    return code;
}

const pp_command pp_cmd_merge = {
    .name = "merge",
    .summary = "merge the traces of several processes (or host and device) on one clock",
    .run = merge_run,
    .help = merge_help,
};
