/* Merging traces (pp_model_align, pp_model_merge): the processes of one
 * pipeline end up on one clock, each with its own tracks, and a batch that
 * crosses from one process to the other stays one batch. Every expected
 * figure below follows from the events the test builds. */
#include <stdlib.h>
#include <string.h>

#include "analyze/builder.h"
#include "pipeprof/merge.h"
#include "testutil.h"

/* A trace "recorded" on `boot` (NULL: no clock recorded, a foreign trace). */
static pp_model *trace_on(const char *boot, const char *host) {
    pp_model *m = NULL;
    if (pp_model_create(&m) != PP_OK)
        abort();
    pp_model_meta *meta = pp_model_meta_mut(m);
    if (boot) {
        meta->clock = b_str(m, "CLOCK_MONOTONIC");
        meta->boot_id = b_str(m, boot);
        meta->host = b_str(m, host);
    }
    return m;
}

static void flow(pp_model *m, uint32_t track, uint64_t id, int64_t ts, pp_flow_phase phase) {
    pp_event e;
    pp_event_init(&e);
    e.kind = PP_EV_FLOW;
    e.track = track;
    e.name = b_str(m, "batch");
    e.id = id;
    e.phase = (uint8_t)phase;
    e.ts_ns = ts;
    if (pp_model_add_event(m, &e) != PP_OK)
        abort();
}

#define D 1234567890 /* the consumer's clock is D ns behind the producer's */

/* The consumer's sync marks are recorded D ns earlier on its clock, give or
 * take a jitter: the pair estimates are D - jitter = D-300, D+200, D-100,
 * D+400, so the offset is their midpoint D+50 and the error bound half their
 * spread, 350: the true D lies within it. */
static void test_known_offset_recovered_from_sync_marks(void) {
    static const int64_t jitter[] = {300, -200, 100, -400};
    pp_model *a = trace_on("boot-a", "host-a"), *b = trace_on("boot-b", "host-b");
    uint32_t ta = b_thread(a, "main"), tb = b_thread(b, "main");
    for (int k = 0; k < 4; k++) {
        int64_t t = 5000000000 + k * 1000000;
        b_instant(a, ta, "sync", t);
        b_instant(b, tb, "sync", t - D + jitter[k]);
    }
    pp_merge_input in[] = {{a, "a", 0, 0}, {b, "b", 0, 0}};
    pp_alignment al[2];
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_model_align(in, 2, NULL, al, &err), PP_OK);
    EXPECT_EQ_I64(al[0].method, PP_ALIGN_REFERENCE);
    EXPECT_EQ_I64(al[1].method, PP_ALIGN_SYNC);
    EXPECT_EQ_I64(al[1].pairs, 4);
    EXPECT_EQ_I64(al[1].offset_ns, D + 50);
    EXPECT_EQ_I64(al[1].error_ns, 350);
    EXPECT(llabs(al[1].offset_ns - D) <= al[1].error_ns);

    pp_model *m = NULL;
    EXPECT_EQ_I64(pp_model_merge(in, 2, NULL, &m, &err), PP_OK);
    if (m) {
        const pp_model_meta *meta = pp_model_meta_get(m);
        EXPECT_CONTAINS(pp_model_string(m, meta->alignment),
                        "b: 4 sync mark pairs with a, offset +1234567.940 us, error <= 0.350 us");
        EXPECT_EQ_I64(meta->alignment_error_ns, 350);
        EXPECT_STR(pp_model_string(m, meta->boot_id), "boot-a"); /* the reference's clock */
    }
    pp_model_free(m);
    pp_model_free(a);
    pp_model_free(b);
}

/* One sync pair gives an offset but cannot show its own error. */
static void test_single_sync_pair_has_unknown_error(void) {
    pp_model *a = trace_on("boot-a", "h"), *b = trace_on("boot-b", "h");
    b_instant(a, b_thread(a, "main"), "handshake", 900);
    b_instant(b, b_thread(b, "main"), "handshake", 100);
    pp_merge_input in[] = {{a, "a", 0, 0}, {b, "b", 0, 0}};
    pp_merge_options o = {.sync_name = "handshake"};
    pp_alignment al[2];
    EXPECT_EQ_I64(pp_model_align(in, 2, &o, al, NULL), PP_OK);
    EXPECT_EQ_I64(al[1].offset_ns, 800);
    EXPECT_EQ_I64(al[1].error_ns, -1);
    pp_model_free(a);
    pp_model_free(b);
}

/* Same clock name on the same boot: one timeline, nothing to compute; an
 * offset the user gives still wins. */
static void test_same_boot_shares_the_clock_and_offsets_win(void) {
    pp_model *a = trace_on("boot-1", "h"), *b = trace_on("boot-1", "h");
    pp_merge_input in[] = {{a, "a", 0, 0}, {b, "b", 0, 0}};
    pp_alignment al[2];
    EXPECT_EQ_I64(pp_model_align(in, 2, NULL, al, NULL), PP_OK);
    EXPECT_EQ_I64(al[1].method, PP_ALIGN_SAME_CLOCK);
    EXPECT_EQ_I64(al[1].offset_ns, 0);
    EXPECT_EQ_I64(al[1].error_ns, 0);
    in[1].has_offset = 1;
    in[1].offset_ns = -2500;
    EXPECT_EQ_I64(pp_model_align(in, 2, NULL, al, NULL), PP_OK);
    EXPECT_EQ_I64(al[1].method, PP_ALIGN_OFFSET);
    EXPECT_EQ_I64(al[1].offset_ns, -2500);
    EXPECT_EQ_I64(al[1].error_ns, -1);
    pp_model_free(a);
    pp_model_free(b);
}

/* No common clock, no offset, no sync mark: refused, saying why and what to
 * do. */
static void test_no_common_clock_is_refused(void) {
    pp_model *a = trace_on("boot-a", "alpha"), *b = trace_on("boot-b", "beta");
    pp_model *foreign = trace_on(NULL, NULL);
    b_instant(a, b_thread(a, "main"), "sync", 10); /* only one side has the mark */
    pp_merge_input in[] = {{a, "a.pptrace", 0, 0}, {b, "b.pptrace", 0, 0}};
    pp_alignment al[2];
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_model_merge(in, 2, NULL, &m, &err), PP_EINVAL);
    EXPECT(m == NULL);
    EXPECT_CONTAINS(err.msg, "a.pptrace and b.pptrace have no common clock: they were recorded "
                             "on different hosts (alpha and beta), no offset was given for "
                             "b.pptrace, and no sync mark \"sync\" is in both");
    EXPECT_CONTAINS(err.msg, "--offset b.pptrace=+12.5us");
    in[1].model = foreign;
    in[1].name = "kineto.json";
    EXPECT_EQ_I64(pp_model_align(in, 2, NULL, al, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "kineto.json does not say which clock it was recorded with");
    pp_model_free(a);
    pp_model_free(b);
    pp_model_free(foreign);
}

/* A producer process (stage Prepare on its host thread) and a consumer
 * process (stage Infer on a device), both pid 7 (pids of two hosts may
 * collide), 100 ns apart by their clocks: batch b is prepared at
 * [b*1000, b*1000+400) on the producer's clock and inferred at
 * [b*1000+500, b*1000+900) on the producer's clock, which the consumer
 * recorded 100 ns earlier. Merged, each batch has both stages, its cycle is
 * the longer stage (400), and its end-to-end latency spans both processes
 * (900). The flow of each batch, begun in one process and ended in the
 * other, stays one flow. */
static void test_batches_cross_processes(void) {
    pp_model *p = trace_on("boot-p", "hp"), *c = trace_on("boot-c", "hc");
    uint32_t tp = b_thread(p, "producer"), tc = b_device(c, "NPU", 0, 0);
    pp_model_track_mut(p, tp)->pid = 7;
    pp_model_track_mut(c, tc)->pid = 7;
    for (int64_t b = 0; b < 3; b++) {
        b_span(p, tp, PP_ROLE_STAGE, "prepare", "Prepare", b, b * 1000, b * 1000 + 400, 0, 0);
        flow(p, tp, (uint64_t)b + 1, b * 1000, PP_FLOW_BEGIN);
        b_exec(c, tc, "Infer", b, b * 1000 + 400, b * 1000 + 800, 400, 0);
        flow(c, tc, (uint64_t)b + 1, b * 1000 + 400, PP_FLOW_BEGIN); /* its own begin */
        flow(c, tc, (uint64_t)b + 1, b * 1000 + 450, PP_FLOW_END);
    }
    pp_merge_input in[] = {{p, "producer", 0, 0}, {c, "consumer", 1, 100}};
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_model_merge(in, 2, NULL, &m, &err), PP_OK);
    if (!m)
        return;
    EXPECT_EQ_U64(pp_model_track_count(m), 2);
    const pp_track_info *t0 = pp_model_track(m, 0), *t1 = pp_model_track(m, 1);
    EXPECT(t0->pid != t1->pid);
    EXPECT_STR(pp_model_string(m, t0->name), "producer");
    EXPECT_STR(pp_model_string(m, t1->device), "NPU");

    /* flows: per id, begin in the producer, a step, end in the consumer */
    pp_event_columns col;
    pp_model_columns(m, &col);
    int begins = 0, steps = 0, ends = 0;
    for (size_t i = 0; i < col.count; i++) {
        if (col.kind[i] != PP_EV_FLOW)
            continue;
        begins += col.phase[i] == PP_FLOW_BEGIN && col.track[i] == 0;
        steps += col.phase[i] == PP_FLOW_STEP && col.track[i] == 1;
        ends += col.phase[i] == PP_FLOW_END && col.track[i] == 1;
    }
    EXPECT_EQ_I64(begins, 3);
    EXPECT_EQ_I64(steps, 3);
    EXPECT_EQ_I64(ends, 3);

    pp_report *r = NULL;
    EXPECT_EQ_I64(pp_report_build(m, NULL, &r, &err), PP_OK);
    if (r) {
        size_t ns = 0, nb = 0;
        const pp_stage_stats *st = pp_report_stages(r, &ns);
        const pp_batch_stats *bs = pp_report_batches(r, &nb);
        EXPECT_EQ_U64(ns, 2);
        if (ns == 2) {
            EXPECT_STR(st[0].name, "Prepare");
            EXPECT_STR(st[1].name, "Infer");
        }
        EXPECT_EQ_U64(nb, 3);
        for (size_t i = 0; i < nb; i++) {
            EXPECT(bs[i].complete);
            EXPECT_EQ_I64(bs[i].cycle_ns, 400);
            EXPECT_EQ_I64(bs[i].e2e_ns, 900);
        }
    }
    pp_report_free(r);
    pp_model_free(m);
    pp_model_free(p);
    pp_model_free(c);
}

/* Two processes with a device GPU.0 each, execs [0, 100) and [50, 150):
 * recorded on one host they share one GPU (one device, busy for the union
 * of their execs, the second process's group labeled with its name);
 * recorded on two hosts they are two GPUs, each named with its host. */
static void test_one_device_name_on_two_hosts_is_two_devices(void) {
    for (int two_hosts = 0; two_hosts < 2; two_hosts++) {
        pp_model *a = trace_on("boot-a", "alpha");
        pp_model *b = two_hosts ? trace_on("boot-b", "beta") : trace_on("boot-a", "alpha");
        pp_model_meta_mut(a)->process_name = b_str(a, "producer");
        pp_model_meta_mut(b)->process_name = b_str(b, "consumer");
        b_exec(a, b_device(a, "GPU.0", 0, 0), "Infer", 0, 0, 100, 100, 0);
        b_exec(b, b_device(b, "GPU.0", 0, 0), "Infer", 1, 50, 150, 100, 0);
        pp_merge_input in[] = {{a, "a", 0, 0}, {b, "b", 1, 0}};
        pp_model *m = NULL;
        pp_error err = {{0}};
        EXPECT_EQ_I64(pp_model_merge(in, 2, NULL, &m, &err), PP_OK);
        pp_report *r = NULL;
        if (m)
            EXPECT_EQ_I64(pp_report_build(m, NULL, &r, &err), PP_OK);
        if (!r) {
            pp_model_free(m);
            continue;
        }
        const pp_track_info *t0 = pp_model_track(m, 0), *t1 = pp_model_track(m, 1);
        size_t nd = 0;
        const pp_device_stats *d = pp_report_devices(r, &nd);
        if (two_hosts) {
            EXPECT_STR(pp_model_string(m, t0->process), "GPU.0@alpha");
            EXPECT_STR(pp_model_string(m, t1->process), "GPU.0@beta");
            EXPECT_EQ_U64(nd, 2);
            for (size_t i = 0; i < nd; i++) {
                EXPECT_STR(d[i].name, i == 0 ? "GPU.0@alpha" : "GPU.0@beta");
                EXPECT_EQ_I64(d[i].busy_ns, 100);
            }
        } else {
            EXPECT_STR(pp_model_string(m, t0->process), "GPU.0");
            EXPECT_STR(pp_model_string(m, t1->process), "GPU.0 (consumer)");
            EXPECT_STR(pp_model_string(m, t1->device), "GPU.0");
            EXPECT_EQ_U64(nd, 1);
            if (nd == 1)
                EXPECT_EQ_I64(d[0].busy_ns, 150);
        }
        pp_report_free(r);
        pp_model_free(m);
        pp_model_free(a);
        pp_model_free(b);
    }
}

/* An offset that moves events past the time range is refused, naming the
 * input. */
static void test_offset_out_of_range_is_refused(void) {
    pp_model *a = trace_on("x", "h"), *b = trace_on("y", "h");
    b_span(b, b_thread(b, "main"), PP_ROLE_USER, "late", NULL, -1, INT64_MAX - 10, INT64_MAX - 5,
           0, 0);
    pp_merge_input in[] = {{a, "a", 0, 0}, {b, "b.json", 1, 100}};
    pp_model *m = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_model_merge(in, 2, NULL, &m, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "b.json: its offset +100 ns moves its events out of the time range");
    pp_model_free(a);
    pp_model_free(b);
}

int main(void) {
    RUN(test_known_offset_recovered_from_sync_marks);
    RUN(test_single_sync_pair_has_unknown_error);
    RUN(test_same_boot_shares_the_clock_and_offsets_win);
    RUN(test_no_common_clock_is_refused);
    RUN(test_batches_cross_processes);
    RUN(test_one_device_name_on_two_hosts_is_two_devices);
    RUN(test_offset_out_of_range_is_refused);
    return pp_test_finish();
}
