/* test_diff.c — the comparison of two summaries (src/diff) on samples
 * built by hand, so every expected figure follows from the construction:
 * what is significant, what stays within noise, the bottleneck shift, the
 * gate's verdicts, the device map and the baseline file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_impl.h"
#include "testutil.h"

/* A sample of n values: base + step * (i mod 10) ns, times scale. */
static double *ramp(size_t n, double base, double step, double scale) {
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (base + step * (double)(i % 10)) * scale;
    return v;
}

/* A run of two stages, S1 (1.0..1.9 ms) and S2 (0.5..0.95 ms) on device
 * `dev`, 40 batches; S1's times scaled by s1_scale; the cycle is S1's time
 * (it is the larger); bottleneck counts as given. */
static pp_diff_summary *run_of(double s1_scale, const char *dev, uint64_t b1, uint64_t b2) {
    pp_diff_summary *s = diff_summary_new("run");
    s->cycles = 40;
    diff_summary_add_sample(s, PP_DIFF_CYCLE, NULL, NULL, NULL, ramp(40, 1e6, 1e5, s1_scale), 40);
    diff_summary_add_sample(s, PP_DIFF_E2E, NULL, NULL, NULL, ramp(40, 2e6, 1e5, 1), 40);
    diff_summary_add_sample(s, PP_DIFF_STAGE, "S1", NULL, NULL, ramp(40, 1e6, 1e5, s1_scale), 40);
    diff_summary_add_sample(s, PP_DIFF_STAGE, "S2", NULL, NULL, ramp(40, 5e5, 5e4, 1), 40);
    diff_summary_add_sample(s, PP_DIFF_EXEC, "S2", dev, NULL, ramp(40, 5e5, 5e4, 1), 40);
    diff_summary_add_stage(s, "S1", b1);
    diff_summary_add_stage(s, "S2", b2);
    diff_summary_add_value(s, PP_DIFF_BUSY, dev, 0.5);
    return s;
}

/* Two identical runs: every change is 0, nothing significant, no finding. */
static void test_identical_runs_change_nothing(void) {
    pp_diff_summary *a = run_of(1, "NPU", 40, 0), *b = run_of(1, "NPU", 40, 0);
    pp_diff *d = NULL;
    EXPECT_EQ_I64(pp_diff_compare(a, b, NULL, &d, NULL), PP_OK);
    size_t n = 0;
    const pp_diff_figure *f = pp_diff_figures(d, &n);
    EXPECT(n > 10);
    for (size_t i = 0; i < n; i++) {
        EXPECT(!f[i].significant);
        EXPECT(f[i].rel == 0);
    }
    pp_diff_findings(d, &n);
    EXPECT_EQ_U64(n, 0);
    EXPECT_STR(f[0].key, "throughput");
    pp_diff_free(d);
    pp_diff_summary_free(a), pp_diff_summary_free(b);
}

/* S1 1.5x slower in every batch: its mean is +50% exactly (the ramp
 * scaled), significant, inside its interval; throughput = 1 / mean cycle
 * falls by 1 - 1/1.5 = 33.3%; S2 is untouched and stays quiet. */
static void test_slower_stage_is_found(void) {
    pp_diff_summary *a = run_of(1, "NPU", 40, 0), *b = run_of(1.5, "NPU", 40, 0);
    pp_diff *d = NULL;
    EXPECT_EQ_I64(pp_diff_compare(a, b, NULL, &d, NULL), PP_OK);
    const pp_diff_figure *f = pp_diff_find(d, "stage:S1.mean");
    EXPECT(f && f->significant);
    EXPECT_NEAR(f->rel, 0.5, 1e-12);
    EXPECT(f->ci_lo <= 0.5 && 0.5 <= f->ci_hi && f->ci_lo > 0);
    EXPECT_NEAR(f->base, 1.45e6, 1e-6); /* mean of 1.0..1.9 ms */
    const pp_diff_figure *t = pp_diff_find(d, "throughput");
    EXPECT(t && t->significant && t->higher_is_better);
    EXPECT_NEAR(t->rel, 1 / 1.5 - 1, 1e-12);
    EXPECT(!pp_diff_find(d, "stage:S2.p95")->significant);
    size_t n = 0;
    const char *const *lines = pp_diff_findings(d, &n);
    EXPECT(n >= 2);
    EXPECT_CONTAINS(lines[0], "throughput (1 / mean cycle) -33.3% (");
    int s1 = 0;
    for (size_t i = 0; i < n; i++)
        s1 += strstr(lines[i], "S1 time mean +50.0% (") != NULL;
    EXPECT_EQ_I64(s1, 1); /* one statement for S1, though mean, p50, p95 all changed */
    /* the busy figure is listed, never tested */
    const pp_diff_figure *busy = pp_diff_find(d, "busy:NPU");
    EXPECT(busy && !busy->tested && !busy->significant && isnan(busy->ci_lo));
    pp_diff_free(d);
    pp_diff_summary_free(a), pp_diff_summary_free(b);
}

/* A run whose one stage is 0.5% slower in every batch, with a spread of
 * 0.09%: the rank test sees it, but a change under min_change (1% by
 * default) is not significant; with min_change 0 it is. */
static void test_negligible_change_is_not_significant(void) {
    pp_diff_summary *s[2];
    for (int k = 0; k < 2; k++) {
        s[k] = diff_summary_new("run");
        s[k]->cycles = 40;
        diff_summary_add_stage(s[k], "S", 40);
        diff_summary_add_sample(s[k], PP_DIFF_STAGE, "S", NULL, NULL,
                                ramp(40, 1e6, 100, k ? 1.005 : 1), 40);
    }
    pp_diff *d = NULL;
    pp_diff_options o;
    pp_diff_options_init(&o);
    EXPECT_NEAR(o.min_change, 0.01, 0);
    EXPECT_EQ_I64(pp_diff_compare(s[0], s[1], &o, &d, NULL), PP_OK);
    const pp_diff_figure *f = pp_diff_find(d, "stage:S.mean");
    EXPECT(f && f->p < 1e-6 && f->ci_lo > 0 && !f->significant);
    EXPECT_NEAR(f->rel, 0.005, 1e-9);
    pp_diff_free(d);
    o.min_change = 0;
    EXPECT_EQ_I64(pp_diff_compare(s[0], s[1], &o, &d, NULL), PP_OK);
    EXPECT(pp_diff_find(d, "stage:S.mean")->significant);
    pp_diff_free(d);
    pp_diff_summary_free(s[0]), pp_diff_summary_free(s[1]);
}

/* A data-parallel stage on CPU and NPU whose NPU part got 1.5x slower is
 * stated per device; an op that only the new run has is stated as new; a
 * single-device stage's exec statement, which would repeat its stage's,
 * is left out. */
static void test_device_and_new_op_statements(void) {
    pp_diff_summary *s[2];
    for (int k = 0; k < 2; k++) {
        s[k] = diff_summary_new(k ? "new" : "base");
        s[k]->cycles = 40;
        diff_summary_add_stage(s[k], "Embed", 40);
        diff_summary_add_stage(s[k], "Prep", 0);
        diff_summary_add_sample(s[k], PP_DIFF_STAGE, "Embed", NULL, NULL, ramp(40, 1e6, 1e4, 1), 40);
        diff_summary_add_sample(s[k], PP_DIFF_EXEC, "Embed", "CPU", NULL, ramp(40, 8e5, 1e4, 1), 40);
        diff_summary_add_sample(s[k], PP_DIFF_EXEC, "Embed", "NPU", NULL,
                                ramp(40, 6e5, 1e4, k ? 1.5 : 1), 40);
        diff_summary_add_sample(s[k], PP_DIFF_STAGE, "Prep", NULL, NULL, ramp(40, 5e5, 1e4, k ? 2 : 1), 40);
        diff_summary_add_sample(s[k], PP_DIFF_EXEC, "Prep", "CPU", NULL, ramp(40, 5e5, 1e4, k ? 2 : 1), 40);
    }
    double *gather = malloc(40 * sizeof *gather);
    for (int i = 0; i < 40; i++)
        gather[i] = 1e6; /* 1 ms each */
    diff_summary_add_sample(s[1], PP_DIFF_OP, NULL, "NPU", "Gather", gather, 40);
    pp_diff *d = NULL;
    EXPECT_EQ_I64(pp_diff_compare(s[0], s[1], NULL, &d, NULL), PP_OK);
    size_t n = 0;
    const char *const *lines = pp_diff_findings(d, &n);
    int npu = 0, gathers = 0, prep_exec = 0, prep = 0;
    for (size_t i = 0; i < n; i++) {
        npu += strstr(lines[i], "Embed on NPU 1.50x slower per exec (") != NULL;
        gathers += strcmp(lines[i], "NPU: Gather, 1.000 ms per op, new: not in the base run") == 0;
        prep_exec += strstr(lines[i], "Prep on CPU") != NULL;
        prep += strstr(lines[i], "Prep time mean +100.0% (") != NULL;
    }
    EXPECT_EQ_I64(npu, 1);
    EXPECT_EQ_I64(gathers, 1);
    EXPECT_EQ_I64(prep, 1);
    EXPECT_EQ_I64(prep_exec, 0);
    const pp_diff_figure *g = pp_diff_find(d, "op:NPU/Gather.mean");
    EXPECT(g && g->only_in == 2 && isnan(g->rel) && !g->tested);
    /* the text wraps statements at 80 columns */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    EXPECT_EQ_I64(pp_diff_write_text(d, f), PP_OK);
    fclose(f);
    EXPECT_CONTAINS(text, "  Embed on NPU 1.50x slower per exec (");
    size_t longest = 0;
    for (char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        longest = n > longest ? n : longest;
        line += n + (line[n] == '\n');
    }
    EXPECT(longest <= 80);
    free(text);
    pp_diff_free(d);
    pp_diff_summary_free(s[0]), pp_diff_summary_free(s[1]);
}

/* Where the bottleneck stage changes, a finding says so with its counts. */
static void test_bottleneck_shift_is_stated(void) {
    pp_diff_summary *a = run_of(1, "NPU", 38, 2), *b = run_of(1, "NPU", 9, 31);
    pp_diff *d = NULL;
    EXPECT_EQ_I64(pp_diff_compare(a, b, NULL, &d, NULL), PP_OK);
    size_t n = 0;
    const char *const *lines = pp_diff_findings(d, &n);
    EXPECT_EQ_U64(n, 1);
    if (n)
        EXPECT_STR(lines[0], "bottleneck moved from S1 (38 of 40 cycles) to S2 (31 of 40)");
    pp_diff_free(d);
    pp_diff_summary_free(a), pp_diff_summary_free(b);
}

/* Runs without a common stage are not comparable: the message lists both. */
static void test_no_common_stage_is_refused(void) {
    pp_diff_summary *a = run_of(1, "NPU", 40, 0), *b = diff_summary_new("other");
    b->cycles = 3;
    diff_summary_add_stage(b, "Tokenize", 3);
    pp_diff *d = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_diff_compare(a, b, NULL, &d, &err), PP_EINVAL);
    EXPECT(d == NULL);
    EXPECT_CONTAINS(err.msg, "no stage in common (base: S1, S2; new: Tokenize)");
    pp_diff_summary_free(a), pp_diff_summary_free(b);
}

/* --map NPU=GPU pairs the base's NPU execs with the new run's GPU execs. */
static void test_device_map_pairs_renamed_devices(void) {
    pp_diff_summary *a = run_of(1, "NPU", 40, 0), *b = run_of(1, "GPU", 40, 0);
    pp_diff *d = NULL;
    EXPECT_EQ_I64(pp_diff_compare(a, b, NULL, &d, NULL), PP_OK);
    EXPECT(pp_diff_find(d, "exec:S2@NPU.mean")->only_in == 1);
    pp_diff_free(d);
    pp_diff_map map = {"NPU", "GPU"};
    pp_diff_options o;
    pp_diff_options_init(&o);
    o.map = &map, o.nmap = 1;
    EXPECT_EQ_I64(pp_diff_compare(a, b, &o, &d, NULL), PP_OK);
    const pp_diff_figure *f = pp_diff_find(d, "exec:S2@NPU.mean");
    EXPECT(f && f->only_in == 0 && f->rel == 0 && f->tested);
    EXPECT(pp_diff_find(d, "busy:NPU") != NULL);
    pp_diff_free(d);
    pp_diff_summary_free(a), pp_diff_summary_free(b);
}

/* A rule fails only beyond its limit AND significant; beyond it within
 * noise passes as noise. */
static void test_gate_verdicts(void) {
    pp_diff_summary *a = run_of(1, "NPU", 40, 0), *b = run_of(1.5, "NPU", 40, 0);
    pp_diff *d = NULL;
    EXPECT_EQ_I64(pp_diff_compare(a, b, NULL, &d, NULL), PP_OK);
    struct {
        const char *rule;
        pp_gate_verdict v;
    } cases[] = {
        {"stage:S1.p95<=+10%", PP_GATE_FAIL}, {"stage:S1<=+60%", PP_GATE_PASS},
        {"throughput>=-5%", PP_GATE_FAIL},    {"throughput>=-40%", PP_GATE_PASS},
        /* unchanged S2 is beyond a limit of -1% (0 > -1%), but not significantly */
        {"stage:S2.mean<=-1%", PP_GATE_NOISE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pp_gate_rule r;
        pp_gate_result res;
        EXPECT_EQ_I64(pp_gate_rule_parse(cases[i].rule, &r, NULL), PP_OK);
        EXPECT_EQ_I64(pp_gate_check(d, &r, &res, NULL), PP_OK);
        if (res.verdict != cases[i].v)
            pp_test_fail(__FILE__, __LINE__, "%s: verdict %d, expected %d (%s)", cases[i].rule,
                         res.verdict, cases[i].v, res.message);
        pp_gate_rule_clear(&r);
    }
    pp_gate_rule r;
    pp_gate_result res;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_gate_rule_parse("throughput=>5%", &r, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "rule \"throughput=>5%\": expected KEY>=LIMIT% or KEY<=LIMIT%");
    EXPECT_EQ_I64(pp_gate_rule_parse("busy:NPU>=-5%", &r, NULL), PP_OK);
    EXPECT_EQ_I64(pp_gate_check(d, &r, &res, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "one value a run");
    pp_gate_rule_clear(&r);
    pp_diff_free(d);
    pp_diff_summary_free(a), pp_diff_summary_free(b);
}

/* A saved summary reads back sample for sample. */
static void test_baseline_round_trip(void) {
    pp_diff_summary *a = run_of(1.25, "NPU", 30, 10), *back = NULL;
    const char *path = pp_test_path("baseline.json");
    EXPECT_EQ_I64(pp_diff_summary_save(a, path, NULL), PP_OK);
    EXPECT(pp_diff_summary_is_file(path));
    EXPECT_EQ_I64(pp_diff_summary_load(path, &back, NULL), PP_OK);
    EXPECT_EQ_U64(back->nsamples, a->nsamples);
    EXPECT_EQ_U64(back->nstages, 2);
    EXPECT_EQ_U64(back->stages[1].bottleneck, 10);
    for (size_t i = 0; i < a->nsamples && i < back->nsamples; i++) {
        EXPECT(back->samples[i].kind == a->samples[i].kind);
        EXPECT_EQ_U64(back->samples[i].n, a->samples[i].n);
        for (size_t k = 0; k < a->samples[i].n; k++)
            EXPECT(back->samples[i].v[k] == a->samples[i].v[k]);
    }
    EXPECT_STR(back->values[0].device, "NPU");
    pp_diff_summary_free(back);
    pp_error err = {{0}};
    pp_test_write_file(path, "{\"pipeprof_baseline\": 1,", 24);
    EXPECT_EQ_I64(pp_diff_summary_load(path, &back, &err), PP_EFORMAT);
    EXPECT_CONTAINS(err.msg, "baseline.json:1:");
    /* pretty-printed, it is still recognized; a sample of a window kind is not one */
    const char *odd = "{\n  \"pipeprof_baseline\": 1, \"source\": \"x\", \"cycles\": 3,\n"
                      "  \"stages\": [], \"samples\": [{\"kind\": \"busy\", \"ns\": [1]}],"
                      " \"values\": []}\n";
    pp_test_write_file(path, odd, strlen(odd));
    EXPECT(pp_diff_summary_is_file(path));
    EXPECT_EQ_I64(pp_diff_summary_load(path, &back, &err), PP_EFORMAT);
    EXPECT_CONTAINS(err.msg, "baseline.json: samples[0]: expected {\"kind\": cycle|e2e|stage|");
    EXPECT(!pp_diff_summary_is_file(pp_test_path("no-such-file.json")));
    pp_diff_summary_free(a);
}

int main(void) {
    RUN(test_identical_runs_change_nothing);
    RUN(test_slower_stage_is_found);
    RUN(test_negligible_change_is_not_significant);
    RUN(test_device_and_new_op_statements);
    RUN(test_bottleneck_shift_is_stated);
    RUN(test_no_common_stage_is_refused);
    RUN(test_device_map_pairs_renamed_devices);
    RUN(test_gate_verdicts);
    RUN(test_baseline_round_trip);
    return pp_test_finish();
}
