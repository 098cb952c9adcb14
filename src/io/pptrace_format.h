/* pptrace_format.h — the byte layout of a .pptrace file, shared by its
 * writer and reader (docs/format-pptrace.md is the specification).
 *
 * Every multi-byte number is little-endian and is encoded and decoded byte
 * by byte through the helpers below, never by copying a host struct, so the
 * file is the same on every machine. Compilers turn each helper into one
 * load or store on little-endian hosts. */
#ifndef PP_IO_PPTRACE_FORMAT_H
#define PP_IO_PPTRACE_FORMAT_H

#include <stdint.h>

#define PPTRACE_MAGIC "PPTRACE" /* 8 bytes with the terminating NUL */
#define PPTRACE_MAGIC_LEN 8
#define PPTRACE_VERSION 2u         /* what the writer writes */
#define PPTRACE_OLDEST_VERSION 1u  /* the oldest the reader reads */
#define PPTRACE_HEADER_LEN 16      /* magic, u32 version, u32 flags */
#define PPTRACE_BLOCK_HEAD_LEN 8   /* u32 type, u32 payload length */
#define PPTRACE_BLOCK_TAIL_LEN 4   /* u32 crc32 of head and payload */

/* Table blocks (TRACKS, THREADS, EVENTS, ANNOTATIONS, STRINGS) hold at most
 * this many rows: it bounds a block's size, and so what a reader allocates
 * and what a truncated file loses. */
#define PPTRACE_ROWS_PER_BLOCK 65536u
/* The writer starts a new STRINGS block past this many text bytes. */
#define PPTRACE_STRINGS_TARGET (1u << 20)
/* The largest payload a STRINGS or unknown optional block may have. */
#define PPTRACE_MAX_PAYLOAD (1u << 26)

/* Row sizes in bytes (the column widths of each table summed). EVENTS and
 * ANNOTATIONS rows have these fixed sizes in version 1 only (version 2
 * encodes them with pptrace_codec.h); TRACKS and THREADS in both. A track is
 * u8 kind, u32 flags, process, name, device, i32 stream, i64 pid, tid,
 * i32 sort_index. */
#define PPTRACE_TRACK_ROW 41
#define PPTRACE_THREAD_ROW 28     /* i64 tid, u32 name, u64 recorded, dropped */
#define PPTRACE_EVENT_ROW 71      /* 7 x 8-byte, 3 x 4-byte, 3 x 1-byte columns */
#define PPTRACE_ANNOTATION_ROW 21 /* u64 event, u32 key, u8 type, u64 value */
#define PPTRACE_META_LEN 40       /* i32 level, u32 process_name, 4 x u64 */
#define PPTRACE_END_LEN 40        /* 5 x u64 totals */
#define PPTRACE_CLOCK_LEN 24      /* u32 clock, host, boot_id, alignment, i64 error */

/* Types with this bit set are optional: a reader skips those it does not
 * know. Every other unknown type is an error. */
#define PPTRACE_OPTIONAL_BIT 0x80000000u

typedef enum pptrace_block_type {
    PPTRACE_STRINGS = 1,
    PPTRACE_META = 2,
    PPTRACE_TRACKS = 3,
    PPTRACE_THREADS = 4,
    PPTRACE_EVENTS = 5,
    PPTRACE_ANNOTATIONS = 6,
    PPTRACE_END = 7
} pptrace_block_type;
/* Optional (older readers skip it): the clock fields of the meta. Outside
 * the enum: C11 enumerators are ints. */
#define PPTRACE_CLOCK 0x80000001u

static inline const char *pptrace_block_name(uint32_t type) {
    switch (type) {
    case PPTRACE_STRINGS: return "STRINGS";
    case PPTRACE_META: return "META";
    case PPTRACE_TRACKS: return "TRACKS";
    case PPTRACE_THREADS: return "THREADS";
    case PPTRACE_EVENTS: return "EVENTS";
    case PPTRACE_ANNOTATIONS: return "ANNOTATIONS";
    case PPTRACE_END: return "END";
    case PPTRACE_CLOCK: return "CLOCK";
    default: return type & PPTRACE_OPTIONAL_BIT ? "optional" : "unknown";
    }
}

static inline uint32_t pptrace_get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t pptrace_get64(const unsigned char *p) {
    return (uint64_t)pptrace_get32(p) | (uint64_t)pptrace_get32(p + 4) << 32;
}

static inline void pptrace_put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void pptrace_put64(unsigned char *p, uint64_t v) {
    pptrace_put32(p, (uint32_t)v);
    pptrace_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
