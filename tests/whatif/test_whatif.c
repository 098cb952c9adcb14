/* The pipeline model and its simulation, on traces built by hand as
 * pipeprof's runtime would record them: one thread per stage taking
 * batches in order, a queue of `depth` batches between two stages (a stage
 * hands batch b on once the next has taken batch b - depth), a fixed
 * hand-off before each start. With constant stage times every figure
 * follows from the construction: the period of a pipeline is its slowest
 * stage's time plus its hand-off. */
#include <math.h>
#include <string.h>

#include "analyze/builder.h"
#include "pipeprof/whatif.h"
#include "testutil.h"

#define MS 1000000
#define US 1000
#define N 200            /* batches */
#define HANDOFF (50 * US) /* before every stage's start but the first stage's */
#define EDGE (10 * US)   /* an exec starts and ends this far inside its stage span */

/* One stage of a constructed pipeline: its device(s) and time. A
 * data-parallel stage (dp) has a partition, its parts' walls and a merge. */
typedef struct stage_def {
    const char *name;
    const char *device[2];
    int64_t part_ns[2];
    int dp;
    int64_t partition_ns, merge_ns;
} stage_def;

static int64_t stage_time(const stage_def *s) {
    if (!s->dp)
        return s->part_ns[0];
    int64_t slow = s->part_ns[0] > s->part_ns[1] ? s->part_ns[0] : s->part_ns[1];
    return s->partition_ns + slow + s->merge_ns;
}

/* The runtime's schedule of n stages over N batches with queues of
 * `depth`, written as a model; `tail_ns` of idle time after the last
 * batch (an instant marks its end). */
static pp_model *build(const stage_def *st, int n, int depth, int64_t tail_ns) {
    pp_model *m = b_model();
    uint32_t thread[4], dev[4][2];
    static int64_t start[4][N], depart[4][N];
    for (int s = 0; s < n; s++) {
        char name[32];
        snprintf(name, sizeof name, "stage %d", s);
        thread[s] = b_thread(m, name);
        for (int p = 0; p < (st[s].dp ? 2 : 1); p++)
            dev[s][p] = b_device(m, st[s].device[p], 0, 0);
    }
    /* the recorded queue depth, as the runtime writes it */
    pp_event ctr;
    pp_event_init(&ctr);
    ctr.kind = PP_EV_COUNTER;
    ctr.track = thread[0];
    ctr.name = b_str(m, "queue_depth");
    ctr.value = depth;
    if (pp_model_add_event(m, &ctr) != PP_OK)
        abort();
    int64_t end_all = 0;
    for (int b = 0; b < N; b++) {
        for (int s = 0; s < n; s++) {
            int64_t ready = s > 0 ? depart[s - 1][b] : 0; /* taken from the queue */
            if (b > 0 && depart[s][b - 1] > ready)
                ready = depart[s][b - 1];
            start[s][b] = ready + (s > 0 ? HANDOFF : 0);
            int64_t end = start[s][b] + stage_time(&st[s]);
            /* handed on once the next stage has taken batch b - depth */
            int64_t taken = s + 1 < n && b >= depth ? start[s + 1][b - depth] - HANDOFF : 0;
            depart[s][b] = end > taken ? end : taken;
            end_all = end > end_all ? end : end_all;
        }
    }
    for (int b = 0; b < N; b++) {
        for (int s = 0; s < n; s++) {
            const stage_def *d = &st[s];
            int64_t t = start[s][b], e = t + stage_time(d);
            b_span(m, thread[s], PP_ROLE_STAGE, d->name, d->name, b, t, e, 0, 0);
            if (!d->dp) {
                b_exec(m, dev[s][0], d->name, b, t + EDGE, e - EDGE,
                       (uint64_t)(e - t - 2 * EDGE), 0);
                continue;
            }
            b_span(m, thread[s], PP_ROLE_PARTITION, "partition", d->name, b, t,
                   t + d->partition_ns, 0, 0);
            for (int p = 0; p < 2; p++) {
                int64_t ps = t + d->partition_ns;
                size_t x = b_exec(m, dev[s][p], d->name, b, ps, ps + d->part_ns[p],
                                  (uint64_t)d->part_ns[p], 0);
                pp_annotation a = {.event = x, .key = b_str(m, "share"),
                                   .type = PP_VALUE_DOUBLE, .v.d = 0.5};
                if (pp_model_add_annotation(m, &a) != PP_OK)
                    abort();
            }
            b_span(m, thread[s], PP_ROLE_MERGE, "merge", d->name, b, e - d->merge_ns, e, 0, 0);
        }
    }
    if (tail_ns > 0)
        b_instant(m, thread[0], "idle", end_all + tail_ns);
    pp_model_sort_by_time(m);
    return m;
}

typedef struct fixture {
    pp_model *m;
    pp_report *r;
    pp_whatif_costs *c;
} fixture;

static fixture make(const stage_def *st, int n, int depth, int64_t tail_ns) {
    fixture f = {build(st, n, depth, tail_ns), NULL, NULL};
    f.r = b_report(f.m, NULL);
    pp_error err = {{0}};
    int rc = pp_whatif_costs_from_report(f.r, f.m, &f.c, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "costs: %s", err.msg);
    return f;
}

static void fixture_free(fixture *f) {
    pp_whatif_costs_free(f->c);
    pp_report_free(f->r);
    pp_model_free(f->m);
}

/* P 3 ms on A, Q 2 ms on B, R 1 ms on C: P sets the period (3 ms). */
static const stage_def slow_first[] = {
    {.name = "P", .device = {"A"}, .part_ns = {3 * MS}},
    {.name = "Q", .device = {"B"}, .part_ns = {2 * MS}},
    {.name = "R", .device = {"C"}, .part_ns = {1 * MS}},
};

static pp_whatif_scenario predict_one(const fixture *f, const char *kind, const char *text,
                                      pp_whatif_replay *rp) {
    pp_whatif_change ch;
    pp_error err = {{0}};
    pp_whatif_scenario sc;
    memset(&sc, 0, sizeof sc);
    EXPECT(pp_whatif_change_parse(kind, text, &ch, &err) == PP_OK);
    const pp_whatif_change *list = &ch;
    size_t one = 1;
    int rc = pp_whatif_predict(f->c, &list, &one, 1, NULL, rp, &sc, &err);
    if (rc != PP_OK)
        pp_test_fail(__FILE__, __LINE__, "predict %s %s: %s", kind, text, err.msg);
    return sc;
}

/* The model has what the trace has: stages in order, one thread each, the
 * parts on their devices, the hand-off before each start, the rest of
 * each stage span beyond its exec. */
static void test_model_structure(void) {
    fixture f = make(slow_first, 3, 2, 0);
    const pp_whatif_costs *c = f.c;
    EXPECT_EQ_U64(c->nstages, 3);
    EXPECT_EQ_U64(c->batches, N);
    EXPECT(c->timed);
    EXPECT_STR(c->stages[0].name, "P");
    EXPECT_STR(c->stages[2].name, "R");
    for (size_t s = 0; s < 3; s++) {
        const pp_whatif_stage *st = &c->stages[s];
        EXPECT_EQ_U64(st->servers, 1);
        EXPECT(!st->servers_inferred); /* one thread ran all its spans */
        EXPECT_EQ_U64(st->nparts, 1);
        EXPECT_EQ_U64(st->nrows, N);
        EXPECT_STR(st->parts[0].device, slow_first[s].device[0]);
        EXPECT_EQ_I64(st->parts[0].wall_ns[7], slow_first[s].part_ns[0] - 2 * EDGE);
        EXPECT_EQ_I64(st->overhead_ns[7], 2 * EDGE);
        EXPECT_EQ_I64(st->parts[0].work_ns[7], slow_first[s].part_ns[0] - 2 * EDGE);
    }
    /* Q and R wait for their input, then start HANDOFF after it */
    EXPECT_EQ_I64(c->stages[1].handoff_ns[5], HANDOFF);
    EXPECT_EQ_I64(c->stages[2].handoff_ns[5], HANDOFF);
    EXPECT_EQ_I64(c->stages[0].handoff_ns[5], 0);
    EXPECT_EQ_U64(c->ngroups, 0);
    fixture_free(&f);
}

/* Unchanged, the simulation reproduces the constructed schedule. */
static void test_replay(void) {
    fixture f = make(slow_first, 3, 2, 0);
    pp_whatif_replay rp;
    pp_error err = {{0}};
    EXPECT(pp_whatif_predict(f.c, NULL, NULL, 0, NULL, &rp, NULL, &err) == PP_OK);
    printf("replay error on the constructed trace: throughput %+.4f%%, cycle %+.4f%%\n",
           100 * rp.error, 100 * rp.cycle_error);
    EXPECT(!rp.refused);
    EXPECT_NEAR(rp.error, 0, 0.002);
    EXPECT_NEAR(rp.cycle_error, 0, 0.002);
    /* 1 / 3 ms */
    EXPECT_NEAR(rp.replayed.throughput_per_s.mean, 1e9 / (3.0 * MS), 1e9 / (3.0 * MS) * 0.01);
    EXPECT_NEAR(rp.replayed.bottleneck[0], 1, 1e-9);
    fixture_free(&f);
}

/* P twice as fast: Q (2 ms + its hand-off) sets the period; R faster:
 * nothing changes. */
static void test_speedup(void) {
    fixture f = make(slow_first, 3, 2, 0);
    pp_whatif_replay rp;
    pp_whatif_scenario sc = predict_one(&f, "speedup", "P=2", &rp);
    double expected = 3.0 / (2.0 + HANDOFF / (double)MS) - 1;
    printf("P 2x faster: predicted %+.2f%%, constructed %+.2f%%\n", 100 * sc.gain.mean,
           100 * expected);
    EXPECT_NEAR(sc.gain.mean, expected, 0.015);
    EXPECT_NEAR(sc.result.bottleneck[1], 1, 0.01);
    /* only the last batch's drain is shorter: at most R's 1 ms of 600 */
    sc = predict_one(&f, "speedup", "R=2", &rp);
    EXPECT_NEAR(sc.gain.mean, 0, 0.002);
    sc = predict_one(&f, "speedup", "@A=2", &rp); /* all work on A: P */
    EXPECT_NEAR(sc.gain.mean, expected, 0.015);
    fixture_free(&f);
}

/* Q data parallel over B (2 ms) and C (1 ms) at 0.5 / 0.5, with 0.1 ms
 * partition and merge: 2.2 ms, the slowest stage. */
static const stage_def dp_middle[] = {
    {.name = "P", .device = {"A"}, .part_ns = {1 * MS}},
    {.name = "Q", .device = {"B", "C"}, .part_ns = {2 * MS, 1 * MS}, .dp = 1,
     .partition_ns = 100 * US, .merge_ns = 100 * US},
    {.name = "R", .device = {"D"}, .part_ns = {1 * MS}},
};

/* dp_middle re-split 1:3: B takes 1 ms and C 1.5 ms, so Q is 1.7 ms and
 * still the slowest. */
static void test_split(void) {
    fixture f = make(dp_middle, 3, 2, 0);
    EXPECT(f.c->stages[1].data_parallel);
    EXPECT_EQ_U64(f.c->stages[1].nparts, 2);
    EXPECT_NEAR(f.c->stages[1].parts[0].share, 0.5, 1e-9);
    pp_whatif_replay rp;
    pp_whatif_scenario sc = predict_one(&f, "split", "Q=B:1,C:3", &rp);
    printf("replay error with a data-parallel stage: %+.3f%%\n", 100 * rp.error);
    EXPECT_NEAR(rp.error, 0, 0.01);
    /* P runs ahead until the queues are full: end-to-end holds the waiting */
    EXPECT_NEAR(rp.replayed.e2e_p50_ns.mean, f.c->measured.e2e_p50_ns, 0.01 * f.c->measured.e2e_p50_ns);
    double period = 2.2 + HANDOFF / (double)MS, after = 1.7 + HANDOFF / (double)MS;
    EXPECT_NEAR(sc.gain.mean, period / after - 1, 0.015);
    EXPECT_NEAR(sc.result.cycle_mean_ns.mean, 1.7 * MS, 0.01 * MS);
    fixture_free(&f);
}

/* The causal profile: only the bottleneck pays, until another stage is
 * slower (P at 3 / 1.5 = 2 ms ties with Q). */
static void test_causal(void) {
    fixture f = make(slow_first, 3, 2, 0);
    pp_whatif_causal_row rows[8];
    size_t n = 0;
    pp_error err = {{0}};
    EXPECT(pp_whatif_causal(f.c, NULL, rows, &n, &err) == PP_OK);
    EXPECT_EQ_U64(n, 6); /* P, Q, R, A, B, C */
    EXPECT_STR(rows[0].name, "P");
    EXPECT(!rows[0].is_device && rows[3].is_device);
    /* P 1.1x: 2.727 ms, still the slowest */
    EXPECT_NEAR(rows[0].gain[0].mean, 0.1, 0.01);
    /* P 1.5x: 2 ms; Q at 2 ms + hand-off now sets the period */
    EXPECT_NEAR(rows[0].gain[2].mean, 3.0 / (2.0 + HANDOFF / (double)MS) - 1, 0.015);
    for (int k = 0; k < PP_WHATIF_CAUSAL_STEPS; k++) { /* the last batch's drain alone */
        EXPECT_NEAR(rows[1].gain[k].mean, 0, 0.003);
        EXPECT_NEAR(rows[2].gain[k].mean, 0, 0.002);
        EXPECT_NEAR(rows[3].gain[k].mean, rows[0].gain[k].mean, 1e-9); /* A is P's */
    }
    fixture_free(&f);
}

/* The window's idle after the last batch is no time of the pipeline's:
 * the replay is compared with the batches' own span, and a note says how
 * much idle the window held. */
static void test_window_idle(void) {
    fixture f = make(slow_first, 3, 2, (int64_t)N * 3 * MS);
    pp_whatif_replay rp;
    pp_error err = {{0}};
    EXPECT(pp_whatif_predict(f.c, NULL, NULL, 0, NULL, &rp, NULL, &err) == PP_OK);
    EXPECT(!rp.refused);
    EXPECT_NEAR(rp.error, 0, 0.002);
    int noted = 0;
    for (size_t i = 0; i < f.c->nnotes; i++)
        noted |= strstr(f.c->notes[i], "after the last, outside the throughput") != NULL;
    EXPECT(noted);
    fixture_free(&f);
}

/* A trace whose stages only a pattern labels (spans "P#b" and "Q#b" with
 * no stage or batch in their own fields, as a torch.profiler export has
 * them): one thread runs P (1 ms) then Q (2 ms) for batch b from b * 5 ms,
 * so each batch waits 2 ms for its source. Its stage instances place the
 * cells: one thread runs both, so P's next batch waits for Q's previous
 * end (waits_for), then 2 ms more (0 before the first batch); Q waits none
 * after P; each stage has one server, on the thread's host device.
 * The replay comes within 5% of the measured N / ((N - 1) * 5 + 3) ms
 * (stage times alone would say one batch per 2 ms: +150%). */
static void test_pattern_labeled_replay(void) {
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "main");
    for (int b = 0; b < N; b++) {
        int64_t at = (int64_t)b * 5 * MS;
        char name[32];
        snprintf(name, sizeof name, "P#%d", b);
        b_span(m, t, PP_ROLE_USER, name, NULL, -1, at, at + 1 * MS, 0, 0);
        snprintf(name, sizeof name, "Q#%d", b);
        b_span(m, t, PP_ROLE_USER, name, NULL, -1, at + 1 * MS, at + 3 * MS, 0, 0);
    }
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = "^(?<stage>[PQ])#(?<batch>[0-9]+)$";
    pp_report *r = b_report(m, &o);
    size_t nt = 0;
    const pp_stage_time *times = pp_report_stage_times(r, &nt);
    EXPECT(nt == 2 * N);
    EXPECT(nt > 3 && times[3].stage == 1 && times[3].batch == 1 &&
           times[3].start_ns == 6 * MS && times[3].end_ns == 8 * MS && times[3].track == t);
    pp_whatif_costs *c = NULL;
    pp_error err = {{0}};
    EXPECT(pp_whatif_costs_from_report(r, m, &c, &err) == PP_OK);
    EXPECT(c && c->timed && c->nstages == 2 && c->batches == N);
    for (size_t s = 0; c && s < c->nstages; s++) {
        const pp_whatif_stage *st = &c->stages[s];
        EXPECT(st->servers == 1 && !st->servers_inferred && st->nparts == 1);
        double handoff = 0, wall = 0;
        for (size_t j = 0; j < st->nrows; j++)
            handoff += (double)st->handoff_ns[j], wall += (double)st->parts[0].wall_ns[j];
        EXPECT_NEAR(handoff / (double)st->nrows, s == 0 ? 2.0 * MS * (N - 1) / N : 0, 1);
        EXPECT(st->waits_for == (s == 0 ? 2u : 0u));
        EXPECT_NEAR(wall / (double)st->nrows, s == 0 ? 1 * MS : 2 * MS, 1);
    }
    double measured = N * 1e9 / ((N - 1) * 5.0 * MS + 3.0 * MS);
    EXPECT(c && fabs(c->measured.throughput_per_s / measured - 1) < 1e-9);
    pp_whatif_replay rp;
    EXPECT(c && pp_whatif_predict(c, NULL, NULL, 0, NULL, &rp, NULL, &err) == PP_OK);
    printf("pattern-labeled replay: throughput %+.2f%%, cycle %+.2f%%%s%s\n", 100 * rp.error,
           100 * rp.cycle_error, rp.refused ? ", refused: " : "", rp.refused ? rp.reason : "");
    EXPECT(!rp.refused);
    EXPECT(fabs(rp.error) < 0.05);
    int noted = 0;
    for (size_t i = 0; c && i < c->nnotes; i++)
        noted |= strstr(c->notes[i], "labeled by patterns") != NULL;
    EXPECT(noted);
    pp_whatif_costs_free(c);
    pp_report_free(r);
    pp_model_free(m);
}

/* Same seed, same figures; changes naming what the model lacks are
 * refused with what it has. */
static void test_determinism_and_errors(void) {
    const stage_def st[] = {
        {.name = "P", .device = {"A"}, .part_ns = {1 * MS}},
        {.name = "Q", .device = {"B", "C"}, .part_ns = {2 * MS, 1 * MS}, .dp = 1,
         .partition_ns = 100 * US, .merge_ns = 100 * US},
    };
    fixture f = make(st, 2, 1, 0);
    pp_whatif_figures a, b;
    pp_error err = {{0}};
    EXPECT(pp_whatif_simulate(f.c, NULL, 0, 7, 1000, &a, &err) == PP_OK);
    EXPECT(pp_whatif_simulate(f.c, NULL, 0, 7, 1000, &b, &err) == PP_OK);
    EXPECT(memcmp(&a, &b, sizeof a) == 0);
    pp_whatif_change ch;
    EXPECT(pp_whatif_change_parse("speedup", "Nope=2", &ch, &err) == PP_OK);
    EXPECT(pp_whatif_simulate(f.c, &ch, 1, 7, 10, &a, &err) == PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "stage \"Nope\" is not in the model (have: P, Q)");
    EXPECT(pp_whatif_change_parse("split", "Q=B:1,X:1", &ch, &err) == PP_OK);
    EXPECT(pp_whatif_simulate(f.c, &ch, 1, 7, 10, &a, &err) == PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "\"X\"");
    EXPECT(pp_whatif_change_parse("speedup", "P=0", &ch, &err) == PP_EINVAL);
    EXPECT(pp_whatif_change_parse("split", "Q=B:1", &ch, &err) == PP_EINVAL);
    EXPECT(pp_whatif_change_parse("queue-depth", "0", &ch, &err) == PP_EINVAL);
    EXPECT(pp_whatif_change_parse("bogus", "x=1", &ch, &err) == PP_EINVAL);
    fixture_free(&f);
}

/* The findings' advice carries the model's prediction (pp_whatif_advise):
 * Q's parts take 2 and 1 ms at shares 0.5 / 0.5 in every batch, so the
 * analysis advises the split B 1/3, C 2/3 (equal rates), under which both
 * take 4/3 ms: Q's period goes from 2.2 + hand-off to 1.533 + hand-off.
 * The list ends with the stage worth optimizing: Q, the bottleneck. */
static void test_advise_resplit(void) {
    fixture f = make(dp_middle, 3, 2, 0);
    pp_error err = {{0}};
    EXPECT(pp_whatif_advise(f.r, f.m, NULL, &err) == PP_OK);
    size_t n;
    const pp_finding *fl = pp_report_finding_list(f.r, &n);
    const pp_finding *resplit = NULL;
    for (size_t i = 0; i < n; i++)
        if (fl[i].action.kind == PP_ACTION_RESPLIT)
            resplit = &fl[i];
    EXPECT(resplit != NULL);
    if (resplit) {
        EXPECT_EQ_U64(resplit->prediction.state, PP_PREDICTION_PREDICTED);
        double h = HANDOFF / (double)MS;
        double expected = 100 * ((2.2 + h) / (0.2 + 4.0 / 3 + h) - 1);
        printf("re-split predicted %+.1f%% (%+.1f .. %+.1f), constructed %+.1f%%\n",
               resplit->prediction.change_pct, resplit->prediction.lo_pct,
               resplit->prediction.hi_pct, expected);
        EXPECT_NEAR(resplit->prediction.change_pct, expected, 2.0);
        EXPECT(resplit->prediction.lo_pct > 0);
    }
    EXPECT(n > 0 && fl[n - 1].kind == PP_FINDING_WORTH_OPTIMIZING);
    if (n > 0) {
        EXPECT_EQ_U64(fl[n - 1].stage, 1); /* Q */
        EXPECT_EQ_U64(fl[n - 1].action.kind, PP_ACTION_SPEEDUP);
        EXPECT(fl[n - 1].prediction.lo_pct > 0);
        /* Q 1.25x faster: 1.76 ms + hand-off against 2.2 ms + hand-off */
        double h = HANDOFF / (double)MS;
        EXPECT_NEAR(fl[n - 1].prediction.change_pct, 100 * ((2.2 + h) / (2.2 / 1.25 + h) - 1),
                    2.0);
    }
    fixture_free(&f);
}

/* Where a re-split cannot pay, the advice is withdrawn: P takes 3 ms and
 * bounds every cycle, so balancing Q (2.2 ms) changes nothing; the
 * analysis still sees Q's constant imbalance and proposes the split, and
 * the prediction's interval reaches 0. The worth-optimizing stage is P. */
static void test_advise_withdrawn_off_the_bottleneck(void) {
    const stage_def st[] = {
        {.name = "P", .device = {"A"}, .part_ns = {3 * MS}},
        dp_middle[1],
        dp_middle[2],
    };
    fixture f = make(st, 3, 2, 0);
    pp_error err = {{0}};
    EXPECT(pp_whatif_advise(f.r, f.m, NULL, &err) == PP_OK);
    size_t n;
    const pp_finding *fl = pp_report_finding_list(f.r, &n);
    const pp_finding *resplit = NULL;
    for (size_t i = 0; i < n; i++)
        if (fl[i].action.kind == PP_ACTION_RESPLIT)
            resplit = &fl[i];
    EXPECT(resplit != NULL);
    if (resplit) {
        EXPECT_EQ_U64(resplit->prediction.state, PP_PREDICTION_PREDICTED);
        EXPECT(resplit->prediction.change_pct < PP_FINDING_MIN_GAIN_PCT); /* withdrawn */
        EXPECT_NEAR(resplit->prediction.change_pct, 0, 0.5);
        EXPECT_CONTAINS(resplit->text, "No change advised");
    }
    EXPECT(n > 0 && fl[n - 1].kind == PP_FINDING_WORTH_OPTIMIZING);
    if (n > 0)
        EXPECT_EQ_U64(fl[n - 1].stage, 0); /* P */
    fixture_free(&f);
}

/* A model that cannot replay gives no advice a prediction: every advice is
 * refused with the reason, and the last finding says why nothing was
 * predicted. Two threads take turns at P (6 ms from b * 5 ms), so P has two
 * servers and no hand-off of its own; what paced the batches, a 5 ms
 * source, is no stage's: the replay takes one batch per 3 ms (+67%). */
static void test_advise_refused(void) {
    pp_model *m = b_model();
    uint32_t p[2] = {b_thread(m, "p0"), b_thread(m, "p1")}, q = b_thread(m, "q");
    for (int b = 0; b < N; b++) {
        int64_t at = (int64_t)b * 5 * MS;
        char name[32];
        snprintf(name, sizeof name, "P#%d", b);
        b_span(m, p[b % 2], PP_ROLE_USER, name, NULL, -1, at, at + 6 * MS, 0, 0);
        snprintf(name, sizeof name, "Q#%d", b);
        b_span(m, q, PP_ROLE_USER, name, NULL, -1, at + 6 * MS, at + 7 * MS, 0, 0);
    }
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = "^(?<stage>[PQ])#(?<batch>[0-9]+)$";
    pp_report *r = b_report(m, &o);
    pp_error err = {{0}};
    size_t before, n;
    pp_report_finding_list(r, &before);
    EXPECT(pp_whatif_advise(r, m, NULL, &err) == PP_OK);
    const pp_finding *fl = pp_report_finding_list(r, &n);
    EXPECT_EQ_U64(n, before + 1);
    EXPECT(n > 0 && fl[n - 1].kind == PP_FINDING_WORTH_OPTIMIZING);
    EXPECT(n > 0 && fl[n - 1].action.kind == PP_ACTION_NONE);
    if (n > 0)
        EXPECT_CONTAINS(fl[n - 1].sentence, "replay is off");
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_model_structure);
    RUN(test_replay);
    RUN(test_speedup);
    RUN(test_split);
    RUN(test_causal);
    RUN(test_window_idle);
    RUN(test_pattern_labeled_replay);
    RUN(test_determinism_and_errors);
    RUN(test_advise_resplit);
    RUN(test_advise_withdrawn_off_the_bottleneck);
    RUN(test_advise_refused);
    return pp_test_finish();
}
