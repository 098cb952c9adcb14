/* pipeline_impl.h — the pipeline object shared by its description
 * (pipeline.c, config.c) and its runner (run.c). */
#ifndef PP_PIPELINE_IMPL_H
#define PP_PIPELINE_IMPL_H

#include "pipeprof/pipeline.h"

typedef struct pipeline_stage {
    pp_stage_spec spec;      /* name and device strings point into the pool below */
    char name[64];
    char devices[PP_STAGE_MAX_DEVICES][64];
    char model_path[4096];
    pp_stage_summary summary; /* of the last run; labels point into the run's devices */
    char labels[PP_STAGE_MAX_DEVICES][48];
} pipeline_stage;

struct pp_pipeline {
    pp_pipeline_config cfg; /* name and sim points into the copies below */
    char name[64];
    pp_sim_device_params *sim;
    int nstages;
    pipeline_stage stages[PP_PIPELINE_MAX_STAGES];
};

/* The workload stage i runs on one whole batch. */
void pp_pipeline_stage_workload(const pp_pipeline *p, int i, pp_workload *w);

#endif
