/* pipeprof/device.h — devices that run dummy inference models, and what each
 * request reports about itself (docs/architecture.md §5).
 *
 * A device comes from a backend named by a spec string:
 *   "cpu"      real compute on worker threads of this process (one per request)
 *   "sim:NPU"  a simulated device driven by a latency model; "NPU" and "GPU"
 *              are built in, others are defined in pp_device_options
 *   "openvino:CPU", "openvino:GPU", "openvino:AUTO", "openvino:HETERO:GPU,CPU"
 *              any device OpenVINO offers, through its C API (built when
 *              OpenVINO is found: pp_features() lists "openvino")
 *   "opencl:0" the first OpenCL device (numbered over all platforms, as
 *              pp_device_list gives them), timed by OpenCL event profiling
 *              (built when OpenCL is found: pp_features() lists "opencl")
 * docs/backends.md says what "hardware time" means for each.
 *
 * A compiled model (pp_compiled) is a workload built for one device with N
 * requests, like an OpenVINO compiled model and its infer requests. A request
 * is filled (pp_request_input), started asynchronously (pp_request_start, with
 * an optional completion callback), waited for or polled, and then read: its
 * output and its profile (hardware total, the transfer part of it, one entry
 * per op).
 *
 * Opening a spec that is already open returns the same device (reference
 * counted), so two stages on "sim:NPU" share one NPU. Every function returns
 * 0 or a negative PP_E* code; functions that take a pp_error fill it. */
#ifndef PIPEPROF_DEVICE_H
#define PIPEPROF_DEVICE_H

#include "pipeprof/common.h"
#include "pipeprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_device pp_device;
typedef struct pp_compiled pp_compiled;
typedef struct pp_request pp_request;

/* ---- workloads: dummy models sized like the seeds' GNN stages ---- */

typedef enum pp_workload_kind {
    /* `layers` chained MatMuls: in_dim -> out_dim -> ... -> out_dim */
    PP_WORKLOAD_MATMUL = 0,
    /* GraphSAGE-like layer: each node's mean over itself and its in-neighbours
     * along the model's edge list, then MatMul, bias, ReLU */
    PP_WORKLOAD_SAGE = 1
} pp_workload_kind;

/* One input of a model file, set to a static shape (the sweep's "inputs":
 * docs/sweep.md). Float inputs are filled uniform in +-1, integer ones with
 * node indices uniform in [0, nodes) (an edge list), both from the seed. */
#define PP_MODEL_INPUT_MAX_RANK 4
#define PP_MODEL_INPUTS_MAX 8
typedef struct pp_model_input {
    const char *name; /* the model's input (tensor) name */
    int rank;         /* 1..PP_MODEL_INPUT_MAX_RANK */
    int64_t dims[PP_MODEL_INPUT_MAX_RANK];
} pp_model_input;

typedef struct pp_workload {
    pp_workload_kind kind;
    int64_t nodes;   /* rows of the input and the output */
    int64_t edges;   /* sage: edges of the model's graph; matmul ignores it */
    int64_t in_dim;  /* input features per node */
    int64_t out_dim; /* output features per node */
    int layers;      /* matmul: chain length >= 1; sage: 1 */
    uint64_t seed;   /* weights, bias and graph are generated from it */
    /* openvino only: a model file (IR .xml with its .bin beside it, or
     * .onnx) run instead of the dummy model; NULL: the dummy. Its one input
     * and one output must fit nodes x in_dim and nodes x out_dim FP32
     * (dynamic dimensions are set to them). Must outlive the compiled model. */
    const char *model_path;
    /* model files only: 0, the one input is nodes x in_dim as above; else
     * every input the model has, by name, each set to its static shape and
     * filled by the backend when the requests are made (pp_request_input
     * and pp_request_output are then not the model's tensors, and its
     * outputs may be of any shape). Must outlive the compiled model. */
    size_t ninputs;
    const pp_model_input *inputs;
} pp_workload;

/* Sets a small valid workload: matmul, 256 nodes, 1024 edges, 64 -> 64, one
 * layer, seed 1. */
void pp_workload_init(pp_workload *w);
/* PP_EINVAL with a message naming the field when a size is out of range
 * (nodes 1..2^22, dims 1..2^14, edges 0..2^26, layers 1..64, nodes*dim <= 2^26). */
int pp_workload_check(const pp_workload *w, pp_error *err);
/* Writes model file w->model_path with each of w->inputs set to its static
 * shape as OpenVINO IR (xml_path, and its .bin beside it), for devices that
 * compile static shapes only (an NPU). PP_EUNSUPPORTED when pipeprof was built
 * without OpenVINO; PP_EINVAL with OpenVINO's reason when the model cannot
 * be read or take those shapes. */
int pp_model_export_static(const pp_workload *w, const char *xml_path, pp_error *err);
/* Floating-point operations of one request (multiply-add = 2). */
uint64_t pp_workload_flops(const pp_workload *w);
const char *pp_workload_kind_name(pp_workload_kind kind); /* "matmul", "sage" */

/* ---- devices ---- */

/* A simulated device's latency model (docs/backends.md). */
typedef struct pp_sim_device_params {
    char name[32];     /* "NPU": the device name on tracks */
    int64_t launch_ns; /* driver / launch overhead before the device sees a request */
    double gflops;     /* compute rate in 1e9 FLOP/s */
    int units;         /* requests the device executes at once; more wait in its queue */
} pp_sim_device_params;

#define PP_SIM_BUS_GBPS_DEFAULT 12.0

/* The ranges a simulated device and bus accept: any value outside them
 * (1e-300 GFLOP/s, say) would make one request take longer than a run can
 * wait, so it is refused (PP_EINVAL) rather than slept on. */
#define PP_SIM_GFLOPS_MIN 0.01
#define PP_SIM_GFLOPS_MAX 1e7
#define PP_SIM_BUS_GBPS_MIN 0.01
#define PP_SIM_BUS_GBPS_MAX 1e5
#define PP_SIM_LAUNCH_NS_MAX 10000000000LL /* 10 s */

typedef struct pp_device_options {
    /* Bandwidth of the memory bus that all simulated devices share, in 1e9
     * bytes/s; 0 uses PP_SIM_BUS_GBPS_DEFAULT, else PP_SIM_BUS_GBPS_MIN..MAX. */
    double sim_bus_gbps;
    /* Simulated device definitions that add to or replace the built-in ones. */
    size_t nsim;
    const pp_sim_device_params *sim;
} pp_device_options;

/* Opens the device a spec names ("cpu", "sim:NPU"); `opt` may be NULL. An
 * unknown backend or device is PP_ENOTFOUND with a message listing what
 * exists; opening an open simulated device (or a second bus) with different
 * parameters is PP_EINVAL. */
int pp_device_open(const char *spec, const pp_device_options *opt, pp_device **out, pp_error *err);
/* Whether `spec` names an existing backend and device with valid
 * parameters, without opening it; same messages as pp_device_open. */
int pp_device_check(const char *spec, const pp_device_options *opt, pp_error *err);
/* Drops one reference; accepts NULL. Its compiled models must be freed first. */
void pp_device_close(pp_device *d);
/* The device name used for tracks: "CPU", "NPU". */
const char *pp_device_name(const pp_device *d);
/* For text meant for people: "CPU", "NPU (simulated)". */
const char *pp_device_label(const pp_device *d);
/* PP_TRACK_SIMULATED for simulated devices, PP_TRACK_HW_MEAN where hw_ns is a
 * running mean (OpenVINO CPU), else 0: the flags of its tracks. */
unsigned pp_device_flags(const pp_device *d);
/* 1 when the device's requests report as hw_ns a running mean over the runs
 * so far rather than their own time (OpenVINO's CPU plugin: docs/backends.md),
 * so that a calibration must time them by wall; else 0. */
int pp_device_hw_running_mean(const pp_device *d);
/* Reserves `n` stream numbers on the device and returns the first, so that
 * every request slot of every executor on it gets a row of its own. */
int pp_device_reserve_streams(pp_device *d, int n);
/* How a device's own timestamps were mapped into the session clock. */
typedef struct pp_device_clock {
    const char *method; /* "session clock" (the device stamps with pp_now itself),
                         * "clGetDeviceAndHostTimer", "marker QUEUED" (docs/backends.md) */
    int64_t offset_ns;  /* session ns = device ns + offset_ns */
    int64_t error_ns;   /* bound on the error of a mapped timestamp when it was measured */
} pp_device_clock;
/* The alignment the device was opened with; `fresh` non-zero measures it
 * anew (without changing the one in use), to see drift. Fails (message in
 * err) when a fresh measurement fails. */
int pp_device_clock_get(pp_device *d, int fresh, pp_device_clock *out, pp_error *err);

/* The built-in parameters of simulated device `name`; PP_ENOTFOUND if none. */
int pp_sim_device_defaults(const char *name, pp_sim_device_params *out);

/* One device a backend can open, as pp_device_list reports it. */
typedef struct pp_device_info {
    const char *backend;     /* "cpu", "sim", "openvino" */
    const char *spec;        /* what pp_device_open takes: "sim:NPU", "openvino:GPU.0" */
    const char *description; /* for people: "AMD EPYC", "simulated: launch 250 us, ..." */
    unsigned flags;          /* PP_TRACK_SIMULATED for simulated devices */
} pp_device_info;
typedef void (*pp_device_list_fn)(void *ctx, const pp_device_info *info);
/* Calls fn for every device of `backend` ("sim"; NULL: of every backend,
 * backend by backend); the strings live for the call only. `opt` (may be
 * NULL) adds simulated devices. PP_ENOTFOUND for an unknown backend (the
 * message lists them); fails when a backend cannot enumerate its devices. */
int pp_device_list(const char *backend, const pp_device_options *opt, pp_device_list_fn fn,
                   void *ctx, pp_error *err);

/* ---- compiled models and requests ---- */

/* Builds `w` on `d` with `nrequests` (1..64) requests, profiling at level 2. */
int pp_compiled_create(pp_device *d, const pp_workload *w, int nrequests, pp_compiled **out,
                       pp_error *err);
/* The same at profiling `level` (0..2, as pp_session_level): what the
 * requests' profiles hold. A backend whose profiling costs time turns it on
 * at level >= 1 only (openvino compiles with PERF_COUNT=YES then); at level
 * 0 its profiles are empty (hw_ns 0, no ops). cpu and sim always profile. */
int pp_compiled_create_level(pp_device *d, const pp_workload *w, int nrequests, int level,
                             pp_compiled **out, pp_error *err);
/* Frees the model and its requests; accepts NULL. No request may be running. */
void pp_compiled_free(pp_compiled *c);
const pp_workload *pp_compiled_workload(const pp_compiled *c);
pp_device *pp_compiled_device(const pp_compiled *c);
int pp_compiled_request_count(const pp_compiled *c);
pp_request *pp_compiled_request(pp_compiled *c, int i);

/* The request's tensors, row-major floats: input nodes x in_dim, output
 * nodes x out_dim. Write the input before start; read the output after the
 * request finished. */
float *pp_request_input(pp_request *r);
const float *pp_request_output(const pp_request *r);
/* Its index within its compiled model. */
int pp_request_index(const pp_request *r);

/* Called once when a started request finishes, on the backend's thread.
 * `status` is 0 or a PP_E* code. The request may be started again from the
 * callback or after it. */
typedef void (*pp_request_done_fn)(void *ctx, pp_request *r, int status);

/* Starts the request asynchronously; `done` may be NULL. PP_ESTATE if it is
 * running. */
int pp_request_start(pp_request *r, pp_request_done_fn done, void *ctx);
/* Blocks until the request is not running; returns the status of its last
 * run (0 if it never ran). */
int pp_request_wait(pp_request *r);
/* 1 when the request is not running, 0 while it runs. */
int pp_request_poll(pp_request *r);

typedef enum pp_op_status {
    PP_OP_EXECUTED = 0,
    PP_OP_NOT_RUN = 1,
    PP_OP_OPTIMIZED_OUT = 2
} pp_op_status;

/* One op (layer, kernel, copy) of a finished request. Names are interned.
 * openvino reports no op start times: its ops are laid end to end from the
 * request's start in reported order (docs/backends.md). */
typedef struct pp_op_profile {
    pp_str name;        /* "matmul_1" */
    pp_str type;        /* "MatMul", "Reorder", "Transfer" */
    pp_str exec_type;   /* how it ran: "ref_c_FP32", "simulated" */
    pp_op_status status;
    int transfer;       /* 1 when the op moves data: it counts toward xfer_ns */
    int64_t start_ns;   /* session clock (pp_now); ran over [start_ns, start_ns + real_ns) */
    uint64_t real_ns;   /* wall time of the op (simulated devices: modeled; openvino: its
                         * reported time, clipped to the request's end) */
    uint64_t cpu_ns;    /* CPU time of the op; 0 where the device does not report it */
    uint64_t hw_ns;     /* the op's part of the request's hw_ns */
} pp_op_profile;

/* What a finished request reports. The three device times (session clock,
 * 0 = not known) split its wall (docs/analysis.md, wall decomposition):
 * host call -> queued_ns is submit, queued_ns -> dev_start_ns and any time
 * between dev_start_ns and dev_end_ns beyond hw_ns is queue, dev_end_ns ->
 * the host seeing it is completion. */
typedef struct pp_request_profile {
    uint64_t hw_ns;     /* device execution time of the request (sum of op hw_ns) */
    uint64_t xfer_ns;   /* data-movement part of hw_ns */
    int64_t queued_ns;    /* the device (or its driver's queue) has the request */
    int64_t dev_start_ns; /* its first command started */
    int64_t dev_end_ns;   /* its last command ended */
    uint64_t bytes_in;    /* bytes of the tensors it read (its inputs) */
    uint64_t bytes_out;   /* bytes of the tensors it wrote (its outputs); 0 = not known */
    size_t nops;
    const pp_op_profile *ops; /* valid until the request is started again */
} pp_request_profile;

/* The profile of the request's last finished run; PP_ESTATE while running or
 * before its first run. */
int pp_request_profile_get(pp_request *r, pp_request_profile *out);

/* Where a mark's time came from. */
typedef enum pp_mark_clock {
    PP_MARK_DEVICE = 0, /* timestamped on the device's side (sim, opencl) */
    PP_MARK_HOST = 1    /* host time: the backend cannot timestamp on the device (openvino, cpu) */
} pp_mark_clock;

/* A mark `name` on the device stream that request r runs on, drawn on
 * `track` (its row): recorded at the time the device reaches it, after
 * the run in flight on that stream, if any (later, when that run ends);
 * an idle stream reaches it at once. A backend that cannot timestamp on
 * the device records it at host time now. Either way the mark carries the
 * annotation "clock" = "device" or "host", and *clock (may be NULL) says
 * which. PP_ENOMEM; recording errors as pp_mark. */
int pp_request_mark(pp_request *r, pp_session *s, pp_track track, pp_str name,
                    pp_mark_clock *clock);

#ifdef __cplusplus
}
#endif
#endif
