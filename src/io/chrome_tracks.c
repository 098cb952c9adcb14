/* Chrome (pid, tid) -> model tracks, and the names applied at the end. */
#include "io/chrome_tracks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

static uint64_t id_hash(chrome_id pid, chrome_id tid) {
    uint64_t h = (uint64_t)pid.v * 0x9E3779B97F4A7C15ull ^ (uint64_t)pid.is_str;
    h ^= ((uint64_t)tid.v + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2)) ^ (uint64_t)tid.is_str << 1;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31); /* the table takes the low bits: let the high ones reach them */
}

static int id_eq(chrome_id a, chrome_id b) {
    return a.is_str == b.is_str && a.v == b.v;
}

/* A process is keyed by its pid alone: the hash of (pid, no tid). */
static const chrome_id no_tid = {.is_str = 2, .v = 0};

void chrome_tracks_free(chrome_tracks *t) {
    free(t->tracks);
    free(t->track_slots.slots);
    free(t->procs);
    free(t->proc_slots.slots);
    memset(t, 0, sizeof *t);
}

static uint64_t track_hash(const chrome_tracks *t, size_t i) {
    return id_hash(t->tracks[i].pid, t->tracks[i].tid);
}

static uint64_t proc_hash(const chrome_tracks *t, size_t i) {
    return id_hash(t->procs[i].pid, no_tid);
}

/* Stores entry i (of hash h) in the first free slot from h on. */
static void slot_put(chrome_slots *s, uint64_t h, size_t i) {
    size_t at = h & (s->n - 1);
    while (s->slots[at])
        at = (at + 1) & (s->n - 1);
    s->slots[at] = (uint32_t)i + 1;
}

/* Makes room for entry `count` (the table holds count - 1 entries): the
 * table doubles before it is half full, so a lookup probes O(1) slots on
 * average and N entries cost O(N) in all. */
static int slots_fit(const chrome_tracks *t, chrome_slots *s, size_t count,
                     uint64_t (*hash)(const chrome_tracks *, size_t)) {
    if (count * 2 <= s->n)
        return PP_OK;
    size_t n = s->n ? s->n * 2 : 64;
    chrome_slots grown = {.slots = calloc(n, sizeof *grown.slots), .n = n};
    if (!grown.slots)
        return PP_ENOMEM;
    for (size_t i = 0; i + 1 < count; i++)
        slot_put(&grown, hash(t, i), i);
    free(s->slots);
    *s = grown;
    return PP_OK;
}

static void id_text(const pp_model *m, chrome_id id, const char *prefix, char *buf, size_t n) {
    if (id.is_str)
        snprintf(buf, n, "%s", pp_model_string(m, (uint32_t)id.v));
    else
        snprintf(buf, n, "%s %lld", prefix, (long long)id.v);
}

chrome_process *chrome_tracks_process(chrome_tracks *t, chrome_id pid) {
    uint64_t h = id_hash(pid, no_tid);
    chrome_slots *s = &t->proc_slots;
    for (size_t at = s->n ? h & (s->n - 1) : 0; s->n && s->slots[at]; at = (at + 1) & (s->n - 1)) {
        t->probes++;
        if (id_eq(t->procs[s->slots[at] - 1].pid, pid))
            return &t->procs[s->slots[at] - 1];
    }
    if (slots_fit(t, s, t->nprocs + 1, proc_hash) ||
        pp_grow((void **)&t->procs, &t->capprocs, t->nprocs, sizeof *t->procs))
        return NULL;
    chrome_process *p = &t->procs[t->nprocs];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    slot_put(s, h, t->nprocs++);
    return p;
}

int chrome_tracks_get(chrome_tracks *t, pp_model *m, chrome_id pid, chrome_id tid, uint32_t *index) {
    uint64_t h = id_hash(pid, tid);
    chrome_slots *s = &t->track_slots;
    for (size_t at = s->n ? h & (s->n - 1) : 0; s->n && s->slots[at]; at = (at + 1) & (s->n - 1)) {
        t->probes++;
        const chrome_track *c = &t->tracks[s->slots[at] - 1];
        if (id_eq(c->pid, pid) && id_eq(c->tid, tid)) {
            *index = s->slots[at] - 1;
            return PP_OK;
        }
    }
    if (!chrome_tracks_process(t, pid) || slots_fit(t, s, t->ntracks + 1, track_hash) ||
        pp_grow((void **)&t->tracks, &t->cap, t->ntracks, sizeof *t->tracks))
        return PP_ENOMEM;
    /* Added now with neutral names; chrome_tracks_finish names it. The
     * model has no other tracks, so the two indexes agree. */
    pp_track_info info;
    pp_track_info_init(&info);
    uint32_t model_index;
    int rc = pp_model_add_track(m, &info, &model_index);
    if (rc)
        return rc;
    chrome_track *c = &t->tracks[t->ntracks];
    memset(c, 0, sizeof *c);
    c->pid = pid;
    c->tid = tid;
    slot_put(s, h, t->ntracks++);
    *index = model_index;
    return PP_OK;
}

static uint32_t intern(pp_model *m, const char *text, int *rc) {
    uint32_t id = 0;
    if (pp_model_intern(m, text, strlen(text), &id) != PP_OK)
        *rc = PP_ENOMEM;
    return id;
}

/* A program's name (PyTorch names every process "python3"), which says
 * nothing about the device a process stands for. */
static int program_name(const char *s) {
    static const char *const programs[] = {"pt_main_thread", "ipykernel_launcher", "java",
                                           "node", "a.out"};
    if (strncmp(s, "python", 6) == 0 && strspn(s + 6, "0123456789.") == strlen(s + 6))
        return 1;
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        if (strcmp(s, programs[i]) == 0)
            return 1;
    return 0;
}

/* The device a foreign process's GPU tracks belong to: one per pid, named
 * by its process_name when that is not a program's name (Kineto writes
 * "GPU 0" there), else by its process_labels (PyTorch versions that name
 * every process "python3" put "GPU 0" there), else "GPU pid N". */
static uint32_t device_name(pp_model *m, const chrome_process *p, const chrome_track *c,
                            int *rc) {
    if (p && p->name && !program_name(pp_model_string(m, p->name)))
        return p->name;
    if (p && p->labels)
        return p->labels;
    char buf[256];
    id_text(m, c->pid, "pid", buf, sizeof buf);
    char name[300];
    snprintf(name, sizeof name, "GPU %s", buf);
    return intern(m, name, rc);
}

int chrome_tracks_finish(chrome_tracks *t, pp_model *m) {
    int rc = PP_OK;
    for (size_t i = 0; i < t->ntracks; i++) {
        const chrome_track *c = &t->tracks[i];
        pp_track_info *info = pp_model_track_mut(m, (uint32_t)i);
        if (c->has_pipeprof) {
            *info = c->exact;
            info->name = c->name;
            continue;
        }
        const chrome_process *p = chrome_tracks_process(t, c->pid);
        char buf[256];
        if (p && p->name) {
            info->process = p->name;
        } else {
            id_text(m, c->pid, "pid", buf, sizeof buf);
            info->process = intern(m, buf, &rc);
        }
        if (c->name) {
            info->name = c->name;
        } else {
            id_text(m, c->tid, "tid", buf, sizeof buf);
            info->name = intern(m, buf, &rc);
        }
        info->pid = c->pid.is_str ? 0 : c->pid.v;
        info->tid = c->tid.is_str ? 0 : c->tid.v;
        /* rows of one process keep file order unless it gave its own */
        info->sort_index = c->has_sort ? c->sort_index : (int32_t)i;
        if (c->bookkeeping && !c->work)
            info->flags |= PP_TRACK_BOOKKEEPING;
        if (c->device_cat) { /* PipelineProfiler: device = cat, stream = tid */
            info->kind = PP_TRACK_KIND_DEVICE;
            info->device = info->process = c->device_cat;
            info->stream = c->tid.is_str ? -1 : (int32_t)c->tid.v;
            info->pid = 0;
            /* its hw_time_ms is OpenVINO's profiling_info, which the CPU
             * plugin reports as a running mean (docs/backends.md) */
            if (strcmp(pp_model_string(m, c->device_cat), "CPU") == 0)
                info->flags |= PP_TRACK_HW_MEAN;
            if (!c->name) {
                snprintf(buf, sizeof buf, "stream %d", info->stream);
                info->name = intern(m, buf, &rc);
            }
        }
        if (c->gpu) {
            info->kind = PP_TRACK_KIND_DEVICE;
            info->device = info->process = device_name(m, p, c, &rc);
            info->stream = c->tid.is_str ? -1 : (int32_t)c->tid.v;
        }
    }
    return rc;
}
