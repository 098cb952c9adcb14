/* The wall decomposition (docs/analysis.md): every exec's wall splits into
 * submit, queue, device (of it transfer and contention), completion and
 * unattributed, each >= 0 and summing to wall exactly, whatever the
 * recorded parts claim; the sums per stage and device, the clock of a
 * device with its own, and the finding that names a dominating part. */
#include <stdio.h>
#include <stdlib.h>

#include "builder.h"

/* An exec with the split its backend recorded (annotations in ns). */
static size_t split_exec(pp_model *m, uint32_t track, const char *stage, int64_t batch,
                         int64_t start, int64_t end, uint64_t hw, uint64_t xfer, int64_t submit,
                         int64_t queue, int64_t completion) {
    size_t i = b_exec(m, track, stage, batch, start, end, hw, xfer);
    const char *keys[] = {"submit_ns", "queue_ns", "completion_ns"};
    int64_t v[] = {submit, queue, completion};
    for (int k = 0; k < 3; k++) {
        pp_annotation a = {.event = i, .key = b_str(m, keys[k]), .type = PP_VALUE_INT, .v.i = v[k]};
        if (pp_model_add_annotation(m, &a) != PP_OK)
            abort();
    }
    return i;
}

static const pp_wall_parts *parts_of(const pp_report *r, size_t event) {
    size_t n;
    const pp_exec_parts *p = pp_report_exec_parts(r, &n);
    for (size_t i = 0; i < n; i++)
        if (p[i].event == event)
            return &p[i].parts;
    pp_test_fail(__FILE__, __LINE__, "no parts for event %zu", event);
    exit(1);
}

static int64_t sum(const pp_wall_parts *p) {
    return p->submit_ns + p->queue_ns + p->device_ns + p->completion_ns + p->unattributed_ns;
}

/* A recorded split that fits the wall is taken as is: 100 + 200 + 600 + 100
 * of a 1000 ns wall leaves nothing unattributed. */
static void test_recorded_split_is_kept_when_it_fits(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    size_t e = split_exec(m, gpu, "S", 0, 0, 1000, 600, 150, 100, 200, 100);
    pp_report *r = b_report(m, NULL);
    const pp_wall_parts *p = parts_of(r, e);
    EXPECT_EQ_I64(p->wall_ns, 1000);
    EXPECT_EQ_I64(p->submit_ns, 100);
    EXPECT_EQ_I64(p->queue_ns, 200);
    EXPECT_EQ_I64(p->device_ns, 600);
    EXPECT_EQ_I64(p->xfer_ns, 150);
    EXPECT_EQ_I64(p->completion_ns, 100);
    EXPECT_EQ_I64(p->unattributed_ns, 0);
    EXPECT_EQ_I64(p->contention_ns, 0);
    pp_report_free(r);
    pp_model_free(m);
}

/* Parts that claim more than the wall leaves are cut in order (device
 * first, then submit, queue, completion); negative ones read as 0: the
 * parts stay >= 0 and sum to wall. */
static void test_recorded_split_is_cut_to_the_wall(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    size_t over = split_exec(m, gpu, "S", 0, 0, 1000, 900, 0, 200, 50, 50);
    size_t neg = split_exec(m, gpu, "S", 1, 2000, 3000, 500, 0, -40, 100, 100);
    size_t hw_over = split_exec(m, gpu, "S", 2, 4000, 5000, 1500, 2000, 10, 10, 10);
    pp_report *r = b_report(m, NULL);
    const pp_wall_parts *p = parts_of(r, over);
    EXPECT_EQ_I64(p->device_ns, 900);
    EXPECT_EQ_I64(p->submit_ns, 100);
    EXPECT_EQ_I64(p->queue_ns, 0);
    EXPECT_EQ_I64(p->completion_ns, 0);
    EXPECT_EQ_I64(sum(p), 1000);
    p = parts_of(r, neg);
    EXPECT_EQ_I64(p->submit_ns, 0);
    EXPECT_EQ_I64(p->unattributed_ns, 300);
    EXPECT_EQ_I64(sum(p), 1000);
    p = parts_of(r, hw_over); /* hw beyond wall: device is the whole wall */
    EXPECT_EQ_I64(p->device_ns, 1000);
    EXPECT_EQ_I64(p->xfer_ns, 1000);
    EXPECT_EQ_I64(sum(p), 1000);
    pp_report_free(r);
    pp_model_free(m);
}

/* Without a recorded split (OpenVINO, foreign traces) the wall is device
 * and unattributed; without hardware time it is all unattributed. */
static void test_unsplit_execs_are_device_and_unattributed(void) {
    pp_model *m = b_model();
    uint32_t cpu = b_device(m, "CPU", 0, 0);
    size_t known = b_exec(m, cpu, "S", 0, 0, 1000, 300, 0);
    size_t unknown = b_exec(m, cpu, "S", 1, 1000, 2000, 0, 0);
    pp_report *r = b_report(m, NULL);
    const pp_wall_parts *p = parts_of(r, known);
    EXPECT_EQ_I64(p->device_ns, 300);
    EXPECT_EQ_I64(p->unattributed_ns, 700);
    EXPECT_EQ_I64(p->submit_ns + p->queue_ns + p->completion_ns, 0);
    p = parts_of(r, unknown);
    EXPECT_EQ_I64(p->device_ns, 0);
    EXPECT_EQ_I64(p->unattributed_ns, 1000);
    size_t n;
    const pp_decomp_stats *d = pp_report_decomposition(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_EQ_U64(d[0].execs, 2);
    EXPECT_EQ_U64(d[0].split, 0);
    EXPECT_EQ_I64(d[0].total.unattributed_ns, 1700);
    pp_report_free(r);
    pp_model_free(m);
}

/* Sums per (stage, device), stage by stage; a queue-bound stage gets the
 * finding naming the part, its share and what it means. */
static void test_sums_per_stage_and_device_and_the_finding(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0), npu = b_device(m, "NPU", 0, 1);
    /* A on GPU: 2 execs of 1000 ns, 600 of each queue wait */
    split_exec(m, gpu, "A", 0, 0, 1000, 300, 0, 50, 600, 50);
    split_exec(m, gpu, "A", 1, 1000, 2000, 300, 0, 50, 600, 50);
    /* B on NPU: device-bound, no finding */
    split_exec(m, npu, "B", 0, 2000, 3000, 900, 100, 50, 0, 50);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_decomp_stats *d = pp_report_decomposition(r, &n);
    EXPECT_EQ_U64(n, 2);
    size_t a, b;
    b_find_stage(r, "A", &a);
    b_find_stage(r, "B", &b);
    EXPECT_EQ_U64(d[0].stage, a);
    EXPECT_EQ_U64(d[0].execs, 2);
    EXPECT_EQ_U64(d[0].split, 2);
    EXPECT_EQ_I64(d[0].total.wall_ns, 2000);
    EXPECT_EQ_I64(d[0].total.queue_ns, 1200);
    EXPECT_EQ_I64(d[0].total.device_ns, 600);
    EXPECT_EQ_U64(d[1].stage, b);
    EXPECT_EQ_I64(d[1].total.device_ns, 900);
    const char *const *f = pp_report_findings(r, &n);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        found += strcmp(f[i], "A on GPU: 60% of wall is queue wait: requests queue behind each "
                              "other; more requests in flight will not help.") == 0;
        EXPECT(strncmp(f[i], "B on", 4) != 0);
    }
    EXPECT_EQ_I64(found, 1);
    pp_report_free(r);
    pp_model_free(m);
}

/* The per-exec parts come cell by cell in the decomposition's order (stages
 * by first appearance, devices by their first exec, execs without a stage
 * last), each cell's execs in event order, whatever order they came in. */
static void test_exec_parts_come_cell_by_cell(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0), npu = b_device(m, "NPU", 0, 1);
    size_t e0 = b_exec(m, gpu, "A", 0, 0, 100, 100, 0);
    size_t e1 = b_exec(m, npu, "B", 0, 50, 150, 100, 0);
    size_t e2 = b_exec(m, gpu, NULL, -1, 200, 300, 100, 0);
    size_t e3 = b_exec(m, npu, "A", 1, 250, 350, 100, 0);
    size_t e4 = b_exec(m, gpu, "A", 1, 400, 500, 100, 0);
    size_t e5 = b_exec(m, npu, "B", 1, 450, 550, 100, 0);
    pp_report *r = b_report(m, NULL);
    size_t n, a, b;
    b_find_stage(r, "A", &a);
    b_find_stage(r, "B", &b);
    const pp_decomp_stats *d = pp_report_decomposition(r, &n);
    EXPECT_EQ_U64(n, 4);
    const pp_exec_parts *p = pp_report_exec_parts(r, &n);
    EXPECT_EQ_U64(n, 6);
    const size_t events[6] = {e0, e4, e3, e1, e5, e2};
    const uint32_t stages[6] = {(uint32_t)a, (uint32_t)a, (uint32_t)a, (uint32_t)b, (uint32_t)b,
                                UINT32_MAX};
    const uint32_t devices[6] = {d[0].device, d[0].device, d[1].device, d[2].device, d[2].device,
                                 d[3].device};
    for (size_t i = 0; i < 6 && i < n; i++) {
        EXPECT_EQ_U64(p[i].event, events[i]);
        EXPECT_EQ_U64(p[i].stage, stages[i]);
        EXPECT_EQ_U64(p[i].device, devices[i]);
        EXPECT_EQ_I64(p[i].parts.wall_ns, 100);
    }
    EXPECT_STR(pp_report_devices(r, &n)[d[0].device].name, "GPU");
    EXPECT_STR(pp_report_devices(r, &n)[d[1].device].name, "NPU");
    EXPECT_STR(pp_report_devices(r, &n)[d[3].device].name, "GPU");
    pp_report_free(r);
    pp_model_free(m);
}

/* With an isolated time for the pair, device time beyond it is contention. */
static void test_contention_is_device_time_over_the_isolated_time(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    size_t e = split_exec(m, gpu, "A", 0, 0, 1000, 600, 0, 100, 200, 100);
    pp_isolated_hw iso = {.stage = "A", .device = "GPU", .hw_ns = 400};
    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.isolated = &iso;
    o.nisolated = 1;
    pp_report *r = b_report(m, &o);
    EXPECT_EQ_I64(parts_of(r, e)->contention_ns, 200);
    size_t n;
    const pp_decomp_stats *d = pp_report_decomposition(r, &n);
    EXPECT(d[0].has_contention);
    EXPECT_EQ_I64(d[0].total.contention_ns, 200);
    pp_report_free(r);
    pp_model_free(m);
}

/* A device's "clock alignment" marks give its method and the largest error
 * bound; every renderer states them. */
static void test_clock_alignment_is_reported(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    split_exec(m, gpu, "A", 0, 0, 1000, 600, 0, 100, 200, 100);
    for (int k = 0; k < 2; k++)
        b_clock_mark(m, gpu, 500, "marker QUEUED", k ? 2500 : 900);
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_clock_stats *c = pp_report_clocks(r, &n);
    EXPECT_EQ_U64(n, 1);
    EXPECT_STR(c[0].method, "marker QUEUED");
    EXPECT_EQ_I64(c[0].error_ns, 2500);

    char *text = NULL, *json = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    EXPECT_EQ_I64(pp_report_write_text(r, f), PP_OK);
    fclose(f);
    EXPECT_CONTAINS(text, "clock: GPU aligned by marker QUEUED, error <= 2.500 us");
    EXPECT_CONTAINS(text, "A              GPU                   1   10.0   20.0   60.0    0.0"
                          "   10.0    0.0");
    EXPECT_EQ_I64(pp_report_json(r, &json, NULL), PP_OK);
    EXPECT_CONTAINS(json, "\"wall_ns\": 1000, \"submit_ns\": 100, \"queue_ns\": 200, "
                          "\"device_ns\": 600, \"xfer_ns\": 0, \"completion_ns\": 100, "
                          "\"unattributed_ns\": 0, \"contention_ns\": null}");
    EXPECT_CONTAINS(json, "\"clocks\": [\n {\"device\": \"GPU\", \"method\": \"marker QUEUED\", "
                          "\"error_ns\": 2500}]");
    free(text);
    pp_report_json_free(json);

    char *csv = b_csv(r, "decompose_csv", "decomposition.csv");
    EXPECT_CONTAINS(csv, "stage,device,simulated,execs,split_execs,wall_ns,submit_ns,queue_ns,"
                         "device_ns,xfer_ns,completion_ns,unattributed_ns,contention_ns\n"
                         "\"A\",\"GPU\",0,1,1,1000,100,200,600,0,100,0,\n");
    free(csv);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_recorded_split_is_kept_when_it_fits);
    RUN(test_recorded_split_is_cut_to_the_wall);
    RUN(test_unsplit_execs_are_device_and_unattributed);
    RUN(test_sums_per_stage_and_device_and_the_finding);
    RUN(test_exec_parts_come_cell_by_cell);
    RUN(test_contention_is_device_time_over_the_isolated_time);
    RUN(test_clock_alignment_is_reported);
    return pp_test_finish();
}
