/* fork.h — keeping the core's locks usable in a forked child (fork.c).
 * Not public. */
#ifndef PP_CORE_FORK_H
#define PP_CORE_FORK_H

/* Installs the pthread_atfork handlers once; called before any of the
 * locks below is first taken (pp_session_open, pp_intern). */
void pp_fork_handlers_register(void);

/* Take / release every open session's lock, the registry's first
 * (session.c). */
void pp_sessions_fork_lock(void);
void pp_sessions_fork_unlock(void);
/* Take / release the name table's lock (names.c). */
void pp_thread_names_fork_lock(void);
void pp_thread_names_fork_unlock(void);
void pp_names_fork_lock(void);
void pp_names_fork_unlock(void);
/* Take / release the chunk pool's lock (buffer.c) and the clock's (clock.c). */
void pp_chunks_fork_lock(void);
void pp_chunks_fork_unlock(void);
void pp_clock_fork_lock(void);
void pp_clock_fork_unlock(void);

#endif
