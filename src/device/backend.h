/* backend.h — what a backend implements, and the device, compiled-model and
 * request structures every backend shares (docs/architecture.md §5).
 *
 * backend.c owns the public functions: it parses specs, keeps the registry of
 * open devices, allocates compiled models and requests with their tensors and
 * runs the request state machine (idle -> running -> finished). A backend
 * fills in the rest through this table. */
#ifndef PP_DEVICE_BACKEND_H
#define PP_DEVICE_BACKEND_H

#include <pthread.h>

#include "device/workload.h"
#include "pipeprof/device.h"

typedef struct pp_backend {
    const char *name;         /* "cpu", "sim": the part of a spec before ':' */
    const char *default_name; /* the device of a spec without ':'; NULL: one must be named */
    int runs_model_files;     /* whether it runs a workload's model_path */
    /* Whether device `name` exists and its parameters are valid; fails with
     * a message (PP_ENOTFOUND naming the devices that exist). */
    int (*check)(const char *name, const pp_device_options *opt, pp_error *err);
    /* Opens the checked device d->name (spec and label are set too): fills
     * d->flags, d->label and d->impl. Called under the registry lock. */
    int (*open)(pp_device *d, const pp_device_options *opt, pp_error *err);
    /* Whether the open device d also satisfies a new open with `opt`; fills
     * err when it does not. */
    int (*same)(const pp_device *d, const pp_device_options *opt, pp_error *err);
    void (*close)(pp_device *d);
    /* Builds c->impl and each request's r->impl (tensors are allocated). */
    int (*compile)(pp_compiled *c, pp_error *err);
    void (*free_compiled)(pp_compiled *c);
    /* Runs r asynchronously; the backend calls pp_request_finish when done. */
    int (*start)(pp_request *r);
    /* The device's clock alignment (pp_device_clock_get); NULL: the device
     * stamps with the session clock. */
    int (*clock)(pp_device *d, int fresh, pp_device_clock *out, pp_error *err);
    /* Calls fn once per device the backend can open (pp_device_list). */
    int (*list)(const pp_device_options *opt, pp_device_list_fn fn, void *ctx, pp_error *err);
    /* Marks on a device stream (pp_request_mark, mark.c): the device time, on
     * the session clock, at which r's last run ended on the device; called
     * from pp_request_finish, before the completion callback. NULL when the
     * device cannot timestamp on its side (openvino): marks then take host
     * time and say so. sim answers from its model; opencl from the END time
     * of the run's profiling event. */
    int (*run_device_end)(const pp_request *r, int64_t *end_ns);
} pp_backend;

extern const pp_backend pp_backend_cpu;
extern const pp_backend pp_backend_sim;
#ifdef PP_HAVE_OPENVINO
extern const pp_backend pp_backend_openvino;
#endif
#ifdef PP_HAVE_OPENCL
extern const pp_backend pp_backend_opencl;
#endif

/* Adds a backend beside cpu and sim (up to 8 in all), for specs naming
 * b->name; `b` must outlive every device opened from it. For backends built
 * outside this layer, such as the tests' fault-injecting one. PP_EINVAL when
 * the name is taken. */
int pp_backend_add(const pp_backend *b, pp_error *err);

struct pp_device {
    const pp_backend *backend;
    char spec[48];     /* canonical: "cpu", "sim:NPU" */
    char name[32];     /* "CPU", "NPU": the track name; open may change it */
    char label[48];    /* "NPU (simulated)" */
    unsigned flags;    /* PP_TRACK_SIMULATED */
    int refs;          /* guarded by the registry lock */
    int next_stream;   /* guarded by the registry lock */
    void *impl;
    pp_device *next;   /* registry list */
};

enum { PP_REQ_IDLE = 0, PP_REQ_RUNNING = 1, PP_REQ_FINISHED = 2 };

#define PP_MAX_OPS (PP_WL_MAX_OPS + 2) /* the workload's ops plus a backend's copies */

struct pp_request {
    pp_compiled *compiled;
    int index;
    float *input, *output;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int state;         /* PP_REQ_*, guarded by lock */
    int callbacks;     /* completions (marks, callback) still running, guarded by lock */
    int status;        /* of the last run */
    pp_request_done_fn done;
    void *done_ctx;
    /* Written by the backend while running, read after it finished. */
    uint64_t hw_ns, xfer_ns;
    int64_t queued_ns, dev_start_ns, dev_end_ns; /* pp_request_profile's; 0 = unknown */
    /* The bytes of its input and output tensors: the workload's FP32 tensors,
     * set when the request is made; a backend whose tensors differ (a model
     * file's own inputs) sets them at compile. */
    uint64_t bytes_in, bytes_out;
    size_t nops;
    pp_op_profile *ops; /* inline_ops, or a backend's own array when it reports more ops */
    pp_op_profile inline_ops[PP_MAX_OPS];
    struct pp_stream_mark *marks; /* waiting for the run in flight, guarded by lock */
    void *impl;
};

struct pp_compiled {
    pp_device *device;
    pp_workload workload;
    pp_wl_op plan[PP_WL_MAX_OPS]; /* the compute ops, from pp_wl_plan */
    size_t nplan;
    int nrequests;
    int level;  /* profiling level 0..2: a backend whose profiling costs runs it at >= 1 */
    pp_request *requests;
    void *impl;
};

/* Called by a backend, on its own thread, when r's run ended with `status`:
 * marks it finished, wakes waiters and runs the completion callback. */
void pp_request_finish(pp_request *r, int status);
/* Records the marks that waited for r's run to end (mark.c); `marks` was
 * taken from r->marks under r->lock as the run was marked finished. */
void pp_request_record_marks(pp_request *r, struct pp_stream_mark *marks);

/* The thread a backend keeps per request slot (req_thread.c): each kick
 * makes it call run(r) once, off the caller's thread; run ends with
 * pp_request_finish. */
typedef struct pp_req_thread {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int pending, quit, started; /* pending and quit guarded by lock */
    pp_request *r;
    void (*run)(pp_request *r);
} pp_req_thread;

/* Starts the thread, named "pp-PREFIX-reqN"; PP_ENOMEM when it cannot. */
int pp_req_thread_start(pp_req_thread *t, pp_request *r, void (*run)(pp_request *r),
                        const char *prefix);
void pp_req_thread_kick(pp_req_thread *t);
/* Lets a kicked run finish, then joins the thread; accepts one never started. */
void pp_req_thread_stop(pp_req_thread *t);

#endif
