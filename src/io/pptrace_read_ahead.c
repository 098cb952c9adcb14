/* Decoding .pptrace blocks ahead of the reader (pptrace_read_ahead.h).
 *
 * A job is one EVENTS or ANNOTATIONS block, found by walking the block
 * heads before any payload is read; its rows go to the slots that follow
 * the rows of the blocks of its table before it. Workers claim jobs in file
 * order; the reader, reaching a job nobody has claimed yet, decodes it
 * itself, and while it waits for one a worker is decoding it decodes the
 * next pending ones, so that it never idles while work is left. */
#include "io/pptrace_read_ahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "core/cpus.h"
#include "io/pptrace_codec.h"
#include "io/pptrace_format.h"

#define MAX_WORKERS 7

enum { JOB_PENDING, JOB_CLAIMED, JOB_DECODED, JOB_REFUSED };

typedef struct job {
    uint64_t block_at;
    uint32_t type, len, rows;
    size_t first_row; /* of its table: the slot its first row goes to */
    atomic_int state;
    int wrote;        /* it started writing its slots (read once joined) */
} job;

/* A buffer for one whole block (head, payload, CRC), and room for its
 * annotations as decoded, before they are packed into the model's slots. */
typedef struct block_buf {
    unsigned char *p;
    size_t cap;
    pp_annotation *anns;
} block_buf;

struct pptrace_ahead {
    int fd;
    pptrace_ahead_room room;
    job *jobs;
    size_t njobs, taken;       /* taken: the reader's cursor */
    atomic_size_t next;        /* the next job a worker claims */
    atomic_int stop;
    pthread_mutex_t lock;      /* with `done`: the reader waits for a claimed job */
    pthread_cond_t done;
    pthread_t workers[MAX_WORKERS];
    size_t nworkers;
    block_buf reader_buf;
};

long pptrace_pread(int fd, void *dst, size_t n, uint64_t at) {
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (unsigned char *)dst + got, n - got, (off_t)(at + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (long)got;
}

/* Reads n bytes at `at`, all or fail. */
static int read_exact(int fd, unsigned char *dst, size_t n, uint64_t at) {
    return pptrace_pread(fd, dst, n, at) == (long)n;
}

/* Decodes job j into its slots: 1 when its CRC, layout and every value
 * were right and no byte was left over, else 0 (the reader finds out
 * what). */
static int decode_job(pptrace_ahead *a, job *j, block_buf *b) {
    size_t whole = PPTRACE_BLOCK_HEAD_LEN + (size_t)j->len + PPTRACE_BLOCK_TAIL_LEN;
    if (whole > b->cap) {
        unsigned char *p = realloc(b->p, whole);
        if (!p)
            return 0;
        b->p = p;
        b->cap = whole;
    }
    if (!read_exact(a->fd, b->p, whole, j->block_at))
        return 0;
    const unsigned char *payload = b->p + PPTRACE_BLOCK_HEAD_LEN;
    if (pptrace_get32(b->p) != j->type || pptrace_get32(b->p + 4) != j->len ||
        pptrace_get32(payload + j->len) != (uint32_t)crc32(0L, b->p, PPTRACE_BLOCK_HEAD_LEN + j->len))
        return 0;
    pptrace_decoder d;
    uint32_t row;
    int ncolumns, bad;
    if (j->type == PPTRACE_EVENTS) {
        if (pptrace_events_open(&d, payload, j->len) != PPTRACE_LAYOUT_OK || d.rows != j->rows)
            return 0;
        pp_event_slots slots;
        pp_event_slots_at(&a->room.events, j->first_row, &slots);
        slots.wide = NULL; /* the model's side table is the reader's: a block with a value
                            * too wide for its slot is left to it (PPTRACE_DECODE_NO_ROOM) */
        j->wrote = 1;
        bad = pptrace_events_decode(&d, &slots, d.rows, &row);
        ncolumns = PPTRACE_EV_COLUMNS;
    } else {
        if (pptrace_annotations_open(&d, payload, j->len) != PPTRACE_LAYOUT_OK ||
            d.rows != j->rows)
            return 0;
        if (!b->anns && !(b->anns = malloc(PPTRACE_ROWS_PER_BLOCK * sizeof *b->anns)))
            return 0;
        bad = pptrace_annotations_decode(&d, b->anns, d.rows, &row);
        /* one that does not fit the model's 16 bytes is left to the reader, who names it */
        pp_ann *slots = a->room.annotations + j->first_row;
        for (uint32_t k = 0; bad == -1 && k < d.rows; k++)
            if (!pp_ann_pack(&b->anns[k], &slots[k]))
                bad = PPTRACE_DECODE_NO_ROOM;
        ncolumns = PPTRACE_AN_COLUMNS;
    }
    return bad == -1 && pptrace_decoder_leftover(&d, ncolumns) < 0;
}

/* Claims job j for the caller: 1 when it was still pending. */
static int claim(job *j) {
    int pending = JOB_PENDING;
    return atomic_compare_exchange_strong(&j->state, &pending, JOB_CLAIMED);
}

/* Decodes the claimed job j and tells whoever waits for it. */
static void run_job(pptrace_ahead *a, job *j, block_buf *b) {
    int state = decode_job(a, j, b) ? JOB_DECODED : JOB_REFUSED;
    pthread_mutex_lock(&a->lock);
    atomic_store(&j->state, state);
    pthread_cond_broadcast(&a->done);
    pthread_mutex_unlock(&a->lock);
}

/* Claims and decodes the next pending job in file order: 0 when none is
 * left (or the reader stopped). */
static int run_next(pptrace_ahead *a, block_buf *b) {
    for (;;) {
        size_t k = atomic_fetch_add(&a->next, 1);
        if (k >= a->njobs || atomic_load(&a->stop))
            return 0;
        if (claim(&a->jobs[k])) {
            run_job(a, &a->jobs[k], b);
            return 1;
        } /* else the reader took it for the block it had reached */
    }
}

static void *worker_main(void *arg) {
    pptrace_ahead *a = arg;
    block_buf b = {0};
    while (run_next(a, &b))
        ;
    free(b.p);
    free(b.anns);
    return NULL;
}

/* Walks the block heads from `at` and lists the EVENTS and ANNOTATIONS
 * blocks whose rows fit the room, up to the first head it cannot follow
 * (the reader will say what is wrong there) or the END block. */
static int find_jobs(pptrace_ahead *a, uint64_t size, uint64_t at) {
    size_t cap = 0, rows_before[2] = {0, 0};
    size_t room[2] = {a->room.nevents, a->room.nannotations};
    unsigned char head[PPTRACE_BLOCK_HEAD_LEN + 4];
    while (at + sizeof head <= size && read_exact(a->fd, head, sizeof head, at)) {
        uint32_t type = pptrace_get32(head), len = pptrace_get32(head + 4);
        uint64_t end = at + PPTRACE_BLOCK_HEAD_LEN + (uint64_t)len + PPTRACE_BLOCK_TAIL_LEN;
        if (type == PPTRACE_END || end > size)
            break;
        if (type == PPTRACE_EVENTS || type == PPTRACE_ANNOTATIONS) {
            int t = type == PPTRACE_ANNOTATIONS;
            uint32_t rows = pptrace_get32(head + PPTRACE_BLOCK_HEAD_LEN);
            uint32_t max = t ? PPTRACE_V2_ANNOTATIONS_MAX(PPTRACE_ROWS_PER_BLOCK)
                             : PPTRACE_V2_EVENTS_MAX(PPTRACE_ROWS_PER_BLOCK);
            if (len < 4 || len > max || rows > PPTRACE_ROWS_PER_BLOCK ||
                rows > room[t] - rows_before[t])
                break;
            if (a->njobs == cap) {
                cap = cap ? 2 * cap : 64;
                job *p = realloc(a->jobs, cap * sizeof *p);
                if (!p)
                    return 0;
                a->jobs = p;
            }
            job *j = &a->jobs[a->njobs++];
            j->block_at = at;
            j->type = type;
            j->len = len;
            j->rows = rows;
            j->first_row = rows_before[t];
            j->wrote = 0;
            atomic_init(&j->state, JOB_PENDING);
            rows_before[t] += rows;
        }
        at = end;
    }
    return 1;
}

static size_t worker_count(void) {
    size_t spare = pp_cpus_online() - 1;
    return spare > MAX_WORKERS ? MAX_WORKERS : spare;
}

pptrace_ahead *pptrace_ahead_start(int fd, uint64_t size, uint64_t first_block,
                                   const pptrace_ahead_room *room) {
    size_t want = worker_count();
    if (want == 0)
        return NULL;
    pptrace_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->fd = fd;
    a->room = *room;
    atomic_init(&a->next, 0);
    atomic_init(&a->stop, 0);
    if (!find_jobs(a, size, first_block) || a->njobs < 2 ||
        pthread_mutex_init(&a->lock, NULL) != 0) {
        free(a->jobs);
        free(a);
        return NULL;
    }
    if (pthread_cond_init(&a->done, NULL) != 0) {
        pthread_mutex_destroy(&a->lock);
        free(a->jobs);
        free(a);
        return NULL;
    }
    if (want > a->njobs - 1)
        want = a->njobs - 1;
    while (a->nworkers < want &&
           pthread_create(&a->workers[a->nworkers], NULL, worker_main, a) == 0)
        a->nworkers++;
    return a; /* with no worker at all, the reader decodes every job itself */
}

long pptrace_ahead_take(pptrace_ahead *a, uint64_t block_at, size_t first_row) {
    while (a->taken < a->njobs && a->jobs[a->taken].block_at < block_at)
        a->taken++;
    if (a->taken == a->njobs || a->jobs[a->taken].block_at != block_at)
        return -1;
    job *j = &a->jobs[a->taken++];
    if (claim(j))
        run_job(a, j, &a->reader_buf);
    /* While a worker decodes this one, decode later ones rather than idle. */
    while (atomic_load(&j->state) == JOB_CLAIMED && run_next(a, &a->reader_buf))
        ;
    int state;
    pthread_mutex_lock(&a->lock);
    while ((state = atomic_load(&j->state)) == JOB_CLAIMED)
        pthread_cond_wait(&a->done, &a->lock);
    pthread_mutex_unlock(&a->lock);
    return state == JOB_DECODED && j->first_row == first_row ? (long)j->rows : -1;
}

size_t pptrace_ahead_stop(pptrace_ahead *a) {
    if (!a)
        return 0;
    atomic_store(&a->stop, 1);
    for (size_t i = 0; i < a->nworkers; i++)
        pthread_join(a->workers[i], NULL);
    size_t written = 0;
    for (size_t k = 0; k < a->njobs; k++)
        if (a->jobs[k].type == PPTRACE_EVENTS && a->jobs[k].wrote)
            written = a->jobs[k].first_row + a->jobs[k].rows;
    pthread_cond_destroy(&a->done);
    pthread_mutex_destroy(&a->lock);
    free(a->reader_buf.p);
    free(a->reader_buf.anns);
    free(a->jobs);
    free(a);
    return written;
}
