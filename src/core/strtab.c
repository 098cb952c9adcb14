#include "core/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "pipeprof/common.h"

#define ARENA_CHUNK (64 * 1024)

/* FNV-1a: short names dominate, and it needs no tables. */
static uint64_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static char *arena_copy(pp_strtab *t, const char *text, size_t len) {
    if (t->arena_used + len + 1 > t->arena_cap) {
        size_t cap = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
        char *chunk = malloc(cap);
        char **chunks = realloc(t->chunks, (t->nchunks + 1) * sizeof *chunks);
        if (!chunk || !chunks) {
            free(chunk);
            if (chunks)
                t->chunks = chunks;
            return NULL;
        }
        chunks[t->nchunks++] = chunk;
        t->chunks = chunks;
        t->arena = chunk;
        t->arena_used = 0;
        t->arena_cap = cap;
    }
    char *p = t->arena + t->arena_used;
    memcpy(p, text, len);
    p[len] = 0;
    t->arena_used += len + 1;
    return p;
}

static int rehash(pp_strtab *t, size_t nslots) {
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return PP_ENOMEM;
    for (size_t id = 1; id < t->count; id++) {
        size_t i = hash_bytes(t->texts[id], t->lens[id]) & (nslots - 1);
        while (slots[i])
            i = (i + 1) & (nslots - 1);
        slots[i] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return PP_OK;
}

int pp_strtab_init(pp_strtab *t) {
    memset(t, 0, sizeof *t);
    t->cap = 64;
    t->texts = malloc(t->cap * sizeof *t->texts);
    t->lens = malloc(t->cap * sizeof *t->lens);
    if (!t->texts || !t->lens || rehash(t, 128) != PP_OK) {
        pp_strtab_free(t);
        return PP_ENOMEM;
    }
    t->texts[0] = "";
    t->lens[0] = 0;
    t->count = 1;
    return PP_OK;
}

void pp_strtab_free(pp_strtab *t) {
    for (size_t i = 0; i < t->nchunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->texts);
    free(t->lens);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

uint32_t pp_strtab_find(const pp_strtab *t, const char *text, size_t len) {
    if (len == 0)
        return 0;
    size_t i = hash_bytes(text, len) & (t->nslots - 1);
    for (; t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
        uint32_t id = t->slots[i] - 1;
        if (t->lens[id] == len && memcmp(t->texts[id], text, len) == 0)
            return id;
    }
    return 0;
}

int pp_strtab_intern(pp_strtab *t, const char *text, size_t len, uint32_t *id) {
    if (len == 0) {
        *id = 0;
        return PP_OK;
    }
    if (memchr(text, 0, len))
        return PP_EINVAL;
    uint32_t found = pp_strtab_find(t, text, len);
    if (found) {
        *id = found;
        return PP_OK;
    }
    if (len > UINT32_MAX || t->count >= UINT32_MAX - 1)
        return PP_ENOMEM;
    if ((t->count + 1) * 2 > t->nslots && rehash(t, t->nslots * 2) != PP_OK)
        return PP_ENOMEM;
    if (t->count == t->cap) {
        size_t cap = t->cap * 2;
        char **texts = realloc(t->texts, cap * sizeof *texts);
        if (!texts)
            return PP_ENOMEM;
        t->texts = texts;
        uint32_t *lens = realloc(t->lens, cap * sizeof *lens);
        if (!lens)
            return PP_ENOMEM;
        t->lens = lens;
        t->cap = cap;
    }
    char *copy = arena_copy(t, text, len);
    if (!copy)
        return PP_ENOMEM;
    uint32_t nid = (uint32_t)t->count++;
    t->texts[nid] = copy;
    t->lens[nid] = (uint32_t)len;
    size_t i = hash_bytes(text, len) & (t->nslots - 1);
    while (t->slots[i])
        i = (i + 1) & (t->nslots - 1);
    t->slots[i] = nid + 1;
    *id = nid;
    return PP_OK;
}

const char *pp_strtab_text(const pp_strtab *t, uint32_t id) {
    return id < t->count ? t->texts[id] : "";
}
