/* The report's tables as Arrow record batches (pipeprof/arrow.h), gathered
 * from the public accessors' rows (pipeprof/analyze.h): every table here is
 * an array of structs, so every column is copied once. docs/tables.md is
 * their schema. Stage and device indices are dictionary-encoded over the
 * report's stage and device names; nested summaries are flattened into
 * prefix_field columns (time_p95_ns), as the JSON report's CSV tables are. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arrow_build.h"
#include "pipeprof/analyze.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define F(name, type, rule, dict, st, member) \
    {name, type, rule, dict, offsetof(st, member)}
/* The eleven fields of a pp_summary at `member` of `st`, named prefix_min_ns... */
#define SUMMARY(prefix, st, member)                                                   \
    F(prefix "_n", PP_AF_U64, PP_NULL_NEVER, 0, st, member.n),                        \
    F(prefix "_min_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.min),                 \
    F(prefix "_mean_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.mean),               \
    F(prefix "_p50_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p50),                 \
    F(prefix "_p90_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p90),                 \
    F(prefix "_p95_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p95),                 \
    F(prefix "_p97_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p97),                 \
    F(prefix "_p99_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p99),                 \
    F(prefix "_p999_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p999),               \
    F(prefix "_max_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.max),                 \
    F(prefix "_total_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.total)
#define GAPS(st, member)                                                              \
    F("bubbles_count", PP_AF_U64, PP_NULL_NEVER, 0, st, member.count),                \
    F("bubbles_mean_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.mean),               \
    F("bubbles_p50_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p50),                 \
    F("bubbles_p95_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.p95),                 \
    F("bubbles_max_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.max),                 \
    F("bubbles_total_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.total),             \
    F("bubbles_leading_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.leading_ns),      \
    F("bubbles_trailing_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.trailing_ns)
#define BANDWIDTH(st, member)                                                         \
    F("bandwidth_execs", PP_AF_U64, PP_NULL_NEVER, 0, st, member.execs),              \
    F("bandwidth_read_bytes", PP_AF_U64, PP_NULL_NEVER, 0, st, member.read_bytes),    \
    F("bandwidth_write_bytes", PP_AF_U64, PP_NULL_NEVER, 0, st, member.write_bytes),  \
    F("bandwidth_busy_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.busy_ns),          \
    F("bandwidth_xfer_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.xfer_ns),          \
    F("bandwidth_read_gbps", PP_AF_F64, PP_NULL_NEVER, 0, st, member.read_gbps),      \
    F("bandwidth_write_gbps", PP_AF_F64, PP_NULL_NEVER, 0, st, member.write_gbps),    \
    F("bandwidth_total_gbps", PP_AF_F64, PP_NULL_NEVER, 0, st, member.total_gbps),    \
    F("bandwidth_xfer_gbps", PP_AF_F64, PP_NULL_NEVER, 0, st, member.xfer_gbps)
#define WALL_PARTS(prefix, st, member)                                                    \
    F(prefix "wall_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.wall_ns),                 \
    F(prefix "submit_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.submit_ns),             \
    F(prefix "queue_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.queue_ns),               \
    F(prefix "device_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.device_ns),             \
    F(prefix "completion_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.completion_ns),     \
    F(prefix "unattributed_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.unattributed_ns), \
    F(prefix "xfer_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.xfer_ns),                 \
    F(prefix "contention_ns", PP_AF_I64, PP_NULL_NEVER, 0, st, member.contention_ns)

/* The dictionaries the fields name: 1 the stage names, 2 the device names. */
enum { STAGES = 1, DEVICES = 2 };

static const pp_arrow_field stage_fields[] = {
    F("stage", PP_AF_CSTR, PP_NULL_NEVER, 0, pp_stage_stats, name),
    F("data_parallel", PP_AF_BOOL, PP_NULL_NEVER, 0, pp_stage_stats, data_parallel),
    F("exec_less", PP_AF_BOOL, PP_NULL_NEVER, 0, pp_stage_stats, exec_less),
    SUMMARY("time", pp_stage_stats, time),
    F("bottleneck_count", PP_AF_U64, PP_NULL_NEVER, 0, pp_stage_stats, bottleneck_count),
    F("execs", PP_AF_U64, PP_NULL_NEVER, 0, pp_stage_stats, execs),
    F("hw_unknown", PP_AF_U64, PP_NULL_NEVER, 0, pp_stage_stats, hw_unknown),
    F("hw_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_stage_stats, hw_ns),
    F("xfer_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_stage_stats, xfer_ns),
    SUMMARY("penalty", pp_stage_stats, penalty),
    F("penalty_pct_wall", PP_AF_F64, PP_NULL_NEVER, 0, pp_stage_stats, penalty_pct_wall),
    BANDWIDTH(pp_stage_stats, bandwidth),
};

static const pp_arrow_field stage_time_fields[] = {
    F("stage", PP_AF_U32, PP_NULL_NEVER, STAGES, pp_stage_time, stage),
    F("batch", PP_AF_I64, PP_NULL_NEVER, 0, pp_stage_time, batch),
    F("time_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_stage_time, time_ns),
    F("measured_ns", PP_AF_I64, PP_NULL_NEG1, 0, pp_stage_time, measured_ns),
};

static const pp_arrow_field batch_fields[] = {
    F("batch", PP_AF_I64, PP_NULL_NEVER, 0, pp_batch_stats, batch),
    F("complete", PP_AF_BOOL, PP_NULL_NEVER, 0, pp_batch_stats, complete),
    F("stages", PP_AF_U32, PP_NULL_NEVER, 0, pp_batch_stats, stages),
    F("cycle_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_batch_stats, cycle_ns),
    F("bottleneck", PP_AF_U32, PP_NULL_NEVER, STAGES, pp_batch_stats, bottleneck),
    F("e2e_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_batch_stats, e2e_ns),
};

static const pp_arrow_field cycle_fields[] = {
    F("batches", PP_AF_U64, PP_NULL_NEVER, 0, pp_cycle_stats, batches),
    F("complete", PP_AF_U64, PP_NULL_NEVER, 0, pp_cycle_stats, complete),
    SUMMARY("cycle", pp_cycle_stats, cycle),
    SUMMARY("cycle_complete", pp_cycle_stats, cycle_complete),
    SUMMARY("e2e", pp_cycle_stats, e2e),
    F("throughput_bound", PP_AF_F64, PP_NULL_NEVER, 0, pp_cycle_stats, throughput_bound),
    F("throughput_bound_complete", PP_AF_F64, PP_NULL_NEVER, 0, pp_cycle_stats,
      throughput_bound_complete),
    F("throughput_measured", PP_AF_F64, PP_NULL_NEVER, 0, pp_cycle_stats, throughput_measured),
};

static const pp_arrow_field device_fields[] = {
    F("device", PP_AF_CSTR, PP_NULL_NEVER, 0, pp_device_stats, name),
    F("simulated", PP_AF_BOOL, PP_NULL_NEVER, 0, pp_device_stats, simulated),
    F("hw_quality", PP_AF_U32, PP_NULL_NEVER, 0, pp_device_stats, hw_quality),
    F("hw_above_wall", PP_AF_U64, PP_NULL_NEVER, 0, pp_device_stats, hw_above_wall),
    F("tracks", PP_AF_U32, PP_NULL_NEVER, 0, pp_device_stats, tracks),
    F("execs", PP_AF_U64, PP_NULL_NEVER, 0, pp_device_stats, execs),
    F("hw_unknown", PP_AF_U64, PP_NULL_NEVER, 0, pp_device_stats, hw_unknown),
    F("busy_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_device_stats, busy_ns),
    F("idle_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_device_stats, idle_ns),
    F("wall_util", PP_AF_F64, PP_NULL_NEVER, 0, pp_device_stats, wall_util),
    F("hw_util", PP_AF_F64, PP_NULL_NEVER, 0, pp_device_stats, hw_util),
    F("hw_eff", PP_AF_F64, PP_NULL_NEVER, 0, pp_device_stats, hw_eff),
    F("transfer_share", PP_AF_F64, PP_NULL_NEVER, 0, pp_device_stats, transfer_share),
    SUMMARY("penalty", pp_device_stats, penalty),
    F("penalty_pct_wall", PP_AF_F64, PP_NULL_NEVER, 0, pp_device_stats, penalty_pct_wall),
    GAPS(pp_device_stats, bubbles),
    BANDWIDTH(pp_device_stats, bandwidth),
};

static const pp_arrow_field track_fields[] = {
    F("track", PP_AF_U32, PP_NULL_NEVER, 0, pp_track_stats, track),
    F("device", PP_AF_U32, PP_NULL_NEVER, DEVICES, pp_track_stats, device),
    F("name", PP_AF_CSTR, PP_NULL_NEVER, 0, pp_track_stats, name),
    F("execs", PP_AF_U64, PP_NULL_NEVER, 0, pp_track_stats, execs),
    F("hw_unknown", PP_AF_U64, PP_NULL_NEVER, 0, pp_track_stats, hw_unknown),
    F("busy_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_track_stats, busy_ns),
    F("hw_util", PP_AF_F64, PP_NULL_NEVER, 0, pp_track_stats, hw_util),
    GAPS(pp_track_stats, bubbles),
    BANDWIDTH(pp_track_stats, bandwidth),
};

static const pp_arrow_field exec_fields[] = {
    F("event", PP_AF_SIZE, PP_NULL_NEVER, 0, pp_exec_parts, event),
    F("stage", PP_AF_U32, PP_NULL_U32MAX, STAGES, pp_exec_parts, stage),
    F("device", PP_AF_U32, PP_NULL_NEVER, DEVICES, pp_exec_parts, device),
    WALL_PARTS("", pp_exec_parts, parts),
};

static const pp_arrow_field decomposition_fields[] = {
    F("stage", PP_AF_U32, PP_NULL_U32MAX, STAGES, pp_decomp_stats, stage),
    F("device", PP_AF_U32, PP_NULL_NEVER, DEVICES, pp_decomp_stats, device),
    F("execs", PP_AF_U64, PP_NULL_NEVER, 0, pp_decomp_stats, execs),
    F("split", PP_AF_U64, PP_NULL_NEVER, 0, pp_decomp_stats, split),
    F("has_contention", PP_AF_BOOL, PP_NULL_NEVER, 0, pp_decomp_stats, has_contention),
    WALL_PARTS("total_", pp_decomp_stats, total),
};

static const pp_arrow_field dp_fields[] = {
    F("stage", PP_AF_U32, PP_NULL_NEVER, STAGES, pp_dp_stats, stage),
    F("batches", PP_AF_U64, PP_NULL_NEVER, 0, pp_dp_stats, batches),
    SUMMARY("partition", pp_dp_stats, partition),
    SUMMARY("max_device", pp_dp_stats, max_device),
    SUMMARY("merge", pp_dp_stats, merge),
    SUMMARY("formula", pp_dp_stats, formula),
    SUMMARY("measured", pp_dp_stats, measured),
    F("imbalance", PP_AF_F64, PP_NULL_NEVER, 0, pp_dp_stats, imbalance),
    F("devices", PP_AF_SIZE, PP_NULL_NEVER, 0, pp_dp_stats, ndevices),
};

/* A data-parallel part with its stage: dp_devices' row. */
typedef struct dp_part {
    uint32_t stage;
    pp_dp_device d;
} dp_part;

static const pp_arrow_field dp_device_fields[] = {
    F("stage", PP_AF_U32, PP_NULL_NEVER, STAGES, dp_part, stage),
    F("device", PP_AF_U32, PP_NULL_NEVER, DEVICES, dp_part, d.device),
    F("track", PP_AF_U32, PP_NULL_U32MAX, 0, dp_part, d.track),
    F("batches", PP_AF_U64, PP_NULL_NEVER, 0, dp_part, d.batches),
    F("wall_ns", PP_AF_I64, PP_NULL_NEVER, 0, dp_part, d.wall_ns),
    F("share", PP_AF_F64, PP_NULL_NEVER, 0, dp_part, d.share),
    F("share_recorded", PP_AF_BOOL, PP_NULL_NEVER, 0, dp_part, d.share_recorded),
    F("rate_per_s", PP_AF_F64, PP_NULL_NEVER, 0, dp_part, d.rate),
    F("suggested_share", PP_AF_F64, PP_NULL_NEVER, 0, dp_part, d.suggested_share),
};

static const pp_arrow_field op_fields[] = {
    F("device", PP_AF_U32, PP_NULL_NEVER, DEVICES, pp_op_stats, device),
    F("name", PP_AF_CSTR, PP_NULL_NEVER, 0, pp_op_stats, name),
    F("type", PP_AF_CSTR, PP_NULL_NEVER, 0, pp_op_stats, type),
    F("exec_type", PP_AF_CSTR, PP_NULL_NEVER, 0, pp_op_stats, exec_type),
    F("count", PP_AF_U64, PP_NULL_NEVER, 0, pp_op_stats, count),
    F("total_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_op_stats, total),
    F("mean_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_op_stats, mean),
    F("p50_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_op_stats, p50),
    F("p95_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_op_stats, p95),
    F("max_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_op_stats, max),
    F("cpu_count", PP_AF_U64, PP_NULL_NEVER, 0, pp_op_stats, cpu_count),
    F("cpu_total_ns", PP_AF_I64, PP_NULL_NEVER, 0, pp_op_stats, cpu_total),
};

/* Rows of one report table: where they are and which fields they have. */
typedef struct rows {
    const void *p;
    size_t n, stride;
    const pp_arrow_field *f;
    size_t nf;
} rows;

#define ROWS(ptr, count, fields) \
    (rows) { (ptr), (count), sizeof *(ptr), (fields), COUNT(fields) }

static const char *const report_tables[] = {
    "stages", "stage_times", "batches", "cycles", "devices", "tracks",
    "execs",  "decomposition", "data_parallel", "dp_devices", "ops", "op_types",
};

/* The rows of table k; PP_ESTATE or PP_ENOMEM where the accessor gives none
 * for a reason other than having none. dp_devices' rows go to *parts. */
static int table_rows(const pp_report *r, size_t k, rows *out, dp_part **parts) {
    size_t n = 0;
    switch (k) {
    case 0: {
        const pp_stage_stats *p = pp_report_stages(r, &n);
        *out = ROWS(p, n, stage_fields);
        return PP_OK;
    }
    case 1: {
        const pp_stage_time *p = pp_report_stage_times(r, &n);
        *out = ROWS(p, n, stage_time_fields);
        return PP_OK;
    }
    case 2: {
        const pp_batch_stats *p = pp_report_batches(r, &n);
        *out = ROWS(p, n, batch_fields);
        return PP_OK;
    }
    case 3: {
        const pp_cycle_stats *p = pp_report_cycles(r);
        *out = ROWS(p, 1, cycle_fields);
        return PP_OK;
    }
    case 4: {
        const pp_device_stats *p = pp_report_devices(r, &n);
        *out = ROWS(p, n, device_fields);
        return PP_OK;
    }
    case 5: {
        const pp_track_stats *p = pp_report_tracks(r, &n);
        *out = ROWS(p, n, track_fields);
        return PP_OK;
    }
    case 6: {
        size_t nd;
        const pp_exec_parts *p = pp_report_exec_parts(r, &n);
        pp_report_decomposition(r, &nd);
        if (!p && nd) /* execs exist, but not their parts: the model is gone, or no memory */
            return PP_ESTATE;
        *out = ROWS(p, n, exec_fields);
        return PP_OK;
    }
    case 7: {
        const pp_decomp_stats *p = pp_report_decomposition(r, &n);
        *out = ROWS(p, n, decomposition_fields);
        return PP_OK;
    }
    case 8: {
        const pp_dp_stats *p = pp_report_dp(r, &n);
        *out = ROWS(p, n, dp_fields);
        return PP_OK;
    }
    case 9: {
        const pp_dp_stats *dp = pp_report_dp(r, &n);
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += dp[i].ndevices;
        *parts = calloc(total ? total : 1, sizeof **parts);
        if (!*parts)
            return PP_ENOMEM;
        size_t at = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < dp[i].ndevices; j++)
                (*parts)[at++] = (dp_part){dp[i].stage, dp[i].devices[j]};
        *out = ROWS(*parts, total, dp_device_fields);
        return PP_OK;
    }
    default: {
        const pp_op_stats *p = k == 10 ? pp_report_ops(r, &n) : pp_report_op_types(r, &n);
        *out = ROWS(p, n, op_fields);
        return PP_OK;
    }
    }
}

/* The stage names and the device names, as the dictionaries of the stage
 * and device columns. */
static void name_dicts(pp_arrow_table *t, const pp_report *r, const pp_arrow_dict **d) {
    size_t ns, nd;
    const pp_stage_stats *s = pp_report_stages(r, &ns);
    const pp_device_stats *dev = pp_report_devices(r, &nd);
    const char **sn = pp_arrow_alloc(t, ns * sizeof *sn), **dn = pp_arrow_alloc(t, nd * sizeof *dn);
    for (size_t i = 0; sn && i < ns; i++)
        sn[i] = s[i].name;
    for (size_t i = 0; dn && i < nd; i++)
        dn[i] = dev[i].name;
    d[STAGES - 1] = sn ? pp_arrow_dict_of(t, sn, ns) : NULL;
    d[DEVICES - 1] = dn ? pp_arrow_dict_of(t, dn, nd) : NULL;
}

int pp_arrow_export_report(const pp_report *r, const char *table, const char *columns,
                           struct ArrowSchema *schema, struct ArrowArray *array, pp_error *err) {
    size_t k = 0;
    while (k < COUNT(report_tables) && strcmp(report_tables[k], table) != 0)
        k++;
    if (k == COUNT(report_tables)) {
        if (err)
            snprintf(err->msg, sizeof err->msg,
                     "no report table \"%s\" (have: stages, stage_times, batches, cycles, devices, "
                     "tracks, execs, decomposition, data_parallel, dp_devices, ops, op_types)",
                     table);
        return PP_EINVAL;
    }
    rows rw;
    dp_part *parts = NULL;
    int rc = table_rows(r, k, &rw, &parts);
    if (rc != PP_OK) {
        if (err)
            snprintf(err->msg, sizeof err->msg,
                     rc == PP_ESTATE ? "report table execs: the model the report was built "
                                       "from is gone (pp_report_build_owned)"
                                     : "report table %s: out of memory",
                     table);
        return rc;
    }
    pp_arrow_table *t = pp_arrow_table_new(table, rw.n, columns, NULL);
    if (!t) {
        free(parts);
        return PP_ENOMEM;
    }
    const pp_arrow_dict *dicts[2];
    name_dicts(t, r, dicts);
    pp_arrow_add_rows(t, rw.p, rw.stride, rw.f, rw.nf, dicts);
    free(parts);
    return pp_arrow_finish(t, schema, array, err);
}
