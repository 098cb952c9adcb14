/* Live subscriptions under misuse and hostile consumers: a close from the
 * subscription's own callback is refused, not a use after free; a session
 * closed before its subscription refuses, not frees what the consumer thread
 * reads; a consumer that is slow (a sleeping callback, a reader taking a
 * little at a time) cannot make pp_subscription_close wait for the whole
 * backlog: what it did not take by the close deadline is counted lost, and
 * the counts add up; a child forked while a subscription is open closes it
 * (and the session) without hanging; a record of a hostile stream is valid
 * only when its texts end inside their fields. Runs under ASan and TSan
 * (scripts/test, label capture). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeprof/subscribe.h"
#include "testutil.h"

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

static pp_session *started_session(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    return s;
}

/* Records n user spans named "span" on the calling thread's track. */
static void record_spans(pp_session *s, int n) {
    pp_span_rec r;
    pp_span_rec_init(&r);
    EXPECT_EQ_I64(pp_track_thread(s, "recorder", &r.track), PP_OK);
    r.name = pp_intern("span");
    for (int i = 0; i < n; i++) {
        r.ts_ns = 1000 + 10 * (int64_t)i;
        r.dur_ns = 5;
        EXPECT_EQ_I64(pp_span(s, &r), PP_OK);
    }
}

/* What a callback consumer saw: span records (their sequence numbers) and
 * the last STATUS record's loss total. */
typedef struct seen {
    pthread_mutex_t lock;
    unsigned char *seq_seen; /* 1 per sequence number received */
    uint64_t nseq, spans, dup_or_out_of_range, status_lost, statuses;
    uint64_t invalid; /* counted here, checked by the test's thread (EXPECT is not thread-safe) */
    long sleep_ms_per_call;
    _Atomic(pp_subscription *) self; /* for the close-from-callback test */
    _Atomic int close_rc, calls;
} seen;

static void seen_init(seen *v, uint64_t nseq) {
    memset(v, 0, sizeof *v);
    pthread_mutex_init(&v->lock, NULL);
    v->nseq = nseq;
    v->seq_seen = calloc(nseq, 1);
    atomic_init(&v->close_rc, 1);
}

static void seen_free(seen *v) {
    EXPECT_EQ_U64(v->invalid, 0);
    pthread_mutex_destroy(&v->lock);
    free(v->seq_seen);
}

static void seen_add(seen *v, const void *recs, size_t count) {
    pthread_mutex_lock(&v->lock);
    for (size_t i = 0; i < count; i++) {
        if (!pp_subrec_valid(recs, i)) {
            v->invalid++;
            continue;
        }
        if (pp_subrec_kind_of(recs, i) == PP_SUBREC_STATUS) {
            v->status_lost = pp_subrec_lost(recs, i);
            v->statuses++;
            continue;
        }
        uint64_t q = pp_subrec_seq(recs, i);
        if (q >= v->nseq || v->seq_seen[q])
            v->dup_or_out_of_range++;
        else
            v->seq_seen[q] = 1;
        v->spans++;
    }
    pthread_mutex_unlock(&v->lock);
}

static void on_records(void *ctx, const void *recs, size_t count) {
    seen *v = ctx;
    atomic_fetch_add(&v->calls, 1);
    seen_add(v, recs, count);
    if (v->sleep_ms_per_call)
        sleep_ms(v->sleep_ms_per_call);
}

static pp_subscription *subscribe_callback(pp_session *s, seen *v, size_t queue_records) {
    pp_subscription_config c;
    pp_subscription_config_init(&c);
    c.roles = PP_SUB_ALL_SPANS;
    c.callback = on_records;
    c.ctx = v;
    c.queue_records = queue_records;
    pp_subscription *sub = NULL;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, NULL), PP_OK);
    return sub;
}

/* ---- item: close from inside the callback ---- */

static void on_records_close_self(void *ctx, const void *recs, size_t count) {
    seen *v = ctx;
    pp_subscription *self = atomic_load(&v->self);
    if (self && atomic_load(&v->close_rc) == 1)
        atomic_store(&v->close_rc, pp_subscription_close(self, NULL));
    seen_add(v, recs, count);
}

/* The consumer thread cannot wait for itself: a close from the callback
 * returns PP_ESTATE and changes nothing; the records keep coming and the
 * close from the program's thread then ends the stream as usual. Before,
 * the callback's close freed the queue flush_queue was still using. */
static void test_close_from_own_callback_is_refused(void) {
    pp_session *s = started_session();
    seen v;
    seen_init(&v, 64);
    pp_subscription_config c;
    pp_subscription_config_init(&c);
    c.roles = PP_SUB_ALL_SPANS;
    c.callback = on_records_close_self;
    c.ctx = &v;
    c.period_ms = 1;
    pp_subscription *sub = NULL;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, NULL), PP_OK);
    atomic_store(&v.self, sub);
    record_spans(s, 10);
    for (int i = 0; i < 10000 && atomic_load(&v.close_rc) == 1; i++)
        sleep_ms(1); /* until the callback has tried */
    EXPECT_EQ_I64(atomic_load(&v.close_rc), PP_ESTATE);
    record_spans(s, 10); /* still subscribed */
    pp_subscription_stats st;
    EXPECT_EQ_I64(pp_subscription_close(sub, &st), PP_OK);
    EXPECT_EQ_U64(st.delivered, 20);
    EXPECT_EQ_U64(st.lost, 0);
    EXPECT_EQ_U64(v.spans, 20);
    EXPECT_EQ_U64(v.dup_or_out_of_range, 0);
    EXPECT_EQ_I64(pp_session_close(s), PP_OK);
    seen_free(&v);
}

/* ---- item: the session closed first ---- */

/* The session knows it is followed: closing it before its subscription is
 * refused (PP_ESTATE) and leaves it whole, still recording and still
 * streamed; once the subscription is closed the session closes. Before,
 * the session was freed under the consumer thread (use after free). */
static void test_session_close_before_subscription_close_is_refused(void) {
    pp_session *s = started_session();
    seen v;
    seen_init(&v, 64);
    pp_subscription *sub = subscribe_callback(s, &v, 0);
    record_spans(s, 5);
    EXPECT_EQ_I64(pp_session_close(s), PP_ESTATE);
    sleep_ms(30); /* a few of the consumer's periods over the session */
    record_spans(s, 5); /* still running: the refused close changed nothing */
    pp_subscription_stats st;
    EXPECT_EQ_I64(pp_subscription_close(sub, &st), PP_OK);
    EXPECT_EQ_U64(st.delivered, 10);
    EXPECT_EQ_U64(v.spans, 10);
    EXPECT_EQ_I64(pp_session_close(s), PP_OK);
    seen_free(&v);
}

/* ---- item: a slow consumer and close ---- */

/* 2000 spans wait for a callback that takes 16 at a time and sleeps 100 ms
 * per call: handing them all on would take 12.5 s, past the close deadline
 * (PP_SUBSCRIPTION_CLOSE_WAIT_MS, 2 s). Close hands on what the callback
 * takes by then and counts the rest lost: delivered + lost is every span,
 * the callback received exactly the delivered ones, each once, and the
 * stream's last STATUS record carries the same loss. Before, close called
 * the callback until the whole backlog was through and nothing was ever
 * counted lost for a callback. */
static void test_slow_callback_close_is_bounded_and_counts_the_rest_lost(void) {
    enum { SPANS = 2000 };
    pp_session *s = started_session();
    seen v;
    seen_init(&v, SPANS);
    v.sleep_ms_per_call = 100;
    pp_subscription *sub = subscribe_callback(s, &v, 16);
    record_spans(s, SPANS);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_subscription_stats st;
    EXPECT_EQ_I64(pp_subscription_close(sub, &st), PP_OK);
    EXPECT(st.lost > 0);
    EXPECT_EQ_U64(st.delivered + st.lost, SPANS);
    EXPECT_EQ_U64(v.spans, st.delivered);
    EXPECT_EQ_U64(v.dup_or_out_of_range, 0);
    EXPECT(v.statuses > 0);
    EXPECT_EQ_U64(v.status_lost, st.lost);
    EXPECT_EQ_I64(pp_session_close(s), PP_OK);
    seen_free(&v);
}

/* A pipe reader that takes 256 bytes (one record) every 20 ms until told
 * to hurry, then reads to the end. */
typedef struct slow_reader {
    int fd;
    _Atomic int hurry;
    seen *v;
    unsigned char *bytes;
    size_t len, cap;
} slow_reader;

static void *read_slowly(void *arg) {
    slow_reader *r = arg;
    for (;;) {
        if (r->len + PP_SUBREC_SIZE > r->cap) {
            r->cap = r->cap ? r->cap * 2 : 1 << 16;
            r->bytes = realloc(r->bytes, r->cap);
        }
        size_t want = atomic_load(&r->hurry) ? r->cap - r->len : PP_SUBREC_SIZE;
        ssize_t n = read(r->fd, r->bytes + r->len, want);
        if (n <= 0)
            break;
        r->len += (size_t)n;
        if (!atomic_load(&r->hurry))
            sleep_ms(20);
    }
    close(r->fd);
    return NULL;
}

/* The same bound for a descriptor whose reader keeps making a little
 * progress (50 records a second against 5000 waiting): close gives up at
 * the deadline, counts the rest lost, and the stream holds exactly the
 * delivered spans, whole records only, ending with the STATUS record that
 * carries the loss. Before, close waited as long as the reader made any
 * progress: 100 s here. */
static void test_slow_pipe_reader_close_is_bounded_and_counts_the_rest_lost(void) {
    enum { SPANS = 5000 };
    pp_session *s = started_session();
    int fds[2];
    EXPECT_EQ_I64(pipe(fds), 0);
    seen v;
    seen_init(&v, SPANS);
    slow_reader rd = {.fd = fds[0], .v = &v};
    atomic_init(&rd.hurry, 0);
    pthread_t th;
    pthread_create(&th, NULL, read_slowly, &rd);
    pp_subscription_config c;
    pp_subscription_config_init(&c);
    c.roles = PP_SUB_ALL_SPANS;
    c.fd = fds[1];
    c.queue_records = 8192; /* the whole backlog waits in the queue */
    c.period_ms = 1000;     /* and is met by close, not by the periods */
    pp_subscription *sub = NULL;
    EXPECT_EQ_I64(pp_subscription_open(s, &c, &sub, NULL), PP_OK);
    record_spans(s, SPANS);
    EXPECT_EQ_I64(pp_session_stop(s, NULL), PP_OK);
    pp_subscription_stats st;
    EXPECT_EQ_I64(pp_subscription_close(sub, &st), PP_OK);
    atomic_store(&rd.hurry, 1);
    pthread_join(th, NULL);
    EXPECT(st.lost > 0);
    EXPECT_EQ_U64(st.delivered + st.lost, SPANS);
    EXPECT_EQ_U64(rd.len % PP_SUBREC_SIZE, 0);
    seen_add(&v, rd.bytes, pp_subrec_count(rd.len));
    EXPECT_EQ_U64(v.spans, st.delivered);
    EXPECT_EQ_U64(v.dup_or_out_of_range, 0);
    size_t n = pp_subrec_count(rd.len);
    EXPECT(n > 0 && pp_subrec_kind_of(rd.bytes, n - 1) == PP_SUBREC_STATUS);
    EXPECT_EQ_U64(v.status_lost, st.lost);
    free(rd.bytes);
    EXPECT_EQ_I64(pp_session_close(s), PP_OK);
    seen_free(&v);
}

/* ---- item: fork while subscribed ---- */

/* Waits for pid at most `seconds`; kills it after that. Its exit status,
 * or -1 when it had to be killed. */
static int wait_child(pid_t pid, int seconds) {
    for (int i = 0; i < seconds * 100; i++) {
        int status;
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* A child forked while the parent's subscription is open (its consumer
 * thread waiting for its next period, or in a callback) can close the
 * subscription and then the session, and exits: 20 forks, none hung. The
 * parent's subscription is untouched: every span arrives. Before, the
 * child's close waited for a consumer thread the child does not have. */
static void test_forked_child_closes_the_subscription_without_hanging(void) {
    pp_session *s = started_session();
    seen v;
    seen_init(&v, 1000);
    pp_subscription *sub = subscribe_callback(s, &v, 0);
    int hung = 0, failed = 0;
    for (int k = 0; k < 20; k++) {
        record_spans(s, 10);
        sleep_ms(k % 3); /* forks at different points of the consumer's period */
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10); /* a hang ends as SIGALRM: counted by the parent */
            pp_subscription_stats st;
            int rc = pp_subscription_close(sub, &st);
            _exit(rc == PP_OK && pp_session_close(s) == PP_OK ? 0 : 3);
        }
        int rc = wait_child(pid, 30);
        hung += rc == -1 || rc == 128 + SIGALRM;
        failed += rc != 0;
    }
    EXPECT_EQ_I64(hung, 0);
    EXPECT_EQ_I64(failed, 0);
    pp_subscription_stats st;
    EXPECT_EQ_I64(pp_subscription_close(sub, &st), PP_OK);
    EXPECT_EQ_U64(st.delivered, 200);
    EXPECT_EQ_U64(v.spans, 200);
    EXPECT_EQ_I64(pp_session_close(s), PP_OK);
    seen_free(&v);
}

/* ---- a hostile stream ---- */

/* A reader of a raw stream checks pp_subrec_valid before reading texts: a
 * record whose text fills its field with no NUL is not valid (the text
 * accessors would read on into the next field and past the record). Found
 * by fuzz/fuzz_subrec.c (tests/fuzz/subrec/). */
static void test_record_with_an_unterminated_text_is_not_valid(void) {
    static const size_t field_off[] = {64, 128, 160, 192, 224}, field_len[] = {64, 32, 32, 32, 32};
    for (size_t k = 0; k < 5; k++) {
        unsigned char rec[PP_SUBREC_SIZE];
        memset(rec, 0, sizeof rec);
        rec[0] = PP_SUBREC_SIZE & 0xff; /* size 256, little-endian */
        rec[1] = PP_SUBREC_SIZE >> 8;
        rec[4] = PP_SUBREC_SPAN;
        rec[7] = 1; /* layout version */
        EXPECT(pp_subrec_valid(rec, 0));
        memset(rec + field_off[k], 'x', field_len[k]);
        EXPECT(!pp_subrec_valid(rec, 0));
        rec[field_off[k] + field_len[k] - 1] = 0; /* the longest text that fits */
        EXPECT(pp_subrec_valid(rec, 0));
    }
}

int main(void) {
    RUN(test_close_from_own_callback_is_refused);
    RUN(test_session_close_before_subscription_close_is_refused);
    RUN(test_forked_child_closes_the_subscription_without_hanging);
    RUN(test_slow_callback_close_is_bounded_and_counts_the_rest_lost);
    RUN(test_slow_pipe_reader_close_is_bounded_and_counts_the_rest_lost);
    RUN(test_record_with_an_unterminated_text_is_not_valid);
    return pp_test_finish();
}
