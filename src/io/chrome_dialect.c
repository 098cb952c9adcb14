/* chrome_dialect.c — the dialects of Chrome JSON (docs/format-chrome-json.md,
 * "Dialects"): which one a trace is written in, and what the events of the
 * PipelineProfiler framework's traces mean.
 *
 * That framework (the user's own Python profiler around OpenVINO) writes a
 * bare array of complete events: cat = the device ("CPU", "GPU", "NPU"),
 * one tid per device (or device stream), name "{stage}_Batch{n}" for an
 * inference and "Partition" / "Merge" for a data-parallel stage's split and
 * join on the CPU, ts/dur in float microseconds from its start, args
 * {batch_id, hw_time_ms, sw_overhead_ms}. Read plainly, a device would be
 * "pid 1" and its hardware time an unread annotation; read in its dialect,
 * each inference is an exec of its stage on its device with hw_ns from
 * hw_time_ms, and Partition / Merge are the partition and merge of the
 * data-parallel stage they bracket.
 *
 * Also what any foreign trace's events are beside the program's work: a
 * profiler's bookkeeping, and the cat the writer would give an event. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "io/chrome_arg_keys.h"
#include "io/chrome_read.h"

/* The value of the annotation `key` of the event being read; 0 when absent
 * or not a number. */
static int number_arg(const reader *r, const char *key, double *out) {
    uint32_t id = pp_model_find_string(r->m, key);
    for (size_t i = 0; id && i < r->nanns; i++) {
        const pp_annotation *a = &r->anns[i];
        if (a->key != id)
            continue;
        if (a->type == PP_VALUE_DOUBLE)
            *out = a->v.d;
        else if (a->type == PP_VALUE_INT)
            *out = (double)a->v.i;
        else
            return 0;
        return 1;
    }
    return 0;
}

/* The rule (documented): the first complete event decides. It is the
 * PipelineProfiler's when it has a cat, a numeric args.batch_id and a
 * numeric args.hw_time_ms; anything else is plain Chrome JSON. */
void chrome_dialect_decide(reader *r, const raw_event *e, const pp_event *ev) {
    double hw;
    if (r->dialect != PP_DIALECT_AUTO || e->ph.len != 1 || e->ph.s[0] != 'X')
        return;
    r->dialect = e->cat.len && ev->batch >= 0 && number_arg(r, "hw_time_ms", &hw)
                     ? PP_DIALECT_PIPELINE_PROFILER
                     : PP_DIALECT_CHROME;
}

/* The length of `name` without a "_Batch<digits>" suffix. */
static size_t stage_len(const char *name) {
    size_t n = strlen(name), d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d == n || d < 6 || memcmp(name + d - 6, "_Batch", 6) != 0)
        return n;
    return d - 6;
}

int chrome_dialect_event(reader *r, const raw_event *e, pp_event *ev) {
    (void)e;
    const char *name = pp_model_string(r->m, ev->name);
    double hw_ms;
    if (strcmp(name, "Partition") == 0 || strcmp(name, "Merge") == 0) {
        /* the stage they bracket is found by the analysis (host_execs.c) */
        ev->role = name[0] == 'P' ? PP_ROLE_PARTITION : PP_ROLE_MERGE;
    } else {
        ev->role = PP_ROLE_EXEC;
        size_t n = stage_len(name);
        char stage[256]; /* a copy: interning may move the model's strings */
        if (n >= sizeof stage)
            n = strlen(name); /* too long to cut here: the whole name */
        if (n < sizeof stage && n > 0 && ev->stage == 0) {
            memcpy(stage, name, n);
            if (pp_model_intern(r->m, stage, n, &ev->stage) != PP_OK)
                return PP_ENOMEM;
        } else if (ev->stage == 0) {
            ev->stage = ev->name;
        }
    }
    /* ms as a double (the framework's own float): to the nearest ns */
    if (ev->hw_ns == 0 && number_arg(r, "hw_time_ms", &hw_ms) && hw_ms > 0 && hw_ms < 9.2e12)
        ev->hw_ns = (uint64_t)llround(hw_ms * 1e6);
    return PP_OK;
}

/* A profiler's bookkeeping, not the program's work: the PyTorch profiler's
 * span over the whole profile (cat "Trace", on the pseudo-process "Spans"),
 * its iteration marks (pseudo-process "Traces"), its "Record Window End"
 * instant (pid ""), and CUPTI's overhead events (cat "overhead", pid -1:
 * "Activity Buffer Request"). Read and kept like any event; a track that
 * holds nothing else is marked PP_TRACK_BOOKKEEPING, which the analysis
 * leaves out (docs/format-chrome-json.md). */
int chrome_bookkeeping(const reader *r, const raw_event *e) {
    if (jstr_eq(&e->cat, "Trace") || jstr_eq(&e->cat, "overhead") ||
        jstr_eq(&e->name, "Record Window End"))
        return 1;
    if (!e->pid.is_str)
        return 0;
    const char *pid = pp_model_string(r->m, (uint32_t)e->pid.v);
    return strcmp(pid, "Spans") == 0 || strcmp(pid, "Traces") == 0 || pid[0] == '\0';
}

/* The "cat" the writer gives an event of this phase (NULL: none). */
const char *chrome_written_cat(char ph, const pp_event *ev) {
    switch (ph) {
    case 'X': case 'B':
        return ev->kind == PP_EV_REGION ? "region" : chrome_role_cats[ev->role];
    case 's': case 't': case 'f':
        return "flow";
    case 'b':
        return "range";
    default:
        return NULL;
    }
}
