/* pipeprof sweep: measure every stage on every device over a grid of sizes
 * (docs/sweep.md), resumably and in shards; `pipeprof sweep merge` combines
 * the shards. Progress goes to stderr: a bar with an ETA on a terminal,
 * one plain line per combination otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pipeprof/sweep.h"

typedef struct progress {
    int tty;   /* stderr is a terminal: redraw one bar line */
    int drawn; /* a bar line is on the terminal, not yet ended */
} progress;

static void format_time(char *buf, size_t len, double s) {
    if (s < 60)
        snprintf(buf, len, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

static void show_progress(void *ctx, const pp_sweep_progress *p) {
    progress *pr = ctx;
    double elapsed = (double)p->elapsed_ns / 1e9;
    /* this run's pace: resumed combinations took no time here */
    double eta = elapsed / (double)p->ran * (double)(p->total - p->done);
    char eta_text[32];
    format_time(eta_text, sizeof eta_text, eta);
    if (!pr->tty) {
        fprintf(stderr, "sweep: %zu/%zu %s%s%s (ETA %s)\n", p->done, p->total, p->key,
                p->simulated ? " (simulated)" : "", p->failed ? " FAILED" : "", eta_text);
        return;
    }
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    size_t full = p->total ? p->done * WIDTH / p->total : WIDTH;
    for (size_t i = 0; i < WIDTH; i++)
        bar[i] = i < full ? '#' : '.';
    bar[WIDTH] = '\0';
    char what[128];
    snprintf(what, sizeof what, "%s%s%s", p->key, p->simulated ? " (simulated)" : "",
             p->failed ? " FAILED" : "");
    fprintf(stderr, "\r[%s] %zu/%zu %3d%% ETA %-8s %-52.52s", bar, p->done, p->total,
            (int)(p->total ? 100 * p->done / p->total : 100), eta_text, what);
    pr->drawn = p->done < p->total;
    if (!pr->drawn)
        fputc('\n', stderr);
    fflush(stderr);
}

/* "i/N" with 1 <= i <= N. */
static int parse_shard(const char *text, int *shard, int *shards) {
    char *end;
    long i = strtol(text, &end, 10);
    if (end == text || *end != '/')
        return -1;
    const char *rest = end + 1;
    long n = strtol(rest, &end, 10);
    if (end == rest || *end != '\0' || n < 1 || n > 100000 || i < 1 || i > n)
        return -1;
    *shard = (int)i;
    *shards = (int)n;
    return 0;
}

/* --compat FORMAT and its --pu SPEC=NAME options (room for argc names). */
typedef struct compat {
    const char *format;
    const char **pu;
    size_t npu;
} compat;

/* 1: argv[*i] was a compat option (consumed), 0: it was not, -1: bad. */
static int compat_option(int argc, char **argv, int *i, compat *co) {
    const char *v;
    int got = cli_option(argc, argv, i, "--compat", &v);
    if (got > 0 && strcmp(v, "gnx") != 0) {
        cli_error("sweep: --compat %s: unknown table layout (have: gnx)", v);
        return -1;
    }
    if (got > 0)
        co->format = v;
    else if (got == 0 && (got = cli_option(argc, argv, i, "--pu", &v)) > 0)
        co->pu[co->npu++] = v;
    return got;
}

/* After a complete sweep or merge into dir: the --compat tables. */
static int compat_write(const compat *co, const char *dir) {
    if (!co->format)
        return CLI_OK;
    pp_error err = {{0}};
    int rc = pp_sweep_compat_write(dir, co->format, co->pu, co->npu, &err);
    if (rc != PP_OK) {
        cli_error("sweep: %s", err.msg);
        return cli_exit_code(rc);
    }
    printf("wrote %s/%s/lookup_table.json and %s/%s/bandwidth_table.json (--compat %s)\n", dir,
           co->format, dir, co->format, co->format);
    return CLI_OK;
}

static int run_merge(int argc, char **argv) {
    const char *out = NULL, **dirs = calloc((size_t)argc, sizeof *dirs);
    compat co = {.pu = calloc((size_t)argc, sizeof *co.pu)};
    size_t n = 0;
    int rc = dirs && co.pu ? CLI_OK : CLI_FAIL;
    for (int i = 2; rc == CLI_OK && i < argc; i++) {
        const char *v;
        int got = cli_option(argc, argv, &i, "--out", &v);
        if (got > 0)
            out = v;
        else if (got == 0)
            got = compat_option(argc, argv, &i, &co);
        if (got < 0)
            rc = CLI_BADINPUT;
        else if (got == 0 && argv[i][0] == '-' && argv[i][1] != '\0')
            rc = cli_unknown_option("sweep merge", argv[i]);
        else if (got == 0)
            dirs[n++] = argv[i];
    }
    if (rc == CLI_OK && (n == 0 || !out)) {
        cli_error("sweep merge: expected shard directories and --out DIR "
                  "(pipeprof sweep merge s1 s2 --out all)");
        rc = CLI_BADINPUT;
    }
    pp_error err = {{0}};
    int st = rc == CLI_OK ? pp_sweep_merge(dirs, n, out, &err) : PP_OK;
    if (st != PP_OK) {
        cli_error("sweep merge: %s", err.msg);
        rc = cli_exit_code(st);
    } else if (rc == CLI_OK) {
        printf("merged %zu shards into %s: lookup_table.json, bandwidth_table.json, report.txt, "
               "raw.jsonl\n", n, out);
        rc = compat_write(&co, out);
    }
    free(dirs);
    free(co.pu);
    return rc;
}

/* Parses the options of a sweep run; returns -1 (message printed) or 0. */
static int parse_run(int argc, char **argv, const char **path, const char **out,
                     pp_sweep_options *o, compat *co) {
    for (int i = 1; i < argc; i++) {
        const char *v;
        int got;
        uint64_t n;
        if (strcmp(argv[i], "--resume") == 0) {
            o->resume = 1;
        } else if (strcmp(argv[i], "--co-run") == 0) {
            o->co_run = 1;
        } else if ((got = cli_option(argc, argv, &i, "--out", &v)) != 0) {
            if (got < 0)
                return -1;
            *out = v;
        } else if ((got = cli_option(argc, argv, &i, "--shard", &v)) != 0) {
            if (got < 0)
                return -1;
            if (parse_shard(v, &o->shard, &o->shards) != 0) {
                cli_error("sweep: --shard \"%s\": expected i/N with 1 <= i <= N, e.g. 2/4", v);
                return -1;
            }
        } else if ((got = cli_option(argc, argv, &i, "--limit", &v)) != 0) {
            if (got < 0 || cli_parse_u64("sweep", "--limit", v, 1, UINT64_MAX, &n) != 0)
                return -1;
            o->limit = (size_t)n;
        } else if ((got = compat_option(argc, argv, &i, co)) != 0) {
            if (got < 0)
                return -1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            cli_unknown_option("sweep", argv[i]);
            return -1;
        } else if (*path) {
            cli_error("sweep: unexpected argument \"%s\": expected one SWEEP.json", argv[i]);
            return -1;
        } else {
            *path = argv[i];
        }
    }
    if (!*path || !*out) {
        cli_error("sweep: expected a config and --out DIR (pipeprof sweep SWEEP.json --out DIR)");
        return -1;
    }
    return 0;
}

static int run_sweep(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "merge") == 0)
        return run_merge(argc, argv);
    const char *path = NULL, *out = NULL;
    pp_sweep_options o = {0};
    progress pr = {.tty = isatty(STDERR_FILENO)};
    o.progress = show_progress;
    o.progress_ctx = &pr;
    compat co = {.pu = calloc((size_t)argc, sizeof *co.pu)};
    if (!co.pu)
        return CLI_FAIL;
    int bad = parse_run(argc, argv, &path, &out, &o, &co) != 0;
    if (!bad && co.npu && !co.format) {
        cli_error("sweep: --pu names the PUs of the --compat tables; add --compat gnx");
        bad = 1;
    }
    if (bad) {
        free(co.pu);
        return CLI_BADINPUT;
    }
    pp_sweep_config *c = NULL;
    pp_error err = {{0}};
    int rc = pp_sweep_config_load(path, &c, &err);
    if (rc != PP_OK) {
        free(co.pu);
        cli_error("%s", err.msg);
        return cli_exit_code(rc);
    }
    pp_sweep_result res;
    rc = pp_sweep_run(c, out, &o, &res, &err);
    pp_sweep_config_free(c);
    if (pr.drawn) /* stopped before the end: finish the bar's line */
        fputc('\n', stderr);
    if (rc != PP_OK) {
        free(co.pu);
        cli_error("sweep: %s", err.msg);
        return cli_exit_code(rc);
    }
    printf("sweep: %zu of %zu combinations recorded in %s (%zu resumed, %zu failed)\n", res.done,
           res.total, out, res.resumed, res.failed);
    if (!res.complete)
        printf("stopped by --limit; continue with: pipeprof sweep %s --out %s --resume\n", path,
               out);
    else if (o.shards > 1)
        printf("shard %d/%d complete; combine the shards with: pipeprof sweep merge DIR... "
               "--out DIR\n", o.shard, o.shards);
    else
        printf("wrote %s/lookup_table.json, %s/bandwidth_table.json and %s/report.txt\n", out,
               out, out);
    if (o.co_run && res.complete && o.shards <= 1)
        printf("co-run: %zu pairs of stages on devices sharing hardware measured together into "
               "%s/co_run.jsonl and the lookup table\n", res.co_runs, out);
    rc = res.complete && o.shards <= 1 ? compat_write(&co, out) : CLI_OK;
    free(co.pu);
    return rc;
}

static void sweep_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof sweep SWEEP.json --out DIR [--resume] [--shard i/N] [--limit N]\n"
            "                      [--co-run] [--compat gnx [--pu SPEC=NAME]...]\n"
            "       pipeprof sweep merge DIR... --out DIR [--compat gnx [--pu SPEC=NAME]...]\n\n"
            "Measures every stage of the config on every device over its grid of graph\n"
            "sizes, each alone (docs/sweep.md): warm-up runs, then measured runs, with the\n"
            "mean, std, min, max and p50 of wall, hardware and transfer time. Each finished\n"
            "combination is appended to DIR/raw.jsonl at once, so a killed sweep continues\n"
            "with --resume. A complete sweep writes DIR/lookup_table.json,\n"
            "DIR/bandwidth_table.json and DIR/report.txt. Simulated devices are labeled\n"
            "\"(simulated)\". Progress goes to stderr (a bar with ETA on a terminal).\n"
            "Exit status: 0 ok, 1 a failure of the machine, 2 bad input.\n\n"
            "options:\n"
            "  --out DIR      the sweep directory (created if missing)\n"
            "  --resume       continue the sweep in DIR (same config and shard)\n"
            "  --shard i/N    run only combinations k with k mod N = i-1 (for N machines)\n"
            "  --limit N      stop after measuring N combinations (continue with --resume)\n"
            "  --co-run       when complete, also run each pair of stages on each pair of\n"
            "                 devices that share hardware (cpu and openvino:CPU share cores,\n"
            "                 sim devices a bus) at the same time, and record how much each\n"
            "                 slows down: plan uses it (DIR/co_run.jsonl)\n"
            "  --compat gnx   also write DIR/gnx/lookup_table.json (\"nodes,edges,PU,stage\":\n"
            "                 compute_time, transfer_time, total_time, std in ms) and\n"
            "                 DIR/gnx/bandwidth_table.json (\"PU_stageN\": MB/s), the layout of\n"
            "                 the GNX profiling scripts; stage N is the config's N-th stage\n"
            "  --pu SPEC=NAME the PU name of device SPEC in those tables (default: the\n"
            "                 spec after its backend, \"sim:NPU\" -> NPU, \"cpu\" -> CPU)\n"
            "  -h, --help     this help\n\n"
            "merge: combines the directories of shards 1/N .. N/N of one config into\n"
            "DIR, as if the sweep had run whole; refuses other configs, a shard given\n"
            "twice, and missing or unfinished shards.\n\n"
            "examples:\n"
            "  pipeprof sweep examples/sweep.json --out calib\n"
            "  pipeprof sweep examples/sweep.json --out calib --resume\n"
            "  pipeprof sweep examples/sweep.json --out s1 --shard 1/2   # machine A\n"
            "  pipeprof sweep examples/sweep.json --out s2 --shard 2/2   # machine B\n"
            "  pipeprof sweep merge s1 s2 --out calib\n"
            "  pipeprof sweep my_models.json --out calib --compat gnx --pu openvino:GPU.0=GPU\n");
}

const pp_command pp_cmd_sweep = {
    .name = "sweep",
    .summary = "measure stages x devices x sizes into lookup and bandwidth tables",
    .run = run_sweep,
    .help = sweep_help,
};
