/* Collection settings: what pipeprof's instrumentation records (the collect
 * bits, of which the levels are presets), which devices it records, and
 * pp_session_set_config, which changes any setting by name before start.
 * Settings are read by executors when they are created, never on the hot
 * path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/session.h"

static const struct {
    const char *name;
    unsigned bit;
} collect_names[] = {
    {"spans", PP_COLLECT_SPANS}, {"hw", PP_COLLECT_HW}, {"ops", PP_COLLECT_OPS},
    {"transfers", PP_COLLECT_TRANSFERS}, {"api", PP_COLLECT_API},
    {"sched", PP_COLLECT_SCHED}, {"threads", PP_COLLECT_THREADS},
};

unsigned pp_collect_preset(int level) {
    unsigned bits = PP_COLLECT_SPANS;
    if (level >= 1)
        bits |= PP_COLLECT_HW | PP_COLLECT_TRANSFERS | PP_COLLECT_SCHED;
    if (level >= 2)
        bits |= PP_COLLECT_OPS;
    return bits;
}

/* What the devices must profile for these bits: hardware totals and
 * transfers come from a request's profile, ops from its per-op list. */
static int level_of(unsigned collect) {
    return collect & PP_COLLECT_OPS ? 2 : collect & (PP_COLLECT_HW | PP_COLLECT_TRANSFERS) ? 1 : 0;
}

int pp_collect_parse(const char *text, unsigned *out, pp_error *err) {
    if (!text || !out)
        return pp_set_error(err, PP_EINVAL, "collect: no list given");
    if (strcmp(text, "all") == 0) {
        *out = PP_COLLECT_ALL;
        return PP_OK;
    }
    unsigned bits = 0;
    const char *p = text;
    for (;;) {
        size_t n = strcspn(p, ",+");
        size_t i = 0;
        while (i < sizeof collect_names / sizeof collect_names[0] &&
               (strlen(collect_names[i].name) != n || strncmp(collect_names[i].name, p, n) != 0))
            i++;
        if (i == sizeof collect_names / sizeof collect_names[0])
            return pp_set_error(err, PP_EINVAL,
                                "collect \"%s\": unknown item \"%.*s\" (have: spans, hw, ops, "
                                "transfers, api, sched, threads, or all)", text, (int)n, p);
        bits |= collect_names[i].bit;
        if (!p[n])
            break;
        p += n + 1;
    }
    *out = bits;
    return PP_OK;
}

/* Replaces the device list with the names in `list` (comma separated; NULL,
 * "" or "all": every device). */
static int set_devices(pp_session *s, const char *list, pp_error *err) {
    size_t count = 0;
    pp_str *ids = NULL;
    if (list && *list && strcmp(list, "all") != 0) {
        for (const char *p = list;; p++) {
            size_t n = strcspn(p, ",");
            if (n == 0 || n >= 64)
                return pp_set_error(err, PP_EINVAL, "devices \"%s\": %s", list,
                                    n ? "a device name is too long" : "an empty device name");
            p += n;
            count++;
            if (!*p)
                break;
        }
        ids = calloc(count, sizeof *ids);
        if (!ids)
            return pp_set_error(err, PP_ENOMEM, "devices: out of memory");
        const char *p = list;
        for (size_t i = 0; i < count; i++) {
            char name[64];
            size_t n = strcspn(p, ",");
            memcpy(name, p, n);
            name[n] = 0;
            if ((ids[i] = pp_intern(name)) == 0) {
                free(ids);
                return pp_set_error(err, PP_ENOMEM, "devices: out of memory");
            }
            p += n + 1;
        }
    }
    free(s->devices);
    s->devices = ids;
    s->ndevices = count;
    return PP_OK;
}

static void set_collect(pp_session *s, unsigned bits) {
    s->collect = bits;
    s->level = level_of(bits);
}

int pp_session_settings_init(pp_session *s, const pp_session_config *cfg) {
    set_collect(s, cfg->collect ? cfg->collect : pp_collect_preset(cfg->level));
    s->sched_sample_ns = 10 * 1000000; /* often enough to see a 50 ms stage compete */
    return set_devices(s, cfg->devices, NULL);
}

void pp_session_settings_free(pp_session *s) {
    free(s->devices);
    s->devices = NULL;
    s->ndevices = 0;
}

unsigned pp_session_collect(const pp_session *s) {
    return s ? s->collect : 0;
}

int pp_session_records_device(const pp_session *s, const char *name) {
    if (!s)
        return 0;
    if (s->ndevices == 0)
        return 1;
    for (size_t i = 0; i < s->ndevices; i++)
        if (strcmp(pp_str_text(s->devices[i]), name) == 0)
            return 1;
    return 0;
}

/* Replaces *slot with a copy of value ("" and NULL: none, when allowed). */
static int set_string(char **slot, const char *value, int allow_none, const char *key, pp_error *err) {
    if (!*value && !allow_none)
        return pp_set_error(err, PP_EINVAL, "%s: must not be empty", key);
    char *copy = *value ? strdup(value) : NULL;
    if (*value && !copy)
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", key);
    free(*slot);
    *slot = copy;
    return PP_OK;
}

int pp_session_set_config(pp_session *s, const char *key, const char *value, pp_error *err) {
    if (!s || !key || !value)
        return pp_set_error(err, PP_EINVAL, "set_config: no session, key or value");
    if (atomic_load(&s->state) != PP_STATE_OPEN)
        return pp_set_error(err, PP_ESTATE, "set_config %s: settings are fixed once the session "
                                            "has started", key);
    if (strcmp(key, "level") == 0) {
        if (strcmp(value, "0") && strcmp(value, "1") && strcmp(value, "2"))
            return pp_set_error(err, PP_EINVAL, "level \"%s\": must be 0, 1 or 2", value);
        set_collect(s, pp_collect_preset(value[0] - '0'));
        return PP_OK;
    }
    if (strcmp(key, "collect") == 0) {
        unsigned bits;
        int rc = pp_collect_parse(value, &bits, err);
        if (rc == PP_OK)
            set_collect(s, bits);
        return rc;
    }
    if (strcmp(key, "devices") == 0)
        return set_devices(s, value, err);
    if (strcmp(key, "max_records") == 0) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(value, &end, 10);
        if (errno || *end || !*value || n == 0 || value[0] == '-')
            return pp_set_error(err, PP_EINVAL, "max_records \"%s\": must be a positive integer", value);
        s->max_records = n;
        s->chunk_records = pp_chunk_records_for(n);
        return PP_OK;
    }
    if (strcmp(key, "overflow") == 0) {
        if (strcmp(value, "drop") && strcmp(value, "ring"))
            return pp_set_error(err, PP_EINVAL, "overflow \"%s\": must be drop or ring", value);
        int ring = strcmp(value, "ring") == 0, rc = PP_OK;
        pthread_mutex_lock(&s->lock); /* a follower reads chunks that a ring would overwrite */
        if (ring && s->followers > 0)
            rc = PP_ESTATE;
        else
            s->overflow = ring ? PP_OVERFLOW_RING : PP_OVERFLOW_DROP;
        pthread_mutex_unlock(&s->lock);
        if (rc != PP_OK)
            return pp_set_error(err, rc, "overflow ring: the session has live subscribers, which "
                                         "need the drop policy");
        return PP_OK;
    }
    if (strcmp(key, "sched_sample_ms") == 0) {
        char *end;
        errno = 0;
        long ms = strtol(value, &end, 10);
        if (errno || *end || !*value || ms < 1 || ms > 10000)
            return pp_set_error(err, PP_EINVAL, "sched_sample_ms \"%s\": must be an integer "
                                                "from 1 to 10000", value);
        s->sched_sample_ns = (int64_t)ms * 1000000;
        return PP_OK;
    }
    if (strcmp(key, "output") == 0)
        return set_string(&s->output, value, 1, key, err);
    if (strcmp(key, "process_name") == 0)
        return set_string(&s->process_name, value, 0, key, err);
    return pp_set_error(err, PP_EINVAL, "set_config: unknown key \"%s\" (have: level, collect, "
                                        "devices, max_records, overflow, output, process_name, "
                                        "sched_sample_ms)", key);
}
