/* event_blank.h — the empty event of pp_event_init (pipeprof/model.h) as an
 * inline value, for the readers that start one an event: the call to
 * pp_event_init cost the Chrome JSON reader 5% of its time (perf), a
 * compound literal costs a few stores. Not public. */
#ifndef PP_MODEL_EVENT_BLANK_H
#define PP_MODEL_EVENT_BLANK_H

#include "pipeprof/model.h"

/* Every field zero, no batch (-1). */
static inline pp_event pp_event_blank(void) {
    return (pp_event){.batch = -1};
}

#endif
