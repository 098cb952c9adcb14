/* batchmap.c — batch numbers as dense indexes 0..count-1.
 *
 * Stage times and cycles are tables indexed by batch. Batch numbers are
 * usually 0..N-1 (a pipeline run), so the index is an offset; a foreign trace
 * may number them sparsely (step ids, epoch-scale ids), and then the index is
 * the rank among the distinct numbers, found by binary search. Either way
 * the indexes ascend with the batch numbers. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"

int an_batch_map_dense(an_batch_map *bm, int64_t lo, int64_t hi, size_t nitems) {
    *bm = (an_batch_map){0};
    if (nitems == 0)
        return 1;
    uint64_t range = (uint64_t)hi - (uint64_t)lo; /* hi >= lo >= 0 */
    if (range > 4 * (uint64_t)nitems + 1024)
        return 0;
    bm->base = lo;
    bm->count = (size_t)range + 1;
    return 1;
}

int an_batch_map_sparse(pp_report *r, an_batch_map *bm, int64_t *values, size_t n) {
    *bm = (an_batch_map){0};
    int64_t *tmp = an_buf_get(&r->sort_tmp, (n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return PP_ENOMEM;
    an_i64_sort(values, n, tmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || values[i] != values[k - 1])
            values[k++] = values[i];
    bm->sorted = malloc((k ? k : 1) * sizeof *bm->sorted);
    if (!bm->sorted)
        return PP_ENOMEM;
    memcpy(bm->sorted, values, k * sizeof *values);
    bm->count = k;
    return PP_OK;
}

size_t an_batch_index_sparse(const an_batch_map *bm, int64_t batch) {
    size_t lo = 0, hi = bm->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bm->sorted[mid] < batch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < bm->count && bm->sorted[lo] == batch ? lo : AN_NO_BATCH;
}
