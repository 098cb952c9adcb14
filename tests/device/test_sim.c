/* Simulated devices: the latency model's times follow from its parameters
 * (launch, compute, one processor-shared bus, execution units), and in real
 * time two devices transferring at once each take longer than alone by the
 * modeled amount. */
#include <math.h>

#include "device/sim_model.h"
#include "pipeprof/device.h"
#include "testutil.h"

/* 1 byte/ns keeps the arithmetic readable: a transfer of B bytes alone takes
 * B ns. */
#define BUS_1_BYTE_PER_NS 1e9

static pp_sim_job job(pp_sim_unit *u, double launch, double in, double compute, double out) {
    return (pp_sim_job){.unit = u, .launch_ns = launch, .in_bytes = in, .compute_ns = compute,
                        .out_bytes = out};
}

static void run_to_end(pp_sim_sched *s) {
    while (!isinf(pp_sim_sched_next(s)))
        pp_sim_sched_advance(s, pp_sim_sched_next(s));
}

static void test_lone_job_runs_its_phases_back_to_back(void) {
    pp_sim_sched s;
    pp_sim_sched_init(&s, BUS_1_BYTE_PER_NS, 0);
    pp_sim_unit npu = {.units = 1};
    pp_sim_job j = job(&npu, 100, 400, 250, 50);
    pp_sim_sched_add(&s, &j, 10);
    run_to_end(&s);
    EXPECT_NEAR(j.arrive, 10, 1e-6);
    EXPECT_NEAR(j.dev_start, 110, 1e-6);        /* after the launch */
    EXPECT_NEAR(j.in_end, 510, 1e-6);           /* 400 bytes alone on the bus */
    EXPECT_NEAR(j.compute_end, 760, 1e-6);
    EXPECT_NEAR(j.done, 810, 1e-6);
    EXPECT(pp_sim_sched_take_done(&s) == &j);
    EXPECT(pp_sim_sched_take_done(&s) == NULL);
}

/* Two devices start 1000-byte transfers together: each gets half the bus, so
 * each takes 2000 ns, and so do the outputs. */
static void test_simultaneous_transfers_share_the_bus(void) {
    pp_sim_sched s;
    pp_sim_sched_init(&s, BUS_1_BYTE_PER_NS, 0);
    pp_sim_unit npu = {.units = 1}, gpu = {.units = 1};
    pp_sim_job a = job(&npu, 0, 1000, 300, 600), b = job(&gpu, 0, 1000, 300, 600);
    pp_sim_sched_add(&s, &a, 0);
    pp_sim_sched_add(&s, &b, 0);
    run_to_end(&s);
    for (int i = 0; i < 2; i++) {
        const pp_sim_job *j = i ? &b : &a;
        EXPECT_NEAR(j->in_end - j->dev_start, 2000, 1e-6);
        EXPECT_NEAR(j->compute_end - j->in_end, 300, 1e-6);
        EXPECT_NEAR(j->done - j->compute_end, 1200, 1e-6);
    }
}

/* B arrives when A has moved 500 of its 1000 bytes: A's rest takes 1000 ns at
 * half the bus (ends at 1500), by then B moved 500 and finishes its last 500
 * alone (ends at 2000). */
static void test_late_arrival_shares_only_the_overlap(void) {
    pp_sim_sched s;
    pp_sim_sched_init(&s, BUS_1_BYTE_PER_NS, 0);
    pp_sim_unit npu = {.units = 1}, gpu = {.units = 1};
    pp_sim_job a = job(&npu, 0, 1000, 0, 0), b = job(&gpu, 0, 1000, 0, 0);
    pp_sim_sched_add(&s, &a, 0);
    pp_sim_sched_add(&s, &b, 500);
    run_to_end(&s);
    EXPECT_NEAR(a.in_end, 1500, 1e-6);
    EXPECT_NEAR(b.in_end, 2000, 1e-6);
    EXPECT_NEAR(b.in_end - b.dev_start, 1500, 1e-6);
}

/* A one-unit device runs its second request after the first: the wait is not
 * device time (dev_start moves), the device work itself is unchanged. A
 * two-unit device starts both at once. */
static void test_units_limit_requests_in_execution(void) {
    pp_sim_sched s;
    pp_sim_sched_init(&s, BUS_1_BYTE_PER_NS, 0);
    pp_sim_unit one = {.units = 1};
    pp_sim_job a = job(&one, 50, 0, 1000, 0), b = job(&one, 50, 0, 1000, 0);
    pp_sim_sched_add(&s, &a, 0);
    pp_sim_sched_add(&s, &b, 0);
    run_to_end(&s);
    EXPECT_NEAR(a.dev_start, 50, 1e-6);
    EXPECT_NEAR(a.done, 1050, 1e-6);
    EXPECT_NEAR(b.dev_start, 1050, 1e-6);
    EXPECT_NEAR(b.done - b.dev_start, 1000, 1e-6);

    pp_sim_unit two = {.units = 2};
    pp_sim_job c = job(&two, 50, 0, 1000, 0), d = job(&two, 50, 0, 1000, 0);
    pp_sim_sched_add(&s, &c, 3000);
    pp_sim_sched_add(&s, &d, 3000);
    run_to_end(&s);
    EXPECT_NEAR(c.done, 4050, 1e-6);
    EXPECT_NEAR(d.done, 4050, 1e-6);
}

/* Real time: NPU and GPU with negligible compute and a slow bus, so each
 * request is one big input transfer of IN_BYTES. */
enum { NODES = 1000, IN_DIM = 1250, OUT_DIM = 1 };
#define BUS_GBPS 0.1
#define IN_BYTES (4.0 * NODES * IN_DIM)
#define OUT_BYTES (4.0 * NODES * OUT_DIM)
#define ALONE_NS ((IN_BYTES + OUT_BYTES) / BUS_GBPS) /* 50.04 ms */

typedef struct rig {
    pp_device *npu, *gpu;
    pp_compiled *on_npu, *on_gpu;
} rig;

static void rig_open(rig *r) {
    pp_sim_device_params p[2];
    pp_sim_device_defaults("NPU", &p[0]);
    pp_sim_device_defaults("GPU", &p[1]);
    for (int i = 0; i < 2; i++)
        p[i].gflops = 1e6, p[i].launch_ns = 0;
    pp_device_options opt = {.sim_bus_gbps = BUS_GBPS, .nsim = 2, .sim = p};
    pp_workload w;
    pp_workload_init(&w);
    w.nodes = NODES, w.in_dim = IN_DIM, w.out_dim = OUT_DIM;
    EXPECT_EQ_I64(pp_device_open("sim:NPU", &opt, &r->npu, NULL), PP_OK);
    EXPECT_EQ_I64(pp_device_open("sim:GPU", &opt, &r->gpu, NULL), PP_OK);
    EXPECT_EQ_I64(pp_compiled_create(r->npu, &w, 1, &r->on_npu, NULL), PP_OK);
    EXPECT_EQ_I64(pp_compiled_create(r->gpu, &w, 1, &r->on_gpu, NULL), PP_OK);
}

static void rig_close(rig *r) {
    pp_compiled_free(r->on_npu);
    pp_compiled_free(r->on_gpu);
    pp_device_close(r->npu);
    pp_device_close(r->gpu);
}

static void test_modeled_profile_of_a_lone_request(void) {
    rig r;
    rig_open(&r);
    pp_request *q = pp_compiled_request(r.on_npu, 0);
    int64_t t0 = pp_now();
    EXPECT_EQ_I64(pp_request_start(q, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_start(q, NULL, NULL), PP_ESTATE); /* 50 ms to go */
    EXPECT_EQ_I64(pp_request_poll(q), 0);
    EXPECT_EQ_I64(pp_request_wait(q), PP_OK);
    int64_t wall = pp_now() - t0;
    pp_request_profile p;
    EXPECT_EQ_I64(pp_request_profile_get(q, &p), PP_OK);
    EXPECT_NEAR((double)p.xfer_ns, ALONE_NS, 2);
    EXPECT_NEAR((double)p.hw_ns, ALONE_NS, 5); /* compute is 2.5 ns */
    EXPECT(wall >= (int64_t)p.hw_ns);
    EXPECT_EQ_U64(p.nops, 3); /* input, matmul_1, output */
    EXPECT_STR(pp_str_text(p.ops[0].name), "input");
    EXPECT_STR(pp_str_text(p.ops[0].type), "Transfer");
    EXPECT_STR(pp_str_text(p.ops[1].name), "matmul_1");
    EXPECT_STR(pp_str_text(p.ops[2].exec_type), "simulated");
    EXPECT_EQ_U64(p.ops[0].hw_ns + p.ops[1].hw_ns + p.ops[2].hw_ns, p.hw_ns);
    EXPECT_EQ_I64(p.ops[1].start_ns, p.ops[0].start_ns + (int64_t)p.ops[0].real_ns);
    EXPECT(p.ops[0].start_ns >= t0);
    EXPECT(p.ops[2].start_ns + (int64_t)p.ops[2].real_ns <= t0 + wall);
    rig_close(&r);
}

/* Started one after the other, the two transfers reach the bus d ns apart
 * (a few microseconds; more on a loaded machine). The bus is shared for
 * the overlap, so each takes twice as long as alone less d: the first runs
 * alone for d, then both at half rate; the second ends alone for d. The
 * tolerance covers the small output transfers; d comes from the profiles. */
static void test_concurrent_devices_slow_each_other_on_the_bus(void) {
    rig r;
    rig_open(&r);
    pp_request *a = pp_compiled_request(r.on_npu, 0), *b = pp_compiled_request(r.on_gpu, 0);
    int64_t t0 = pp_now();
    EXPECT_EQ_I64(pp_request_start(a, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_start(b, NULL, NULL), PP_OK);
    EXPECT_EQ_I64(pp_request_wait(a), PP_OK);
    EXPECT_EQ_I64(pp_request_wait(b), PP_OK);
    int64_t wall = pp_now() - t0;
    pp_request_profile pa, pb;
    EXPECT_EQ_I64(pp_request_profile_get(a, &pa), PP_OK);
    EXPECT_EQ_I64(pp_request_profile_get(b, &pb), PP_OK);
    double d = fabs((double)(pb.ops[0].start_ns - pa.ops[0].start_ns)); /* the input ops */
    EXPECT(d < 0.5 * ALONE_NS); /* they overlapped for most of their time */
    EXPECT_NEAR((double)pa.xfer_ns, 2 * ALONE_NS - d, 0.01 * ALONE_NS);
    EXPECT_NEAR((double)pb.xfer_ns, 2 * ALONE_NS - d, 0.01 * ALONE_NS);
    /* the bus is work-conserving: both finish once all bytes moved at full rate */
    EXPECT((double)wall >= 2 * ALONE_NS - 1e3);
    rig_close(&r);
}

int main(void) {
    RUN(test_lone_job_runs_its_phases_back_to_back);
    RUN(test_simultaneous_transfers_share_the_bus);
    RUN(test_late_arrival_shares_only_the_overlap);
    RUN(test_units_limit_requests_in_execution);
    RUN(test_modeled_profile_of_a_lone_request);
    RUN(test_concurrent_devices_slow_each_other_on_the_bus);
    return pp_test_finish();
}
