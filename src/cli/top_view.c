/* The live view behind `pipeprof top` (top_view.h): spans kept for the
 * window, and the tables drawn from them at each refresh. */
#include "cli/top_view.h"

#include <stdlib.h>
#include <string.h>

#include "pipeprof/subscribe.h"

#define TOP_OPS 5

typedef struct span {
    uint8_t role, flags;
    char device[32], stage[32], name[64], type[32];
    int64_t start, end, batch;
} span;

struct top_view {
    int64_t window_ns;
    span *spans; /* in arrival order; those that ended before the window are pruned */
    size_t n, cap;
    uint64_t received, lost, dropped;
    int64_t first_start, last_end;
};

top_view *top_view_create(int64_t window_ns) {
    top_view *v = calloc(1, sizeof *v);
    if (v)
        v->window_ns = window_ns;
    return v;
}

void top_view_free(top_view *v) {
    if (!v)
        return;
    free(v->spans);
    free(v);
}

int64_t top_view_last_end(const top_view *v) {
    return v->last_end;
}

uint64_t top_view_received(const top_view *v) {
    return v->received;
}

/* The bytes of a well-formed UTF-8 character at s that is printable (not a
 * C1 control, U+0080..U+009F), or 0. */
static size_t printable_utf8(const unsigned char *s) {
    size_t n = s[0] >= 0xF5 ? 0 : s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (n == 0)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    if ((n == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (n == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
        (n == 4 && s[0] == 0xF0 && s[1] < 0x90) || (n == 4 && s[0] == 0xF4 && s[1] >= 0x90))
        return 0; /* overlong, a surrogate, or past U+10FFFF */
    if (n == 2 && s[0] == 0xC2 && s[1] < 0xA0)
        return 0; /* C1 controls */
    return n;
}

/* Copies a text of a record for the terminal: printable ASCII and
 * printable UTF-8 as they are, every other byte (ESC, BEL, 0xff, ...) as
 * \xHH, so no record can move the cursor, clear the screen or set the
 * title; cut where the next piece would not fit. */
static void copy_text(char *dst, size_t cap, const char *src) {
    const unsigned char *s = (const unsigned char *)src;
    size_t used = 0;
    while (*s) {
        size_t n = *s >= 0x20 && *s < 0x7f ? 1 : printable_utf8(s);
        if (n > 0) {
            if (used + n >= cap)
                break;
            memcpy(dst + used, s, n);
            used += n;
            s += n;
        } else {
            if (used + 4 >= cap)
                break;
            snprintf(dst + used, 5, "\\x%02x", *s++);
            used += 4;
        }
    }
    dst[used] = '\0';
}

/* Loss totals above this are no session's (2^56 records: 100 M a second
 * for 22 years): a record that says so is not believed. */
#define TOTAL_MAX ((uint64_t)1 << 56)

/* A record top can show: a span from the session clock's start on that does
 * not end before it starts; a status with believable totals. */
static int record_sane(const void *records, size_t i) {
    if (pp_subrec_kind_of(records, i) == PP_SUBREC_STATUS)
        return pp_subrec_lost(records, i) <= TOTAL_MAX &&
               pp_subrec_session_dropped(records, i) <= TOTAL_MAX;
    int64_t start = pp_subrec_start_ns(records, i), end = pp_subrec_end_ns(records, i);
    return start >= 0 && end >= start;
}

size_t top_view_add(top_view *v, const void *records, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pp_subrec_valid(records, i) || !record_sane(records, i)) {
            bad++;
            continue;
        }
        if (pp_subrec_kind_of(records, i) == PP_SUBREC_STATUS) {
            v->lost = pp_subrec_lost(records, i);
            v->dropped = pp_subrec_session_dropped(records, i);
            continue;
        }
        if (v->n == v->cap) {
            size_t cap = v->cap ? v->cap * 2 : 4096;
            span *s = realloc(v->spans, cap * sizeof *s);
            if (!s)
                return bad + (n - i);
            v->spans = s;
            v->cap = cap;
        }
        span *s = &v->spans[v->n++];
        s->role = (uint8_t)pp_subrec_role(records, i);
        s->flags = (uint8_t)pp_subrec_flags(records, i);
        copy_text(s->device, sizeof s->device, pp_subrec_device(records, i));
        copy_text(s->stage, sizeof s->stage, pp_subrec_stage(records, i));
        copy_text(s->name, sizeof s->name, pp_subrec_name(records, i));
        copy_text(s->type, sizeof s->type, pp_subrec_type(records, i));
        s->start = pp_subrec_start_ns(records, i);
        s->end = pp_subrec_end_ns(records, i);
        s->batch = pp_subrec_batch(records, i);
        if (v->received == 0 || s->start < v->first_start)
            v->first_start = s->start;
        if (s->end > v->last_end)
            v->last_end = s->end;
        v->received++;
    }
    return bad;
}

/* Drops spans that ended before `from`. */
static void prune(top_view *v, int64_t from) {
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->spans[i].end >= from)
            v->spans[k++] = v->spans[i];
    v->n = k;
}

typedef struct interval {
    int64_t start, end;
} interval;

static int cmp_interval(const void *a, const void *b) {
    const interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* ---- devices: busy time and bubbles ---- */

static void render_devices(top_view *v, int64_t from, int64_t now, FILE *out) {
    interval *iv = malloc((v->n ? v->n : 1) * sizeof *iv);
    char *done = calloc(v->n ? v->n : 1, 1);
    if (!iv || !done) {
        free(iv);
        free(done);
        return;
    }
    double window_ms = (double)(now - from) / 1e6;
    fprintf(out, "%-22s %6s %10s %8s %11s %10s %6s\n", "device", "util", "busy ms", "bubbles",
            "bubble ms", "max ms", "execs");
    int any = 0;
    for (size_t i = 0; i < v->n; i++) {
        const span *d = &v->spans[i];
        if (done[i] || d->role != PP_ROLE_EXEC || !d->device[0])
            continue;
        size_t m = 0, execs = 0;
        for (size_t j = i; j < v->n; j++) {
            const span *s = &v->spans[j];
            if (s->role != PP_ROLE_EXEC || strcmp(s->device, d->device) != 0)
                continue;
            done[j] = 1;
            int64_t a = s->start > from ? s->start : from, b = s->end < now ? s->end : now;
            if (b > a) {
                iv[m++] = (interval){a, b};
                execs++;
            }
        }
        qsort(iv, m, sizeof *iv, cmp_interval);
        int64_t busy = 0, gaps = 0, max_gap = 0, cur_s = 0, cur_e = 0;
        size_t nb = 0;
        for (size_t k = 0; k < m; k++) {
            if (k > 0 && iv[k].start <= cur_e) {
                if (iv[k].end > cur_e)
                    cur_e = iv[k].end;
                continue;
            }
            if (k > 0) {
                busy += cur_e - cur_s;
                int64_t gap = iv[k].start - cur_e;
                gaps += gap;
                max_gap = gap > max_gap ? gap : max_gap;
                nb++;
            }
            cur_s = iv[k].start;
            cur_e = iv[k].end;
        }
        if (m)
            busy += cur_e - cur_s;
        char label[48];
        snprintf(label, sizeof label, "%s%s", d->device,
                 d->flags & PP_SUBREC_SIMULATED ? " (simulated)" : "");
        fprintf(out, "%-22s %5.1f%% %10.1f %8zu %11.1f %10.1f %6zu\n", label,
                window_ms > 0 ? 100.0 * (double)busy / 1e6 / window_ms : 0.0, (double)busy / 1e6, nb,
                (double)gaps / 1e6, (double)max_gap / 1e6, execs);
        any = 1;
    }
    if (!any)
        fprintf(out, "(no execs in the window)\n");
    free(iv);
    free(done);
}

/* ---- stages and cycles ---- */

typedef struct stage_time {
    int stage; /* index into the stage names */
    int64_t batch, start, end;
} stage_time;

static int cmp_stage_time(const void *a, const void *b) {
    const stage_time *x = a, *y = b;
    if (x->batch != y->batch)
        return x->batch < y->batch ? -1 : 1;
    return (x->stage > y->stage) - (x->stage < y->stage);
}

#define MAX_STAGES 16

static void render_cycles(top_view *v, int64_t from, FILE *out) {
    const char *names[MAX_STAGES];
    int nstages = 0;
    stage_time *t = malloc((v->n ? v->n : 1) * sizeof *t);
    if (!t)
        return;
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++) {
        const span *s = &v->spans[i];
        int timed = s->role == PP_ROLE_EXEC || s->role == PP_ROLE_PARTITION ||
                    s->role == PP_ROLE_MERGE || s->role == PP_ROLE_STAGE;
        if (!timed || !s->stage[0] || s->batch < 0 || s->start < from)
            continue;
        int k = 0;
        while (k < nstages && strcmp(names[k], s->stage) != 0)
            k++;
        if (k == nstages) {
            if (nstages == MAX_STAGES)
                continue;
            names[nstages++] = s->stage;
        }
        t[m++] = (stage_time){k, s->batch, s->start, s->end};
    }
    qsort(t, m, sizeof *t, cmp_stage_time);
    /* merge each (batch, stage) into its hull */
    size_t h = 0;
    for (size_t i = 0; i < m; i++) {
        if (h > 0 && t[h - 1].batch == t[i].batch && t[h - 1].stage == t[i].stage) {
            if (t[i].start < t[h - 1].start)
                t[h - 1].start = t[i].start;
            if (t[i].end > t[h - 1].end)
                t[h - 1].end = t[i].end;
        } else {
            t[h++] = t[i];
        }
    }
    /* stage order: upstream first, by start within the batches they share */
    int64_t first_start[MAX_STAGES] = {0};
    int order[MAX_STAGES];
    for (int k = 0; k < nstages; k++)
        order[k] = k;
    int64_t sums[MAX_STAGES] = {0}, lasts[MAX_STAGES] = {0};
    int64_t counts[MAX_STAGES] = {0}, bottleneck[MAX_STAGES] = {0};
    int64_t cycles = 0, cycle_sum = 0, last_batch = -1, last_latency = 0;
    int last_bottleneck = -1;
    for (size_t i = 0; i < h;) {
        size_t j = i;
        while (j < h && t[j].batch == t[i].batch)
            j++;
        for (size_t k = i; k < j; k++) {
            int64_t d = t[k].end - t[k].start;
            sums[t[k].stage] += d;
            counts[t[k].stage]++;
            lasts[t[k].stage] = d;
        }
        if ((int)(j - i) == nstages) { /* every stage finished this batch */
            int64_t batch_first = t[i].start;
            for (size_t k = i; k < j; k++)
                batch_first = t[k].start < batch_first ? t[k].start : batch_first;
            for (size_t k = i; k < j; k++)
                first_start[t[k].stage] += t[k].start - batch_first;
            /* ties go to the upstream stage: the one that started first */
            size_t best = i;
            for (size_t k = i + 1; k < j; k++) {
                int64_t dk = t[k].end - t[k].start, db = t[best].end - t[best].start;
                if (dk > db || (dk == db && t[k].start < t[best].start))
                    best = k;
            }
            int64_t lat = t[best].end - t[best].start;
            cycles++;
            cycle_sum += lat;
            bottleneck[t[best].stage]++;
            last_batch = t[i].batch;
            last_latency = lat;
            last_bottleneck = t[best].stage;
        }
        i = j;
    }
    for (int a = 1; a < nstages; a++) /* insertion sort by mean start offset */
        for (int b = a; b > 0 && first_start[order[b]] < first_start[order[b - 1]]; b--) {
            int x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
    if (nstages == 0) {
        fprintf(out, "(no stage spans in the window)\n");
        free(t);
        return;
    }
    if (cycles)
        fprintf(out, "cycle (longest hold): batch %lld took %.3f ms, bottleneck %s; mean %.3f ms "
                     "over %lld complete batches\n", (long long)last_batch, (double)last_latency / 1e6,
                names[last_bottleneck], (double)cycle_sum / 1e6 / (double)cycles, (long long)cycles);
    else
        fprintf(out, "cycle: no batch has finished every stage in the window yet\n");
    /* These are hold times (first to last event of the stage's batch), which
     * analyze reports beside its stage time (partition + slowest part +
     * merge): the same name for both would make the two disagree unsaid. */
    fprintf(out, "(hold = a batch's first to last event in the stage: analyze's hold time, not "
                 "its stage time)\n");
    fprintf(out, "%-22s %8s %10s %10s %12s\n", "stage", "batches", "hold ms", "last hold",
            "bneck/hold");
    for (int a = 0; a < nstages; a++) {
        int k = order[a];
        char share[16] = "-";
        if (cycles)
            snprintf(share, sizeof share, "%.0f%%", 100.0 * (double)bottleneck[k] / (double)cycles);
        fprintf(out, "%-22s %8lld %10.3f %10.3f %12s\n", names[k], (long long)counts[k],
                counts[k] ? (double)sums[k] / 1e6 / (double)counts[k] : 0.0, (double)lasts[k] / 1e6,
                share);
    }
    free(t);
}

/* ---- busiest ops ---- */

typedef struct op_total {
    const span *first;
    int64_t count, total;
} op_total;

static int cmp_op_total(const void *a, const void *b) {
    const op_total *x = a, *y = b;
    return (x->total < y->total) - (x->total > y->total);
}

static void render_ops(top_view *v, int64_t from, int64_t now, FILE *out) {
    op_total *ops = malloc((v->n ? v->n : 1) * sizeof *ops);
    if (!ops)
        return;
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++) {
        const span *s = &v->spans[i];
        if (s->role != PP_ROLE_OP || s->end < from)
            continue;
        size_t k = 0;
        while (k < m && (strcmp(ops[k].first->device, s->device) || strcmp(ops[k].first->name, s->name)))
            k++;
        if (k == m)
            ops[m++] = (op_total){s, 0, 0};
        ops[k].count++;
        ops[k].total += s->end - s->start;
    }
    if (m == 0) {
        fprintf(out, "(no op spans in the window: ops are recorded at level 2)\n");
        free(ops);
        return;
    }
    qsort(ops, m, sizeof *ops, cmp_op_total);
    fprintf(out, "%-10s %-16s %-24s %7s %10s %8s\n", "device", "type", "op", "count", "total ms",
            "of window");
    double window = (double)(now - from);
    for (size_t k = 0; k < m && k < TOP_OPS; k++)
        fprintf(out, "%-10s %-16s %-24s %7lld %10.3f %7.1f%%\n", ops[k].first->device,
                ops[k].first->type, ops[k].first->name, (long long)ops[k].count,
                (double)ops[k].total / 1e6, window > 0 ? 100.0 * (double)ops[k].total / window : 0.0);
    free(ops);
}

void top_view_render(top_view *v, int64_t now_ns, const char *title, FILE *out) {
    int64_t from = now_ns - v->window_ns;
    if (v->received && from < v->first_start)
        from = v->first_start;
    prune(v, from);
    fprintf(out, "pipeprof top: %s\n", title);
    fprintf(out, "window: the last %.3f s; %llu spans received; loss: %llu lost by this view "
                 "(it lagged), %llu dropped by the program's session (budget spent)\n\n",
            (double)(now_ns - from) / 1e9, (unsigned long long)v->received,
            (unsigned long long)v->lost, (unsigned long long)v->dropped);
    fprintf(out, "DEVICES\n");
    render_devices(v, from, now_ns, out);
    fprintf(out, "\nSTAGES\n");
    render_cycles(v, from, out);
    fprintf(out, "\nBUSIEST OPS\n");
    render_ops(v, from, now_ns, out);
}
