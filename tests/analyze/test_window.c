/* The window W: --region, --exclude-region, --from/--to, and every error a
 * user can reach while choosing it. */
#include "builder.h"

/* A "warm up" region [0, 1000) with one exec; two execs after it. */
static pp_model *warm_up_model(void) {
    pp_model *m = b_model();
    uint32_t regions = b_thread(m, "regions"), cpu = b_device(m, "CPU", 0, 0);
    b_region(m, regions, "warm up", 0, 1000);
    b_region(m, regions, "steady", 1000, 4000);
    b_exec(m, cpu, "A", 0, 200, 800, 0, 0);
    b_exec(m, cpu, "A", 1, 1500, 2500, 0, 0);
    b_exec(m, cpu, "A", 2, 3000, 4000, 0, 0);
    return m;
}

static void test_exclude_region_starts_after_it(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.exclude_region = "warm up";
    pp_report *r = b_report(m, &o);
    EXPECT_EQ_I64(pp_report_window(r)->start_ns, 1000);
    EXPECT_EQ_I64(pp_report_window(r)->end_ns, 4000);
    const pp_device_stats *d = b_find_device(r, "CPU");
    EXPECT_EQ_U64(d->execs, 2);
    EXPECT_EQ_I64(d->busy_ns, 2000);
    EXPECT_EQ_I64(d->bubbles.leading_ns, 500);
    EXPECT_EQ_I64(d->bubbles.total, 500);
    size_t n;
    pp_report_batches(r, &n);
    EXPECT_EQ_U64(n, 2);
    pp_report_free(r);
    pp_model_free(m);
}

static void test_region_is_the_hull(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.region = "warm up";
    pp_report *r = b_report(m, &o);
    EXPECT_EQ_I64(pp_report_window(r)->end_ns, 1000);
    EXPECT_EQ_I64(b_find_device(r, "CPU")->busy_ns, 600);
    EXPECT_CONTAINS(pp_report_window(r)->how, "region \"warm up\"");
    pp_report_free(r);
    pp_model_free(m);
}

/* --from/--to clip W; an exec cut by the edge counts toward busy (clipped)
 * but not toward per-exec figures. */
static void test_from_to_clip(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.has_from = 1, o.from_ns = 2000;
    o.has_to = 1, o.to_ns = 3500;
    pp_report *r = b_report(m, &o);
    const pp_device_stats *d = b_find_device(r, "CPU");
    EXPECT_EQ_I64(d->busy_ns, 500 + 500);
    EXPECT_EQ_U64(d->execs, 0);
    pp_report_free(r);
    pp_model_free(m);
}

static int build_error(const pp_model *m, const pp_analyze_options *o, pp_error *err) {
    pp_report *r = NULL;
    int rc = pp_report_build(m, o, &r, err);
    EXPECT(r == NULL);
    return rc;
}

static void test_unknown_region_lists_regions(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.region = "warmup";
    pp_error err = {{0}};
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_ENOTFOUND);
    EXPECT_CONTAINS(err.msg, "no region named \"warmup\"");
    EXPECT_CONTAINS(err.msg, "regions: \"warm up\", \"steady\"");
    pp_model_free(m);
}

static void test_empty_window(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.has_from = 1, o.from_ns = 3000;
    o.has_to = 1, o.to_ns = 3000;
    pp_error err = {{0}};
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "the window is empty");
    EXPECT_CONTAINS(err.msg, "the trace spans 0 to 4000 ns");
    pp_model_free(m);
}

static void test_region_options_exclude_each_other(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.region = "steady";
    o.exclude_region = "warm up";
    pp_error err = {{0}};
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "--region and --exclude-region exclude each other");
    pp_model_free(m);
}

static void test_trace_without_execs(void) {
    pp_model *m = b_model();
    b_span(m, b_thread(m, "main"), PP_ROLE_USER, "work", NULL, -1, 0, 10, 0, 0);
    pp_error err = {{0}};
    EXPECT_EQ_I64(build_error(m, NULL, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "the trace has no execs");
    pp_model_free(m);
}

static void test_bad_batch_pattern(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = "(unclosed";
    pp_error err = {{0}};
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "--batch-pattern \"(unclosed\": ");
    o.batch_pattern = "^step$";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "--batch-pattern \"^step$\": needs a batch group");
    o.batch_pattern = "^(?<step>[0-9]+)$";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "only the named groups (?<stage>...) and (?<batch>...)");
    o.batch_pattern = "^(?<batch>[0-9]+)/(?P<batch>[0-9]+)$";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "the group \"batch\" is named twice");
    o.batch_pattern = NULL;
    o.stage_pattern = "^Stage";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "--stage-pattern \"^Stage\": needs a stage group");
    o.stage_pattern = "^(?<stage>S.*)$";
    o.partition_pattern = "[";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "--partition-pattern \"[\": ");
    pp_model_free(m);
}

/* Patterns whose regcomp would take gigabytes are refused first (found by
 * the CLI fuzzer: "\\+++++..." took 2 GB): a quantifier after a quantifier,
 * and counted repeats multiplying past 10000. Single quantifiers, escaped
 * ones, ones in brackets and counts within the bound still compile. */
static void test_pattern_blowups_refused(void) {
    pp_model *m = warm_up_model();
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    pp_error err = {{0}};
    o.batch_pattern = "^x\\\\+++++++(?<batch>[0-9]+)$";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "a quantifier right after another at offset 5");
    o.batch_pattern = "^.*?(?<batch>[0-9]+)$";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "a quantifier right after another at offset 3");
    o.batch_pattern = "^((a{100}){100}){2}(?<batch>[0-9]+)$";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "counted repeats {m,n} multiply past 10000 repetitions (at offset 16)");
    o.batch_pattern = "^(a{5,}){2}(?<batch>[0-9]{1,999})$";
    EXPECT_EQ_I64(build_error(m, &o, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "multiply past 10000");
    static const char *const fine[] = {"^\\+[+*?](?<batch>[0-9]+)$", "^a+b*c?(?<batch>[0-9]{1,5})$",
                                       "^(ab){2,}(?<batch>[0-9]+)$"};
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        o.batch_pattern = fine[i];
        pp_report *r = NULL;
        int rc = pp_report_build(m, &o, &r, &err);
        EXPECT_EQ_I64(rc, PP_OK);
        if (rc != PP_OK)
            fprintf(stderr, "%s: %s\n", fine[i], err.msg);
        pp_report_free(r);
    }
    pp_model_free(m);
}

int main(void) {
    RUN(test_exclude_region_starts_after_it);
    RUN(test_region_is_the_hull);
    RUN(test_from_to_clip);
    RUN(test_unknown_region_lists_regions);
    RUN(test_empty_window);
    RUN(test_region_options_exclude_each_other);
    RUN(test_trace_without_execs);
    RUN(test_bad_batch_pattern);
    RUN(test_pattern_blowups_refused);
    return pp_test_finish();
}
