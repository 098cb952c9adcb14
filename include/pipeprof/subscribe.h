/* pipeprof/subscribe.h — live subscriptions: a session's execs and ops
 * streamed to a consumer while the program runs.
 *
 * A subscription owns one consumer thread. Every period (10 ms by default)
 * it reads the records the session's recording threads have published since
 * its last look, keeps the spans its filter selects, turns each into one
 * fixed-size record (PP_SUBREC_SIZE bytes, little-endian, docs/recording.md
 * "Live subscriptions") and hands them on: written to a file descriptor (a
 * pipe to another thread or process) or passed to a callback. Recording
 * threads never wait for a subscriber and never know it is there; their
 * cost per record does not change (bench/bench_subscribe.c measures it).
 *
 * A consumer that cannot keep up loses records, counted: the subscription
 * holds up to `queue_records` records the consumer has not taken; past that
 * new ones are lost, and the count travels in the stream (a STATUS record)
 * and in pp_subscription_stats_get, beside the session's own drops. Every
 * record a subscription emits carries a sequence number, so a consumer sees
 * where the gaps are.
 *
 * A subscription needs the session's drop policy (PP_OVERFLOW_DROP): under
 * the ring policy records are overwritten in place and could not be read
 * safely while recorded (PP_EUNSUPPORTED). Close every subscription before
 * closing its session (pp_session_close refuses with PP_ESTATE until then). */
#ifndef PIPEPROF_SUBSCRIBE_H
#define PIPEPROF_SUBSCRIBE_H

#include "pipeprof/common.h"
#include "pipeprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_subscription pp_subscription;

/* The size of one record in a subscription's stream, in bytes. */
#define PP_SUBREC_SIZE 256

typedef enum pp_subrec_kind {
    PP_SUBREC_SPAN = 1,  /* one span (exec, op, ...) that ended */
    PP_SUBREC_STATUS = 2 /* loss totals so far; also the last record of a stream */
} pp_subrec_kind;

/* Span record flags. */
#define PP_SUBREC_SIMULATED 1u /* the span's device is simulated */
#define PP_SUBREC_HOST 2u      /* on a host thread's row, not a device stream */
#define PP_SUBREC_TRUNCATED 4u /* a name did not fit its field and was cut */

/* Which spans a subscription takes: bits (1u << pp_role). */
#define PP_SUB_ROLE(role) (1u << (role))
#define PP_SUB_EXECS PP_SUB_ROLE(PP_ROLE_EXEC)
#define PP_SUB_OPS PP_SUB_ROLE(PP_ROLE_OP)
#define PP_SUB_ALL_SPANS 0x7eu /* every role from EXEC to USER */

/* Receives `count` records (count * PP_SUBREC_SIZE bytes) on the
 * subscription's consumer thread; read them with the pp_subrec_* accessors.
 * The buffer is valid for the call only. While it runs, no further records
 * are collected for this subscriber (the session keeps them meanwhile). */
typedef void (*pp_subscription_fn)(void *ctx, const void *records, size_t count);

typedef struct pp_subscription_config {
    unsigned roles;       /* PP_SUB_* bits; 0: execs and ops */
    const char *device;   /* only spans on this device ("NPU"); NULL: every device and host */
    const char *stage;    /* only spans of this stage; NULL: every stage */
    /* Where records go: a file descriptor (fd >= 0), or the callback (fd -1).
     * The subscription takes the descriptor over: it is set non-blocking
     * (the consumer thread never waits on it) and close-on-exec, and it is
     * closed at pp_subscription_close, so a reader sees end of file. */
    int fd;
    pp_subscription_fn callback;
    void *ctx;
    int period_ms;        /* how often the consumer thread looks; 0: 10, at most 1000 */
    size_t queue_records; /* records held for a consumer that lags; 0: 16384 */
    /* A span's annotations (an op's type) follow it in its thread's buffer.
     * A span that is its thread's last record waits this long for them
     * before it is sent without; 0: 100 ms. */
    int args_wait_ms;
} pp_subscription_config;

/* Defaults: execs and ops of every device and stage, fd -1, no callback. */
void pp_subscription_config_init(pp_subscription_config *cfg);

/* Subscribes to `s` (started or not; records published before this call are
 * not sent) and starts the consumer thread. PP_EINVAL with a message for a
 * config without exactly one destination or with a value out of range,
 * PP_EUNSUPPORTED under the ring policy. On failure a given fd is left
 * open. */
int pp_subscription_open(pp_session *s, const pp_subscription_config *cfg,
                         pp_subscription **out, pp_error *err);

typedef struct pp_subscription_stats {
    uint64_t delivered;       /* span records handed to the consumer */
    uint64_t lost;            /* span records lost because the consumer lagged */
    uint64_t session_dropped; /* records the session itself dropped (budget spent) */
} pp_subscription_stats;
int pp_subscription_stats_get(pp_subscription *sub, pp_subscription_stats *out);

/* Collects what the session published until now, hands it on, ends the
 * stream with a STATUS record, stops the thread and closes the fd. Accepts
 * NULL. `final` (may be NULL) receives the last totals. Close after
 * pp_session_stop to receive every record of the session.
 *
 * Close takes a bounded time, whatever the consumer does: it hands on what
 * the consumer takes within PP_SUBSCRIPTION_CLOSE_WAIT_MS of the call (a
 * descriptor's reader making room, a callback returning); the spans not
 * handed on by then are counted lost, for descriptors and callbacks alike,
 * and the final STATUS record says so. That record then gets one more
 * callback call, or up to 1 s for a descriptor's reader to make room. A
 * callback call in progress at the deadline is waited for (it cannot be
 * interrupted), so a callback should return promptly.
 *
 * Returns PP_OK; PP_ESTATE, and nothing done, when called from the
 * subscription's own callback (close it from another thread). In a child
 * forked while the subscription was open, close frees the child's copy
 * (and closes the child's copy of the fd) without waiting: the consumer
 * thread stayed in the parent, and nothing is collected in the child. */
#define PP_SUBSCRIPTION_CLOSE_WAIT_MS 2000
int pp_subscription_close(pp_subscription *sub, pp_subscription_stats *final);

/* ---- reading records: buf holds whole records, i counts from 0 ---- */

/* PP_SUBREC_SIZE, for bindings that cannot see the macro. */
size_t pp_subrec_size(void);
/* How many whole records `bytes` bytes hold. */
size_t pp_subrec_count(size_t bytes);
/* 1 when record i starts with the record size and layout version this
 * library writes, is of a known kind and its texts end inside their
 * fields; a reader of a raw stream (anyone can write one) checks it first. */
int pp_subrec_valid(const void *buf, size_t i);
pp_subrec_kind pp_subrec_kind_of(const void *buf, size_t i);
/* Texts are NUL-terminated inside the record ("" when absent). */
const char *pp_subrec_name(const void *buf, size_t i);   /* "matmul_1", "Embedding" */
const char *pp_subrec_type(const void *buf, size_t i);   /* op type ("MatMul"); "" for others */
const char *pp_subrec_device(const void *buf, size_t i); /* "NPU"; "" for host rows */
const char *pp_subrec_stage(const void *buf, size_t i);
const char *pp_subrec_track(const void *buf, size_t i);  /* row: "req 0", a thread name */
pp_role pp_subrec_role(const void *buf, size_t i);
unsigned pp_subrec_flags(const void *buf, size_t i);     /* PP_SUBREC_* */
int32_t pp_subrec_stream(const void *buf, size_t i);     /* -1 for host rows */
int64_t pp_subrec_start_ns(const void *buf, size_t i);   /* session clock (pp_now) */
int64_t pp_subrec_end_ns(const void *buf, size_t i);
int64_t pp_subrec_duration_ns(const void *buf, size_t i);
int64_t pp_subrec_batch(const void *buf, size_t i);      /* -1 = none */
uint64_t pp_subrec_hw_ns(const void *buf, size_t i);     /* 0 = unknown */
uint64_t pp_subrec_xfer_ns(const void *buf, size_t i);
/* Span records: the subscription's sequence number (0, 1, ...; a lost
 * record's number is skipped). STATUS records: the next number. */
uint64_t pp_subrec_seq(const void *buf, size_t i);
/* STATUS records: totals so far of records lost by this subscription and
 * dropped by the session. */
uint64_t pp_subrec_lost(const void *buf, size_t i);
uint64_t pp_subrec_session_dropped(const void *buf, size_t i);

#ifdef __cplusplus
}
#endif
#endif
