/* gaps.c — the bubbles of every device, kept compact for the report's life.
 *
 * A 10M-event trace has millions of bubbles (gaps.csv lists them all); as
 * (start, end) pairs they took 16 bytes each. The device step writes them
 * once, device by device in time order, so each is kept as two unsigned
 * LEB128 varints: the distance from the end of the device's previous bubble
 * (from W's start for its first) to its start, and its length; both are
 * positive, a few bytes for bubbles of microseconds. Readers walk a
 * device's bubbles in order with an an_gap_cursor. */
#include "analyze/report.h"

static uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static uint64_t get_varint(const uint8_t **p) {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80)
            return v;
    }
}

void an_gaps_keep(pp_report *r, uint32_t d, const an_span *merged, size_t n) {
    uint8_t *p = r->gap_bytes + r->gap_at[d];
    int64_t last = r->window.start_ns;
    for (size_t i = 1; i < n; i++) { /* W is at most a quarter of the int64 range */
        p = put_varint(p, (uint64_t)(merged[i - 1].end - last));
        p = put_varint(p, (uint64_t)(merged[i].start - merged[i - 1].end));
        last = merged[i].start;
    }
    r->ngaps += n > 1 ? n - 1 : 0;
    r->gap_at[d + 1] = (size_t)(p - r->gap_bytes);
}

an_gap_cursor an_gaps_of(const pp_report *r, uint32_t d) {
    return (an_gap_cursor){r->gap_bytes + r->gap_at[d], r->gap_bytes + r->gap_at[d + 1],
                           r->window.start_ns};
}

int an_gap_next(an_gap_cursor *c, an_gap *g) {
    if (c->at == c->end)
        return 0;
    g->start = c->last + (int64_t)get_varint(&c->at);
    g->end = g->start + (int64_t)get_varint(&c->at);
    c->last = g->end;
    return 1;
}
