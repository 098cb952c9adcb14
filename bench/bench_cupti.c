/* bench_cupti — what the CUPTI collector spends per activity record on the
 * thread CUPTI hands its buffers to (src/inject/cupti_inject.c): converting
 * the record (cupti_convert) and recording it (cupti_recorder_add: track
 * and name lookups, the span, its correlation annotation), beside the floor
 * of any recorder: one pp_span and one annotation on a known track and name.
 * Prints:
 *
 *   cupti_kernel_record_ns   a kernel record on one of 4 streams, 8 names
 *                            (baseline: pp_span + pp_annotate_int)
 *
 * The records are built by hand with the real header's layout: no GPU is
 * needed, and none of CUPTI's own cost (stamping, buffering) is in the
 * figure; what the program's threads pay for CUPTI's tracing needs a GPU to
 * measure (docs/recording.md). Best of 5 rounds. */
#include <stdio.h>
#include <stdlib.h>

#include "inject/cupti_record.h"

#define PER_ROUND 200000
#define ROUNDS 5

static const char *kernel_names[8] = {"gemm", "relu", "softmax", "layernorm",
                                      "gather", "scatter", "reduce", "copy_kernel"};

static pp_session *open_session(void) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_session_config_init(&cfg);
    cfg.max_records = 2 * PER_ROUND + 64;
    if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK) {
        fprintf(stderr, "bench_cupti: cannot open a session\n");
        exit(1);
    }
    return s;
}

static double floor_round(void) {
    pp_session *s = open_session();
    pp_track t;
    pp_track_device(s, "GPU 0", 7, NULL, 0, &t);
    pp_str key = pp_intern("correlation");
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t;
    r.name = pp_intern("gemm");
    r.role = PP_ROLE_EXEC;
    r.dur_ns = 1000;
    pp_span(s, &r); /* attach the thread outside the timed loop */
    int64_t t0 = pp_now();
    for (int i = 0; i < PER_ROUND; i++) {
        r.ts_ns = i * 2000;
        r.hw_ns = 1000;
        pp_span(s, &r);
        pp_annotate_int(s, key, i);
    }
    double ns = (double)(pp_now() - t0) / PER_ROUND;
    pp_session_stop(s, NULL);
    pp_session_close(s);
    return ns;
}

static double collector_round(const cupti_kernel_rec *recs) {
    static cupti_recorder rec;
    pp_session *s = open_session();
    cupti_recorder_init(&rec, s);
    const cupti_clock clock = {.offset_ns = 12345, .error_ns = 100};
    cupti_span sp;
    cupti_convert((const CUpti_Activity *)(const void *)&recs[0], &clock, NULL, &sp);
    cupti_recorder_add(&rec, &sp); /* attach the thread outside the timed loop */
    int64_t t0 = pp_now();
    for (int i = 0; i < PER_ROUND; i++)
        if (cupti_convert((const CUpti_Activity *)(const void *)&recs[i], &clock, NULL, &sp))
            cupti_recorder_add(&rec, &sp);
    double ns = (double)(pp_now() - t0) / PER_ROUND;
    cupti_recorder_free(&rec);
    pp_session_stop(s, NULL);
    pp_session_close(s);
    return ns;
}

int main(void) {
    cupti_kernel_rec *recs = calloc(PER_ROUND, sizeof *recs);
    if (!recs)
        return 1;
    for (int i = 0; i < PER_ROUND; i++) {
        cupti_kernel_rec *k = &recs[i];
        k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k->streamId = 7 + (uint32_t)(i % 4);
        k->correlationId = (uint32_t)i + 1;
        k->start = 1000000 + (uint64_t)i * 2000;
        k->end = k->start + 1000;
        k->queued = k->start - 300;
        k->name = kernel_names[i % 8];
    }
    double floor_ns = 1e9, value_ns = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        double f = floor_round(), v = collector_round(recs);
        floor_ns = f < floor_ns ? f : floor_ns;
        value_ns = v < value_ns ? v : value_ns;
    }
    printf("BENCH cupti_kernel_record_ns value=%.1f unit=ns baseline=pp_span_annotated:%.1f "
           "ratio=%.2f\n", value_ns, floor_ns, value_ns / floor_ns);
    free(recs);
    return 0;
}
