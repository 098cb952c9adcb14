/* pb.h — the protobuf wire format, encoded by hand (docs/format-perfetto.md
 * says why): varints, fixed 64-bit values, length-delimited bytes and nested
 * messages. Every function writes at `p` and returns the end of what it
 * wrote; the caller has reserved the room (PB_SCALAR_MAX bytes for one
 * scalar field, PB_SCALAR_MAX + len for bytes), so nothing checks lengths. */
#ifndef PP_IO_PB_H
#define PP_IO_PB_H

#include <stdint.h>
#include <string.h>

enum { PB_WIRE_VARINT = 0, PB_WIRE_I64 = 1, PB_WIRE_LEN = 2 };

/* A tag (field numbers below 2^29) and a 64-bit varint. */
#define PB_SCALAR_MAX 15

static inline uint8_t *pb_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline size_t pb_varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *pb_tag(uint8_t *p, uint32_t field, int wire) {
    return pb_varint(p, (uint64_t)field << 3 | (uint64_t)wire);
}

/* uint32, uint64, enum and bool fields. */
static inline uint8_t *pb_uint(uint8_t *p, uint32_t field, uint64_t v) {
    return pb_varint(pb_tag(p, field, PB_WIRE_VARINT), v);
}

/* int32 and int64 fields: two's complement, so a negative value takes 10 bytes. */
static inline uint8_t *pb_int(uint8_t *p, uint32_t field, int64_t v) {
    return pb_uint(p, field, (uint64_t)v);
}

/* fixed64 fields, little-endian whatever the host. */
static inline uint8_t *pb_fixed64(uint8_t *p, uint32_t field, uint64_t v) {
    p = pb_tag(p, field, PB_WIRE_I64);
    for (int k = 0; k < 8; k++)
        *p++ = (uint8_t)(v >> 8 * k);
    return p;
}

static inline uint8_t *pb_double(uint8_t *p, uint32_t field, double d) {
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return pb_fixed64(p, field, v);
}

/* string and bytes fields. */
static inline uint8_t *pb_bytes(uint8_t *p, uint32_t field, const void *data, size_t len) {
    p = pb_varint(pb_tag(p, field, PB_WIRE_LEN), len);
    memcpy(p, data, len);
    return p + len;
}

/* A nested message: pb_open writes the tag and keeps one byte for the
 * length at *mark; the message's fields follow; pb_close writes the length
 * there and, for a message of 128 bytes or more, moves the fields up to make
 * room for a longer varint (up to 9 bytes more than the caller wrote, which
 * its reservation must include). Messages are mostly short, so the move is
 * rare and the length costs one byte. */
static inline uint8_t *pb_open(uint8_t *p, uint32_t field, uint8_t **mark) {
    p = pb_tag(p, field, PB_WIRE_LEN);
    *mark = p;
    return p + 1;
}

static inline uint8_t *pb_close(uint8_t *mark, uint8_t *p) {
    size_t len = (size_t)(p - (mark + 1));
    if (len < 0x80) {
        *mark = (uint8_t)len;
        return p;
    }
    size_t n = pb_varint_len(len);
    memmove(mark + n, mark + 1, len);
    pb_varint(mark, len);
    return mark + n + len;
}

#endif
