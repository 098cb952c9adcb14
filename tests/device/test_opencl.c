/* The opencl backend on whatever OpenCL device the machine has (PoCL's CPU
 * device in CI): it computes the dummy models correctly (against the naive
 * reference loops of reference.h), its profile is the device's own command
 * timestamps mapped into the session clock, and bad specs say what exists. */
#include <pthread.h>
#include <stdlib.h>

#include "device/workload.h"
#include "pipeprof/device.h"
#include "pipeprof/model.h"
#include "reference.h"
#include "testutil.h"

static pp_device *open_cl(void) {
    pp_device *d = NULL;
    pp_error err = {{0}};
    int rc = pp_device_open("opencl:0", NULL, &d, &err);
    if (rc != PP_OK)
        fprintf(stderr, "%s\n", err.msg);
    EXPECT_EQ_I64(rc, PP_OK);
    return d;
}

/* One request of `w` at `level` with input seed 11; its output is compared
 * with `want` when given. Returns the compiled model (request 0 finished). */
static pp_compiled *run_one(pp_device *d, const pp_workload *w, int level, int64_t *t0,
                            int64_t *t1) {
    pp_compiled *c = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_compiled_create_level(d, w, 1, level, &c, &err), PP_OK);
    if (!c)
        return NULL;
    pp_request *r = pp_compiled_request(c, 0);
    pp_wl_fill_input(w, 11, pp_request_input(r));
    *t0 = pp_now();
    EXPECT_EQ_I64(pp_request_start(r, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_wait(r), PP_OK);
    *t1 = pp_now();
    return c;
}

/* 37 rows, odd sizes (no multiple of any work-group size), three layers. */
static void test_matmul_chain_matches_naive_product(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 37, w.in_dim = 19, w.out_dim = 23, w.layers = 3, w.seed = 7;
    pp_device *d = open_cl();
    int64_t t0, t1;
    pp_compiled *c = run_one(d, &w, 1, &t0, &t1);
    static float x[37 * 19], want[37 * 23];
    pp_wl_fill_input(&w, 11, x);
    reference_matmul_chain(&w, x, want);
    EXPECT(rel_error(pp_request_output(pp_compiled_request(c, 0)), want, 37 * 23) < 1e-5);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* h_i = ReLU(W^T mean(x_i, x_src for every edge src -> i) + b). */
static void test_sage_layer_matches_naive_definition(void) {
    enum { N = 50, E = 300, IN = 16, OUT = 12 };
    pp_workload w;
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE;
    w.nodes = N, w.edges = E, w.in_dim = IN, w.out_dim = OUT, w.seed = 3;
    pp_device *d = open_cl();
    int64_t t0, t1;
    pp_compiled *c = run_one(d, &w, 1, &t0, &t1);
    static float x[N * IN], want[N * OUT];
    pp_wl_fill_input(&w, 11, x);
    reference_sage(&w, x, want);
    EXPECT(rel_error(pp_request_output(pp_compiled_request(c, 0)), want, N * OUT) < 1e-5);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* One op per command: the input write, the plan's kernels, the output read.
 * hw_ns is the sum of their device times and xfer_ns that of the two
 * transfers; the commands run one after another (an in-order queue) from
 * the first command's start to the last one's end, and every device time,
 * mapped into the session clock, lies inside the host's wall of the request
 * give or take the stated alignment error. */
static void test_profile_is_the_commands_device_times(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.kind = PP_WORKLOAD_SAGE;
    w.nodes = 512, w.edges = 4096, w.in_dim = 32, w.out_dim = 32;
    pp_device *d = open_cl();
    pp_device_clock clk;
    EXPECT_EQ_I64(pp_device_clock_get(d, 0, &clk, NULL), PP_OK);
    EXPECT(strcmp(clk.method, "clGetDeviceAndHostTimer") == 0 ||
           strcmp(clk.method, "marker QUEUED") == 0);
    EXPECT(clk.error_ns >= 0);
    int64_t t0, t1;
    pp_compiled *c = run_one(d, &w, 2, &t0, &t1);
    pp_wl_op plan[PP_WL_MAX_OPS];
    size_t nplan = pp_wl_plan(&w, plan);
    pp_request_profile prof;
    EXPECT_EQ_I64(pp_request_profile_get(pp_compiled_request(c, 0), &prof), PP_OK);
    EXPECT_EQ_U64(prof.nops, nplan + 2);
    EXPECT_STR(pp_str_text(prof.ops[0].name), "write_input");
    EXPECT_STR(pp_str_text(prof.ops[1].type), "Aggregate");
    EXPECT_STR(pp_str_text(prof.ops[prof.nops - 1].name), "read_output");
    uint64_t hw = 0, xfer = 0;
    int64_t prev_end = prof.dev_start_ns;
    for (size_t i = 0; i < prof.nops; i++) {
        const pp_op_profile *op = &prof.ops[i];
        EXPECT_EQ_I64(op->transfer, i == 0 || i == prof.nops - 1);
        EXPECT_EQ_U64(op->hw_ns, op->real_ns);
        EXPECT(op->start_ns >= prev_end); /* in order */
        prev_end = op->start_ns + (int64_t)op->real_ns;
        hw += op->hw_ns;
        xfer += op->transfer ? op->hw_ns : 0;
    }
    EXPECT_EQ_U64(prof.hw_ns, hw);
    EXPECT_EQ_U64(prof.xfer_ns, xfer);
    EXPECT_EQ_I64(prof.dev_start_ns, prof.ops[0].start_ns);
    EXPECT_EQ_I64(prof.dev_end_ns, prev_end);
    EXPECT(prof.queued_ns <= prof.dev_start_ns);
    EXPECT(prof.queued_ns >= t0 - clk.error_ns);
    EXPECT(prof.dev_end_ns <= t1 + clk.error_ns);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* Level 0 runs plain queues: the request computes but reports no profile. */
static void test_level_0_reports_no_profile(void) {
    pp_workload w;
    pp_workload_init(&w);
    pp_device *d = open_cl();
    int64_t t0, t1;
    pp_compiled *c = run_one(d, &w, 0, &t0, &t1);
    pp_request_profile prof;
    EXPECT_EQ_I64(pp_request_profile_get(pp_compiled_request(c, 0), &prof), PP_OK);
    EXPECT_EQ_U64(prof.nops, 0);
    EXPECT_EQ_U64(prof.hw_ns, 0);
    EXPECT_EQ_I64(prof.queued_ns, 0);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* Eight requests in flight at once, started again from their callbacks,
 * all finish with the right output. The callbacks run on the backend's
 * threads, so they count failures for the main thread to check. */
typedef struct again {
    int left, failed;
    pthread_mutex_t lock;
} again;

static void restart(void *ctx, pp_request *r, int status) {
    again *a = ctx;
    pthread_mutex_lock(&a->lock);
    int go = a->left > 0 ? a->left-- : 0;
    a->failed += status != PP_OK;
    pthread_mutex_unlock(&a->lock);
    if (go && pp_request_start(r, restart, ctx) != PP_OK) {
        pthread_mutex_lock(&a->lock);
        a->failed++;
        pthread_mutex_unlock(&a->lock);
    }
}

static void test_requests_in_flight_restart_from_callbacks(void) {
    pp_workload w;
    pp_workload_init(&w);
    pp_device *d = open_cl();
    pp_compiled *c = NULL;
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 8, &c, NULL), PP_OK);
    again a = {.left = 24, .lock = PTHREAD_MUTEX_INITIALIZER};
    for (int i = 0; i < 8; i++) {
        pp_wl_fill_input(&w, 11, pp_request_input(pp_compiled_request(c, i)));
        EXPECT_EQ_I64(pp_request_start(pp_compiled_request(c, i), restart, &a), PP_OK);
    }
    for (int done = 0; !done;) {
        for (int i = 0; i < 8; i++)
            pp_request_wait(pp_compiled_request(c, i));
        pthread_mutex_lock(&a.lock);
        done = a.left == 0;
        pthread_mutex_unlock(&a.lock);
    }
    for (int i = 0; i < 8; i++)
        pp_request_wait(pp_compiled_request(c, i));
    EXPECT_EQ_I64(a.failed, 0);
    static float x[256 * 64], want[256 * 64];
    pp_wl_fill_input(&w, 11, x);
    reference_matmul_chain(&w, x, want);
    for (int i = 0; i < 8; i++)
        EXPECT(rel_error(pp_request_output(pp_compiled_request(c, i)), want, 256 * 64) < 1e-5);
    pp_compiled_free(c);
    pp_device_close(d);
}

/* The "clock" annotation of the first instant named `name`; its time in *ts. */
static const char *mark_clock_of(const pp_model *m, const char *name, int64_t *ts) {
    size_t count;
    const pp_annotation *a = pp_model_annotations(m, &count);
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        if (e.kind != PP_EV_INSTANT || strcmp(pp_model_string(m, e.name), name) != 0)
            continue;
        *ts = e.ts_ns;
        size_t first, k;
        pp_model_annotations_of(m, i, &first, &k);
        for (size_t j = first; j < first + k; j++)
            if (strcmp(pp_model_string(m, a[j].key), "clock") == 0)
                return pp_model_string(m, a[j].v.s);
    }
    return "(no such mark)";
}

/* A mark placed on an OpenCL stream while its request runs takes the
 * device time at which the run ended: the mapped END of its last command,
 * the request's dev_end_ns. At level 0 the queue keeps no timestamps, and
 * the mark takes host time and says so. */
static void test_mark_takes_the_end_of_the_last_command(void) {
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = 1024, w.in_dim = 256, w.out_dim = 256, w.layers = 3; /* runs for a while */
    pp_device *d = open_cl();
    for (int level = 1; level >= 0; level--) {
        pp_compiled *c = NULL;
        EXPECT_EQ_I64(pp_compiled_create_level(d, &w, 1, level, &c, NULL), PP_OK);
        pp_session_config cfg;
        pp_session_config_init(&cfg);
        pp_session *s = NULL;
        EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
        EXPECT_EQ_I64(pp_session_start(s), PP_OK);
        pp_track t;
        EXPECT_EQ_I64(pp_track_device(s, "opencl:0", 0, "req 0", 0, &t), PP_OK);
        pp_request *r = pp_compiled_request(c, 0);
        EXPECT_EQ_I64(pp_request_start(r, NULL, NULL), PP_OK);
        pp_mark_clock clock = PP_MARK_HOST;
        EXPECT_EQ_I64(pp_request_mark(r, s, t, pp_intern("done"), &clock), PP_OK);
        EXPECT_EQ_I64(clock, PP_MARK_DEVICE);
        int running = pp_request_poll(r) == 0;
        EXPECT(running); /* the mark waited for the run */
        EXPECT_EQ_I64(pp_request_wait(r), PP_OK);
        pp_request_profile prof;
        EXPECT_EQ_I64(pp_request_profile_get(r, &prof), PP_OK);
        EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
        pp_model *m = NULL;
        EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
        int64_t ts = -1;
        const char *how = m ? mark_clock_of(m, "done", &ts) : "";
        if (level == 1) {
            EXPECT_STR(how, "device");
            if (running)
                EXPECT_EQ_I64(ts, prof.dev_end_ns);
        } else {
            EXPECT_STR(how, "host");
        }
        pp_model_free(m);
        pp_session_close(s);
        pp_compiled_free(c);
    }
    pp_device_close(d);
}

static void expect_open_error(const char *spec, int code, const char *msg) {
    pp_device *d = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_device_open(spec, NULL, &d, &err), code);
    EXPECT(d == NULL);
    EXPECT_CONTAINS(err.msg, msg);
}

static void test_bad_specs_say_what_exists(void) {
    expect_open_error("opencl:gpu", PP_EINVAL,
                      "opencl: device \"gpu\": expected a device number (opencl:0; "
                      "`pipeprof devices --backend opencl` lists them)");
    expect_open_error("opencl:999", PP_ENOTFOUND, "opencl: no device 999 (have: 0 (");
}

/* Every device the list names opens, under the track name opencl:N. */
static void on_device(void *ctx, const pp_device_info *info) {
    int *n = ctx;
    EXPECT_STR(info->backend, "opencl");
    char want[32];
    snprintf(want, sizeof want, "opencl:%d", (*n)++);
    EXPECT_STR(info->spec, want);
}

static void test_list_names_what_opens(void) {
    int n = 0;
    EXPECT_EQ_I64(pp_device_list("opencl", NULL, on_device, &n, NULL), PP_OK);
    EXPECT(n >= 1);
    pp_device *d = open_cl();
    EXPECT_STR(pp_device_name(d), "opencl:0");
    pp_device_close(d);
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
    RUN(test_matmul_chain_matches_naive_product);
    RUN(test_sage_layer_matches_naive_definition);
    RUN(test_profile_is_the_commands_device_times);
    RUN(test_level_0_reports_no_profile);
    RUN(test_requests_in_flight_restart_from_callbacks);
    RUN(test_mark_takes_the_end_of_the_last_command);
    RUN(test_bad_specs_say_what_exists);
    RUN(test_list_names_what_opens);
    return pp_test_finish();
}
