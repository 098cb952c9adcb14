/* pipeline_trace.h — the trace bench_json and bench_perfetto write: a
 * streaming pipeline of BATCHES batches, about 1.1M events. Per batch a
 * partition and a merge on the host thread, four execs (stage, batch, hw and
 * transfer times) on GPU and NPU (simulated) streams, a stage span on a
 * worker thread, a queue counter and a three-step flow; an instant every 16
 * batches and an annotation on every 8th exec. */
#ifndef PP_BENCH_PIPELINE_TRACE_H
#define PP_BENCH_PIPELINE_TRACE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeprof/model.h"

#define BATCHES 110000

static uint32_t str(pp_model *m, const char *text) {
    uint32_t id = 0;
    pp_model_intern(m, text, strlen(text), &id);
    return id;
}

static uint32_t track(pp_model *m, pp_track_kind kind, const char *process, const char *name,
                      const char *device, int stream, unsigned flags) {
    pp_track_info t;
    uint32_t index = 0;
    pp_track_info_init(&t);
    t.kind = (uint8_t)kind;
    t.flags = flags;
    t.process = str(m, process);
    t.name = str(m, name);
    t.device = str(m, device);
    t.stream = stream;
    t.pid = 4242;
    t.tid = kind == PP_TRACK_KIND_THREAD ? 4242 + (int64_t)pp_model_track_count(m) : 0;
    t.sort_index = (int32_t)pp_model_track_count(m);
    pp_model_add_track(m, &t, &index);
    return index;
}

static void add(pp_model *m, pp_event *e) {
    if (pp_model_add_event(m, e) != PP_OK) {
        fprintf(stderr, "bench: cannot build the model\n");
        exit(1);
    }
}

static pp_model *build_pipeline_model(void) {
    pp_model *m = NULL;
    if (pp_model_create(&m) != PP_OK)
        exit(1);
    uint32_t host = track(m, PP_TRACK_KIND_THREAD, "demo", "main", "", -1, 0);
    uint32_t worker = track(m, PP_TRACK_KIND_THREAD, "demo", "classifier", "", -1, 0);
    uint32_t dev[4] = {
        track(m, PP_TRACK_KIND_DEVICE, "GPU.0", "stream 0", "GPU.0", 0, 0),
        track(m, PP_TRACK_KIND_DEVICE, "GPU.0", "stream 1", "GPU.0", 1, 0),
        track(m, PP_TRACK_KIND_DEVICE, "NPU", "req 0", "NPU", 0, PP_TRACK_SIMULATED),
        track(m, PP_TRACK_KIND_DEVICE, "NPU", "req 1", "NPU", 1, PP_TRACK_SIMULATED),
    };
    uint32_t infer = str(m, "infer"), embedding = str(m, "Embedding"), slot = str(m, "slot");
    int64_t t0 = 1700000000000000000LL;
    for (int64_t b = 0; b < BATCHES; b++) {
        int64_t ts = t0 + b * 250123;
        pp_event e;
        pp_event_init(&e);
        e.kind = PP_EV_SPAN, e.track = host, e.name = str(m, "partition"), e.stage = embedding;
        e.role = PP_ROLE_PARTITION, e.ts_ns = ts, e.dur_ns = 12345, e.batch = b;
        add(m, &e);
        for (int d = 0; d < 4; d++) {
            e.track = dev[d], e.name = infer, e.role = PP_ROLE_EXEC;
            e.ts_ns = ts + 13000 + d * 777, e.dur_ns = 150000 + (b * 37 + d * 101) % 9999;
            e.hw_ns = (uint64_t)e.dur_ns - 20011, e.xfer_ns = 5003 + (uint64_t)d;
            add(m, &e);
            if ((b * 4 + d) % 8 == 0) {
                pp_annotation a = {.event = pp_model_event_count(m) - 1, .key = slot,
                                   .type = PP_VALUE_INT, .v.i = d};
                pp_model_add_annotation(m, &a);
            }
        }
        e.track = host, e.name = str(m, "merge"), e.role = PP_ROLE_MERGE;
        e.ts_ns = ts + 175000, e.dur_ns = 9876, e.hw_ns = 0, e.xfer_ns = 0;
        add(m, &e);
        e.track = worker, e.name = str(m, "classify"), e.stage = str(m, "Classifier");
        e.role = PP_ROLE_STAGE, e.ts_ns = ts + 186000, e.dur_ns = 60606;
        add(m, &e);
        pp_event_init(&e);
        e.kind = PP_EV_COUNTER, e.track = host, e.name = str(m, "queue depth");
        e.ts_ns = ts, e.value = (double)(b % 7); /* a depth: whole, as counters mostly are */
        add(m, &e);
        for (int phase = 0; phase < 3; phase++) {
            pp_event_init(&e);
            e.kind = PP_EV_FLOW, e.name = str(m, "batch"), e.id = (uint64_t)b + 1;
            e.phase = (uint8_t)phase, e.track = phase == 0 ? host : phase == 1 ? dev[0] : worker;
            e.ts_ns = ts + phase * 90000;
            add(m, &e);
        }
        if (b % 16 == 0) {
            pp_event_init(&e);
            e.kind = PP_EV_INSTANT, e.track = host, e.name = str(m, "checkpoint");
            e.ts_ns = ts + 1, e.batch = b;
            add(m, &e);
        }
    }
    return m;
}

#endif
