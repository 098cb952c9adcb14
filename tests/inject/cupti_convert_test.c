/* What becomes of CUPTI's activity records (src/inject/cupti_convert.c,
 * cupti_record.c), on records built by hand with the layouts of the real
 * cupti_activity.h this build found.
 *
 * The records stand in for the CUDA driver and CUPTI, which cannot run on a
 * machine without a GPU: this checks the conversion and the recording, not
 * what CUPTI hands out. tests/inject/test_cupti_gpu.sh runs a real CUDA
 * program under pipeprof record, and skips where there is no GPU. */
#include <string.h>
#include <unistd.h>

#include "inject/cupti_record.h"
#include "pipeprof/analyze.h"
#include "pipeprof/model.h"
#include "testutil.h"

static const cupti_clock plus_100 = {.offset_ns = 100, .error_ns = 5};

static cupti_kernel_rec kernel_rec(uint32_t device, uint32_t stream, uint32_t corr, uint64_t start,
                                   uint64_t end) {
    cupti_kernel_rec k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.deviceId = device;
    k.streamId = stream;
    k.correlationId = corr;
    k.start = start;
    k.end = end;
    k.name = "gemm_kernel";
    return k;
}

static CUpti_ActivityAPI api_rec(CUpti_ActivityKind kind, uint32_t tid, uint32_t corr,
                                 uint64_t start, uint64_t end) {
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.cbid = 211;
    a.threadId = tid;
    a.correlationId = corr;
    a.start = start;
    a.end = end;
    return a;
}

static const char *launch_name(CUpti_ActivityKind kind, CUpti_CallbackId cbid) {
    return kind == CUPTI_ACTIVITY_KIND_RUNTIME && cbid == 211 ? "cudaLaunchKernel" : NULL;
}

static int convert(const void *rec, const cupti_clock *clock, cupti_span *out) {
    return cupti_convert((const CUpti_Activity *)rec, clock, launch_name, out);
}

/* A kernel is an exec on its device's stream, in session time: its wall is
 * the device interval, all of it hardware time; the time it waited after
 * being queued is its queue part. */
static void test_kernel_is_an_exec_on_its_stream(void) {
    cupti_kernel_rec k = kernel_rec(1, 7, 42, 5000, 8000);
    k.queued = 4000;
    cupti_span sp;
    EXPECT_EQ_I64(convert(&k, &plus_100, &sp), 1);
    EXPECT_EQ_I64(sp.where, CUPTI_ON_STREAM);
    EXPECT_EQ_U64(sp.device, 1);
    EXPECT_EQ_U64(sp.stream, 7);
    EXPECT_STR(sp.name, "gemm_kernel");
    EXPECT_EQ_I64(sp.role, PP_ROLE_EXEC);
    EXPECT_EQ_I64(sp.ts_ns, 5000 + 100);
    EXPECT_EQ_I64(sp.dur_ns, 3000);
    EXPECT_EQ_U64(sp.hw_ns, 3000);
    EXPECT_EQ_U64(sp.xfer_ns, 0);
    EXPECT_EQ_U64(sp.correlation, 42);
    EXPECT_EQ_I64(sp.queue_ns, 1000);
    EXPECT_EQ_U64(sp.bytes, 0);
}

/* Without latency timestamps (CUPTI writes 0) the queue part is unknown,
 * not zero. */
static void test_kernel_without_queued_time_has_no_queue_part(void) {
    cupti_kernel_rec k = kernel_rec(0, 3, 1, 5000, 8000);
    cupti_span sp;
    EXPECT_EQ_I64(convert(&k, &plus_100, &sp), 1);
    EXPECT_EQ_I64(sp.queue_ns, -1);
}

/* Copies and sets move data: all their hardware time is transfer time,
 * with the bytes moved; a copy is named by its direction. */
static void test_memcpy_and_memset_are_transfers(void) {
    cupti_memcpy_rec c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.bytes = 4096;
    c.start = 1000;
    c.end = 1500;
    c.deviceId = 0;
    c.streamId = 8;
    c.correlationId = 7;
    cupti_span sp;
    EXPECT_EQ_I64(convert(&c, &plus_100, &sp), 1);
    EXPECT_STR(sp.name, "Memcpy HtoD");
    EXPECT_EQ_U64(sp.stream, 8);
    EXPECT_EQ_I64(sp.ts_ns, 1100);
    EXPECT_EQ_U64(sp.hw_ns, 500);
    EXPECT_EQ_U64(sp.xfer_ns, 500);
    EXPECT_EQ_U64(sp.bytes, 4096);
    EXPECT_EQ_U64(sp.correlation, 7);
    EXPECT_EQ_I64(sp.queue_ns, -1);

    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    EXPECT_EQ_I64(convert(&c, &plus_100, &sp), 1);
    EXPECT_STR(sp.name, "Memcpy DtoH");

    cupti_memset_rec m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = 256;
    m.start = 2000;
    m.end = 2040;
    m.streamId = 8;
    EXPECT_EQ_I64(convert(&m, &plus_100, &sp), 1);
    EXPECT_STR(sp.name, "Memset");
    EXPECT_EQ_U64(sp.hw_ns, 40);
    EXPECT_EQ_U64(sp.xfer_ns, 40);
    EXPECT_EQ_U64(sp.bytes, 256);
}

/* An API call is a span on the thread that made it, carrying the
 * correlation of the work it launched; a call CUPTI cannot name is named
 * by its API. */
static void test_api_call_is_a_span_on_its_thread(void) {
    CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, 777, 42, 3000, 3400);
    cupti_span sp;
    EXPECT_EQ_I64(convert(&a, &plus_100, &sp), 1);
    EXPECT_EQ_I64(sp.where, CUPTI_ON_THREAD);
    EXPECT_EQ_U64(sp.tid, 777);
    EXPECT_STR(sp.name, "cudaLaunchKernel");
    EXPECT_EQ_I64(sp.role, PP_ROLE_USER);
    EXPECT_EQ_I64(sp.ts_ns, 3100);
    EXPECT_EQ_I64(sp.dur_ns, 400);
    EXPECT_EQ_U64(sp.hw_ns, 0);
    EXPECT_EQ_U64(sp.correlation, 42);

    CUpti_ActivityAPI d = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, 777, 43, 3000, 3100);
    EXPECT_EQ_I64(convert(&d, &plus_100, &sp), 1);
    EXPECT_STR(sp.name, "driver API call");
}

/* Records CUPTI could not time (start = end = 0), that end before they
 * start, or of kinds not converted make no span. */
static void test_untimed_and_other_records_make_nothing(void) {
    cupti_span sp;
    cupti_kernel_rec k = kernel_rec(0, 1, 1, 0, 0);
    EXPECT_EQ_I64(convert(&k, &plus_100, &sp), 0);
    k = kernel_rec(0, 1, 1, 9000, 8000);
    EXPECT_EQ_I64(convert(&k, &plus_100, &sp), 0);
    CUpti_Activity other = {.kind = CUPTI_ACTIVITY_KIND_CONTEXT};
    EXPECT_EQ_I64(convert(&other, &plus_100, &sp), 0);
}

/* The fit takes the narrowest bracket: CUPTI read its clock somewhere in
 * [before, after], so its middle is off by at most half the width (the
 * larger half when the width is odd). */
static void test_clock_fit_takes_the_narrowest_bracket(void) {
    cupti_clock_sample s[3] = {
        {.host_before_ns = 1000, .host_after_ns = 1100, .cupti_ns = 50},
        {.host_before_ns = 2000, .host_after_ns = 2021, .cupti_ns = 1000},
        {.host_before_ns = 3000, .host_after_ns = 3050, .cupti_ns = 2000},
    };
    cupti_clock c;
    EXPECT_EQ_I64(cupti_clock_fit(s, 3, &c), PP_OK);
    EXPECT_EQ_I64(c.offset_ns, 2010 - 1000);
    EXPECT_EQ_I64(c.error_ns, 11);
    EXPECT_EQ_I64(cupti_clock_fit(s, 0, &c), PP_EINVAL);
    s[0].host_after_ns = 900; /* a bracket that runs backwards is no reading */
    EXPECT_EQ_I64(cupti_clock_fit(s, 3, &c), PP_EINVAL);
}

/* Over a run the bound is the worse of the two fits plus the drift between
 * them, whichever way the clocks drifted. */
static void test_clock_bound_adds_the_drift(void) {
    cupti_clock start = {.offset_ns = 1000, .error_ns = 10}, end = {.offset_ns = 1400, .error_ns = 30};
    EXPECT_EQ_I64(cupti_clock_bound(&start, &end), 30 + 400);
    end.offset_ns = 600;
    EXPECT_EQ_I64(cupti_clock_bound(&start, &end), 30 + 400);
}

static int64_t int_annotation(const pp_model *m, size_t event, const char *key) {
    size_t first, n, total;
    const pp_annotation *a = pp_model_annotations(m, &total);
    pp_model_annotations_of(m, event, &first, &n);
    uint32_t k = pp_model_find_string(m, key);
    for (size_t i = first; k && i < first + n; i++)
        if (a[i].key == k && a[i].type == PP_VALUE_INT)
            return a[i].v.i;
    return -1;
}

/* The recorded session: the thread's range "Stage1/batch3" (as the NVTX
 * library records it) holds the launch call of a 4 us kernel on stream 7
 * of GPU 0; the analyzer follows the correlation from the kernel to the
 * call and labels the kernel with the range's stage and batch. The kernel
 * lies on track GPU 0/stream 7 with its queue part, and the GPU's clock
 * mark gives the bound. */
static void test_recorded_kernel_takes_the_stage_of_its_launch(void) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_track host;
    EXPECT_EQ_I64(pp_track_thread(s, "main", &host), PP_OK);
    pp_span_rec range;
    pp_span_rec_init(&range);
    range.track = host;
    range.name = pp_intern("Stage1/batch3");
    range.ts_ns = 1000;
    range.dur_ns = 9000;
    EXPECT_EQ_I64(pp_span(s, &range), PP_OK);

    static cupti_recorder rec; /* big (its name cache): not on the stack */
    EXPECT_EQ_I64(cupti_recorder_init(&rec, s), PP_OK);
    const cupti_clock none = {0, 0};
    CUpti_ActivityAPI call = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, (uint32_t)gettid(), 9, 2000, 2500);
    cupti_kernel_rec k = kernel_rec(0, 7, 9, 3000, 7000);
    k.queued = 2400;
    cupti_span sp;
    EXPECT_EQ_I64(convert(&call, &none, &sp), 1);
    cupti_recorder_add(&rec, &sp);
    EXPECT_EQ_I64(convert(&k, &none, &sp), 1);
    cupti_recorder_add(&rec, &sp);
    cupti_recorder_mark_clocks(&rec, 250, 40, 0);
    cupti_recorder_free(&rec);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);

    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    size_t kernel = SIZE_MAX, launch = SIZE_MAX;
    pp_event e;
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_model_event(m, i, &e);
        const char *name = pp_model_string(m, e.name);
        if (strcmp(name, "gemm_kernel") == 0)
            kernel = i;
        else if (strcmp(name, "cudaLaunchKernel") == 0)
            launch = i;
    }
    EXPECT(kernel != SIZE_MAX && launch != SIZE_MAX);
    if (kernel == SIZE_MAX || launch == SIZE_MAX)
        return;
    pp_model_event(m, launch, &e);
    EXPECT_EQ_U64(e.track, host); /* the launching thread's own track */
    pp_model_event(m, kernel, &e);
    const pp_track_info *t = pp_model_track(m, e.track);
    EXPECT_STR(pp_model_string(m, t->device), "GPU 0");
    EXPECT_STR(pp_model_string(m, t->name), "stream 7");
    EXPECT_EQ_I64(e.role, PP_ROLE_EXEC);
    EXPECT_EQ_I64(e.ts_ns, 3000);
    EXPECT_EQ_U64(e.hw_ns, 4000);
    EXPECT_EQ_I64(int_annotation(m, kernel, "correlation"), 9);
    EXPECT_EQ_I64(int_annotation(m, launch, "correlation"), 9);
    EXPECT_EQ_I64(int_annotation(m, kernel, "queue_ns"), 600);

    pp_analyze_options o;
    pp_analyze_options_init(&o);
    o.batch_pattern = "^(?<stage>Stage[0-9]+)/batch(?<batch>[0-9]+)$";
    pp_report *r = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_report_build(m, &o, &r, &err), PP_OK);
    size_t n;
    const pp_stage_stats *st = r ? pp_report_stages(r, &n) : NULL;
    EXPECT(st && n == 1);
    if (st && n == 1) {
        EXPECT_STR(st[0].name, "Stage1");
        EXPECT_EQ_U64(st[0].execs, 1);
        EXPECT_EQ_I64(st[0].hw_ns, 4000);
        EXPECT(!st[0].exec_less);
    }
    const pp_stage_time *tm = r ? pp_report_stage_times(r, &n) : NULL;
    EXPECT(tm && n == 1 && tm[0].batch == 3 && tm[0].time_ns == 4000);
    const pp_clock_stats *c = r ? pp_report_clocks(r, &n) : NULL;
    EXPECT(c && n == 1);
    if (c && n == 1) {
        EXPECT_STR(c[0].method, "cuptiGetTimestamp");
        EXPECT_EQ_I64(c[0].error_ns, 250);
    }
    pp_report_free(r);
    pp_model_free(m);
    pp_session_close(s);
}

int main(void) {
    RUN(test_kernel_is_an_exec_on_its_stream);
    RUN(test_kernel_without_queued_time_has_no_queue_part);
    RUN(test_memcpy_and_memset_are_transfers);
    RUN(test_api_call_is_a_span_on_its_thread);
    RUN(test_untimed_and_other_records_make_nothing);
    RUN(test_clock_fit_takes_the_narrowest_bracket);
    RUN(test_clock_bound_adds_the_drift);
    RUN(test_recorded_kernel_takes_the_stage_of_its_launch);
    return pp_test_finish();
}
