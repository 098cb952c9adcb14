/* Ops inside host stages: the spans nested in a stage instance on its own
 * thread, by name, with count, total and self time, from the
 * construction. */
#include "builder.h"

/* Host stage "P" on thread "main", [0, 100) of each 1000 ns batch, holds
 * aten::linear [10, 60) with aten::addmm [20, 50) inside it, and aten::relu
 * [70, 90); an aten::relu outside every stage instance [200, 210) belongs
 * to no stage. Per batch: linear total 50 self 20, addmm 30 / 30, relu
 * 20 / 20. */
static void test_nested_spans_give_total_and_self_time(void) {
    enum { N = 3 };
    pp_model *m = b_model();
    uint32_t t = b_thread(m, "main");
    for (int64_t b = 0; b < N; b++) {
        int64_t o = 1000 * b;
        b_span(m, t, PP_ROLE_STAGE, "P", "P", b, o, o + 100, 0, 0);
        b_span(m, t, PP_ROLE_NONE, "aten::linear", NULL, -1, o + 10, o + 60, 0, 0);
        b_span(m, t, PP_ROLE_NONE, "aten::addmm", NULL, -1, o + 20, o + 50, 0, 0);
        b_span(m, t, PP_ROLE_USER, "aten::relu", NULL, -1, o + 70, o + 90, 0, 0);
        b_span(m, t, PP_ROLE_NONE, "aten::relu", NULL, -1, o + 200, o + 210, 0, 0);
    }
    pp_report *r = b_report(m, NULL);
    size_t n;
    const pp_stage_op_stats *v = pp_report_stage_ops(r, &n);
    EXPECT_EQ_U64(n, 3);
    /* by self time: addmm 30, then linear and relu 20 each (by name) */
    const char *names[3] = {"aten::addmm", "aten::linear", "aten::relu"};
    const int64_t total[3] = {30, 50, 20}, self[3] = {30, 20, 20};
    for (size_t i = 0; i < n && i < 3; i++) {
        EXPECT_EQ_U64(v[i].stage, 0);
        EXPECT_STR(v[i].name, names[i]);
        EXPECT_EQ_U64(v[i].count, N);
        EXPECT_EQ_I64(v[i].total_ns, N * total[i]);
        EXPECT_EQ_I64(v[i].self_ns, N * self[i]);
    }
    char *csv = b_csv(r, "stage_ops", "stage_ops.csv");
    if (csv) {
        EXPECT_CONTAINS(csv, "stage,name,count,total_ns,self_ns\n");
        EXPECT_CONTAINS(csv, "\"P\",\"aten::linear\",3,150,60\n");
        free(csv);
    }
    pp_report_free(r);
    pp_model_free(m);
}

/* Device work has no host stage to look inside: the table is empty. */
static void test_no_host_work_no_stage_ops(void) {
    pp_model *m = b_model();
    uint32_t gpu = b_device(m, "GPU", 0, 0);
    b_exec(m, gpu, "A", 0, 0, 100, 0, 0);
    pp_report *r = b_report(m, NULL);
    size_t n;
    pp_report_stage_ops(r, &n);
    EXPECT_EQ_U64(n, 0);
    pp_report_free(r);
    pp_model_free(m);
}

int main(void) {
    RUN(test_nested_spans_give_total_and_self_time);
    RUN(test_no_host_work_no_stage_ops);
    return pp_test_finish();
}
