/* The wall decomposition recorded on real backends: executors on the
 * OpenCL device (PoCL in CI), the cpu backend and a simulated NPU each
 * split every exec's wall into parts that are >= 0 and sum to it exactly;
 * the OpenCL kernels' device timestamps, mapped into the session clock,
 * lie inside their request's host wall within the stated alignment error;
 * and a queue deliberately over-filled moves the time into `queue`. */
#include <stdlib.h>

#include "pipeprof/analyze.h"
#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

static pp_session *started_session(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.level = 2;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    return s;
}

/* Runs `batches` requests of stage `stage` on `spec` through `requests`
 * slots: all of them at once when `burst` (acquire blocks while every slot
 * runs), else one after another. */
static void run_stage(pp_session *s, const char *spec, const char *stage, int requests,
                      int batches, int burst, const pp_workload *w) {
    pp_device *d = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_device_open(spec, NULL, &d, &err), PP_OK);
    pp_executor_config cfg = {.device = d, .requests = requests, .stage = stage, .workload = *w};
    pp_executor *ex = NULL;
    EXPECT_EQ_I64(pp_executor_create(s, &cfg, &ex, &err), PP_OK);
    for (int b = 0; b < batches; b++) {
        pp_request *r = pp_executor_acquire(ex);
        EXPECT_EQ_I64(pp_executor_start(ex, r, b, NULL, NULL), PP_OK);
        if (!burst)
            EXPECT_EQ_I64(pp_executor_wait_all(ex, NULL, &err), PP_OK);
    }
    EXPECT_EQ_I64(pp_executor_wait_all(ex, NULL, &err), PP_OK);
    pp_executor_free(ex);
    pp_device_close(d);
}

static pp_report *report_of(const pp_model *m) {
    pp_report *r = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_report_build(m, NULL, &r, &err), PP_OK);
    return r;
}

static uint32_t device_index(const pp_report *r, const char *name) {
    size_t n;
    const pp_device_stats *d = pp_report_devices(r, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return (uint32_t)i;
    pp_test_fail(__FILE__, __LINE__, "no device %s", name);
    return UINT32_MAX;
}

static void test_every_exec_splits_exactly_on_three_backends(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE;
    pp_session *s = started_session();
    run_stage(s, "opencl:0", "Embed", 2, 8, 1, &w);
    run_stage(s, "cpu", "Prep", 2, 8, 1, &w);
    run_stage(s, "sim:NPU", "Classify", 2, 8, 1, &w);
    pp_model *m = recorded_model(s);
    pp_report *r = report_of(m);
    size_t n;
    const pp_exec_parts *x = pp_report_exec_parts(r, &n);
    EXPECT_EQ_U64(n, 24);
    pp_event_columns c;
    pp_model_columns(m, &c);
    for (size_t i = 0; i < n; i++) {
        const pp_wall_parts *p = &x[i].parts;
        EXPECT_EQ_I64(p->wall_ns, c.dur_ns[x[i].event]);
        EXPECT(p->submit_ns >= 0 && p->queue_ns >= 0 && p->device_ns >= 0 &&
               p->completion_ns >= 0 && p->unattributed_ns >= 0);
        EXPECT(p->xfer_ns >= 0 && p->xfer_ns <= p->device_ns);
        EXPECT_EQ_I64(p->submit_ns + p->queue_ns + p->device_ns + p->completion_ns +
                          p->unattributed_ns, p->wall_ns);
        EXPECT_EQ_I64(p->device_ns, (int64_t)c.hw_ns[x[i].event]);
    }
    const pp_decomp_stats *d = pp_report_decomposition(r, &n);
    EXPECT_EQ_U64(n, 3);
    for (size_t i = 0; i < n; i++)
        EXPECT_EQ_U64(d[i].split, d[i].execs); /* all three backends report device times */
    pp_report_free(r);
    pp_model_free(m);
    pp_session_close(s);
}

/* Each OpenCL op span (a command, with the device's own timestamps) lies
 * inside the wall of the exec it belongs to: the executor shifts a
 * request's device times into its wall where the mapped times stick out,
 * and that shift (clock_shift_ns) stays within the alignment error the
 * trace states. */
static void test_kernel_timestamps_lie_inside_their_request(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.layers = 3;
    pp_session *s = started_session();
    run_stage(s, "opencl:0", "Embed", 3, 12, 1, &w);
    pp_model *m = recorded_model(s);
    pp_report *r = report_of(m);
    size_t n;
    const pp_clock_stats *clk = pp_report_clocks(r, &n);
    EXPECT_EQ_U64(n, 1);
    int64_t err = n ? clk[0].error_ns : 0;
    EXPECT(n && (strcmp(clk[0].method, "marker QUEUED") == 0 ||
                 strcmp(clk[0].method, "clGetDeviceAndHostTimer") == 0));
    pp_event_columns c;
    pp_model_columns(m, &c);
    size_t ops = 0;
    uint32_t key = pp_model_find_string(m, "clock_shift_ns");
    for (size_t i = 0; i < c.count; i++) {
        if (c.kind[i] != PP_EV_SPAN)
            continue;
        size_t first, na;
        const pp_annotation *a = pp_model_annotations(m, &first);
        pp_model_annotations_of(m, i, &first, &na);
        for (size_t k = first; k < first + na; k++)
            if (key && a[k].key == key)
                EXPECT(a[k].v.i >= -err && a[k].v.i <= err);
        if (c.role[i] != PP_ROLE_OP)
            continue;
        for (size_t k = 0; k < c.count; k++) {
            if (c.kind[k] != PP_EV_SPAN || c.role[k] != PP_ROLE_EXEC || c.batch[k] != c.batch[i])
                continue;
            ops++;
            EXPECT(c.ts_ns[i] >= c.ts_ns[k]);
            EXPECT(c.ts_ns[i] + c.dur_ns[i] <= c.ts_ns[k] + c.dur_ns[k]);
            EXPECT_EQ_U64(c.hw_ns[i], c.dur_ns[i]); /* shifted, not cut */
        }
    }
    EXPECT_EQ_U64(ops, 12 * (3 + 2)); /* three MatMuls and two transfers per request */
    pp_report_free(r);
    pp_model_free(m);
    pp_session_close(s);
}

/* The sums of the OpenCL device's execs. */
static pp_decomp_stats opencl_sums(const pp_report *r) {
    size_t n;
    const pp_decomp_stats *d = pp_report_decomposition(r, &n);
    uint32_t dev = device_index(r, "opencl:0");
    for (size_t i = 0; i < n; i++)
        if (d[i].device == dev)
            return d[i];
    pp_test_fail(__FILE__, __LINE__, "no OpenCL execs");
    return (pp_decomp_stats){0};
}

/* 16 requests started at once on a device with 2 compute units (PoCL on
 * this machine's cores; a GPU runs a few such kernels at once) wait for
 * each other: on average each waits in the queue longer than one request
 * takes on the device alone, and their queue share of wall is far above
 * that of the same requests one at a time (only the device's start
 * latency there). */
static void test_overfilled_queue_moves_time_into_queue(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 1024, w.in_dim = 128, w.out_dim = 128, w.layers = 2;
    pp_decomp_stats sums[2];
    for (int burst = 0; burst < 2; burst++) {
        pp_session *s = started_session();
        run_stage(s, "opencl:0", "Embed", burst ? 16 : 1, 16, burst, &w);
        pp_model *m = recorded_model(s);
        pp_report *r = report_of(m);
        sums[burst] = opencl_sums(r);
        pp_report_free(r);
        pp_model_free(m);
        pp_session_close(s);
    }
    double share[2];
    for (int k = 0; k < 2; k++)
        share[k] = (double)sums[k].total.queue_ns / (double)sums[k].total.wall_ns;
    fprintf(stderr, "queue share: one at a time %.3f, 16 at once %.3f; queue at once / device "
                    "alone %.2f\n", share[0], share[1],
            (double)sums[1].total.queue_ns / (double)sums[0].total.device_ns);
    EXPECT_EQ_U64(sums[1].execs, 16);
    EXPECT(sums[1].total.queue_ns > sums[0].total.device_ns);
    EXPECT(share[1] > 2 * share[0]);
}

int main(void) {
    if (!strstr(pp_features(), "opencl"))
        pp_test_skip("built without OpenCL (Debian: ocl-icd-opencl-dev opencl-c-headers; "
                     "scripts/setup installs them)");
    pp_error err = {{0}};
    if (pp_device_check("opencl:0", NULL, &err) != PP_OK) {
        static char why[sizeof err.msg + 32];
        snprintf(why, sizeof why, "no OpenCL device: %s", err.msg);
        pp_test_skip(why);
    }
    RUN(test_every_exec_splits_exactly_on_three_backends);
    RUN(test_kernel_timestamps_lie_inside_their_request);
    RUN(test_overfilled_queue_moves_time_into_queue);
    return pp_test_finish();
}
