/* pipeprof/pipeline.h — running multi-stage inference pipelines on devices
 * and recording what their user needs to see (docs/architecture.md §6).
 *
 * Three levels, each usable on its own:
 *   executor  one device, N requests in flight (an async infer queue); one
 *             exec span per request on the row of its request slot
 *             ("NPU/req 0"), with hw/xfer at level >= 1 and op spans at 2
 *   stage     one step of a pipeline for one batch: on one device, data
 *             parallel over K devices (partition on the host, dispatch all,
 *             wait all, merge on the host), or a host function; one stage
 *             span per batch on the calling thread's track
 *   pipeline  stages joined by bounded queues, one host thread per stage, so
 *             that different batches overlap across stages; or serial, one
 *             batch at a time through every stage, for comparison
 * docs/pipeline.md describes the runtime and the pipeline file format.
 *
 * Every call that records takes a session, which may be NULL: then nothing
 * is recorded. Every function returns 0 or a negative PP_E* code and fills
 * the optional pp_error. */
#ifndef PIPEPROF_PIPELINE_H
#define PIPEPROF_PIPELINE_H

#include "pipeprof/common.h"
#include "pipeprof/device.h"
#include "pipeprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- executor ---- */

typedef struct pp_executor pp_executor;

typedef struct pp_executor_config {
    pp_device *device;
    pp_workload workload; /* of each request */
    int requests;         /* request slots, 1..64 */
    const char *stage;    /* stage name on every exec span; NULL: none */
} pp_executor_config;

/* The execs that finished since the previous wait: how many, and the hull
 * of their walls (first start, last end). */
typedef struct pp_exec_window {
    int count;
    int64_t start_ns, end_ns;
} pp_exec_window;

/* Runs on the backend's thread after the exec span was recorded. */
typedef void (*pp_exec_done_fn)(void *ctx, pp_request *r, int64_t batch, int status);

/* Builds the workload on the device with `requests` slots and reserves a
 * device track per slot in `s`. */
int pp_executor_create(pp_session *s, const pp_executor_config *cfg, pp_executor **out,
                       pp_error *err);
/* Waits for running requests, then frees; accepts NULL. */
void pp_executor_free(pp_executor *ex);
pp_compiled *pp_executor_compiled(pp_executor *ex);
/* Blocks until a slot is idle and hands out its request (the lowest idle
 * slot first): fill its input, then pp_executor_start it. */
pp_request *pp_executor_acquire(pp_executor *ex);
/* Starts an acquired request for `batch`. The exec span's wall runs from
 * right before the backend's start to the completion callback. On failure
 * the slot is idle again (no span, no callback) and the backend's code is
 * returned. */
int pp_executor_start(pp_executor *ex, pp_request *r, int64_t batch, pp_exec_done_fn done,
                      void *ctx);
/* The part (0..1) of its stage's batch that acquired request `r` carries,
 * recorded on its exec span as the "share" annotation: the data-parallel
 * split the analyzer reports and starts its suggestion from. A request
 * whose share was never set records none. */
void pp_executor_set_share(pp_executor *ex, pp_request *r, double share);
/* Which executor of a data-parallel stage runs acquired request `r` (0,
 * 1, ...), recorded on its exec span as the "part" annotation, so that the
 * analyzer takes two executors on one device (CPU + CPU) as two parts; a
 * negative part (the default) records none. */
void pp_executor_set_part(pp_executor *ex, pp_request *r, int64_t part);
/* Hands an acquired request back without starting it, e.g. when a batch is
 * abandoned after another request failed to start. */
void pp_executor_release(pp_executor *ex, pp_request *r);
/* Waits until no request is in flight; `win` (may be NULL) receives the
 * window of the execs finished since the last wait. Returns the first
 * failure among them. */
int pp_executor_wait_all(pp_executor *ex, pp_exec_window *win, pp_error *err);

/* ---- stage ---- */

#define PP_STAGE_MAX_DEVICES 8

typedef struct pp_stage pp_stage;

/* A host stage's work on one batch: read `in` (nodes x in_dim), write `out`
 * (nodes x out_dim). Returns 0 or a PP_E* code. */
typedef int (*pp_host_fn)(void *ctx, int64_t batch, const float *in, float *out, int64_t nodes,
                          int64_t in_dim, int64_t out_dim);

typedef struct pp_stage_config {
    const char *name;
    /* 0: a host stage that runs `host`; 1: one device; more: data parallel */
    int ndevices;
    pp_device *devices[PP_STAGE_MAX_DEVICES];
    /* Share of the batch's rows per device, any positive scale; all 0 means
     * equal shares. Each device's rows are split evenly over its requests. */
    double split[PP_STAGE_MAX_DEVICES];
    int requests;         /* per device, 1..16 */
    pp_workload workload; /* of the whole batch; each request gets its rows */
    pp_host_fn host;
    void *host_ctx;
} pp_stage_config;

/* What one run of a stage took, in session nanoseconds. For a stage with
 * more than one request slot, total_ns = partition_ns + max_device_ns +
 * merge_ns (the docs/architecture.md §4 stage time); otherwise the partition and merge
 * figures are 0 and total_ns is the measured span. */
typedef struct pp_stage_timing {
    int64_t start_ns, end_ns; /* the stage span: partition start to merge end */
    int64_t partition_ns, merge_ns;
    int64_t device_ns[PP_STAGE_MAX_DEVICES]; /* per device: first exec start to last exec end */
    int64_t max_device_ns;
    int64_t total_ns;
} pp_stage_timing;

/* Creates the stage's executors; a device's rows must cover its requests. */
int pp_stage_create(pp_session *s, const pp_stage_config *cfg, pp_stage **out, pp_error *err);
void pp_stage_free(pp_stage *st);
/* Runs one batch: `in` is nodes x in_dim, `out` nodes x out_dim. Spans go on
 * the calling thread's track (named after the stage if the thread has none
 * yet); one thread should run a given stage. `timing` may be NULL. */
int pp_stage_run(pp_stage *st, int64_t batch, const float *in, float *out, pp_stage_timing *timing,
                 pp_error *err);

/* ---- pipeline ---- */

#define PP_PIPELINE_MAX_STAGES 16

typedef struct pp_pipeline pp_pipeline;

/* One stage of a pipeline, by description. Its input is the previous stage's
 * output (the first stage's: the graph's features). */
typedef struct pp_stage_spec {
    const char *name;
    int ndevices; /* 0: a host stage (C API only) */
    const char *devices[PP_STAGE_MAX_DEVICES]; /* "cpu", "sim:NPU" */
    double split[PP_STAGE_MAX_DEVICES];        /* as in pp_stage_config */
    int requests;                              /* per device; 0 means 1 */
    pp_workload_kind kind;
    int64_t out_dim; /* output features per node */
    int layers;      /* matmul chain length; 0 means 1 */
    /* openvino devices only: a model file (IR .xml, .onnx) run instead of
     * the dummy model `kind`; its input and output must fit the stage's
     * nodes x in_dim and nodes x out_dim. NULL: the dummy model. */
    const char *model_path;
    pp_host_fn host;
    void *host_ctx;
} pp_stage_spec;

typedef struct pp_pipeline_config {
    const char *name;               /* for reports; NULL: "pipeline" */
    int64_t nodes, edges, features; /* the graph every batch carries */
    int batches;                    /* measured batches, >= 1 */
    int warmup;                     /* batches before them, in a "warm up" region */
    int queue_depth;                /* batches waiting between two stages, 1..64 */
    uint64_t seed;                  /* models and input data */
    pp_device_options devices;      /* the sim bus and simulated device definitions */
} pp_pipeline_config;

/* Defaults: 1024 nodes, 8192 edges, 64 features, 20 batches, 2 warm-up,
 * queue depth 2, seed 1, built-in simulated devices. */
void pp_pipeline_config_init(pp_pipeline_config *cfg);
/* Validates and copies the config (strings and device definitions too). */
int pp_pipeline_create(const pp_pipeline_config *cfg, pp_pipeline **out, pp_error *err);
/* Validates and appends a stage; messages name the field as the pipeline
 * file does ("stages[1].devices[0]: unknown backend ..."). */
int pp_pipeline_add_stage(pp_pipeline *p, const pp_stage_spec *spec, pp_error *err);
void pp_pipeline_free(pp_pipeline *p);
/* Reads a pipeline file (JSON, docs/pipeline.md). Errors name the file and
 * the key ("pipeline.json: stages[1].split: 3 values for 2 devices"), or
 * the line and column of a syntax error. */
int pp_pipeline_load(const char *path, pp_pipeline **out, pp_error *err);
/* The built-in demo: GraphPrep on cpu -> Embedding data parallel over cpu
 * and sim:NPU -> Classifier on sim:GPU with two requests. */
int pp_pipeline_demo(pp_pipeline **out, pp_error *err);
/* The same with the CPU work on `backend`: "cpu", or "openvino" (its CPU
 * device, "openvino:CPU"). PP_ENOTFOUND for another name. */
int pp_pipeline_demo_backend(const char *backend, pp_pipeline **out, pp_error *err);

const pp_pipeline_config *pp_pipeline_config_get(const pp_pipeline *p);
int pp_pipeline_stage_count(const pp_pipeline *p);

typedef struct pp_run_options {
    int serial;  /* 1: the naive loop, one batch through every stage at a time */
    int batches; /* > 0: overrides the pipeline's */
    int warmup;  /* >= 0: overrides the pipeline's; -1 keeps it */
} pp_run_options;

/* What a run achieved over its measured batches (warm-up excluded). */
typedef struct pp_pipeline_result {
    int64_t batches;     /* measured batches that left the last stage */
    int64_t wall_ns;     /* from the first measured batch entering to the last leaving */
    double batches_per_s;
} pp_pipeline_result;

/* Per stage, over the measured batches of the last run. */
typedef struct pp_stage_summary {
    const char *name;
    int ndevices;
    const char *device_labels[PP_STAGE_MAX_DEVICES]; /* "NPU (simulated)" */
    int64_t batches;
    int64_t mean_ns, max_ns; /* of the stage span */
    int64_t mean_partition_ns, mean_merge_ns;
    int64_t mean_device_ns[PP_STAGE_MAX_DEVICES];
} pp_stage_summary;

/* Runs the pipeline once, recording into `s` (NULL: no recording). `opt`
 * may be NULL. Opens its devices at the start and closes them at the end. */
int pp_pipeline_run(pp_pipeline *p, pp_session *s, const pp_run_options *opt,
                    pp_pipeline_result *result, pp_error *err);
int pp_pipeline_stage_summary(const pp_pipeline *p, int i, pp_stage_summary *out);

#ifdef __cplusplus
}
#endif
#endif
