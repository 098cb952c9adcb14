/* fork() from a recording program: a child gets one thread, the one that
 * forked, and a copy of every lock as it was at that instant. A lock some
 * other thread held then stays held forever in the child, and the child's
 * first pp_intern or pp_track_* hangs. So around fork every lock the
 * recording path can take is taken first (prepare) and released on both
 * sides, in the one order the code nests them: the session registry, each
 * session's lock, then the name table (pp_thread_buf_attach interns under
 * its session's lock); the chunk pool and the clock nest nothing. */
#include <pthread.h>

#include "core/fork.h"

static void prepare(void) {
    pp_sessions_fork_lock();
    pp_thread_names_fork_lock(); /* taken under a session's lock (buffer.c) */
    pp_names_fork_lock();
    pp_chunks_fork_lock();
    pp_clock_fork_lock();
}

static void release(void) {
    pp_clock_fork_unlock();
    pp_chunks_fork_unlock();
    pp_names_fork_unlock();
    pp_thread_names_fork_unlock();
    pp_sessions_fork_unlock();
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;

static void register_handlers(void) {
    pthread_atfork(prepare, release, release);
}

void pp_fork_handlers_register(void) {
    pthread_once(&registered, register_handlers);
}
