/* sweep_impl.h — what the files of the sweep layer share: the parsed config,
 * the sweep directory's files and the record of one combination.
 *
 * Combination i of a config is (size, device, stage) with
 * i = (size * ndevices + device) * nstages + stage. */
#ifndef PP_SWEEP_IMPL_H
#define PP_SWEEP_IMPL_H

#include <jansson.h>
#include <sys/types.h>

#include "pipeline/json_config.h"
#include "pipeprof/sweep.h"

#define SW_NAME_MAX 64
#define SW_MAX_GROUPS 16
/* min_time_ms by default: a scheduler slice of a loaded machine is a few
 * ms, so a phase shorter than several of them measures the machine's load
 * more than the stage */
#define SW_MIN_TIME_MS 20
/* runs of one timed phase at most, whatever min_time_ms asks */
#define SW_MAX_RUNS 1000000

typedef struct sw_size {
    int64_t nodes, edges, features;
} sw_size;

/* A dimension of a model file's input: a number, or one of the size's. */
#define SW_DIM_NODES (-1)
#define SW_DIM_EDGES (-2)
#define SW_DIM_FEATURES (-3)

typedef struct sw_input {
    char name[SW_NAME_MAX];
    int rank;
    int64_t dims[PP_MODEL_INPUT_MAX_RANK]; /* > 0, or SW_DIM_* */
} sw_input;

typedef struct sw_stage {
    char name[SW_NAME_MAX];
    pp_workload_kind kind;
    int64_t in_dim; /* 0: the size's features */
    int64_t out_dim;
    int layers;
    char *model_path; /* the user's model file (absolute), or NULL: the dummy `kind` */
    size_t ninputs;
    sw_input inputs[PP_MODEL_INPUTS_MAX];
    int fallback; /* index into devices measured when this stage fails on one; -1: none */
} sw_stage;

struct pp_sweep_config {
    char name[SW_NAME_MAX];
    size_t nsizes, ndevices, nstages;
    sw_size *sizes;
    /* ndevices swept, then nfallback more only stages' fallbacks name */
    size_t nfallback;
    char (*devices)[SW_NAME_MAX];
    int *static_shapes; /* per device: model files are exported per size and compiled static */
    int *group;         /* per swept device: 1.. its group sharing hardware, 0 none */
    char group_hw[SW_MAX_GROUPS][8]; /* group g's hardware: "cores", "bus", "memory" */
    size_t ngroups;
    sw_stage *stages;
    int warmup, iterations;
    int min_time_ms; /* each timed phase runs at least this long, beyond `iterations` */
    uint64_t seed;
    pp_device_options devopt;
    pp_sim_device_params sim[PP_JSON_MAX_SIM_DEVICES];
    char *canonical; /* the normalized config as compact JSON with sorted keys */
    char fingerprint[17];
};

/* Reads a config; `check_devices` = 0 skips asking the backends whether the
 * devices exist (merging shards on a machine without them). */
int sw_config_load(const char *path, int check_devices, pp_sweep_config **out, pp_error *err);

/* The pieces of combination i. */
void sw_combination(const pp_sweep_config *c, size_t i, size_t *size, size_t *device,
                    size_t *stage);
/* Combination i's workload (unchecked); a model file's inputs are set to
 * the size's shapes in `inputs` (room for PP_MODEL_INPUTS_MAX). */
void sw_workload(const pp_sweep_config *c, size_t i, pp_workload *w, pp_model_input *inputs);
/* The "model" of a raw record: "file" for a model file, else the dummy's
 * kind ("matmul", "sage"); measure.c writes it, record_check.c checks it. */
static inline const char *sw_model_name(const pp_workload *w) {
    return w->model_path ? "file" : pp_workload_kind_name(w->kind);
}
/* Reads a stage's "model_path", "inputs" and "fallback" (sw_model.c); the
 * fallback is a device spec added to c->devices when not swept. */
int sw_model_read(pp_json_loader *ld, json_t *o, const char *where, pp_sweep_config *c,
                  sw_stage *s);
/* The stage's model keys as the canonical config writes them, into o. */
void sw_model_canonical(const pp_sweep_config *c, const sw_stage *s, json_t *o);
/* FNV-1a of the model files' bytes (an IR's .bin with its .xml) folded into
 * h, so that a changed model file changes the fingerprint. */
uint64_t sw_model_digest(const pp_sweep_config *c, uint64_t h);
/* Bytes the combination moves: its input plus its output tensor. */
uint64_t sw_bytes(const pp_workload *w);

/* Measures combination i on the open device `dev` (NULL: it could not be
 * opened, `why` says why) into a new raw record. `on` is the index in
 * c->devices of `dev`: the combination's own device, or its stage's
 * fallback. A model-file stage on a static-shape device is first exported
 * at the size to DIR/exported_models/<stage>/<nodes>_<edges>.xml, and that
 * file is what is compiled and measured. */
int sw_measure(const pp_sweep_config *c, size_t i, size_t on, pp_device *dev, const char *why,
               const char *dir, json_t **rec, pp_error *err);

/* Whether a timed phase of `runs` runs over `elapsed_ns` is done: at least
 * the config's iterations and its min_time_ms (SW_MAX_RUNS at most). The
 * sweep's runs alone and the co-run's runs together both end by it. */
int sw_phase_done(const pp_sweep_config *c, size_t runs, int64_t elapsed_ns);

/* 1 when rec is a record of combination *index of config c, written as
 * sw_measure writes one (every field present with its type and this
 * combination's value); else 0 with the first problem in why. */
int sw_record_check(const pp_sweep_config *c, json_t *rec, size_t *index, char *why, size_t len);

/* ---- the sweep directory ---- */

#define SW_RAW "raw.jsonl"
#define SW_CONFIG "config.json"
#define SW_STATE "fingerprint.json"
#define SW_LOOKUP "lookup_table.json"
#define SW_BANDWIDTH "bandwidth_table.json"
#define SW_REPORT "report.txt"
#define SW_CO_RUN "co_run.jsonl"

/* ---- co-run calibration (corun.c) ---- */

/* Reads the config's "shared" (may be NULL) and detects the rest into
 * c->group (sharing.c). */
int sw_sharing_read(pp_json_loader *ld, json_t *list, pp_sweep_config *c);
/* Whether a device spec runs on the host's cores (cpu, openvino's CPU and
 * AUTO): such a device runs each pipeline stage on threads of its own, so
 * two stages on it run at once and contend for the cores. */
int sw_spec_on_host_cores(const char *spec);
/* The groups as the config and the lookup table write them:
 * [{"hardware": "cores", "devices": [...]}, ...]. */
json_t *sw_sharing_json(const pp_sweep_config *c);
/* Measures every pair of stages on every pair of sharing devices at every
 * size together, appending to DIR/co_run.jsonl what is not there yet;
 * recs are the complete sweep's records (the times alone). */
int sw_co_run(const pp_sweep_config *c, const char *dir, json_t *const *recs, size_t *ran,
              pp_error *err);
/* DIR/co_run.jsonl's records by key (an empty object when none). */
json_t *sw_co_run_read(const char *dir);

/* What DIR/fingerprint.json says. */
typedef struct sw_state {
    char fingerprint[17];
    int shard, shards;
} sw_state;

/* "dir/name" into buf; PP_EINVAL when it does not fit. */
int sw_path(char *buf, size_t len, const char *dir, const char *name, pp_error *err);
/* Reads DIR/fingerprint.json; PP_ENOTFOUND when absent. */
int sw_state_read(const char *dir, sw_state *st, pp_error *err);
/* Writes DIR/config.json and DIR/fingerprint.json, each atomically. */
int sw_state_write(const char *dir, const pp_sweep_config *c, int shard, int shards,
                   pp_error *err);
/* Reads DIR/raw.jsonl into recs[index] (ncombinations slots, NULL where
 * absent; the caller decrefs them). A last line cut off by a kill is left
 * out and *good_end is the length of the complete lines before it; any other
 * line that is not a record of this config is PP_EINVAL naming it. A missing
 * file reads as empty. */
int sw_raw_read(const char *dir, const pp_sweep_config *c, json_t **recs, size_t *count,
                off_t *good_end, pp_error *err);
/* Appends one record as one line with a single write, then fsyncs. */
int sw_raw_append(int fd, const char *path, json_t *rec, pp_error *err);
/* Writes the whole raw.jsonl of recs (every slot set) atomically. */
int sw_raw_write(const char *dir, const pp_sweep_config *c, json_t *const *recs, pp_error *err);
/* Writes a JSON value to path atomically, indented. */
int sw_json_write(const char *path, json_t *v, pp_error *err);

/* Writes lookup_table.json, bandwidth_table.json and report.txt from the
 * records of every combination. */
int sw_tables_write(const char *dir, const pp_sweep_config *c, json_t *const *recs,
                    pp_error *err);

#endif
