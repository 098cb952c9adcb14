/* perfetto_writer.h — what the two halves of the .pftrace writer share
 * (docs/format-perfetto.md): perfetto_write.c writes the packet sequence,
 * the events and their annotations; perfetto_tracks.c the track
 * descriptors. Not a public interface. */
#ifndef PP_IO_PERFETTO_WRITER_H
#define PP_IO_PERFETTO_WRITER_H

#include "io/outfile.h"
#include "io/pb.h"
#include "model/columns.h"
#include "io/perfetto_order.h"
#include "pipeprof/model.h"

/* Everything of one packet but its strings and annotations, with the slack
 * pb_close may need at each level of nesting. */
#define PACKET_FIXED_MAX 256

/* Field numbers of Perfetto's trace proto (tests/io/perfetto_subset.proto). */
enum {
    TRACE_PACKET = 1,
    PACKET_TIMESTAMP = 8, PACKET_SEQUENCE_ID = 10, PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED_DATA = 12, PACKET_SEQUENCE_FLAGS = 13, PACKET_DEFAULTS = 59,
    PACKET_TRACK_DESCRIPTOR = 60,
    DEFAULTS_CLOCK_ID = 58,
    TRACK_UUID = 1, TRACK_NAME = 2, TRACK_PROCESS = 3, TRACK_THREAD = 4, TRACK_PARENT = 5,
    TRACK_COUNTER = 8,
    PROCESS_PID = 1, PROCESS_NAME = 6,
    THREAD_PID = 1, THREAD_TID = 2, THREAD_NAME = 5,
    EVENT_ANNOTATIONS = 4, EVENT_TYPE = 9, EVENT_NAME_IID = 10, EVENT_TRACK_UUID = 11,
    EVENT_DOUBLE_COUNTER = 44, EVENT_FLOW_IDS = 47, EVENT_TERMINATING_FLOW_IDS = 48,
    ANNOTATION_NAME_IID = 1, ANNOTATION_UINT = 3, ANNOTATION_INT = 4, ANNOTATION_DOUBLE = 5,
    ANNOTATION_STRING = 6, ANNOTATION_STRING_IID = 17,
    INTERNED_EVENT_NAMES = 2, INTERNED_ANNOTATION_NAMES = 3, INTERNED_STRING_VALUES = 29,
    ENTRY_IID = 1, ENTRY_TEXT = 2 /* EventName.name, DebugAnnotationName.name, InternedString.str */
};

enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };

/* The three interning tables a packet can add to. */
enum { TABLE_EVENT_NAMES, TABLE_ANNOTATION_NAMES, TABLE_STRING_VALUES, TABLE_COUNT };

typedef struct counter_slot {
    uint64_t key; /* (track << 32 | name) + 1; 0 = empty */
    uint64_t uuid;
} counter_slot;

typedef struct intern_ref {
    uint8_t table;
    uint32_t id;
} intern_ref;

typedef struct pf_writer {
    pp_outfile out;
    const pp_model *m;
    pp_cols c;
    uint8_t *buf, *p, *end;      /* chunk being filled: [buf, p) written */
    uint32_t nstrings;           /* model strings; fixed strings follow */
    const char **text;           /* string id -> text */
    size_t *len;                 /* string id -> length */
    uint8_t *interned[TABLE_COUNT]; /* string id -> already in the sequence's table */
    intern_ref *refs;            /* new entries of the packet being written */
    size_t nrefs, refs_cap;
    uint32_t *group_of;          /* track -> group (distinct process, pid) */
    uint32_t ngroups;
    uint64_t group_uuid0, info_uuid, counter_uuid0;
    counter_slot *counters;      /* (track, name) -> counter track uuid */
    size_t counters_cap, ncounters;
    pf_ends ends;                /* slice ends not yet written */
} pf_writer;

/* A model track's uuid; groups, the trace-info track and counter tracks
 * follow the model's tracks (docs/format-perfetto.md). */
static inline uint64_t pf_track_uuid(uint32_t track) {
    return (uint64_t)track + 1;
}

/* Makes room for `need` bytes at w->p; 0 or PP_ENOMEM. */
int pf_reserve(pf_writer *w, size_t need);
/* Opens a TracePacket (as Trace.packet) with its timestamp when `ts` >= 0,
 * the sequence id and `flags` (none when 0). */
uint8_t *pf_open_packet(uint8_t *p, uint8_t **mark, int64_t ts, uint32_t flags);

/* The trace-info track, the groups and the model's tracks. */
int pf_write_descriptors(pf_writer *w);
/* The uuid of the counter track of (track, name); a new one gets its
 * descriptor written first, under the track's group. */
int pf_counter_track(pf_writer *w, uint32_t track, uint32_t name, uint64_t *uuid);

#endif
