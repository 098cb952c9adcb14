/* What a pipeline records follows the session's collection settings: each
 * collect bit adds exactly its kind of data, the devices setting leaves other
 * devices out, and host API calls appear as spans on the calling threads.
 * The demo pipeline runs GraphPrep on cpu, Embedding on cpu + simulated NPU
 * and Classifier on a simulated GPU (two requests). */
#include "pipeprof/pipeline.h"
#include "recorded.h"
#include "testutil.h"

#define BATCHES 3

typedef struct counts {
    size_t execs, stages, ops, transfer_ops, api_start, api_wait;
    size_t execs_on[3]; /* CPU, NPU, GPU */
    uint64_t hw, xfer;
} counts;

static counts run_with(unsigned collect, const char *devices) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    cfg.collect = collect;
    cfg.devices = devices;
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_pipeline *p = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_pipeline_demo(&p, &err), PP_OK);
    pp_run_options opt = {.batches = BATCHES, .warmup = 0};
    EXPECT_EQ_I64(pp_pipeline_run(p, s, &opt, NULL, &err), PP_OK);
    pp_model *m = recorded_model(s);
    counts c = {0};
    static const char *const devs[3] = {"CPU", "NPU", "GPU"};
    for (size_t i = 0; i < pp_model_event_count(m); i++) {
        pp_event e;
        pp_model_event(m, i, &e);
        if (e.kind != PP_EV_SPAN)
            continue;
        const char *name = pp_model_string(m, e.name);
        const pp_track_info *t = pp_model_track(m, e.track);
        if (e.role == PP_ROLE_EXEC) {
            c.execs++;
            for (int d = 0; d < 3; d++)
                c.execs_on[d] += strcmp(pp_model_string(m, t->device), devs[d]) == 0;
            c.hw += e.hw_ns;
            c.xfer += e.xfer_ns;
        } else if (e.role == PP_ROLE_STAGE) {
            c.stages++;
        } else if (e.role == PP_ROLE_OP) {
            c.ops++;
            c.transfer_ops += e.xfer_ns > 0;
        } else if (e.role == PP_ROLE_USER && t->kind == PP_TRACK_KIND_THREAD) {
            c.api_start += strcmp(name, "start_async") == 0;
            c.api_wait += strcmp(name, "wait") == 0;
        }
    }
    pp_model_free(m);
    pp_pipeline_free(p);
    pp_session_close(s);
    return c;
}

/* Per batch: GraphPrep 1 exec (cpu), Embedding 2 (cpu, NPU), Classifier 2
 * (its two GPU requests each run a share of the batch): 5 execs. */
static void test_spans_alone_are_wall_times_only(void) {
    counts c = run_with(PP_COLLECT_SPANS, NULL);
    EXPECT_EQ_U64(c.execs, 5 * BATCHES);
    EXPECT_EQ_U64(c.stages, 3 * BATCHES);
    EXPECT_EQ_U64(c.hw, 0);
    EXPECT_EQ_U64(c.xfer, 0);
    EXPECT_EQ_U64(c.ops, 0);
    EXPECT_EQ_U64(c.api_start, 0);
}

static void test_each_bit_adds_its_data(void) {
    counts hw = run_with(PP_COLLECT_SPANS | PP_COLLECT_HW, NULL);
    EXPECT(hw.hw > 0);
    EXPECT_EQ_U64(hw.xfer, 0); /* transfers not asked for */
    counts x = run_with(PP_COLLECT_SPANS | PP_COLLECT_HW | PP_COLLECT_TRANSFERS, NULL);
    EXPECT(x.xfer > 0);
    EXPECT_EQ_U64(x.ops, 0);
    counts ops = run_with(PP_COLLECT_OPS, NULL); /* ops alone: no exec or stage spans */
    EXPECT_EQ_U64(ops.execs, 0);
    EXPECT_EQ_U64(ops.stages, 0);
    EXPECT(ops.ops > 0);
    EXPECT_EQ_U64(ops.transfer_ops, 0); /* the copies are transfers: left out */
    counts all = run_with(PP_COLLECT_SPANS | PP_COLLECT_OPS | PP_COLLECT_TRANSFERS, NULL);
    EXPECT(all.transfer_ops > 0);
    EXPECT_EQ_U64(all.ops, ops.ops + all.transfer_ops);
}

/* One start_async span per exec, on host threads; waits too. A stage
 * waits for each of its devices in turn every batch (stage.c), and a wait
 * is recorded where that device still had requests in flight (executor.c):
 * at most one per device of a stage and batch (the demo's stages run on
 * 1, 2 and 1 devices), none where they had all finished first (a loaded
 * machine, a quick cpu exec), and some where the simulated NPU and GPU
 * requests, which run for a modeled time after their start, are still
 * running. */
static void test_api_calls_are_spans_on_host_threads(void) {
    counts c = run_with(PP_COLLECT_SPANS | PP_COLLECT_API, NULL);
    EXPECT_EQ_U64(c.api_start, 5 * BATCHES);
    EXPECT(c.api_wait > 0);
    EXPECT(c.api_wait <= 4 * BATCHES);
}

static void test_devices_setting_leaves_other_devices_out(void) {
    counts c = run_with(PP_COLLECT_SPANS, "NPU,GPU");
    EXPECT_EQ_U64(c.execs_on[0], 0);
    EXPECT_EQ_U64(c.execs_on[1], BATCHES);
    EXPECT_EQ_U64(c.execs_on[2], 2 * BATCHES);
    EXPECT_EQ_U64(c.stages, 3 * BATCHES); /* host stage spans stay */
}

int main(void) {
    RUN(test_spans_alone_are_wall_times_only);
    RUN(test_each_bit_adds_its_data);
    RUN(test_api_calls_are_spans_on_host_threads);
    RUN(test_devices_setting_leaves_other_devices_out);
    return pp_test_finish();
}
