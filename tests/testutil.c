#include "testutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int pp_test_failures;
int pp_test_checks;

void pp_test_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    pp_test_failures++;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int pp_test_finish(void) {
    /* The plain closing line: one test executable is one test. */
    fprintf(stderr, "%d checks, %d failed\n", pp_test_checks, pp_test_failures);
    return pp_test_failures ? 1 : 0;
}

void pp_test_skip(const char *reason) {
    fprintf(stderr, "SKIP: %s\n", reason);
    exit(77);
}

const char *pp_test_path(const char *name) {
    static char buf[8][1024];
    static int next;
    const char *dir = getenv("PP_TEST_TMP");
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%d_%s", dir && *dir ? dir : "/tmp", (int)getpid(), name);
    remove(p);
    return p;
}

char *pp_test_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0, n = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = (n + 65536 + 1) * 2;
            data = realloc(data, cap);
        }
        size_t got = fread(data + n, 1, 65536, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    data[n] = 0;
    if (len)
        *len = n;
    return data;
}

int pp_test_write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t put = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && put == len) ? 0 : -1;
}

int pp_test_run(const char *cmd, char **out) {
    char full[8192];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!p) {
        free(buf);
        return -1;
    }
    for (;;) {
        if (n + 4096 + 1 > cap)
            buf = realloc(buf, cap *= 2);
        size_t got = fread(buf + n, 1, 4096, p);
        n += got;
        if (got == 0)
            break;
    }
    buf[n] = 0;
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#include "pipeprof/model.h"

#define DIFF(...) do { snprintf(why, whylen, __VA_ARGS__); return 0; } while (0)

static int same_str(const pp_model *a, uint32_t x, const pp_model *b, uint32_t y) {
    return strcmp(pp_model_string(a, x), pp_model_string(b, y)) == 0;
}

int pp_test_models_equal(const pp_model *a, const pp_model *b, char *why, size_t whylen) {
    const pp_model_meta *ma = pp_model_meta_get(a), *mb = pp_model_meta_get(b);
    if (ma->level != mb->level || ma->dropped_records != mb->dropped_records ||
        ma->truncated_bytes != mb->truncated_bytes || ma->ignored_events != mb->ignored_events ||
        ma->unmatched_ends != mb->unmatched_ends || !same_str(a, ma->process_name, b, mb->process_name))
        DIFF("meta differs");
    if (!same_str(a, ma->clock, b, mb->clock) || !same_str(a, ma->host, b, mb->host) ||
        !same_str(a, ma->boot_id, b, mb->boot_id) || !same_str(a, ma->alignment, b, mb->alignment) ||
        ma->alignment_error_ns != mb->alignment_error_ns)
        DIFF("clock meta differs (\"%s\" on \"%s\" vs \"%s\" on \"%s\")", pp_model_string(a, ma->clock),
             pp_model_string(a, ma->host), pp_model_string(b, mb->clock), pp_model_string(b, mb->host));
    if (pp_model_track_count(a) != pp_model_track_count(b))
        DIFF("track count %zu vs %zu", pp_model_track_count(a), pp_model_track_count(b));
    for (uint32_t i = 0; i < pp_model_track_count(a); i++) {
        const pp_track_info *x = pp_model_track(a, i), *y = pp_model_track(b, i);
        if (x->kind != y->kind || x->flags != y->flags || x->stream != y->stream || x->pid != y->pid ||
            x->tid != y->tid || x->sort_index != y->sort_index || !same_str(a, x->process, b, y->process) ||
            !same_str(a, x->name, b, y->name) || !same_str(a, x->device, b, y->device))
            DIFF("track %u differs (\"%s\" vs \"%s\")", i, pp_model_string(a, x->name), pp_model_string(b, y->name));
    }
    if (pp_model_thread_count(a) != pp_model_thread_count(b))
        DIFF("thread count %zu vs %zu", pp_model_thread_count(a), pp_model_thread_count(b));
    for (size_t i = 0; i < pp_model_thread_count(a); i++) {
        const pp_thread_info *x = pp_model_thread(a, i), *y = pp_model_thread(b, i);
        if (x->tid != y->tid || x->recorded != y->recorded || x->dropped != y->dropped ||
            !same_str(a, x->name, b, y->name))
            DIFF("thread %zu differs", i);
    }
    if (pp_model_event_count(a) != pp_model_event_count(b))
        DIFF("event count %zu vs %zu", pp_model_event_count(a), pp_model_event_count(b));
    for (size_t i = 0; i < pp_model_event_count(a); i++) {
        pp_event x, y;
        pp_model_event(a, i, &x);
        pp_model_event(b, i, &y);
        if (x.kind != y.kind || x.ts_ns != y.ts_ns || x.dur_ns != y.dur_ns || x.batch != y.batch ||
            x.hw_ns != y.hw_ns || x.xfer_ns != y.xfer_ns || x.id != y.id || x.role != y.role ||
            x.phase != y.phase || x.track != y.track || memcmp(&x.value, &y.value, sizeof x.value) != 0 ||
            !same_str(a, x.name, b, y.name) || !same_str(a, x.stage, b, y.stage))
            DIFF("event %zu differs (\"%s\" ts %lld vs \"%s\" ts %lld)", i, pp_model_string(a, x.name),
                 (long long)x.ts_ns, pp_model_string(b, y.name), (long long)y.ts_ns);
        size_t fa, na, fb, nb, ta, tb;
        pp_model_annotations_of(a, i, &fa, &na);
        pp_model_annotations_of(b, i, &fb, &nb);
        if (na != nb)
            DIFF("event %zu has %zu vs %zu annotations", i, na, nb);
        const pp_annotation *aa = pp_model_annotations(a, &ta), *ab = pp_model_annotations(b, &tb);
        for (size_t k = 0; k < na; k++) {
            const pp_annotation *x = &aa[fa + k], *y = &ab[fb + k];
            int same = x->type == y->type && same_str(a, x->key, b, y->key);
            if (same && x->type == PP_VALUE_INT)
                same = x->v.i == y->v.i;
            else if (same && x->type == PP_VALUE_DOUBLE)
                same = memcmp(&x->v.d, &y->v.d, sizeof x->v.d) == 0;
            else if (same)
                same = same_str(a, x->v.s, b, y->v.s);
            if (!same)
                DIFF("event %zu annotation %zu (\"%s\") differs", i, k, pp_model_string(a, x->key));
        }
    }
    return 1;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void) { /* xorshift64*: fixed seed, same run every time */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

size_t pp_test_mutate_text(char *buf, size_t len, size_t cap) {
    static const char tokens[] = "{}[],:\"\\0123456789.eE-+ \nabtrufsnl\x80\xff";
    int edits = 1 + (int)(next_random() % 4);
    for (int i = 0; i < edits && len > 0; i++) {
        size_t at = (size_t)(next_random() % len);
        switch (next_random() % 5) {
        case 0: buf[at] = tokens[next_random() % (sizeof tokens - 1)]; break;
        case 1: buf[at] ^= (char)(1u << (next_random() % 8)); break;
        case 2: len = at; break; /* truncate */
        case 3:                  /* delete a run */
        {
            size_t n = 1 + (size_t)(next_random() % 8);
            if (at + n > len)
                n = len - at;
            memmove(buf + at, buf + at + n, len - at - n);
            len -= n;
            break;
        }
        default: /* duplicate a run */
        {
            size_t n = 1 + (size_t)(next_random() % 40);
            if (at + n > len)
                n = len - at;
            if (len + n <= cap) {
                memmove(buf + at + n, buf + at, len - at);
                len += n;
            }
            break;
        }
        }
    }
    return len;
}
