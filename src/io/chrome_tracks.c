/* Chrome (pid, tid) -> model tracks, and the names applied at the end. */
#include "io/chrome_tracks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

static uint64_t id_hash(chrome_id pid, chrome_id tid) {
    uint64_t h = (uint64_t)pid.v * 0x9E3779B97F4A7C15ull ^ (uint64_t)pid.is_str;
    h ^= ((uint64_t)tid.v + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2)) ^ (uint64_t)tid.is_str << 1;
    return h * 0xBF58476D1CE4E5B9ull;
}

static int id_eq(chrome_id a, chrome_id b) {
    return a.is_str == b.is_str && a.v == b.v;
}

void chrome_tracks_free(chrome_tracks *t) {
    free(t->tracks);
    free(t->slots);
    free(t->procs);
    memset(t, 0, sizeof *t);
}

static int rehash(chrome_tracks *t, size_t nslots) {
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return PP_ENOMEM;
    for (size_t i = 0; i < t->ntracks; i++) {
        size_t h = id_hash(t->tracks[i].pid, t->tracks[i].tid) & (nslots - 1);
        while (slots[h])
            h = (h + 1) & (nslots - 1);
        slots[h] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return PP_OK;
}

static void id_text(const pp_model *m, chrome_id id, const char *prefix, char *buf, size_t n) {
    if (id.is_str)
        snprintf(buf, n, "%s", pp_model_string(m, (uint32_t)id.v));
    else
        snprintf(buf, n, "%s %lld", prefix, (long long)id.v);
}

chrome_process *chrome_tracks_process(chrome_tracks *t, chrome_id pid) {
    for (size_t i = 0; i < t->nprocs; i++)
        if (id_eq(t->procs[i].pid, pid))
            return &t->procs[i];
    if (pp_grow((void **)&t->procs, &t->capprocs, t->nprocs, sizeof *t->procs))
        return NULL;
    chrome_process *p = &t->procs[t->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

int chrome_tracks_get(chrome_tracks *t, pp_model *m, chrome_id pid, chrome_id tid, uint32_t *index) {
    if (t->nslots == 0 && rehash(t, 64))
        return PP_ENOMEM;
    size_t h = id_hash(pid, tid) & (t->nslots - 1);
    for (; t->slots[h]; h = (h + 1) & (t->nslots - 1)) {
        const chrome_track *c = &t->tracks[t->slots[h] - 1];
        if (id_eq(c->pid, pid) && id_eq(c->tid, tid)) {
            *index = t->slots[h] - 1;
            return PP_OK;
        }
    }
    if (!chrome_tracks_process(t, pid))
        return PP_ENOMEM;
    if (pp_grow((void **)&t->tracks, &t->cap, t->ntracks, sizeof *t->tracks))
        return PP_ENOMEM;
    /* Added now with neutral names; chrome_tracks_finish names it. */
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
    t->ntracks++;
    if (t->ntracks * 2 > t->nslots && rehash(t, t->nslots * 2))
        return PP_ENOMEM;
    for (h = id_hash(pid, tid) & (t->nslots - 1); t->slots[h]; h = (h + 1) & (t->nslots - 1))
        ;
    t->slots[h] = (uint32_t)model_index + 1;
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
