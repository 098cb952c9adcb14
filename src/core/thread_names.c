/* thread_names.c — the names users give their threads, process-wide: a
 * Python thread's threading name (the package's hook), ITT's
 * __itt_thread_set_name, NVTX's nvtxNameOsThread, pp_thread_name_set.
 *
 * A thread's track is named at its first record (session.c, tracks.c), by
 * the name given here if any, else its OS name. A name given later renames
 * the thread's tracks and thread entries in every open session, so that the
 * trace shows the last name the user gave, whenever it came. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fork.h"
#include "core/session.h"
#include "core/thread_names.h"

typedef struct given_name {
    int64_t tid;
    pp_str name;
} given_name;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static given_name *names;
static size_t nnames, capnames;

void pp_thread_names_fork_lock(void) {
    pthread_mutex_lock(&lock);
}

void pp_thread_names_fork_unlock(void) {
    pthread_mutex_unlock(&lock);
}

pp_str pp_thread_name_given(int64_t tid) {
    pp_str name = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = nnames; i-- > 0;)
        if (names[i].tid == tid) {
            name = names[i].name;
            break;
        }
    pthread_mutex_unlock(&lock);
    return name;
}

int pp_thread_name_set(int64_t tid, const char *name) {
    if (tid == 0)
        tid = (int64_t)gettid();
    if (tid < 0 || !name || !*name)
        return PP_EINVAL;
    pp_str id = pp_intern(name); /* registers the fork handlers too */
    if (!id)
        return PP_ENOMEM;
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < nnames && names[i].tid != tid)
        i++;
    if (i == nnames) {
        if (nnames == capnames) {
            size_t cap = capnames ? 2 * capnames : 16;
            given_name *grown = realloc(names, cap * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&lock);
                return PP_ENOMEM;
            }
            names = grown;
            capnames = cap;
        }
        nnames++;
    }
    names[i] = (given_name){tid, id};
    pthread_mutex_unlock(&lock);
    pp_sessions_rename_thread(tid, id);
    return PP_OK;
}

void pp_session_rename_thread(pp_session *s, int64_t tid, pp_str name) {
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->ntracks; i++)
        if (s->tracks[i].kind == PP_TRACK_KIND_THREAD && s->tracks[i].tid == tid)
            s->tracks[i].name = name;
    for (pp_thread_buf *tb = atomic_load(&s->threads); tb; tb = atomic_load(&tb->next))
        if (tb->tid == tid)
            tb->name = name;
    pthread_mutex_unlock(&s->lock);
}
