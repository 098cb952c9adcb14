/* A plan as the what-if simulation's description of costs (pp_plan_costs):
 * the stages, devices, shares and times the plan says, and devices that
 * stages share taking turns. Figures follow from the plan built here. */
#include <math.h>
#include <string.h>

#include "pipeprof/sweep.h"
#include "pipeprof/whatif.h"
#include "testutil.h"

#define MS 1e6

/* A on sim:X, 2 ms; B data parallel over sim:X (1 ms) and sim:Y (1.5 ms)
 * at 0.5 / 0.5 with 0.1 ms partition and merge: 1.7 ms. X works 3 ms a
 * batch: taking turns there sets the period. */
static pp_plan two_stages(void) {
    pp_plan p;
    memset(&p, 0, sizeof p);
    p.nstages = 2;
    pp_plan_stage *a = &p.stages[0], *b = &p.stages[1];
    snprintf(a->stage, sizeof a->stage, "A");
    a->ndevices = 1;
    snprintf(a->devices[0], sizeof a->devices[0], "sim:X");
    a->split[0] = 1, a->device_ns[0] = (int64_t)(2 * MS), a->time_ns = a->device_ns[0];
    snprintf(b->stage, sizeof b->stage, "B");
    b->ndevices = 2;
    snprintf(b->devices[0], sizeof b->devices[0], "sim:X");
    snprintf(b->devices[1], sizeof b->devices[1], "sim:Y");
    b->split[0] = b->split[1] = 0.5;
    b->device_ns[0] = (int64_t)(1 * MS), b->device_ns[1] = (int64_t)(1.5 * MS);
    b->partition_ns = b->merge_ns = (int64_t)(0.1 * MS);
    b->time_ns = (int64_t)(1.7 * MS);
    return p;
}

static void test_plan_costs_structure(void) {
    pp_plan plan = two_stages();
    pp_whatif_costs *c = NULL;
    pp_error err = {{0}};
    EXPECT(pp_plan_costs(&plan, NULL, &c, &err) == PP_OK);
    if (!c)
        return;
    EXPECT_EQ_U64(c->nstages, 2);
    EXPECT_EQ_U64(c->ndevices, 2);
    EXPECT(c->exclusive);
    EXPECT_EQ_U64(c->queue_depth, 2);
    EXPECT_STR(c->stages[1].parts[1].device, "sim:Y");
    EXPECT_NEAR(c->stages[1].parts[0].share, 0.5, 1e-12);
    EXPECT_EQ_I64(c->stages[1].partition_ns[3], (int64_t)(0.1 * MS));
    EXPECT_EQ_I64(c->stages[0].parts[0].wall_ns[5], (int64_t)(2 * MS)); /* no spread */
    EXPECT_EQ_U64(c->ngroups, 1);
    EXPECT_STR(c->groups[0].device, "sim:X");
    pp_whatif_costs_free(c);
}

/* X takes turns: 2 + 1 ms a batch, 333/s; without turns A's 2 ms would
 * set it (500/s); A twice as fast: X 1 + 1 ms and B 1.7 ms, so X's 2 ms.
 * The simulation serves an exclusive device in batch order (a later
 * batch's part never overtakes an earlier one's), which leaves X idle
 * for B's 0.1 ms partition each batch: 3.1 and 2.1 ms, within 5%. */
static void test_plan_simulated(void) {
    pp_plan plan = two_stages();
    pp_whatif_costs *c = NULL;
    pp_error err = {{0}};
    EXPECT(pp_plan_costs(&plan, NULL, &c, &err) == PP_OK);
    if (!c)
        return;
    pp_whatif_figures f;
    EXPECT(pp_whatif_simulate(c, NULL, 0, 1, 4000, &f, &err) == PP_OK);
    printf("plan simulated: %.1f/s (X taking turns: 333.3/s)\n", f.throughput_per_s);
    EXPECT_NEAR(f.throughput_per_s, 1e9 / (3 * MS), 1e9 / (3 * MS) * 0.05);
    pp_whatif_change ch;
    EXPECT(pp_whatif_change_parse("speedup", "A=2", &ch, &err) == PP_OK);
    EXPECT(pp_whatif_simulate(c, &ch, 1, 1, 4000, &f, &err) == PP_OK);
    EXPECT_NEAR(f.throughput_per_s, 1e9 / (2 * MS), 1e9 / (2 * MS) * 0.05);
    c->exclusive = 0; /* no turns: A alone sets it, exactly */
    EXPECT(pp_whatif_simulate(c, NULL, 0, 1, 4000, &f, &err) == PP_OK);
    EXPECT_NEAR(f.throughput_per_s, 1e9 / (2 * MS), 1e9 / (2 * MS) * 0.002);
    c->exclusive = 1;
    /* nothing measured: the replay is not checked, and says why */
    pp_whatif_replay rp;
    EXPECT(pp_whatif_predict(c, NULL, NULL, 0, NULL, &rp, NULL, &err) == PP_OK);
    EXPECT(!rp.refused && isnan(rp.error));
    EXPECT_CONTAINS(rp.reason, "no measurement to replay");
    pp_whatif_costs_free(c);
}

int main(void) {
    RUN(test_plan_costs_structure);
    RUN(test_plan_simulated);
    return pp_test_finish();
}
