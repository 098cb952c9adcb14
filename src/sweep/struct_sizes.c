/* pp_struct_size: the sizes of the public structs that bindings mirror.
 * It lives in the top layer of the library, the one that knows every
 * layer's types (docs/architecture.md §2); a struct added to a binding's
 * mirrors is added here too. */
#include <string.h>

#include "pipeprof/analyze.h"
#include "pipeprof/common.h"
#include "pipeprof/device.h"
#include "pipeprof/model.h"
#include "pipeprof/pipeline.h"
#include "pipeprof/subscribe.h"
#include "pipeprof/trace.h"

#define SIZE_OF(type) {#type, sizeof(type)}

static const struct {
    const char *name;
    size_t size;
} sizes[] = {
    SIZE_OF(pp_error),
    SIZE_OF(pp_session_config),
    SIZE_OF(pp_span_rec),
    SIZE_OF(pp_session_stats),
    SIZE_OF(pp_event_columns),
    SIZE_OF(pp_track_info),
    SIZE_OF(pp_model_meta),
    SIZE_OF(pp_annotation),
    SIZE_OF(pp_analyze_options),
    SIZE_OF(pp_workload),
    SIZE_OF(pp_stage_config),
    SIZE_OF(pp_stage_timing),
    SIZE_OF(pp_executor_config),
    SIZE_OF(pp_exec_window),
    SIZE_OF(pp_subscription_config),
    SIZE_OF(pp_subscription_stats),
};

size_t pp_struct_size(const char *type) {
    for (size_t i = 0; type && i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, type) == 0)
            return sizes[i].size;
    return 0;
}
