/* Merging traces into one model (include/pipeprof/merge.h, docs/merging.md).
 *
 * Each input is copied in turn: its strings re-interned through a map, its
 * tracks appended (process ids that an earlier input already used are
 * renumbered, so each process stays its own group; a device group that two
 * inputs share is named after its input's process so the viewer shows whose
 * it is, while the device name the analysis keys on is kept, unless the
 * inputs were recorded on different hosts: then both are two devices, and
 * each keeps its host in its name, "GPU.0@alpha"), its events
 * shifted by its clock offset, its annotations and threads carried along.
 * Batch ids pass unchanged (they are global); range and region ids are made
 * unique per input; flow ids are global, and a flow whose steps lie in
 * several inputs is re-phased into one flow (first step begins, last ends). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ann_table.h"
#include "core/error.h"
#include "model/columns.h"
#include "pipeprof/merge.h"

typedef struct merger {
    pp_model *m;
    const pp_merge_input *in;
    size_t n;
    const pp_alignment *al;
    uint32_t *smap;          /* the current input's string id -> merged id (UINT32_MAX: not yet) */
    uint32_t *tmap;          /* the current input's track index -> merged index */
    uint8_t **phase;         /* per input, per event: the flow phase to write (0xff: as is) */
    int64_t next_pid;        /* for renumbered processes */
    uint64_t id_base;        /* added to the current input's range and region ids */
    int rc;
} merger;

static uint32_t map_string(merger *g, const pp_model *src, uint32_t id) {
    if (id == 0 || g->rc)
        return 0;
    if (g->smap[id] == UINT32_MAX) {
        const char *text = pp_model_string(src, id);
        if ((g->rc = pp_model_intern(g->m, text, strlen(text), &g->smap[id])) != PP_OK)
            return 0;
    }
    return g->smap[id];
}

static uint32_t intern_text(merger *g, const char *text) {
    uint32_t id = 0;
    if (!g->rc)
        g->rc = pp_model_intern(g->m, text, strlen(text), &id);
    return id;
}

/* 1 when some track of `m` has pid `pid`. */
static int input_has_pid(const pp_model *m, int64_t pid) {
    for (uint32_t t = 0; t < pp_model_track_count(m); t++)
        if (pp_model_track(m, t)->pid == pid)
            return 1;
    return 0;
}

/* The host input k was recorded on; "" when not known (a foreign trace). */
static const char *host_of(const merger *g, size_t k) {
    const pp_model *m = g->in[k].model;
    return pp_model_string(m, pp_model_meta_get(m)->host);
}

/* What the analysis calls a device track's device: its device name, else
 * its group's. */
static const char *device_of(const pp_model *m, const pp_track_info *t) {
    return pp_model_string(m, t->device ? t->device : t->process);
}

/* 1 when an input recorded on a known host other than input k's has a
 * device track of the same device as `t` of input k: two hosts' GPU.0 are
 * two GPUs. */
static int device_on_other_host(const merger *g, size_t k, const pp_track_info *t) {
    const char *host = host_of(g, k), *device = device_of(g->in[k].model, t);
    for (size_t j = 0; *host && j < g->n; j++) {
        const pp_model *m = g->in[j].model;
        if (!*host_of(g, j) || strcmp(host_of(g, j), host) == 0)
            continue;
        for (uint32_t i = 0; i < pp_model_track_count(m); i++) {
            const pp_track_info *ti = pp_model_track(m, i);
            if (ti->kind == PP_TRACK_KIND_DEVICE && strcmp(device_of(m, ti), device) == 0)
                return 1;
        }
    }
    return 0;
}

/* The name `text` (a device name, or a device track's group) of device
 * track `t` of input k: "text@host" when another host has its device. */
static const char *on_host(const merger *g, size_t k, const pp_track_info *t, const char *text,
                           char *buf, size_t cap) {
    if (t->kind != PP_TRACK_KIND_DEVICE || !device_on_other_host(g, k, t))
        return text;
    snprintf(buf, cap, "%s@%s", text, host_of(g, k));
    return buf;
}

/* 1 when an input before `k` has a device group named `group` (as merged). */
static int group_seen_before(const merger *g, size_t k, const char *group) {
    char buf[512];
    for (size_t j = 0; j < k; j++) {
        const pp_model *m = g->in[j].model;
        for (uint32_t t = 0; t < pp_model_track_count(m); t++) {
            const pp_track_info *ti = pp_model_track(m, t);
            if (ti->kind == PP_TRACK_KIND_DEVICE &&
                strcmp(on_host(g, j, ti, pp_model_string(m, ti->process), buf, sizeof buf),
                       group) == 0)
                return 1;
        }
    }
    return 0;
}

/* The merged pid of input k's process id `pid`: kept unless an earlier
 * input used it. */
static int64_t map_pid(merger *g, size_t k, int64_t pid, int64_t *from, int64_t *to, size_t *nmap) {
    for (size_t i = 0; i < *nmap; i++)
        if (from[i] == pid)
            return to[i];
    int64_t mapped = pid;
    for (size_t j = 0; j < k && mapped == pid; j++)
        if (input_has_pid(g->in[j].model, pid))
            mapped = g->next_pid++;
    from[*nmap] = pid, to[*nmap] = mapped, ++*nmap;
    return mapped;
}

static void copy_tracks(merger *g, size_t k, int32_t sort_base) {
    const pp_model *src = g->in[k].model;
    size_t nt = pp_model_track_count(src), nmap = 0;
    int64_t *from = malloc((nt ? nt : 1) * sizeof *from), *to = malloc((nt ? nt : 1) * sizeof *to);
    if (!from || !to)
        g->rc = PP_ENOMEM;
    const char *pname = pp_model_string(src, pp_model_meta_get(src)->process_name);
    for (uint32_t t = 0; t < nt && !g->rc; t++) {
        pp_track_info ti = *pp_model_track(src, t);
        char group_buf[512], device_buf[512], label[1100];
        const char *group = on_host(g, k, &ti, pp_model_string(src, ti.process), group_buf,
                                    sizeof group_buf);
        const char *device = on_host(g, k, &ti, pp_model_string(src, ti.device), device_buf,
                                     sizeof device_buf);
        if (ti.kind == PP_TRACK_KIND_DEVICE && *pname && group_seen_before(g, k, group)) {
            snprintf(label, sizeof label, "%s (%s)", group, pname);
            ti.process = intern_text(g, label);
        } else {
            ti.process = group == group_buf ? intern_text(g, group) : map_string(g, src, ti.process);
        }
        ti.name = map_string(g, src, ti.name);
        ti.device = device == device_buf && ti.device ? intern_text(g, device)
                                                      : map_string(g, src, ti.device);
        ti.pid = map_pid(g, k, ti.pid, from, to, &nmap);
        ti.sort_index = sort_base + ti.sort_index;
        if (!g->rc)
            g->rc = pp_model_add_track(g->m, &ti, &g->tmap[t]);
    }
    free(from);
    free(to);
}

static void copy_events(merger *g, size_t k) {
    const pp_model *src = g->in[k].model;
    pp_cols c;
    pp_model_cols(src, &c);
    int64_t off = g->al[k].offset_ns;
    uint64_t max_id = 0;
    for (size_t i = 0; i < c.count && !g->rc; i++) {
        pp_event e;
        pp_model_event(src, i, &e);
        e.name = map_string(g, src, e.name);
        e.stage = map_string(g, src, e.stage);
        e.track = g->tmap[e.track];
        if ((e.kind == PP_EV_RANGE || e.kind == PP_EV_REGION) && e.id) { /* 0: none */
            max_id = e.id > max_id ? e.id : max_id;
            e.id += g->id_base;
        }
        if (e.kind == PP_EV_FLOW && g->phase[k][i] != 0xff)
            e.phase = g->phase[k][i];
        if ((off > 0 && e.ts_ns > INT64_MAX - off - e.dur_ns) ||
            (off < 0 && e.ts_ns < INT64_MIN + 1 - off)) {
            g->rc = PP_EINVAL; /* merge_inputs says which input */
            return;
        }
        e.ts_ns += off;
        if (!g->rc)
            g->rc = pp_model_add_event(g->m, &e);
    }
    g->id_base += max_id;
}

static void copy_annotations(merger *g, size_t k, size_t event_base) {
    const pp_model *src = g->in[k].model;
    size_t n;
    const pp_ann *a = pp_model_anns(src, &n);
    for (size_t i = 0; i < n && !g->rc; i++) {
        pp_annotation b;
        pp_ann_unpack(&a[i], &b);
        b.event += event_base;
        b.key = map_string(g, src, b.key);
        if (b.type == PP_VALUE_STR)
            b.v.s = map_string(g, src, b.v.s);
        if (!g->rc)
            g->rc = pp_model_add_annotation(g->m, &b);
    }
    for (size_t i = 0; i < pp_model_thread_count(src) && !g->rc; i++) {
        pp_thread_info t = *pp_model_thread(src, i);
        t.name = map_string(g, src, t.name);
        if (!g->rc)
            g->rc = pp_model_add_thread(g->m, &t);
    }
}

/* One flow step of some input, on the merged clock. */
typedef struct flow_step {
    uint64_t id;
    int64_t ts;
    size_t input, event;
} flow_step;

static int step_cmp(const void *pa, const void *pb) {
    const flow_step *a = pa, *b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->input != b->input)
        return a->input < b->input ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

/* Flows with steps in several inputs become one flow: its first step
 * begins it, its last ends it, the rest are steps. */
static int phase_flows(merger *g) {
    size_t total = 0, k = 0;
    for (size_t j = 0; j < g->n; j++) {
        pp_cols c;
        pp_model_cols(g->in[j].model, &c);
        if (!(g->phase[j] = malloc(c.count ? c.count : 1)))
            return PP_ENOMEM;
        memset(g->phase[j], 0xff, c.count ? c.count : 1);
        for (size_t i = 0; i < c.count; i++)
            total += c.kind[i] == PP_EV_FLOW;
    }
    flow_step *s = malloc((total ? total : 1) * sizeof *s);
    if (!s)
        return PP_ENOMEM;
    for (size_t j = 0; j < g->n; j++) {
        pp_cols c;
        pp_model_cols(g->in[j].model, &c);
        for (size_t i = 0; i < c.count; i++)
            if (c.kind[i] == PP_EV_FLOW)
                s[k++] = (flow_step){c.id[i], pp_cols_ts(&c, i) + g->al[j].offset_ns, j, i};
    }
    qsort(s, total, sizeof *s, step_cmp);
    for (size_t a = 0, b; a < total; a = b) {
        int several = 0;
        for (b = a + 1; b < total && s[b].id == s[a].id; b++)
            several |= s[b].input != s[a].input;
        if (!several)
            continue;
        for (size_t x = a; x < b; x++)
            g->phase[s[x].input][s[x].event] =
                x == a ? PP_FLOW_BEGIN : x + 1 == b ? PP_FLOW_END : PP_FLOW_STEP;
    }
    free(s);
    return PP_OK;
}

/* "+123.456 us" (exact: integer ns printed as microseconds) */
static void put_us(char *buf, size_t cap, int64_t ns, int sign) {
    unsigned long long a = ns < 0 ? 0ull - (unsigned long long)ns : (unsigned long long)ns;
    snprintf(buf, cap, "%s%llu.%03llu us", ns < 0 ? "-" : sign ? "+" : "", a / 1000, a % 1000);
}

/* The merged meta: first input's clock, summed losses, how each input was
 * aligned. */
static void merge_meta(merger *g) {
    pp_model_meta *mm = pp_model_meta_mut(g->m);
    const pp_model *first = g->in[0].model;
    const pp_model_meta *f = pp_model_meta_get(first);
    size_t cap = 256, len = 0;
    char *text = malloc(cap);
    mm->level = f->level;
    mm->alignment_error_ns = 0;
    for (size_t k = 0; k < g->n && text; k++) {
        const pp_model *src = g->in[k].model;
        const pp_model_meta *s = pp_model_meta_get(src);
        const pp_alignment *a = &g->al[k];
        const char *name = g->in[k].name ? g->in[k].name : "trace";
        char line[1024], off[48], er[48];
        mm->level = s->level == mm->level ? mm->level : -1;
        mm->dropped_records += s->dropped_records;
        mm->truncated_bytes += s->truncated_bytes;
        mm->ignored_events += s->ignored_events;
        mm->unmatched_ends += s->unmatched_ends;
        put_us(off, sizeof off, a->offset_ns, 1);
        put_us(er, sizeof er, a->error_ns, 0);
        const char *to = g->in[a->to].name ? g->in[a->to].name : "trace";
        const char *clock = pp_model_string(src, s->clock);
        switch (a->method) {
        case PP_ALIGN_REFERENCE:
            snprintf(line, sizeof line, "%s: reference (%s%s%s)", name, *clock ? clock : "clock not recorded",
                     *clock ? " on " : "", *clock ? pp_model_string(src, s->host) : "");
            break;
        case PP_ALIGN_SAME_CLOCK:
            snprintf(line, sizeof line, "%s: same clock as %s (%s, host %s, boot %s)", name, to,
                     clock, pp_model_string(src, s->host), pp_model_string(src, s->boot_id));
            break;
        case PP_ALIGN_OFFSET:
            snprintf(line, sizeof line, "%s: offset %s given by the user (error not known)", name, off);
            break;
        case PP_ALIGN_SYNC:
            if (a->error_ns >= 0)
                snprintf(line, sizeof line, "%s: %u sync mark pair%s with %s, offset %s, error <= %s",
                         name, a->pairs, a->pairs == 1 ? "" : "s", to, off, er);
            else
                snprintf(line, sizeof line, "%s: %u sync mark pair%s with %s, offset %s, error not "
                         "known (%s)", name, a->pairs, a->pairs == 1 ? "" : "s", to, off,
                         a->pairs == 1 ? "one pair cannot show its error" : "inherited");
            break;
        }
        size_t need = len + strlen(line) + 3;
        if (need > cap) {
            char *t = realloc(text, cap = need * 2);
            if (!t) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
        }
        len += (size_t)sprintf(text + len, "%s%s", k ? "; " : "", line);
        if (a->error_ns < 0 || mm->alignment_error_ns < 0)
            mm->alignment_error_ns = -1;
        else if (a->error_ns > mm->alignment_error_ns)
            mm->alignment_error_ns = a->error_ns;
    }
    if (!text) {
        g->rc = PP_ENOMEM;
        return;
    }
    mm->alignment = intern_text(g, text);
    free(text);
    mm->process_name = intern_text(g, pp_model_string(first, f->process_name));
    mm->clock = intern_text(g, pp_model_string(first, f->clock));
    mm->host = intern_text(g, pp_model_string(first, f->host));
    mm->boot_id = intern_text(g, pp_model_string(first, f->boot_id));
}

static int merge_inputs(merger *g, pp_error *err) {
    int32_t sort_base = 0;
    size_t event_base = 0;
    for (size_t k = 0; k < g->n && !g->rc; k++) {
        const pp_model *src = g->in[k].model;
        size_t ns = pp_model_string_count(src), nt = pp_model_track_count(src);
        free(g->smap);
        free(g->tmap);
        g->smap = malloc((ns ? ns : 1) * sizeof *g->smap);
        g->tmap = malloc((nt ? nt : 1) * sizeof *g->tmap);
        if (!g->smap || !g->tmap)
            return PP_ENOMEM;
        memset(g->smap, 0xff, (ns ? ns : 1) * sizeof *g->smap);
        copy_tracks(g, k, sort_base);
        copy_events(g, k);
        if (g->rc == PP_EINVAL)
            return pp_set_error(err, PP_EINVAL, "%s: its offset %+lld ns moves its events out of "
                                "the time range", g->in[k].name ? g->in[k].name : "trace",
                                (long long)g->al[k].offset_ns);
        copy_annotations(g, k, event_base);
        event_base += pp_model_event_count(src);
        int32_t most = 0;
        for (uint32_t t = 0; t < nt; t++)
            most = pp_model_track(src, t)->sort_index > most ? pp_model_track(src, t)->sort_index : most;
        sort_base += most + 1;
    }
    if (!g->rc)
        merge_meta(g);
    return g->rc;
}

int pp_model_merge(const pp_merge_input *in, size_t n, const pp_merge_options *o,
                   pp_model **out, pp_error *err) {
    if (!out)
        return pp_set_error(err, PP_EINVAL, "pp_model_merge: out is required");
    *out = NULL;
    pp_alignment *al = calloc(n ? n : 1, sizeof *al);
    if (!al)
        return pp_set_error(err, PP_ENOMEM, "out of memory");
    int rc = pp_model_align(in, n, o, al, err);
    if (rc != PP_OK) {
        free(al);
        return rc;
    }
    merger g = {.in = in, .n = n, .al = al};
    for (size_t k = 0; k < n; k++)
        for (uint32_t t = 0; t < pp_model_track_count(in[k].model); t++)
            g.next_pid = pp_model_track(in[k].model, t)->pid >= g.next_pid
                             ? pp_model_track(in[k].model, t)->pid + 1 : g.next_pid;
    g.phase = calloc(n, sizeof *g.phase);
    rc = g.phase ? pp_model_create(&g.m) : PP_ENOMEM;
    if (rc == PP_OK)
        rc = phase_flows(&g);
    if (rc == PP_OK)
        rc = merge_inputs(&g, err);
    if (rc == PP_OK)
        rc = pp_model_sort_by_time(g.m);
    for (size_t k = 0; g.phase && k < n; k++)
        free(g.phase[k]);
    free(g.phase);
    free(g.smap);
    free(g.tmap);
    free(al);
    if (rc != PP_OK) {
        pp_model_free(g.m);
        return rc == PP_EINVAL ? rc : pp_set_error(err, rc, "merging: %s", pp_strerror(rc));
    }
    *out = g.m;
    return PP_OK;
}
