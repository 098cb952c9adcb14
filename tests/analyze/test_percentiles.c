/* Nearest-rank percentiles in integer arithmetic: the value at rank
 * ceil(q * n / 100000), q in thousandths of a percent. */
#include "builder.h"

static void test_one_to_hundred(void) {
    int64_t v[100];
    for (int i = 0; i < 100; i++)
        v[i] = 100 - i; /* unsorted on purpose */
    pp_summary s;
    pp_summary_compute(v, 100, &s);
    EXPECT_EQ_I64(s.min, 1);
    EXPECT_EQ_I64(s.max, 100);
    EXPECT_EQ_I64(s.total, 5050);
    EXPECT_EQ_I64(s.mean, 50); /* floor(50.5) */
    EXPECT_EQ_I64(s.p50, 50);
    EXPECT_EQ_I64(s.p90, 90);
    EXPECT_EQ_I64(s.p95, 95);
    EXPECT_EQ_I64(s.p97, 97);
    EXPECT_EQ_I64(s.p99, 99);
    EXPECT_EQ_I64(s.p999, 100); /* rank ceil(99.9) = 100 */
}

static void test_single_value(void) {
    int64_t v[1] = {42};
    pp_summary s;
    pp_summary_compute(v, 1, &s);
    EXPECT_EQ_I64(s.min, 42);
    EXPECT_EQ_I64(s.p50, 42);
    EXPECT_EQ_I64(s.p999, 42);
    EXPECT_EQ_I64(s.max, 42);
}

/* n = 7: p50 is rank ceil(3.5) = 4, p25 rank ceil(1.75) = 2, p90 rank 7. */
static void test_seven_values(void) {
    int64_t v[7] = {10, 20, 30, 40, 50, 60, 70};
    EXPECT_EQ_I64(pp_percentile(v, 7, 50000), 40);
    EXPECT_EQ_I64(pp_percentile(v, 7, 25000), 20);
    EXPECT_EQ_I64(pp_percentile(v, 7, 90000), 70);
    EXPECT_EQ_I64(pp_percentile(v, 7, 0), 10); /* rank 0 is taken as 1 */
    EXPECT_EQ_I64(pp_percentile(v, 7, 100000), 70);
}

/* p99.9 of 1000 values is exactly the 999th, where a floating-point rank
 * could land on the 1000th. */
static void test_p999_of_thousand(void) {
    static int64_t v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = i + 1;
    EXPECT_EQ_I64(pp_percentile(v, 1000, 99900), 999);
}

static void test_empty_set(void) {
    pp_summary s;
    pp_summary_compute(NULL, 0, &s);
    EXPECT_EQ_U64(s.n, 0);
    EXPECT_EQ_I64(s.max, 0);
    EXPECT_EQ_I64(pp_percentile(NULL, 0, 50000), 0);
}

int main(void) {
    RUN(test_one_to_hundred);
    RUN(test_single_value);
    RUN(test_seven_values);
    RUN(test_p999_of_thousand);
    RUN(test_empty_set);
    return pp_test_finish();
}
