/* pipeprof plan: rank stage -> device mappings of a pipeline by the cycle
 * latency a sweep's lookup table predicts (docs/sweep.md §plan); --verify
 * runs the best one and compares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeprof/sweep.h"
#include "pipeprof/whatif.h"

typedef struct plan_args {
    const char *lookup, *pipeline;
    pp_plan_options opt;
    int verify;
} plan_args;

static const char *sim(const pp_lookup *l, const char *device) {
    return pp_lookup_simulated(l, device) ? " (simulated)" : "";
}

/* One stage of a plan: name, estimated time, devices, and for a
 * data-parallel stage a second line with the estimate's parts. */
static void print_stage(const pp_lookup *l, const pp_plan_stage *st) {
    const char *flag = st->extrapolated   ? " [extrapolated]"
                       : st->interpolated ? " [interpolated]"
                                          : "";
    char slowed[96] = "";
    for (int k = 0; k < st->ndevices; k++)
        if (st->slowdown[k] > 1.0)
            snprintf(slowed + strlen(slowed), sizeof slowed - strlen(slowed),
                     " [%s x%.2f beside devices sharing its hardware]", st->devices[k],
                     st->slowdown[k]);
    printf("    %-14s %9.3f ms  ", st->stage, (double)st->time_ns / 1e6);
    if (st->ndevices == 1) {
        printf("%s%s%s%s\n", st->devices[0], sim(l, st->devices[0]), flag, slowed);
        return;
    }
    printf("%s%s %.2f + %s%s %.2f%s%s\n", st->devices[0], sim(l, st->devices[0]), st->split[0],
           st->devices[1], sim(l, st->devices[1]), st->split[1], flag, slowed);
    printf("    %-14s %12s  = partition %.3f + max(%.3f, %.3f) + merge %.3f ms\n", "", "",
           (double)st->partition_ns / 1e6, (double)st->device_ns[0] / 1e6,
           (double)st->device_ns[1] / 1e6, (double)st->merge_ns / 1e6);
}

/* The plan simulated by the what-if engine (pp_plan_costs): its throughput
 * with the interval over the seeds; 0 when it cannot be simulated. */
static int simulate(const pp_plan *pl, const pp_pipeline *p, pp_whatif_estimate *out) {
    pp_whatif_costs *c = NULL;
    pp_whatif_replay rp;
    int rc = pp_plan_costs(pl, p, &c, NULL);
    if (rc == PP_OK)
        rc = pp_whatif_predict(c, NULL, NULL, 0, NULL, &rp, NULL, NULL);
    pp_whatif_costs_free(c);
    if (rc != PP_OK)
        return 0;
    *out = rp.replayed.throughput_per_s;
    return 1;
}

static void print_plan(const pp_lookup *l, const pp_plan *pl, const pp_pipeline *p,
                       size_t rank) {
    printf("#%zu  cycle %.3f ms", rank + 1, (double)pl->cycle_ns / 1e6);
    if (pl->cycle_ns - pl->mean_cycle_ns >= 500) /* shown to the us */
        printf(" (mean times %.3f + spread %.3f)", (double)pl->mean_cycle_ns / 1e6,
               (double)(pl->cycle_ns - pl->mean_cycle_ns) / 1e6);
    printf(", %.1f batches/s, bottleneck: ", pl->throughput);
    if (pl->bottleneck_stage >= 0)
        printf("stage %s", pl->stages[pl->bottleneck_stage].stage);
    else
        printf("device %s%s (its stages' summed time)", pl->bottleneck_device,
               sim(l, pl->bottleneck_device));
    printf("%s%s\n", pl->extrapolated ? "  [relies on extrapolation]" : "",
           pl->uncalibrated_sharing
               ? "  [stages sharing hardware, estimated as independent: sweep --co-run]"
               : "");
    pp_whatif_estimate sim_tp;
    if (simulate(pl, p, &sim_tp))
        printf("    simulated (whatif engine, stages on one device taking turns): %.1f batches/s "
               "[%.1f .. %.1f]\n",
               sim_tp.mean, sim_tp.lo, sim_tp.hi);
    for (int s = 0; s < pl->nstages; s++)
        if (pl->stages[s].unstable[0])
            printf("    [built on an unstable sweep cell: %s, %s]\n", pl->stages[s].stage,
                   pl->stages[s].unstable);
    int nfree = 0;
    for (int s = 0; s < pl->nstages; s++)
        nfree += pl->stages[s].free_options > 0 || pl->stages[s].collapsed;
    if (nfree) { /* the plans that differ from this one only there were collapsed into it */
        printf("    free (any of these ways gives the same mean-time cycle):");
        for (int s = 0, k = 0; s < pl->nstages; s++)
            if (pl->stages[s].free_options > 0)
                printf("%s %s (+%d other%s)", k++ ? "," : "", pl->stages[s].stage,
                       pl->stages[s].free_options, pl->stages[s].free_options > 1 ? "s" : "");
            else if (pl->stages[s].collapsed)
                printf("%s %s (with other stages)", k++ ? "," : "", pl->stages[s].stage);
        printf("\n");
    }
    for (int s = 0; s < pl->nstages; s++)
        print_stage(l, &pl->stages[s]);
}

static double error_of(int64_t predicted, int64_t measured) {
    return measured > 0 ? 100.0 * ((double)predicted - (double)measured) / (double)measured : 0.0;
}

static int verify(const pp_pipeline *p, const pp_plan *best) {
    pp_error err = {{0}};
    pp_plan_measured m;
    int rc = pp_plan_verify(p, best, &m, &err);
    if (rc != PP_OK) {
        cli_error("plan: --verify: %s", err.msg);
        return cli_exit_code(rc);
    }
    printf("\nverify #1 (%llu measured batches):\n    %-14s %12s %12s %8s\n",
           (unsigned long long)m.batches, "", "predicted", "measured", "error");
    for (int s = 0; s < best->nstages; s++) {
        const pp_plan_stage *st = &best->stages[s];
        if (m.stage_ns[s] >= 0)
            printf("    %-14s %9.3f ms %9.3f ms %+7.1f%%\n", st->stage, (double)st->time_ns / 1e6,
                   (double)m.stage_ns[s] / 1e6, error_of(st->time_ns, m.stage_ns[s]));
    }
    printf("    %-14s %9.3f ms %9.3f ms %+7.1f%%\n", "mean cycle", (double)best->cycle_ns / 1e6,
           (double)m.cycle_ns / 1e6, error_of(best->cycle_ns, m.cycle_ns));
    pp_whatif_estimate sim_tp;
    if (m.throughput_per_s > 0 && simulate(best, p, &sim_tp))
        printf("    measured %.1f batches/s: %s the simulated interval [%.1f .. %.1f] (%+.1f%% "
               "from its mean)\n",
               m.throughput_per_s,
               m.throughput_per_s >= sim_tp.lo && m.throughput_per_s <= sim_tp.hi ? "inside"
                                                                                  : "outside",
               sim_tp.lo, sim_tp.hi, 100 * (sim_tp.mean / m.throughput_per_s - 1));
    return CLI_OK;
}

static int parse(int argc, char **argv, plan_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *v;
        int got;
        uint64_t n;
        if (strcmp(argv[i], "--verify") == 0) {
            a->verify = 1;
        } else if ((got = cli_option(argc, argv, &i, "--top", &v)) != 0) {
            if (got < 0 || cli_parse_u64("plan", "--top", v, 1, 1000, &n) != 0)
                return -1;
            a->opt.top = (int)n;
        } else if ((got = cli_option(argc, argv, &i, "--splits", &v)) != 0) {
            if (got < 0 || cli_parse_u64("plan", "--splits", v, 1, 99, &n) != 0)
                return -1;
            a->opt.splits = (int)n;
        } else if ((got = cli_option(argc, argv, &i, "--copy-mbps", &v)) != 0) {
            if (got < 0 || cli_parse_u64("plan", "--copy-mbps", v, 1, 100000000, &n) != 0)
                return -1;
            a->opt.copy_bytes_per_s = (double)n * 1e6;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            cli_unknown_option("plan", argv[i]);
            return -1;
        } else if (!a->lookup) {
            a->lookup = argv[i];
        } else if (!a->pipeline) {
            a->pipeline = argv[i];
        } else {
            cli_error("plan: unexpected argument \"%s\": expected LOOKUP.json PIPELINE.json",
                      argv[i]);
            return -1;
        }
    }
    if (!a->pipeline) {
        cli_error("plan: expected a lookup table and a pipeline file "
                  "(pipeprof plan LOOKUP.json PIPELINE.json)");
        return -1;
    }
    return 0;
}

static int run_plan(int argc, char **argv) {
    plan_args a = {0};
    pp_plan_options_init(&a.opt);
    if (parse(argc, argv, &a) != 0)
        return CLI_BADINPUT;
    pp_lookup *l = NULL;
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    int rc = pp_lookup_load(a.lookup, &l, &err);
    if (rc == PP_OK)
        rc = pp_pipeline_load(a.pipeline, &p, &err);
    pp_plan *plans = rc == PP_OK ? calloc((size_t)a.opt.top, sizeof *plans) : NULL;
    size_t n = 0;
    double rate = 0;
    if (rc == PP_OK && !plans) {
        snprintf(err.msg, sizeof err.msg, "out of memory");
        rc = PP_ENOMEM;
    }
    pp_plan_search_info info;
    a.opt.info = &info;
    if (rc == PP_OK)
        rc = pp_plan_search(l, p, &a.opt, plans, &n, &rate, &err);
    int code = CLI_OK;
    if (rc != PP_OK) {
        cli_error("plan: %s", err.msg);
        code = cli_exit_code(rc);
    } else {
        printf("%s: best %zu plans of %d stages from %s (host copy %.0f MB/s for partition and "
               "merge)\n",
               pp_pipeline_config_get(p)->name, n, pp_pipeline_stage_count(p), a.lookup,
               rate / 1e6);
        printf("exact search over %.3g plans: %llu evaluated in full, the rest ruled out by a "
               "bound (%llu partial plans cut, none of which can rank in the best %d)\n\n",
               info.plans, (unsigned long long)info.evaluated, (unsigned long long)info.cut,
               a.opt.top);
        for (size_t i = 0; i < n; i++)
            print_plan(l, &plans[i], p, i);
        if (a.verify && n > 0)
            code = verify(p, &plans[0]);
    }
    free(plans);
    pp_pipeline_free(p);
    pp_lookup_free(l);
    return code;
}

static void plan_help(FILE *out) {
    fprintf(out,
            "usage: pipeprof plan LOOKUP.json PIPELINE.json [--top K] [--splits N]\n"
            "                     [--copy-mbps R] [--verify]\n\n"
            "Ranks the ways to run the pipeline's stages on the devices of a sweep's lookup\n"
            "table (docs/sweep.md): each stage on one device, or data parallel over two at\n"
            "N split ratios. A plan's cycle latency is the expected slowest of its stages\n"
            "per batch (their mean times plus the spread the sweep measured from run to\n"
            "run), at least its busiest device and the host cores its devices share.\n"
            "Sizes the table did not measure lie on the line between the measured ones\n"
            "around them (never below the nearest measurement), and plans that\n"
            "extrapolate say so. Devices sharing hardware are slowed as the sweep's\n"
            "--co-run measured. Plans differing only in stages that do not change the\n"
            "cycle of mean times are one line naming those free stages.\n"
            "Prints the best K with their bottleneck; the search is exact.\n"
            "Exit status: 0 ok, 1 a failure of the machine, 2 bad input.\n\n"
            "options:\n"
            "  --top K        plans to print (default 5)\n"
            "  --splits N     split ratios 1/(N+1) .. N/(N+1) per device pair (default 9)\n"
            "  --copy-mbps R  host copy rate for partition and merge (default: measured)\n"
            "  --verify       run the best plan (its batches, or at least 250 ms of its\n"
            "                 predicted cycles) and compare predicted with measured mean\n"
            "                 cycle latency\n"
            "  -h, --help     this help\n\n"
            "example:\n"
            "  pipeprof sweep examples/sweep.json --out calib\n"
            "  pipeprof plan calib/lookup_table.json examples/demo_pipeline.json --verify\n");
}

const pp_command pp_cmd_plan = {
    .name = "plan",
    .summary = "rank stage -> device plans of a pipeline from a sweep's lookup table",
    .run = run_plan,
    .help = plan_help,
};
