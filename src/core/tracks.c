/* Track creation (slow path, under the session lock). A track is created
 * once and then passed around as an integer. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/session.h"
#include "core/thread_names.h"

/* Appends a track definition; caller holds s->lock. */
static int add_track(pp_session *s, const pp_track_def *def, pp_track *out) {
    if (pp_grow((void **)&s->tracks, &s->captracks, s->ntracks, sizeof *s->tracks))
        return PP_ENOMEM;
    s->tracks[s->ntracks] = *def;
    *out = (pp_track)s->ntracks++;
    return PP_OK;
}

int pp_track_device(pp_session *s, const char *device, int stream, const char *row,
                    unsigned flags, pp_track *out) {
    if (!s || !device || !*device || stream < 0 || !out || (flags & ~(PP_TRACK_SIMULATED | PP_TRACK_HW_MEAN)))
        return PP_EINVAL;
    char label[64];
    if (!row) {
        snprintf(label, sizeof label, "stream %d", stream);
        row = label;
    }
    pp_track_def def = {.kind = PP_TRACK_KIND_DEVICE, .flags = flags, .device = pp_intern(device),
                        .name = pp_intern(row), .stream = stream};
    if (!def.device || !def.name)
        return PP_ENOMEM;
    int rc = PP_OK;
    pthread_mutex_lock(&s->lock);
    size_t i;
    for (i = 0; i < s->ntracks; i++) {
        const pp_track_def *t = &s->tracks[i];
        if (t->kind == PP_TRACK_KIND_DEVICE && t->device == def.device && t->stream == stream)
            break;
    }
    if (i < s->ntracks)
        *out = (pp_track)i;
    else
        rc = add_track(s, &def, out);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int pp_track_thread(pp_session *s, const char *name, pp_track *out) {
    if (!s || !out)
        return PP_EINVAL;
    char os_name[256] = "";
    int64_t tid = (int64_t)gettid();
    pp_str given = name && *name ? 0 : pp_thread_name_given(tid);
    if (given) { /* a copy: interning it again may move the name table */
        snprintf(os_name, sizeof os_name, "%s", pp_str_text(given));
        name = os_name;
    } else if (!name || !*name) {
        pthread_getname_np(pthread_self(), os_name, sizeof os_name);
        name = os_name;
    }
    return pp_track_thread_id(s, tid, name, out);
}

int pp_track_thread_id(pp_session *s, int64_t tid, const char *name, pp_track *out) {
    if (!s || !out)
        return PP_EINVAL;
    char fallback[48];
    if (!name || !*name) {
        snprintf(fallback, sizeof fallback, "thread %lld", (long long)tid);
        name = fallback;
    }
    pp_track_def def = {.kind = PP_TRACK_KIND_THREAD, .name = pp_intern(name), .stream = -1, .tid = tid};
    if (!def.name)
        return PP_ENOMEM;
    int rc = PP_OK;
    pthread_mutex_lock(&s->lock);
    size_t i;
    for (i = 0; i < s->ntracks; i++)
        if (s->tracks[i].kind == PP_TRACK_KIND_THREAD && s->tracks[i].tid == tid)
            break;
    if (i < s->ntracks)
        *out = (pp_track)i;
    else
        rc = add_track(s, &def, out);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int pp_track_regions(pp_session *s, pp_track *out) {
    if (!s || !out)
        return PP_EINVAL;
    int rc = PP_OK;
    pthread_mutex_lock(&s->lock);
    if (!s->has_regions) {
        pp_track_def def = {.kind = PP_TRACK_KIND_REGIONS, .name = pp_intern("regions"), .stream = -1};
        rc = add_track(s, &def, &s->regions);
        s->has_regions = rc == PP_OK;
    }
    *out = s->regions;
    pthread_mutex_unlock(&s->lock);
    return rc;
}
