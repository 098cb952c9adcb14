/* Marks on a device stream: on a simulated device a mark placed while a
 * request runs takes the device time at which that run ends (its output
 * transfer's end in the model, which is also where its last op ends), and
 * one placed on an idle stream is reached at once; a backend that cannot
 * timestamp on the device (cpu) records host time and says so. */
#include "pipeprof/device.h"
#include "pipeprof/model.h"
#include "testutil.h"

typedef struct found {
    int64_t ts;
    const char *clock;
} found;

/* The n-th instant named `name` and its "clock" annotation. */
static found find_mark(const pp_model *m, const char *name, int n) {
    size_t count;
    const pp_annotation *a = pp_model_annotations(m, &count);
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        if (e.kind != PP_EV_INSTANT || strcmp(pp_model_string(m, e.name), name) != 0 || n-- > 0)
            continue;
        found f = {e.ts_ns, ""};
        size_t first, k;
        pp_model_annotations_of(m, i, &first, &k);
        for (size_t j = first; j < first + k; j++)
            if (strcmp(pp_model_string(m, a[j].key), "clock") == 0)
                f.clock = pp_model_string(m, a[j].v.s);
        return f;
    }
    return (found){-1, "(no such mark)"};
}

static pp_session *started_session(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    return s;
}

static void test_sim_mark_takes_the_device_end_of_the_run_in_flight(void) {
    pp_device *d = NULL;
    pp_compiled *c = NULL;
    pp_workload w;
    pp_workload_init(&w);
    /* a launch of 300 ms: the run is still in flight while the test marks it */
    static const pp_sim_device_params slow = {.name = "SLOW", .launch_ns = 300000000,
                                              .gflops = 100, .units = 1};
    pp_device_options opt = {.nsim = 1, .sim = &slow};
    EXPECT_EQ_I64(pp_device_open("sim:SLOW", &opt, &d, NULL), PP_OK);
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 1, &c, NULL), PP_OK);
    pp_session *s = started_session();
    pp_track t;
    pp_track_device(s, "SLOW", 0, "req 0", PP_TRACK_SIMULATED, &t);
    pp_request *r = pp_compiled_request(c, 0);

    int64_t before_idle = pp_now();
    pp_mark_clock clock = PP_MARK_HOST;
    EXPECT_EQ_I64(pp_request_mark(r, s, t, pp_intern("idle"), &clock), PP_OK);
    int64_t after_idle = pp_now();
    EXPECT_EQ_I64(clock, PP_MARK_DEVICE);

    EXPECT_EQ_I64(pp_request_start(r, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_mark(r, s, t, pp_intern("after run"), &clock), PP_OK);
    EXPECT_EQ_I64(pp_request_mark(r, s, t, pp_intern("after run 2"), NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_poll(r), 0); /* still running: both marks wait for it */
    EXPECT_EQ_I64(pp_request_wait(r), PP_OK);
    pp_request_profile prof;
    EXPECT_EQ_I64(pp_request_profile_get(r, &prof), PP_OK);
    const pp_op_profile *last = &prof.ops[prof.nops - 1];
    int64_t device_end = last->start_ns + (int64_t)last->real_ns;
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);

    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    found idle = find_mark(m, "idle", 0), run = find_mark(m, "after run", 0),
          run2 = find_mark(m, "after run 2", 0);
    EXPECT(idle.ts >= before_idle && idle.ts <= after_idle);
    EXPECT_STR(idle.clock, "device");
    EXPECT_EQ_I64(run.ts, device_end);
    EXPECT_STR(run.clock, "device");
    EXPECT_EQ_I64(run2.ts, device_end);
    pp_model_free(m);
    pp_session_close(s);
    pp_compiled_free(c);
    pp_device_close(d);
}

static void test_cpu_mark_falls_back_to_host_time_and_says_so(void) {
    pp_device *d = NULL;
    pp_compiled *c = NULL;
    pp_workload w;
    pp_workload_init(&w);
    EXPECT_EQ_I64(pp_device_open("cpu", NULL, &d, NULL), PP_OK);
    EXPECT_EQ_I64(pp_compiled_create(d, &w, 1, &c, NULL), PP_OK);
    pp_session *s = started_session();
    pp_track t;
    pp_track_device(s, "CPU", 0, "req 0", 0, &t);
    pp_request *r = pp_compiled_request(c, 0);
    EXPECT_EQ_I64(pp_request_start(r, NULL, NULL), PP_OK);
    pp_mark_clock clock = PP_MARK_DEVICE;
    int64_t before = pp_now();
    EXPECT_EQ_I64(pp_request_mark(r, s, t, pp_intern("host mark"), &clock), PP_OK);
    int64_t after = pp_now();
    EXPECT_EQ_I64(clock, PP_MARK_HOST);
    EXPECT_EQ_I64(pp_request_wait(r), PP_OK);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_from_session(s, &m), PP_OK);
    found f = find_mark(m, "host mark", 0);
    EXPECT(f.ts >= before && f.ts <= after);
    EXPECT_STR(f.clock, "host");
    pp_model_free(m);
    pp_session_close(s);
    pp_compiled_free(c);
    pp_device_close(d);
}

int main(void) {
    RUN(test_sim_mark_takes_the_device_end_of_the_run_in_flight);
    RUN(test_cpu_mark_falls_back_to_host_time_and_says_so);
    return pp_test_finish();
}
