/* The scheduler split from hand-built spans: the parts are clipped to the
 * wall and add up to it exactly, spans are grouped by stage and kind in
 * stage order, a span without a run-queue figure counts its off-CPU time
 * as blocked, and a trace without figures (a foreign one) has no split and
 * no method. */
#include "builder.h"

/* Annotations of a span recorded with the sched bit; wait < 0: none. */
static void sched_anns(pp_model *m, size_t ev, int64_t cpu, int64_t wait, int64_t vcsw,
                       int64_t ivcsw, const char *method) {
    pp_annotation a[5] = {
        {.event = ev, .key = b_str(m, "sched_cpu_ns"), .type = PP_VALUE_INT, .v.i = cpu},
        {.event = ev, .key = b_str(m, "sched_vcsw"), .type = PP_VALUE_INT, .v.i = vcsw},
        {.event = ev, .key = b_str(m, "sched_ivcsw"), .type = PP_VALUE_INT, .v.i = ivcsw},
        {.event = ev, .key = b_str(m, "sched_method"), .type = PP_VALUE_STR,
         .v.s = b_str(m, method)},
        {.event = ev, .key = b_str(m, "sched_wait_ns"), .type = PP_VALUE_INT, .v.i = wait}};
    for (int i = 0; i < (wait >= 0 ? 5 : 4); i++)
        if (pp_model_add_annotation(m, &a[i]) != PP_OK)
            abort();
}

static const pp_sched_stats *row(const pp_report *r, const char *stage, const char *span) {
    size_t n = 0;
    const pp_sched_stats *rows = pp_report_sched(r, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].stage, stage) == 0 && strcmp(rows[i].span, span) == 0)
            return &rows[i];
    pp_test_fail(__FILE__, __LINE__, "no row %s/%s", stage, span);
    static const pp_sched_stats none;
    return &none;
}

/* Two Prep stage spans of 1000 ns: one whose counters read past its ends
 * (cpu 1200, wait 300: clipped to cpu 1000, wait 0), one of cpu 400 and
 * wait 300 (blocked 300). */
static void test_parts_are_clipped_to_the_wall_and_sum_to_it(void) {
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "prep");
    sched_anns(m, b_span(m, t, PP_ROLE_STAGE, "Prep", "Prep", 0, 0, 1000, 0, 0), 1200, 300, 0, 2,
               "schedstat");
    sched_anns(m, b_span(m, t, PP_ROLE_STAGE, "Prep", "Prep", 1, 1000, 2000, 0, 0), 400, 300, 3,
               1, "schedstat");
    pp_report *r = b_report(m, NULL);
    const pp_sched_stats *v = row(r, "Prep", "stage");
    EXPECT_EQ_U64(v->spans, 2);
    EXPECT_EQ_I64(v->wall_ns, 2000);
    EXPECT_EQ_I64(v->cpu_ns, 1000 + 400);
    EXPECT_EQ_I64(v->wait_ns, 0 + 300);
    EXPECT_EQ_I64(v->blocked_ns, 0 + 300);
    EXPECT_EQ_I64(v->voluntary, 3);
    EXPECT_EQ_I64(v->involuntary, 3);
    EXPECT_STR(pp_report_sched_method(r), "schedstat");
    pp_report_free(r);
    pp_model_free(m);
}

/* Rows: per stage in stage order (A before B: A comes first in time), the
 * stage span before the partition and the merge, other spans by name; a
 * span without a run-queue figure is counted in no_wait and its off-CPU
 * time is blocked; the methods are joined. */
static void test_rows_by_stage_and_kind(void) {
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "main");
    sched_anns(m, b_span(m, t, PP_ROLE_STAGE, "B", "B", 0, 5000, 6000, 0, 0), 100, 0, 0, 0,
               "schedstat");
    sched_anns(m, b_span(m, t, PP_ROLE_MERGE, "merge", "A", 0, 3000, 3500, 0, 0), 500, 0, 0, 0,
               "schedstat");
    sched_anns(m, b_span(m, t, PP_ROLE_PARTITION, "partition", "A", 0, 0, 200, 0, 0), 200, -1, 0,
               0, "cputime");
    sched_anns(m, b_span(m, t, PP_ROLE_STAGE, "A", "A", 0, 0, 3500, 0, 0), 700, 100, 1, 0,
               "schedstat");
    sched_anns(m, b_span(m, t, PP_ROLE_USER, "wait", "A", -1, 300, 2900, 0, 0), 10, 0, 1, 0,
               "schedstat");
    pp_report *r = b_report(m, NULL);
    size_t n = 0;
    const pp_sched_stats *rows = pp_report_sched(r, &n);
    EXPECT_EQ_U64(n, 5);
    static const char *const order[5][2] = {
        {"A", "stage"}, {"A", "partition"}, {"A", "merge"}, {"A", "wait"}, {"B", "stage"}};
    for (size_t i = 0; i < n && i < 5; i++) {
        EXPECT_STR(rows[i].stage, order[i][0]);
        EXPECT_STR(rows[i].span, order[i][1]);
    }
    const pp_sched_stats *p = row(r, "A", "partition");
    EXPECT_EQ_U64(p->no_wait, 1);
    EXPECT_EQ_I64(p->cpu_ns + p->wait_ns + p->blocked_ns, 200);
    EXPECT_EQ_I64(row(r, "A", "wait")->blocked_ns, 2600 - 10);
    EXPECT_STR(pp_report_sched_method(r), "schedstat+cputime");
    pp_report_free(r);
    pp_model_free(m);
}

/* A span lying partly outside W is not counted, like every per-span
 * figure; the method is still named. */
static void test_spans_outside_the_window_are_left_out(void) {
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "main");
    sched_anns(m, b_span(m, t, PP_ROLE_STAGE, "A", "A", 0, 0, 1000, 0, 0), 100, 0, 0, 0,
               "schedstat");
    sched_anns(m, b_span(m, t, PP_ROLE_STAGE, "A", "A", 1, 2000, 3000, 0, 0), 100, 0, 0, 0,
               "schedstat");
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.to_ns = 1500;
    o.has_to = 1;
    pp_report *r = b_report(m, &o);
    EXPECT_EQ_U64(row(r, "A", "stage")->spans, 1);
    pp_report_free(r);
    pp_model_free(m);
}

/* A trace without scheduler figures (a foreign one) has no rows and no
 * method; JSON says "method": null and CSV has only its header. */
static void test_a_trace_without_figures_has_none(void) {
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "main");
    b_span(m, t, PP_ROLE_STAGE, "A", "A", 0, 0, 1000, 0, 0);
    pp_report *r = b_report(m, NULL);
    size_t n = 1;
    pp_report_sched(r, &n);
    EXPECT_EQ_U64(n, 0);
    EXPECT(pp_report_sched_method(r) == NULL);
    char *json = NULL;
    EXPECT_EQ_I64(pp_report_json(r, &json, NULL), PP_OK);
    EXPECT_CONTAINS(json, "\"sched\": {\"method\": null, \"process\": null, \"rows\": []}");
    pp_report_json_free(json);
    char *csv = b_csv(r, "sched_none", "sched.csv");
    EXPECT_STR(csv, "stage,span,method,spans,no_wait,wall_ns,cpu_ns,wait_ns,blocked_ns,voluntary,"
                    "involuntary,rival,rival_cpu_ns\n");
    free(csv);
    pp_report_free(r);
    pp_model_free(m);
}

/* A counter sample of the sampler: `name` ("cpu% NAME [tid]") at ts. */
static void sample(pp_model *m, uint32_t track, const char *name, int64_t ts, double value) {
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_COUNTER;
    e.track = track;
    e.name = b_str(m, name);
    e.ts_ns = ts;
    e.value = value;
    if (pp_model_add_event(m, &e) != PP_OK)
        abort();
}

/* With the sampler's counters, the stage's rival is the group of
 * same-named threads that used the most CPU during its spans: openvino's
 * two threads, 80% and 60% of the two 10 ms periods of the span and 50% of
 * the first, 0.8 * 10 + 0.6 * 10 + 0.5 * 10 = 19 ms; the stage's own
 * thread (tid 100) is left out, and a sample after the span counts
 * nothing. The finding names the rival and the time without the wait. */
/* The Prep stage on thread 100 with one 20 ms span (cpu 5 ms, wait
 * `wait`), the sampler's marks, and samples: openvino's two threads at
 * 80% and 50% of the first 10 ms period and 60% of the second (19 ms in
 * the span), Prep's own thread, another, and one sample past the span. */
static pp_model *rival_model(int64_t wait, const char *process) {
    pp_model *m = b_model();
    pp_model_meta_mut(m)->process_name = b_str(m, process);
    pp_track_info ti;
    pp_track_info_init(&ti);
    ti.kind = PP_TRACK_KIND_THREAD;
    ti.name = b_str(m, "Prep");
    ti.process = b_str(m, "host");
    ti.tid = 100;
    uint32_t t = 0;
    if (pp_model_add_track(m, &ti, &t) != PP_OK)
        abort();
    uint32_t sampler = b_thread(m, "pipeprof sampler");
    size_t mark = b_instant(m, sampler, "sched sampler", 0);
    pp_annotation a[4] = {
        {.event = mark, .key = b_str(m, "cpus_online"), .type = PP_VALUE_INT, .v.i = 2},
        {.event = mark, .key = b_str(m, "cpus_allowed"), .type = PP_VALUE_INT, .v.i = 2},
        {.event = mark, .key = b_str(m, "affinity"), .type = PP_VALUE_STR, .v.s = b_str(m, "0-1")},
        {.event = mark, .key = b_str(m, "period_ns"), .type = PP_VALUE_INT, .v.i = 10000000}};
    for (int i = 0; i < 4; i++)
        if (pp_model_add_annotation(m, &a[i]) != PP_OK)
            abort();
    sched_anns(m, b_span(m, t, PP_ROLE_STAGE, "Prep", "Prep", 0, 0, 20000000, 0, 0), 5000000,
               wait, 0, 9, "schedstat");
    sample(m, sampler, "cpu% openvino [201]", 10000000, 80);
    sample(m, sampler, "cpu% openvino [202]", 10000000, 50);
    sample(m, sampler, "cpu% Prep [100]", 10000000, 90);
    sample(m, sampler, "cpu% other [300]", 10000000, 10);
    sample(m, sampler, "cpu% openvino [201]", 20000000, 60);
    sample(m, sampler, "cpu% openvino [201]", 30000000, 100);
    return m;
}

/* Whether a finding holds all of `parts`. */
static int finding_with(const pp_report *r, const char *const *parts, size_t nparts) {
    size_t n = 0;
    const char *const *f = pp_report_findings(r, &n);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < nparts && strstr(f[i], parts[k]))
            k++;
        if (k == nparts)
            return 1;
    }
    return 0;
}

static void test_the_rival_is_who_ran_while_the_stage_waited(void) {
    pp_model *m = rival_model(12000000, "demo");
    pp_report *r = b_report(m, NULL);
    const pp_sched_stats *v = row(r, "Prep", "stage");
    EXPECT_STR(v->rival ? v->rival : "(none)", "openvino");
    EXPECT_EQ_I64(v->rival_cpu_ns, 19000000);
    const pp_sched_process *p = pp_report_sched_process(r);
    EXPECT(p != NULL);
    if (p) {
        EXPECT_EQ_I64(p->cpus_allowed, 2);
        EXPECT_STR(p->affinity, "0-1");
    }
    static const char *const parts[] = {
        "Prep: 20.0 ms per batch, 5.0 on CPU, 12.0 waiting for a core, 3.0 blocked",
        "while openvino's threads ran (19.0 ms of CPU", "about 8.0 ms per batch"};
    EXPECT(finding_with(r, parts, 3));
    pp_report_free(r);
    pp_model_free(m);
}

/* Mostly blocked (wait 2 ms, blocked 13 ms) while other threads ran 19 ms:
 * in a Python process, likely GIL wait, said to be an inference; in any
 * other process, only that the thread slept. */
static void test_blocked_while_others_ran_in_python_is_likely_gil_wait(void) {
    static const char *const gil[] = {"Prep: 20.0 ms per batch, 5.0 on CPU, 2.0 waiting for a "
                                      "core, 13.0 blocked", "likely GIL wait", "an inference"};
    pp_model *m = rival_model(2000000, "python3.11");
    pp_report *r = b_report(m, NULL);
    EXPECT(finding_with(r, gil, 3));
    pp_report_free(r);
    pp_model_free(m);
    m = rival_model(2000000, "server");
    r = b_report(m, NULL);
    EXPECT(!finding_with(r, gil + 1, 1));
    static const char *const slept[] = {"13.0 blocked", "its thread slept"};
    EXPECT(finding_with(r, slept, 2));
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_the_rival_is_who_ran_while_the_stage_waited);
    RUN(test_blocked_while_others_ran_in_python_is_likely_gil_wait);
    RUN(test_parts_are_clipped_to_the_wall_and_sum_to_it);
    RUN(test_rows_by_stage_and_kind);
    RUN(test_spans_outside_the_window_are_left_out);
    RUN(test_a_trace_without_figures_has_none);
    return pp_test_finish();
}
