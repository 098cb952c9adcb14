/* Nearest-rank percentiles in integer arithmetic: the value at rank
 * ceil(q * n / 100000), q in thousandths of a percent. */
#include "analyze/report.h"
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

static uint64_t lcg(uint64_t *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 11;
}

/* The report's summaries of large sets pick the six ranks through a
 * histogram instead of sorting; they must equal the sorted nearest ranks
 * (pp_summary_compute sorts) for every shape of data. */
static void expect_selection_matches_sort(const int64_t *values, size_t n, const char *what) {
    int64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    memcpy(a, values, n * sizeof *a);
    memcpy(b, values, n * sizeof *b);
    pp_summary want, got;
    pp_summary_compute(a, n, &want);
    pp_report r = {0};
    EXPECT_EQ_I64(an_summary(&r, b, n, &got), PP_OK);
    if (memcmp(&want, &got, sizeof want) != 0)
        pp_test_fail(__FILE__, __LINE__, "%s: selection p50 %lld p90 %lld p99.9 %lld, sorted "
                     "p50 %lld p90 %lld p99.9 %lld", what, (long long)got.p50,
                     (long long)got.p90, (long long)got.p999, (long long)want.p50,
                     (long long)want.p90, (long long)want.p999);
    free(r.sort_tmp.p), free(r.hist.p);
    free(a), free(b);
}

static void test_selection_equals_sorting(void) {
    enum { N = 100003 };
    static int64_t v[N];
    uint64_t st = 7;
    for (size_t i = 0; i < N; i++) /* a range wider than the histogram */
        v[i] = (int64_t)(lcg(&st) % 1000000000000ull);
    expect_selection_matches_sort(v, N, "wide range");
    for (size_t i = 0; i < N; i++) /* fewer distinct values than buckets */
        v[i] = (int64_t)(lcg(&st) % 1000);
    expect_selection_matches_sort(v, N, "narrow range");
    for (size_t i = 0; i < N; i++) /* one bucket holds almost everything */
        v[i] = i % 1000 == 0 ? 1000000000 + (int64_t)i : 300 + (int64_t)(lcg(&st) % 7);
    expect_selection_matches_sort(v, N, "outliers");
    for (size_t i = 0; i < N; i++) /* negative penalties */
        v[i] = (int64_t)(lcg(&st) % 1000001) - 500000;
    expect_selection_matches_sort(v, N, "negative values");
    for (size_t i = 0; i < N; i++)
        v[i] = 42;
    expect_selection_matches_sort(v, N, "one value");
    for (size_t i = 0; i < 4096; i++) /* the smallest set that is selected */
        v[i] = (int64_t)(4096 - i) * 1000003;
    expect_selection_matches_sort(v, 4096, "4096 descending");
    for (size_t i = 0; i < N; i++) /* a 63-bit range (the total still fits) */
        v[i] = i % 2 ? (INT64_C(1) << 61) - (int64_t)(lcg(&st) % 5) : -(INT64_C(1) << 61) + (int64_t)i;
    expect_selection_matches_sort(v, N, "63-bit range");
}

/* The mean is the floor of total / n, for negative totals too. */
static void test_mean_floors_negative_totals(void) {
    int64_t v[3] = {-5, -5, 0};
    pp_summary s;
    pp_summary_compute(v, 3, &s);
    EXPECT_EQ_I64(s.total, -10);
    EXPECT_EQ_I64(s.mean, -4); /* floor(-3.33), not the truncated -3 */
}

int main(void) {
    RUN(test_one_to_hundred);
    RUN(test_single_value);
    RUN(test_seven_values);
    RUN(test_p999_of_thousand);
    RUN(test_empty_set);
    RUN(test_selection_equals_sorting);
    RUN(test_mean_floors_negative_totals);
    return pp_test_finish();
}
