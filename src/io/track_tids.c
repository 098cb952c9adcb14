/* track_tids.c — real thread ids in exports (track_tids.h). */
#include "io/track_tids.h"

#include <stdlib.h>

typedef struct tid_of {
    int64_t tid;
    uint32_t track;
} tid_of;

static int by_tid(const void *a, const void *b) {
    const tid_of *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

int track_export_tids(const pp_model *m, int64_t lo, int64_t hi, int64_t *out) {
    size_t n = pp_model_track_count(m), k = 0;
    tid_of *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return PP_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const pp_track_info *t = pp_model_track(m, i);
        out[i] = -1;
        if (t->kind == PP_TRACK_KIND_THREAD && t->tid > 0 && (t->tid < lo || t->tid > hi))
            v[k++] = (tid_of){t->tid, i};
    }
    qsort(v, k, sizeof *v, by_tid);
    for (size_t i = 0; i < k; i++) /* a tid two tracks share (two processes) keeps neither */
        if ((i == 0 || v[i - 1].tid != v[i].tid) && (i + 1 == k || v[i + 1].tid != v[i].tid))
            out[v[i].track] = v[i].tid;
    free(v);
    return PP_OK;
}
