/* The process-wide name table behind pp_intern: one table for every session,
 * so an id interned once (e.g. cached at a call site) is valid everywhere. */
#include "core/names.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fork.h"
#include "core/strtab.h"
#include "pipeprof/trace.h"

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_strtab names;
static int names_ready;
static uint64_t cut_bytes; /* under names_lock */

/* `text` (len bytes, over PP_NAME_MAX_BYTES) cut to fit with its marker,
 * malloc'd (NULL without memory); *kept = the bytes of text it keeps. The
 * cut falls before a UTF-8 continuation byte, never inside a character. */
static char *cut_name(const char *text, size_t len, size_t *kept) {
    char marker[48];
    int mlen = snprintf(marker, sizeof marker, "...[cut from %zu bytes]", len);
    size_t keep = PP_NAME_MAX_BYTES - (size_t)mlen;
    while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
        keep--;
    char *out = malloc(keep + (size_t)mlen + 1);
    if (!out)
        return NULL;
    memcpy(out, text, keep);
    memcpy(out + keep, marker, (size_t)mlen + 1);
    *kept = keep;
    return out;
}

pp_str pp_intern(const char *text) {
    uint32_t id = 0;
    if (!text || !*text)
        return 0;
    size_t len = strlen(text), kept = len;
    char *cut = NULL;
    if (len > PP_NAME_MAX_BYTES && !(cut = cut_name(text, len, &kept)))
        return 0;
    pp_fork_handlers_register();
    pthread_mutex_lock(&names_lock);
    if (!names_ready)
        names_ready = pp_strtab_init(&names) == 0;
    if (names_ready && cut) {
        /* counted once per distinct name, as the trace holds it once */
        if (pp_strtab_find(&names, cut, strlen(cut)) == 0)
            cut_bytes += len - kept;
        text = cut;
        len = strlen(cut);
    }
    if (names_ready && pp_strtab_intern(&names, text, len, &id) != 0)
        id = 0;
    pthread_mutex_unlock(&names_lock);
    free(cut);
    return id;
}

uint64_t pp_names_cut_bytes(void) {
    pthread_mutex_lock(&names_lock);
    uint64_t n = cut_bytes;
    pthread_mutex_unlock(&names_lock);
    return n;
}

const char *pp_str_text(pp_str id) {
    const char *text = "";
    pthread_mutex_lock(&names_lock);
    if (names_ready)
        text = pp_strtab_text(&names, id);
    pthread_mutex_unlock(&names_lock);
    return text;
}

void pp_names_fork_lock(void) {
    pthread_mutex_lock(&names_lock);
}

void pp_names_fork_unlock(void) {
    pthread_mutex_unlock(&names_lock);
}
