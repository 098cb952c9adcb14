/* The live-subscription record: encoding and the public accessors.
 *
 * Layout (all integers little-endian, texts NUL-terminated and NUL-padded):
 *
 *   offset size field
 *     0     4  record size (256): a reader checks it before anything else
 *     4     1  kind (pp_subrec_kind)
 *     5     1  role (pp_role)
 *     6     1  flags (PP_SUBREC_*)
 *     7     1  layout version (1)
 *     8     8  start_ns   (STATUS: when it was written)
 *    16     8  end_ns
 *    24     8  batch
 *    32     8  hw_ns      (STATUS: records lost by the subscription so far)
 *    40     8  xfer_ns    (STATUS: records dropped by the session so far)
 *    48     8  seq
 *    56     4  stream (signed)
 *    60     4  reserved (0)
 *    64    64  name
 *   128    32  type
 *   160    32  device
 *   192    32  stage
 *   224    32  track
 *
 * The accessors decode byte by byte, so they read a record at any alignment
 * on any host. */
#include <string.h>

#include "capture/subrec.h"

enum {
    OFF_SIZE = 0, OFF_KIND = 4, OFF_ROLE = 5, OFF_FLAGS = 6, OFF_VERSION = 7,
    OFF_START = 8, OFF_END = 16, OFF_BATCH = 24, OFF_HW = 32, OFF_XFER = 40, OFF_SEQ = 48,
    OFF_STREAM = 56, OFF_NAME = 64, OFF_TYPE = 128, OFF_DEVICE = 160, OFF_STAGE = 192,
    OFF_TRACK = 224
};
enum { LEN_NAME = 64, LEN_SHORT = 32, LAYOUT_VERSION = 1 };

_Static_assert(OFF_TRACK + LEN_SHORT == PP_SUBREC_SIZE, "the fields fill the record");

static void put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Copies text into a field of `cap` bytes; 1 when it had to be cut. A cut
 * never splits a UTF-8 sequence. */
static int put_text(unsigned char *field, size_t cap, const char *text) {
    size_t n = text ? strlen(text) : 0;
    int cut = n > cap - 1;
    if (cut) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
    }
    if (n)
        memcpy(field, text, n);
    return cut;
}

void pp_subrec_encode(unsigned char *rec, const pp_subrec_fields *f) {
    memset(rec, 0, PP_SUBREC_SIZE);
    int cut = put_text(rec + OFF_NAME, LEN_NAME, f->name) | put_text(rec + OFF_TYPE, LEN_SHORT, f->type) |
              put_text(rec + OFF_DEVICE, LEN_SHORT, f->device) |
              put_text(rec + OFF_STAGE, LEN_SHORT, f->stage) |
              put_text(rec + OFF_TRACK, LEN_SHORT, f->track);
    put_le(rec + OFF_SIZE, PP_SUBREC_SIZE, 4);
    rec[OFF_KIND] = (unsigned char)f->kind;
    rec[OFF_ROLE] = (unsigned char)f->role;
    rec[OFF_FLAGS] = (unsigned char)(f->flags | (cut ? PP_SUBREC_TRUNCATED : 0));
    rec[OFF_VERSION] = LAYOUT_VERSION;
    put_le(rec + OFF_START, (uint64_t)f->start_ns, 8);
    put_le(rec + OFF_END, (uint64_t)f->end_ns, 8);
    put_le(rec + OFF_BATCH, (uint64_t)f->batch, 8);
    put_le(rec + OFF_HW, f->hw_ns, 8);
    put_le(rec + OFF_XFER, f->xfer_ns, 8);
    put_le(rec + OFF_SEQ, f->seq, 8);
    put_le(rec + OFF_STREAM, (uint32_t)f->stream, 4);
}

static const unsigned char *at(const void *buf, size_t i) {
    return (const unsigned char *)buf + i * PP_SUBREC_SIZE;
}

size_t pp_subrec_size(void) {
    return PP_SUBREC_SIZE;
}

/* A text field of `len` bytes ends inside itself. */
static int text_ends(const unsigned char *field, size_t len) {
    return memchr(field, '\0', len) != NULL;
}

int pp_subrec_valid(const void *buf, size_t i) {
    const unsigned char *r = at(buf, i);
    /* a stream is anyone's: the texts must end in their fields, or the
     * accessors' strings would run on into the next field or record */
    return get_le(r + OFF_SIZE, 4) == PP_SUBREC_SIZE && r[OFF_VERSION] == LAYOUT_VERSION &&
           (r[OFF_KIND] == PP_SUBREC_SPAN || r[OFF_KIND] == PP_SUBREC_STATUS) &&
           text_ends(r + OFF_NAME, LEN_NAME) && text_ends(r + OFF_TYPE, LEN_SHORT) &&
           text_ends(r + OFF_DEVICE, LEN_SHORT) && text_ends(r + OFF_STAGE, LEN_SHORT) &&
           text_ends(r + OFF_TRACK, LEN_SHORT);
}

size_t pp_subrec_count(size_t bytes) {
    return bytes / PP_SUBREC_SIZE;
}

pp_subrec_kind pp_subrec_kind_of(const void *buf, size_t i) {
    return (pp_subrec_kind)at(buf, i)[OFF_KIND];
}

const char *pp_subrec_name(const void *buf, size_t i) {
    return (const char *)at(buf, i) + OFF_NAME;
}

const char *pp_subrec_type(const void *buf, size_t i) {
    return (const char *)at(buf, i) + OFF_TYPE;
}

const char *pp_subrec_device(const void *buf, size_t i) {
    return (const char *)at(buf, i) + OFF_DEVICE;
}

const char *pp_subrec_stage(const void *buf, size_t i) {
    return (const char *)at(buf, i) + OFF_STAGE;
}

const char *pp_subrec_track(const void *buf, size_t i) {
    return (const char *)at(buf, i) + OFF_TRACK;
}

pp_role pp_subrec_role(const void *buf, size_t i) {
    return (pp_role)at(buf, i)[OFF_ROLE];
}

unsigned pp_subrec_flags(const void *buf, size_t i) {
    return at(buf, i)[OFF_FLAGS];
}

int32_t pp_subrec_stream(const void *buf, size_t i) {
    return (int32_t)(uint32_t)get_le(at(buf, i) + OFF_STREAM, 4);
}

int64_t pp_subrec_start_ns(const void *buf, size_t i) {
    return (int64_t)get_le(at(buf, i) + OFF_START, 8);
}

int64_t pp_subrec_end_ns(const void *buf, size_t i) {
    return (int64_t)get_le(at(buf, i) + OFF_END, 8);
}

/* Wraps rather than overflows on a record whose times are not a span's (a
 * hostile stream; fuzz/fuzz_subrec.c): the caller checks plausibility. */
int64_t pp_subrec_duration_ns(const void *buf, size_t i) {
    return (int64_t)((uint64_t)pp_subrec_end_ns(buf, i) - (uint64_t)pp_subrec_start_ns(buf, i));
}

int64_t pp_subrec_batch(const void *buf, size_t i) {
    return (int64_t)get_le(at(buf, i) + OFF_BATCH, 8);
}

uint64_t pp_subrec_hw_ns(const void *buf, size_t i) {
    return get_le(at(buf, i) + OFF_HW, 8);
}

uint64_t pp_subrec_xfer_ns(const void *buf, size_t i) {
    return get_le(at(buf, i) + OFF_XFER, 8);
}

uint64_t pp_subrec_seq(const void *buf, size_t i) {
    return get_le(at(buf, i) + OFF_SEQ, 8);
}

uint64_t pp_subrec_lost(const void *buf, size_t i) {
    return get_le(at(buf, i) + OFF_HW, 8);
}

uint64_t pp_subrec_session_dropped(const void *buf, size_t i) {
    return get_le(at(buf, i) + OFF_XFER, 8);
}
