/* an_lower_bound_near (src/analyze/sort.c): the first record whose key is
 * not below v, found from any starting index, forward or backward, as a
 * binary search would find it. */
#include <stddef.h>

#include "analyze/report.h"
#include "builder.h"

/* Every v from 0 to 42, from every starting index and from nowhere (n):
 * the answer is the number of keys below v. */
static void test_answer_does_not_depend_on_the_start(void) {
    /* a run of equal keys at index 1..3 */
    const uint64_t k[] = {0, 2, 2, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34,
                          36, 38, 40};
    size_t n = sizeof k / sizeof k[0];
    for (uint64_t v = 0; v <= 42; v++) {
        size_t below = 0;
        while (below < n && k[below] < v)
            below++;
        for (size_t from = 0; from <= n; from++)
            EXPECT_EQ_U64(an_lower_bound_near(k, sizeof *k, 0, sizeof *k, 0, n, from, v), below);
    }
}

/* A sub-range [lo, hi) of a table of 16-byte records, the key second (an
 * an_kv's val): the answer stays inside the range, hi when every key there
 * is below v. */
static void test_key_at_an_offset_in_a_sub_range(void) {
    an_kv r[6] = {{9, 1}, {9, 5}, {9, 7}, {8, 3}, {8, 4}, {8, 9}};
    size_t at = offsetof(an_kv, val);
    EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->val, 3, 6, 3, 4), 4);
    EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->val, 3, 6, 5, 3), 3);
    EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->val, 0, 3, 0, 6), 2);
    EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->val, 0, 3, 1, 8), 3);
    EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->val, 0, 3, 3, 0), 0);
    EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->val, 2, 2, 2, 5), 2); /* empty range */
}

/* 4-byte keys followed by other bytes (the model's packed annotations,
 * whose event index comes before the key): only the key's 4 bytes count. */
static void test_four_byte_keys(void) {
    struct rec {
        uint32_t key, other;
    } r[5] = {{1, 0xffffffff}, {3, 7}, {3, 0}, {5, 0xffffffff}, {9, 1}};
    size_t n = 5, at = offsetof(struct rec, key);
    for (size_t from = 0; from <= n; from++) {
        EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->key, 0, n, from, 3), 1);
        EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->key, 0, n, from, 4), 3);
        EXPECT_EQ_U64(an_lower_bound_near(r, sizeof *r, at, sizeof r->key, 0, n, from, 10), 5);
    }
}

int main(void) {
    RUN(test_answer_does_not_depend_on_the_start);
    RUN(test_key_at_an_offset_in_a_sub_range);
    RUN(test_four_byte_keys);
    return pp_test_finish();
}
