/* ov_internal.h — the openvino backend's parts (built when CMake finds
 * OpenVINO's C API; docs/backends.md):
 *   ov_backend.c  requests, and the pp_backend table
 *   ov_device.c   the shared ov_core, device names, listing
 *   ov_model.c    reading, checking and compiling a model
 *   ov_ir.c       the dummy models as IR XML + weights, read from memory
 *   ov_profile.c  a request's profiling info -> hw_ns, xfer_ns, ops
 *   ov_export.cpp a model file saved with static input shapes */
#ifndef PP_DEVICE_OV_INTERNAL_H
#define PP_DEVICE_OV_INTERNAL_H

#include <openvino/c/openvino.h>

#include "device/backend.h"

/* ---- ov_ir.c ---- */

typedef struct pp_ov_ir {
    char *xml;
    size_t xml_len;
    unsigned char *bin; /* the weights the XML's Const layers point into */
    size_t bin_len;
} pp_ov_ir;

/* The workload's dummy model as IR v11. dynamic_rows (matmul only) leaves
 * the row dimension of the input and output dynamic (-1), as a model file
 * made for any batch would have it. */
int pp_ov_ir_build(const pp_workload *w, int dynamic_rows, pp_ov_ir *out, pp_error *err);
void pp_ov_ir_free(pp_ov_ir *ir);

/* ---- ov_profile.c ---- */

/* Whether an op of OpenVINO node type `node_type` moves or converts data
 * rather than computing, and so counts toward xfer_ns: Reorder, Convert, and
 * the Parameter / Result marshalling of the request's tensors. */
int pp_ov_is_transfer(const char *node_type);

/* The interned names of a request's ops, kept between runs: a compiled
 * model reports the same ops every run, so names are interned once. */
typedef struct pp_ov_names {
    size_t count, cap;
    char **node_name; /* the texts they were interned from */
    pp_str *name, *type, *exec_type;
} pp_ov_names;

/* Fills r's profile from OpenVINO's profiling info of the run that went
 * from start_ns to end_ns (session clock): hw_ns = Σ real_time of EXECUTED
 * ops, xfer_ns = the part of it in transfer ops; each op's hw_ns is its
 * real_time (EXECUTED ops; 0 otherwise). Ops are laid end to end from
 * start_ns in reported order, their spans clipped to end_ns. Grows r->ops
 * (into the backend-owned array ops, of cap entries) when the model has more ops than
 * PP_MAX_OPS. PP_ENOMEM when it cannot. */
int pp_ov_profile_fill(pp_request *r, const ov_profiling_info_list_t *list, int64_t start_ns,
                       int64_t end_ns, pp_ov_names *names, pp_op_profile **ops, size_t *cap);
void pp_ov_names_free(pp_ov_names *names);

/* ---- ov_device.c ---- */

/* OpenVINO's last error message (its last line: the first ones name C++
 * sources), or the status's description; valid until the thread's next
 * call. */
const char *pp_ov_last_error(ov_status_e st);
/* The pp_backend functions of devices; d->impl is the process's ov_core. */
int pp_ov_check(const char *name, const pp_device_options *opt, pp_error *err);
int pp_ov_open(pp_device *d, const pp_device_options *opt, pp_error *err);
int pp_ov_same(const pp_device *d, const pp_device_options *opt, pp_error *err);
void pp_ov_close(pp_device *d);
int pp_ov_list(const pp_device_options *opt, pp_device_list_fn fn, void *ctx, pp_error *err);

/* ---- ov_model.c ---- */

typedef struct pp_ov_model {
    pp_ov_ir ir;          /* the dummy model's XML and weights (they must outlive the model) */
    ov_tensor_t *weights; /* wraps ir.bin */
    ov_compiled_model_t *compiled;
    ov_element_type_e input_types[PP_MODEL_INPUTS_MAX]; /* of a model file's described inputs */
} pp_ov_model;

/* Reads c's model (its workload's model_path, or the dummy), checks its
 * shapes and compiles it for c's device at c->level into m; on failure m
 * holds what was made, for the caller to free. */
int pp_ov_model_compile(pp_compiled *c, pp_ov_model *m, pp_error *err);

/* ---- ov_export.cpp (C++: the C API cannot save a model) ---- */

/* Reads model_path, sets its inputs names[i] to the static shapes
 * (ranks[i], dims[i]) and saves it as IR at xml_path (weights beside it,
 * uncompressed). 0, or -1 with the reason in why. */
int pp_ov_export_static(const char *model_path, size_t n, const char *const *names,
                        const int *ranks, const int64_t *const *dims, const char *xml_path,
                        char *why, size_t why_len);

/* ---- ov_backend.c ---- */

/* A compiled model's property as text (e.g. "PERF_COUNT" -> "YES"), for
 * tests and reports; PP_EINVAL when the device does not have it. */
int pp_ov_compiled_property(const pp_compiled *c, const char *key, char *out, size_t len,
                            pp_error *err);

#endif
