/* The contention factor (docs/architecture.md §4): how much slower each stage ran on each
 * device inside the pipeline than alone, as mean hw_ns inside W over the
 * isolated hw_ns a sweep's lookup table gives. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

uint32_t an_find_stage(const pp_report *r, const char *name) {
    for (uint32_t s = 0; s < r->nstages; s++) /* the names, set by the stage order */
        if (strcmp(r->stage_names[s], name) == 0)
            return s;
    return AN_NONE;
}

uint32_t an_find_device(const pp_report *r, const char *name) {
    for (uint32_t d = 0; d < r->ndevices; d++)
        if (strcmp(r->devices[d].name, name) == 0)
            return d;
    return AN_NONE;
}

int an_contention_compute(pp_report *r, const pp_analyze_options *o, pp_error *err) {
    r->has_contention = 1;
    r->contention = calloc(o->nisolated, sizeof *r->contention);
    if (!r->contention)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->nisolated; i++) {
        const pp_isolated_hw *iso = &o->isolated[i];
        uint32_t s = an_find_stage(r, iso->stage), d = an_find_device(r, iso->device);
        if (s == AN_NONE || d == AN_NONE || iso->hw_ns <= 0)
            continue;
        uint64_t n = 0, total = 0;
        for (size_t k = 0; k < r->nexecs; k++) {
            const an_exec *e = &r->execs[k];
            uint64_t hw = pp_cols_hw(&r->c, e->event);
            if (an_exec_inside(r, e) && e->stage == s && an_exec_device(r, e) == d && hw != 0) {
                n++;
                total += hw;
            }
        }
        if (n == 0)
            continue;
        pp_contention_stats *c = &r->contention[r->ncontention++];
        *c = (pp_contention_stats){.stage = s, .device = d, .execs = n,
                                   .mean_hw_ns = (int64_t)(total / n),
                                   .isolated_hw_ns = iso->hw_ns};
        c->factor = an_ratio(c->mean_hw_ns, c->isolated_hw_ns);
    }
    return PP_OK;
}
