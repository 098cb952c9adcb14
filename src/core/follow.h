/* follow.h — reading a session's records while its threads still record.
 *
 * A follower keeps one cursor per recording thread and, on each poll, hands
 * over the records published since the last poll (a chunk's records are
 * published by the owner's release store of `used`, record.c). Nothing here
 * touches the hot path: recording threads neither know nor wait for their
 * followers. A poll walks the thread list and the chunk lists without a lock
 * (both are append-only under the drop policy); only pp_follower_track takes
 * the session lock, to copy a track the follower has not seen yet.
 *
 * Under the ring policy a thread overwrites its oldest chunk in place, so a
 * reader could see a record half rewritten: following is refused there. Not
 * public; the capture layer's subscriptions (pipeprof/subscribe.h) are built
 * on it. */
#ifndef PP_CORE_FOLLOW_H
#define PP_CORE_FOLLOW_H

#include "core/record.h"

typedef struct pp_follower pp_follower;

/* Called once per run of newly published records of one thread, oldest
 * first; `thread` is the thread's index in visiting order (as in
 * pp_thread_meta). Return non-zero to stop the poll early: the records not
 * yet handed over come again on the next poll, from `consumed` on (set it to
 * how many of `recs` were used before stopping). */
typedef int (*pp_follow_fn)(void *ctx, uint32_t thread, const pp_record *recs, size_t n,
                            size_t *consumed);

/* Starts following `s` from what it holds now: records published before this
 * call are not handed over (a thread that attaches later is followed from its
 * first record). PP_EUNSUPPORTED under the ring policy, PP_ENOMEM. The
 * follower must be closed before the session. */
int pp_follower_open(pp_session *s, pp_follower **out);
/* Hands every record published since the last poll to fn. Returns PP_OK,
 * PP_ENOMEM (a new thread's cursor could not be allocated; retried on the
 * next poll), or 1 when fn stopped it early. */
int pp_follower_poll(pp_follower *f, pp_follow_fn fn, void *ctx);
/* Records the session dropped so far (budget spent), over all threads. */
uint64_t pp_follower_session_dropped(const pp_follower *f);
/* Copies track `t` of the followed session (takes the session lock: call it
 * once per track and keep the copy). PP_ENOTFOUND for a track not created. */
int pp_follower_track(pp_follower *f, pp_track t, pp_track_def *out);
void pp_follower_close(pp_follower *f);

#endif
