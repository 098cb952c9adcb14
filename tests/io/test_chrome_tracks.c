/* The Chrome reader's (pid, tid) -> track map costs O(1) probes per lookup
 * on average, so a file of N distinct tracks or processes maps in O(N): a
 * 500 KB file of 200k pids once took 46 s because processes were found by a
 * list scan. The bound is checked by counting probes (never by timing):
 * every test makes N new entries and finds each again, and the probes over
 * all those lookups stay under a small constant times their number, where
 * a scan would need about N^2 / 2. */
#include <stdio.h>
#include <stdlib.h>

#include "io/chrome_tracks.h"
#include "testutil.h"

enum { N = 20000, PROBES_PER_LOOKUP = 4 };

static pp_model *model(void) {
    pp_model *m = NULL;
    if (pp_model_create(&m) != PP_OK)
        abort();
    return m;
}

/* Maps `n` (pid, tid) pairs made by `pair`, twice, then names the tracks;
 * checks each pair keeps its track and the probe count stays linear. */
static void map_twice(void (*pair)(pp_model *, int, chrome_id *, chrome_id *)) {
    pp_model *m = model();
    chrome_tracks t = {0};
    uint64_t lookups = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < N; i++) {
            chrome_id pid, tid;
            pair(m, i, &pid, &tid);
            uint32_t index = UINT32_MAX;
            EXPECT_EQ_I64(chrome_tracks_get(&t, m, pid, tid, &index), PP_OK);
            if ((uint32_t)i != index) {
                EXPECT_EQ_U64(index, i);
                break;
            }
            lookups += 2; /* the track, and its process when the track is new */
        }
    EXPECT_EQ_U64(t.ntracks, N);
    EXPECT_EQ_I64(chrome_tracks_finish(&t, m), PP_OK);
    lookups += N; /* finish looks up each track's process */
    EXPECT_EQ_U64(pp_model_track_count(m), N);
    if (t.probes > PROBES_PER_LOOKUP * lookups)
        pp_test_fail(__FILE__, __LINE__, "%llu probes for %llu lookups (more than %d each)",
                     (unsigned long long)t.probes, (unsigned long long)lookups,
                     PROBES_PER_LOOKUP);
    chrome_tracks_free(&t);
    pp_model_free(m);
}

static void pid_per_track(pp_model *m, int i, chrome_id *pid, chrome_id *tid) {
    (void)m;
    *pid = (chrome_id){.v = 1000 + i};
    *tid = (chrome_id){.v = 7};
}

static void tid_per_track(pp_model *m, int i, chrome_id *pid, chrome_id *tid) {
    (void)m;
    *pid = (chrome_id){.v = 1};
    *tid = (chrome_id){.v = (int64_t)i * 4096}; /* only high bits differ */
}

/* String pids ("p17"), interned as the reader does. */
static void string_pid_per_track(pp_model *m, int i, chrome_id *pid, chrome_id *tid) {
    char name[32];
    int n = snprintf(name, sizeof name, "p%d", i);
    uint32_t id = 0;
    if (pp_model_intern(m, name, (size_t)n, &id) != PP_OK)
        abort();
    *pid = (chrome_id){.is_str = 1, .v = id};
    *tid = (chrome_id){.v = 0};
}

static void test_distinct_pids_map_in_linear_probes(void) {
    map_twice(pid_per_track);
}

static void test_distinct_tids_map_in_linear_probes(void) {
    map_twice(tid_per_track);
}

static void test_distinct_string_pids_map_in_linear_probes(void) {
    map_twice(string_pid_per_track);
}

int main(void) {
    RUN(test_distinct_pids_map_in_linear_probes);
    RUN(test_distinct_tids_map_in_linear_probes);
    RUN(test_distinct_string_pids_map_in_linear_probes);
    return pp_test_finish();
}
