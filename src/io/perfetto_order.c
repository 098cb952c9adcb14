/* Emitting order for the Perfetto writer (io/perfetto_order.h).
 *
 * A recording's model is sorted by start already (pp_model_sort_by_time),
 * but a span is recorded when it ends, so at one start a child often comes
 * before its parent: then only the short runs of one start are put in
 * order, by insertion. Any other model is radix-sorted: a comparison sort of
 * a million events took as long as encoding them, while an LSD radix sort
 * on (start, longer) with 11-bit digits takes a few passes over the refs,
 * skipping the digits that every event shares. */
#include <stdlib.h>

#include "model/ann_table.h"
#include "core/error.h"
#include "core/grow.h"
#include "io/perfetto_order.h"
#include "model/columns.h"

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)

static uint64_t key_of(const pf_event_ref *r, int primary) {
    return primary ? r->start : r->longer;
}

static int bits_of(uint64_t max) {
    int bits = 0;
    for (; max; max >>= 1)
        bits++;
    return bits;
}

/* One stable counting-sort pass from src to dst on the digit at `shift` of
 * the start (primary) or longer key; 0 when every ref has the same digit
 * there and nothing moved. */
static int radix_pass(const pf_event_ref *src, pf_event_ref *dst, size_t n, int primary,
                      int shift) {
    size_t at[BUCKETS + 1] = {0};
    for (size_t i = 0; i < n; i++)
        at[(key_of(&src[i], primary) >> shift & (BUCKETS - 1)) + 1]++;
    for (size_t b = 1; b <= BUCKETS; b++)
        if (at[b] == n)
            return 0;
    for (size_t b = 1; b <= BUCKETS; b++)
        at[b] += at[b - 1];
    for (size_t i = 0; i < n; i++)
        dst[at[key_of(&src[i], primary) >> shift & (BUCKETS - 1)]++] = src[i];
    return 1;
}

static int in_order(const pf_event_ref *a, const pf_event_ref *b) {
    return a->start < b->start || (a->start == b->start && a->longer <= b->longer);
}

#define RUN_MAX 64 /* longest run of one start sorted by insertion */

/* Orders each run of one start of refs sorted by start; 0 when a run is too
 * long for insertion (refs are then left for the radix sort). */
static int order_runs(pf_event_ref *refs, size_t n) {
    for (size_t run = 0; run < n;) {
        size_t end = run + 1;
        while (end < n && refs[end].start == refs[run].start)
            end++;
        if (end - run > RUN_MAX)
            return 0;
        for (size_t i = run + 1; i < end; i++) {
            pf_event_ref r = refs[i];
            size_t k = i;
            for (; k > run && refs[k - 1].longer > r.longer; k--)
                refs[k] = refs[k - 1];
            refs[k] = r;
        }
        run = end;
    }
    return 1;
}

static int radix_sort(pf_event_ref **refs, size_t n, uint64_t max_start, uint64_t max_longer) {
    pf_event_ref *src = *refs, *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return PP_ENOMEM;
    /* least significant first: the tie-breaking key, then the start */
    int bits[2] = {bits_of(max_longer), bits_of(max_start)};
    for (int primary = 0; primary < 2; primary++)
        for (int shift = 0; shift < bits[primary]; shift += DIGIT_BITS)
            if (radix_pass(src, tmp, n, primary, shift)) {
                pf_event_ref *t = src;
                src = tmp;
                tmp = t;
            }
    *refs = src;
    free(tmp);
    return PP_OK;
}

int pf_order_events(const pp_model *m, pf_event_ref **out) {
    pp_cols c;
    size_t nanns;
    const pp_ann *ann = pp_model_anns(m, &nanns);
    pp_model_cols(m, &c);
    *out = NULL;
    if (c.count > UINT32_MAX)
        return PP_EINVAL;
    int64_t min_ts = 0, max_dur = 0;
    for (size_t i = 0; i < c.count; i++) {
        min_ts = i == 0 || pp_cols_ts(&c, i) < min_ts ? pp_cols_ts(&c, i) : min_ts;
        max_dur = pp_cols_dur(&c, i) > max_dur ? pp_cols_dur(&c, i) : max_dur;
    }
    pf_event_ref *refs = malloc((c.count ? c.count : 1) * sizeof *refs);
    if (!refs)
        return PP_ENOMEM;
    int sorted = 1, by_start = 1;
    uint64_t max_start = 0;
    size_t a = 0;
    for (size_t i = 0; i < c.count; i++) {
        size_t first = a;
        while (a < nanns && ann[a].event == i)
            a++;
        if (a - first > UINT32_MAX) {
            free(refs);
            return PP_EINVAL;
        }
        refs[i] = (pf_event_ref){(uint64_t)pp_cols_ts(&c, i) - (uint64_t)min_ts,
                                 (uint64_t)(max_dur - pp_cols_dur(&c, i)), first, (uint32_t)i,
                                 (uint32_t)(a - first)};
        max_start = refs[i].start > max_start ? refs[i].start : max_start;
        sorted &= i == 0 || in_order(&refs[i - 1], &refs[i]);
        by_start &= i == 0 || refs[i - 1].start <= refs[i].start;
    }
    int rc = PP_OK;
    if (!sorted && !(by_start && order_runs(refs, c.count)))
        rc = radix_sort(&refs, c.count, max_start, (uint64_t)max_dur);
    if (rc == PP_OK)
        *out = refs;
    else
        free(refs);
    return rc;
}

static int end_before(const pf_end *a, const pf_end *b) {
    return a->end_ns < b->end_ns || (a->end_ns == b->end_ns && a->begun > b->begun);
}

int pf_ends_push(pf_ends *h, int64_t end_ns, uint64_t uuid) {
    if (pp_grow((void **)&h->heap, &h->cap, h->count, sizeof *h->heap))
        return PP_ENOMEM;
    pf_end e = {end_ns, h->begun++, uuid};
    size_t k = h->count++;
    for (; k && end_before(&e, &h->heap[(k - 1) / 2]); k = (k - 1) / 2)
        h->heap[k] = h->heap[(k - 1) / 2];
    h->heap[k] = e;
    return PP_OK;
}

pf_end pf_ends_pop(pf_ends *h) {
    pf_end top = h->heap[0], last = h->heap[--h->count];
    size_t k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= h->count)
            break;
        if (c + 1 < h->count && end_before(&h->heap[c + 1], &h->heap[c]))
            c++;
        if (!end_before(&h->heap[c], &last))
            break;
        h->heap[k] = h->heap[c];
        k = c;
    }
    if (h->count)
        h->heap[k] = last;
    return top;
}

void pf_ends_free(pf_ends *h) {
    free(h->heap);
    h->heap = NULL;
    h->count = h->cap = 0;
}
