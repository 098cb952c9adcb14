/* The side tables of the narrow columns (columns.h): values too wide for
 * their 32-bit slot, by event. They stay small (a few long spans in most
 * traces), so a sorted array searched by halving is all they need. */
#include "model/columns.h"

#include <stdlib.h>

#include "core/grow.h"

int pp_wide_append(pp_wide_sink *s, int c, size_t at, uint64_t v) {
    pp_wide_col *w = &s->col[c];
    if (pp_grow((void **)&w->e, &w->cap, w->n, sizeof *w->e) != 0)
        return PP_ENOMEM;
    w->e[w->n++] = (pp_wide){at, v};
    return PP_OK;
}

/* The first entry of w at or after event `at`. */
static size_t lower_bound(const pp_wide_col *w, size_t at) {
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->e[mid].at < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t pp_wide_get(const pp_wide_col *w, size_t at) {
    size_t k = lower_bound(w, at);
    return k < w->n && w->e[k].at == at ? w->e[k].v : 0;
}

void pp_wide_cut(pp_wide_sink *s, size_t from) {
    for (int c = 0; c < PP_WIDE_COLUMNS; c++)
        s->col[c].n = lower_bound(&s->col[c], from);
}

void pp_wide_free(pp_wide_sink *s) {
    for (int c = 0; c < PP_WIDE_COLUMNS; c++)
        free(s->col[c].e);
    *s = (pp_wide_sink){0};
}
