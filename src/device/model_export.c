/* pp_model_export_static: a model file saved with static input shapes, for
 * devices that compile nothing else. Needs OpenVINO (ov_export.cpp). */
#include "core/error.h"
#include "pipeprof/device.h"

#ifdef PP_HAVE_OPENVINO
#include <stdio.h>

int pp_ov_export_static(const char *model_path, size_t n, const char *const *names,
                        const int *ranks, const int64_t *const *dims, const char *xml_path,
                        char *why, size_t why_len);

int pp_model_export_static(const pp_workload *w, const char *xml_path, pp_error *err) {
    int rc = pp_workload_check(w, err);
    if (rc != PP_OK)
        return rc;
    if (!w->model_path || !w->ninputs)
        return pp_set_error(err, PP_EINVAL, "export: needs a model file with its inputs described");
    FILE *f = fopen(w->model_path, "rb");
    if (!f)
        return pp_set_error(err, PP_ENOTFOUND, "export: cannot open %s", w->model_path);
    fclose(f);
    const char *names[PP_MODEL_INPUTS_MAX];
    int ranks[PP_MODEL_INPUTS_MAX];
    const int64_t *dims[PP_MODEL_INPUTS_MAX];
    for (size_t i = 0; i < w->ninputs; i++) {
        names[i] = w->inputs[i].name;
        ranks[i] = w->inputs[i].rank;
        dims[i] = w->inputs[i].dims;
    }
    char why[400];
    if (pp_ov_export_static(w->model_path, w->ninputs, names, ranks, dims, xml_path, why,
                            sizeof why) != 0)
        return pp_set_error(err, PP_EINVAL, "export: %s at %lld nodes, %lld edges: %s",
                            w->model_path, (long long)w->nodes, (long long)w->edges, why);
    return PP_OK;
}
#else
int pp_model_export_static(const pp_workload *w, const char *xml_path, pp_error *err) {
    (void)xml_path;
    return pp_set_error(err, PP_EUNSUPPORTED,
                        "export: %s: static models are saved with OpenVINO, and this pipeprof "
                        "was built without it (pipeprof --version)",
                        w->model_path ? w->model_path : "(no model file)");
}
#endif
