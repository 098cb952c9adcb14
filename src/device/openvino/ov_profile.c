/* A request's OpenVINO profiling info as a pipeprof profile: the hardware
 * and transfer times and one op entry per reported op (docs/backends.md
 * states the rule; tests/device/test_openvino.c checks it). */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "device/openvino/ov_internal.h"

int pp_ov_is_transfer(const char *node_type) {
    static const char *const transfer[] = {"Reorder", "Convert", "Parameter", "Result"};
    for (size_t i = 0; i < sizeof transfer / sizeof transfer[0]; i++)
        if (node_type && strcmp(node_type, transfer[i]) == 0)
            return 1;
    return 0;
}

void pp_ov_names_free(pp_ov_names *names) {
    for (size_t i = 0; i < names->count; i++)
        free(names->node_name[i]);
    free(names->node_name);
    free(names->name);
    free(names->type);
    free(names->exec_type);
    memset(names, 0, sizeof *names);
}

/* Interns op i's names unless the cache has them from an earlier run. */
static int cache_names(pp_ov_names *names, size_t i, const ov_profiling_info_t *info) {
    if (i < names->count && strcmp(names->node_name[i], info->node_name) == 0)
        return 0;
    if (i >= names->cap) {
        size_t cap = names->cap ? 2 * names->cap : 64;
        char **node_name = realloc(names->node_name, cap * sizeof *node_name);
        if (node_name)
            names->node_name = node_name;
        pp_str *name = realloc(names->name, cap * sizeof *name);
        if (name)
            names->name = name;
        pp_str *type = realloc(names->type, cap * sizeof *type);
        if (type)
            names->type = type;
        pp_str *exec_type = realloc(names->exec_type, cap * sizeof *exec_type);
        if (exec_type)
            names->exec_type = exec_type;
        if (!node_name || !name || !type || !exec_type)
            return PP_ENOMEM;
        names->cap = cap;
    }
    char *copy = strdup(info->node_name ? info->node_name : "");
    if (!copy)
        return PP_ENOMEM;
    if (i < names->count)
        free(names->node_name[i]);
    else
        names->count = i + 1;
    names->node_name[i] = copy;
    names->name[i] = pp_intern(info->node_name);
    names->type[i] = pp_intern(info->node_type);
    names->exec_type[i] = pp_intern(info->exec_type);
    return 0;
}

int pp_ov_profile_fill(pp_request *r, const ov_profiling_info_list_t *list, int64_t start_ns,
                       int64_t end_ns, pp_ov_names *names, pp_op_profile **ops, size_t *cap) {
    r->hw_ns = r->xfer_ns = 0;
    r->nops = 0;
    if (list->size > PP_MAX_OPS) {
        while (*cap < list->size)
            if (pp_grow((void **)ops, cap, *cap, sizeof **ops) != 0)
                return PP_ENOMEM;
        r->ops = *ops;
    } else {
        r->ops = r->inline_ops;
    }
    int64_t t = start_ns;
    for (size_t i = 0; i < list->size; i++) {
        const ov_profiling_info_t *info = &list->profiling_infos[i];
        if (cache_names(names, i, info) != 0)
            return PP_ENOMEM;
        int executed = info->status == EXECUTED;
        uint64_t real = executed && info->real_time > 0 ? (uint64_t)info->real_time * 1000 : 0;
        int64_t begin = t < end_ns ? t : end_ns;
        int64_t end = t + (int64_t)real < end_ns ? t + (int64_t)real : end_ns;
        pp_op_profile *op = &r->ops[i];
        *op = (pp_op_profile){
            .name = names->name[i],
            .type = names->type[i],
            .exec_type = names->exec_type[i],
            .status = executed                         ? PP_OP_EXECUTED
                      : info->status == OPTIMIZED_OUT ? PP_OP_OPTIMIZED_OUT
                                                       : PP_OP_NOT_RUN,
            .transfer = pp_ov_is_transfer(info->node_type),
            .start_ns = begin,
            .real_ns = (uint64_t)(end - begin),
            .cpu_ns = executed && info->cpu_time > 0 ? (uint64_t)info->cpu_time * 1000 : 0,
            .hw_ns = real,
        };
        t += (int64_t)real;
        r->hw_ns += real;
        if (op->transfer)
            r->xfer_ns += real;
    }
    r->nops = list->size;
    return 0;
}
