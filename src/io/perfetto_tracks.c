/* The track descriptors of a .pftrace (docs/format-perfetto.md): one group
 * per (process, pid) of the track table, a process when it has a host
 * thread and a plain row group (a device) otherwise; the model's tracks
 * under them; the trace-info track; counter tracks, each described just
 * before its first sample. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/perfetto_writer.h"
#include "io/track_tids.h"

static uint64_t mix(uint64_t x) {
    x *= 0x9E3779B97F4A7C15u;
    return x ^ x >> 29;
}

/* One group per distinct (process string, pid) of the track table, numbered
 * in order of first appearance, as the Chrome writer numbers its processes. */
static int map_groups(pf_writer *w, uint32_t **first_out, uint8_t **has_thread_out,
                      uint8_t **simulated_out) {
    size_t n = pp_model_track_count(w->m), nslots = 16, rows = n ? n : 1;
    while (nslots < 2 * n)
        nslots *= 2;
    uint32_t *slots = calloc(nslots, sizeof *slots); /* group + 1, 0 = empty */
    uint32_t *first = malloc(rows * sizeof *first);
    uint8_t *has_thread = calloc(rows, 1), *simulated = calloc(rows, 1);
    w->group_of = malloc(rows * sizeof *w->group_of);
    *first_out = first, *has_thread_out = has_thread, *simulated_out = simulated;
    if (!slots || !first || !has_thread || !simulated || !w->group_of) {
        free(slots);
        return PP_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        const pp_track_info *t = pp_model_track(w->m, i);
        size_t h = mix((uint64_t)t->process << 32 ^ (uint64_t)t->pid) & (nslots - 1);
        for (; slots[h]; h = (h + 1) & (nslots - 1)) {
            const pp_track_info *f = pp_model_track(w->m, first[slots[h] - 1]);
            if (f->process == t->process && f->pid == t->pid)
                break;
        }
        if (!slots[h]) {
            first[w->ngroups++] = i;
            slots[h] = w->ngroups;
        }
        uint32_t g = slots[h] - 1;
        w->group_of[i] = g;
        has_thread[g] |= t->kind == PP_TRACK_KIND_THREAD;
        simulated[g] |= (t->flags & PP_TRACK_SIMULATED) != 0;
    }
    free(slots);
    return PP_OK;
}

#define SIMULATED_SUFFIX " (simulated)"

/* A name field: the string, with " (simulated)" appended when asked. */
static uint8_t *put_name(const pf_writer *w, uint8_t *p, uint32_t field, uint32_t id, int simulated) {
    size_t n = w->len[id], k = simulated ? sizeof SIMULATED_SUFFIX - 1 : 0;
    p = pb_varint(pb_tag(p, field, PB_WIRE_LEN), n + k);
    memcpy(p, w->text[id], n);
    memcpy(p + n, SIMULATED_SUFFIX, k);
    return p + n + k;
}

static int write_group(pf_writer *w, uint32_t g, const pp_track_info *first, int has_thread,
                       int simulated) {
    int rc = pf_reserve(w, PACKET_FIXED_MAX + w->len[first->process] + sizeof SIMULATED_SUFFIX);
    if (rc)
        return rc;
    uint8_t *pkt, *desc, *proc;
    uint8_t *p = pf_open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, w->group_uuid0 + g);
    if (has_thread) { /* a process: its threads find it by pid */
        p = pb_open(p, TRACK_PROCESS, &proc);
        p = pb_int(p, PROCESS_PID, (int64_t)g + 1);
        p = put_name(w, p, PROCESS_NAME, first->process, simulated);
        p = pb_close(proc, p);
    } else {
        p = put_name(w, p, TRACK_NAME, first->process, simulated);
    }
    w->p = pb_close(pkt, pb_close(desc, p));
    return PP_OK;
}

static int write_track(pf_writer *w, uint32_t i, const int64_t *tids) {
    const pp_track_info *t = pp_model_track(w->m, i);
    uint32_t g = w->group_of[i];
    int rc = pf_reserve(w, PACKET_FIXED_MAX + w->len[t->name] + sizeof SIMULATED_SUFFIX);
    if (rc)
        return rc;
    uint8_t *pkt, *desc, *thread;
    uint8_t *p = pf_open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, pf_track_uuid(i));
    if (t->kind == PP_TRACK_KIND_THREAD) {
        p = pb_open(p, TRACK_THREAD, &thread);
        p = pb_int(p, THREAD_PID, (int64_t)g + 1);
        /* the OS thread id where it has one, else a number past the pids */
        p = pb_int(p, THREAD_TID, tids[i] > 0 ? tids[i] : (int64_t)w->ngroups + 1 + i);
        p = put_name(w, p, THREAD_NAME, t->name, 0);
        p = pb_close(thread, p);
    } else {
        p = pb_uint(p, TRACK_PARENT, w->group_uuid0 + g);
        p = put_name(w, p, TRACK_NAME, t->name, (t->flags & PP_TRACK_SIMULATED) != 0);
    }
    w->p = pb_close(pkt, pb_close(desc, p));
    return PP_OK;
}

/* The trace-info track: named "pipeprof", plus how many records were lost. */
static int write_info_track(pf_writer *w) {
    char name[96];
    uint64_t dropped = pp_model_meta_get(w->m)->dropped_records;
    int n = dropped ? snprintf(name, sizeof name, "pipeprof (%llu records dropped)",
                               (unsigned long long)dropped)
                    : snprintf(name, sizeof name, "pipeprof");
    int rc = pf_reserve(w, PACKET_FIXED_MAX + (size_t)n);
    if (rc)
        return rc;
    uint8_t *pkt, *desc;
    uint8_t *p = pf_open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, w->info_uuid);
    p = pb_bytes(p, TRACK_NAME, name, (size_t)n);
    w->p = pb_close(pkt, pb_close(desc, p));
    return PP_OK;
}

int pf_write_descriptors(pf_writer *w) {
    uint32_t *first = NULL;
    uint8_t *has_thread = NULL, *simulated = NULL;
    size_t ntracks = pp_model_track_count(w->m);
    int rc = map_groups(w, &first, &has_thread, &simulated);
    w->group_uuid0 = (uint64_t)ntracks + 1;
    w->info_uuid = w->group_uuid0 + w->ngroups;
    w->counter_uuid0 = w->info_uuid + 1;
    if (!rc)
        rc = write_info_track(w);
    for (uint32_t g = 0; !rc && g < w->ngroups; g++)
        rc = write_group(w, g, pp_model_track(w->m, first[g]), has_thread[g], simulated[g]);
    int64_t *tids = rc ? NULL : malloc((ntracks ? ntracks : 1) * sizeof *tids);
    if (!rc && (!tids || track_export_tids(w->m, 1, (int64_t)(w->ngroups + ntracks), tids)))
        rc = PP_ENOMEM;
    for (uint32_t i = 0; !rc && i < ntracks; i++)
        rc = write_track(w, i, tids);
    free(tids);
    free(first);
    free(has_thread);
    free(simulated);
    return rc;
}

static int grow_counters(pf_writer *w) {
    size_t cap = w->counters_cap ? 2 * w->counters_cap : 64;
    counter_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return PP_ENOMEM;
    for (size_t k = 0; k < w->counters_cap; k++) {
        if (!w->counters[k].key)
            continue;
        size_t h = mix(w->counters[k].key) & (cap - 1);
        while (slots[h].key)
            h = (h + 1) & (cap - 1);
        slots[h] = w->counters[k];
    }
    free(w->counters);
    w->counters = slots;
    w->counters_cap = cap;
    return PP_OK;
}

/* The uuid of the counter track of (track, name); a new one gets its
 * descriptor written first, under the track's group. */
int pf_counter_track(pf_writer *w, uint32_t track, uint32_t name, uint64_t *uuid) {
    if (2 * (w->ncounters + 1) > w->counters_cap && grow_counters(w))
        return PP_ENOMEM;
    uint64_t key = ((uint64_t)track << 32 | name) + 1;
    size_t h = mix(key) & (w->counters_cap - 1);
    for (; w->counters[h].key; h = (h + 1) & (w->counters_cap - 1))
        if (w->counters[h].key == key) {
            *uuid = w->counters[h].uuid;
            return PP_OK;
        }
    *uuid = w->counter_uuid0 + w->ncounters++;
    w->counters[h] = (counter_slot){key, *uuid};
    int rc = pf_reserve(w, PACKET_FIXED_MAX + w->len[name]);
    if (rc)
        return rc;
    uint8_t *pkt, *desc, *counter;
    uint8_t *p = pf_open_packet(w->p, &pkt, -1, 0);
    p = pb_open(p, PACKET_TRACK_DESCRIPTOR, &desc);
    p = pb_uint(p, TRACK_UUID, *uuid);
    p = pb_uint(p, TRACK_PARENT, w->group_uuid0 + w->group_of[track]);
    p = put_name(w, p, TRACK_NAME, name, 0);
    p = pb_open(p, TRACK_COUNTER, &counter);
    w->p = pb_close(pkt, pb_close(desc, pb_close(counter, p)));
    return PP_OK;
}
