/* The process-wide name table behind pp_intern: one table for every session,
 * so an id interned once (e.g. cached at a call site) is valid everywhere. */
#include <pthread.h>
#include <string.h>

#include "core/fork.h"
#include "core/strtab.h"
#include "pipeprof/trace.h"

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_strtab names;
static int names_ready;

pp_str pp_intern(const char *text) {
    uint32_t id = 0;
    if (!text || !*text)
        return 0;
    pp_fork_handlers_register();
    pthread_mutex_lock(&names_lock);
    if (!names_ready)
        names_ready = pp_strtab_init(&names) == 0;
    if (names_ready && pp_strtab_intern(&names, text, strlen(text), &id) != 0)
        id = 0;
    pthread_mutex_unlock(&names_lock);
    return id;
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
