/* pipeprof convert: read a trace in any readable format, write it in the
 * format the output's extension names. All the work is pp_trace_convert;
 * this file turns its status into messages and exit codes. */
#include <inttypes.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/load_traces.h"
#include "pipeprof/io.h"

static void convert_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof convert IN OUT [--from NS] [--to NS]\n\n"
            "Reads the trace IN (.pptrace, Chrome JSON .json or .json.gz, found by\n"
            "content) and writes it to OUT in the format OUT's extension names:\n"
            "  .pptrace   native, compact, block-framed\n"
            "  .json      Chrome Trace Event JSON (Perfetto UI, chrome://tracing)\n"
            "  .pftrace   Perfetto protobuf trace (Perfetto UI; smaller, faster to load)\n"
            "OUT appears only when complete. A truncated .pptrace is converted with a\n"
            "warning saying how many bytes were lost; the output's metadata keeps that\n"
            "figure. A .pptrace converted to .json or .pptrace is read and written\n"
            "65536 events at a time, in a few MB whatever its size; other inputs and\n"
            ".pftrace outputs are read whole first.\n"
            "Exit status: 0 ok, 1 I/O failure, 2 bad input.\n\n"
            "options:\n"
            "  --from NS, --to NS   keep only the events that overlap [NS, NS) in trace\n"
            "                       nanoseconds (every track and string is kept): cut a\n"
            "                       trace too large to analyze in memory down to the part\n"
            "                       to analyze\n"
            "  -h, --help           this help\n\n"
            "examples:\n"
            "  pipeprof convert trace.pptrace trace.json      # open it in ui.perfetto.dev\n"
            "  pipeprof convert trace.pptrace trace.pftrace\n"
            "  pipeprof convert hour.pptrace minute.pptrace --from 600000000000 --to 660000000000\n"
            "  pipeprof convert pytorch_trace.json.gz trace.pptrace\n");
}

/* Prints the reader's or writer's message (which names the file and the
 * position) and returns the exit code for `rc`. */
static int convert_fail(const char *path, int rc, const pp_error *err) {
    if (err->msg[0])
        cli_error("%s", err->msg);
    else
        cli_error("%s: %s", path, pp_strerror(rc));
    return cli_exit_code(rc);
}

static int convert_run(int argc, char **argv) {
    const char *paths[2];
    int npaths = 0;
    pp_convert_options opt = {0};
    for (int i = 1; i < argc; i++) {
        int got = cli_range_option(argc, argv, &i, &opt.has_from, &opt.from_ns, &opt.has_to,
                                   &opt.to_ns);
        if (got < 0)
            return CLI_BADINPUT;
        if (got > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_unknown_option(argv[0], argv[i]);
        if (npaths == 2) {
            cli_error("convert: unexpected argument \"%s\": expected IN OUT", argv[i]);
            return CLI_BADINPUT;
        }
        paths[npaths++] = argv[i];
    }
    if (npaths < 2) {
        cli_error("convert: expected IN OUT (pipeprof convert trace.pptrace trace.json)");
        return CLI_BADINPUT;
    }
    const char *in = paths[0], *out = paths[1];
    if (cli_same_file(in, out)) {
        cli_error("convert: %s is IN itself: writing it would destroy the input", out);
        return CLI_BADINPUT;
    }
    /* Fail before reading what may be a large input. Known formats without
     * a writer are left to pp_trace_write, which names them. */
    if (pp_format_from_path(out) == PP_FORMAT_UNKNOWN) {
        cli_error("convert: %s: unknown output format (use .pptrace, .json or .pftrace)", out);
        return CLI_BADINPUT;
    }
    if (opt.has_from && opt.has_to && opt.from_ns >= opt.to_ns) {
        cli_error("convert: --from %lld is not before --to %lld", (long long)opt.from_ns,
                  (long long)opt.to_ns);
        return CLI_BADINPUT;
    }

    if (pp_format_from_path(out) == PP_FORMAT_PERFETTO) { /* read whole: io/convert.c */
        cli_traces whole = {.paths = &in, .n = 1};
        cli_memory_check("converting", &whole);
    }
    pp_error err = {{0}};
    pp_convert_info info;
    int rc = pp_trace_convert(in, out, &opt, &info, &err);
    if (rc == PP_ETRUNCATED)
        cli_error("warning: %s (%" PRIu64 " bytes lost; converted the rest, and the output's "
                  "metadata records the loss)", err.msg, info.truncated_bytes);
    else if (rc != PP_OK)
        return convert_fail(in, rc, &err);
    fprintf(stderr, "pipeprof: %s -> %s: %" PRIu64 " events\n", in, out, info.events);
    cli_viewer_limits_warn(out);
    return CLI_OK;
}

const pp_command pp_cmd_convert = {
    .name = "convert",
    .summary = "convert a trace between formats (.pptrace, .json, .pftrace)",
    .run = convert_run,
    .help = convert_help,
};
