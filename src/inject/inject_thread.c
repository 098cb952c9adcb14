/* Per-thread state of the injection libraries: creation and teardown, the
 * name cache's slow path, and the range stack.
 *
 * Cost budget: a push/pop pair costs two clock reads, two name-cache hits
 * (hash + compare) and one record; bench/bench_inject.c prints it against the
 * same program with no tool attached. */
#include <pthread.h>
#include <stdlib.h>

#include "inject/inject.h"

_Thread_local inj_thread *inj_tls;

static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pp_str key_stage, key_batch;

/* Runs on the exiting thread (a pthread key destructor), so clearing the
 * thread-local pointer makes a call from a later destructor start afresh
 * instead of using freed memory. */
static void thread_free(void *p) {
    inj_thread *t = p;
    if (inj_tls == t)
        inj_tls = NULL;
    free(t->names);
    free(t);
}

static void make_key(void) {
    pthread_key_create(&thread_key, thread_free);
    key_stage = pp_intern("stage");
    key_batch = pp_intern("batch");
}

inj_thread *inj_thread_slow(void) {
    pp_session *s = pp_default_session();
    if (!s)
        return NULL;
    pthread_once(&key_once, make_key);
    inj_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = 256;
    t->names = calloc(t->cap, sizeof *t->names);
    if (!t->names || pp_track_thread(s, NULL, &t->track) != PP_OK) {
        thread_free(t);
        return NULL;
    }
    t->session = s;
    pthread_setspecific(thread_key, t);
    inj_tls = t;
    return t;
}

static void put_name(inj_name *names, size_t cap, const inj_name *n) {
    size_t i = n->key & (cap - 1);
    while (names[i].ptr)
        i = (i + 1) & (cap - 1);
    names[i] = *n;
}

pp_str inj_name_add(inj_thread *t, uint64_t key, const void *handle, const char *text, size_t len) {
    pp_str id = pp_intern(text);
    if (!id)
        return 0;
    if (2 * (t->used + 1) > t->cap) { /* keep the table at most half full */
        inj_name *bigger = calloc(2 * t->cap, sizeof *bigger);
        if (!bigger)
            return id; /* still correct, just not cached */
        for (size_t i = 0; i < t->cap; i++)
            if (t->names[i].ptr)
                put_name(bigger, 2 * t->cap, &t->names[i]);
        free(t->names);
        t->names = bigger;
        t->cap *= 2;
    }
    inj_name n = {.key = key, .id = id};
    if (handle) {
        n.ptr = handle;
        n.len = INJ_HANDLE;
    } else {
        n.ptr = pp_str_text(id); /* lives as long as the process */
        n.len = (uint32_t)len;
    }
    put_name(t->names, t->cap, &n);
    t->used++;
    return id;
}

int inj_push(inj_thread *t, const void *domain, pp_str name, int64_t ts_ns) {
    if (t->depth < INJ_STACK_DEPTH)
        t->stack[t->depth] = (inj_open){.ts_ns = ts_ns, .domain = domain, .name = name, .batch = -1};
    return ++t->depth;
}

void inj_record_args(pp_session *s, const inj_arg *args, int n) {
    for (int i = 0; i < n; i++) {
        const inj_arg *a = &args[i];
        if (a->type == INJ_ARG_INT)
            pp_annotate_int(s, a->key, a->v.i);
        else if (a->type == INJ_ARG_DOUBLE)
            pp_annotate_double(s, a->key, a->v.d);
        else
            pp_annotate_str(s, a->key, a->v.s);
    }
}

/* The span of one closed range. A range with a stage and a batch is a stage
 * instance for the analyzer (docs/recording.md). */
static void record_range(inj_thread *t, const inj_open *o, int64_t end_ns) {
    pp_span_rec r;
    pp_span_rec_init(&r);
    r.track = t->track;
    r.name = o->name;
    r.ts_ns = o->ts_ns;
    r.dur_ns = end_ns > o->ts_ns ? end_ns - o->ts_ns : 0;
    r.stage = o->stage;
    r.batch = o->batch;
    if (o->stage && o->batch >= 0)
        r.role = PP_ROLE_STAGE;
    if (pp_span(t->session, &r) == PP_OK)
        inj_record_args(t->session, o->args, o->nargs);
}

int inj_pop(inj_thread *t, const void *domain, int64_t end_ns) {
    if (t->depth == 0)
        return -1;
    if (t->depth > INJ_STACK_DEPTH)
        return t->depth--;
    /* Ranges of one domain nest; another domain's may be open inside. */
    int i = t->depth - 1;
    while (i > 0 && t->stack[i].domain != domain)
        i--;
    if (t->stack[i].domain != domain)
        return -1;
    inj_open closed = t->stack[i];
    memmove(&t->stack[i], &t->stack[i + 1], (size_t)(t->depth - 1 - i) * sizeof t->stack[0]);
    t->depth--;
    record_range(t, &closed, end_ns);
    return i + 1;
}

void inj_open_arg(inj_thread *t, const inj_arg *arg) {
    inj_open *o = inj_top(t);
    if (!o)
        return;
    if (arg->key == key_stage && arg->type == INJ_ARG_STR)
        o->stage = arg->v.s;
    else if (arg->key == key_batch && arg->type == INJ_ARG_INT && arg->v.i >= 0)
        o->batch = arg->v.i;
    else if (o->nargs < INJ_MAX_ARGS)
        o->args[o->nargs++] = *arg;
}

const char *inj_utf8(inj_thread *t, const wchar_t *w) {
    size_t n = 0, cap = sizeof t->text - 1;
    for (; w && *w; w++) {
        uint32_t c = (uint32_t)*w;
        unsigned char buf[4];
        size_t k;
        if (c < 0x80) {
            buf[0] = (unsigned char)c;
            k = 1;
        } else if (c < 0x800) {
            buf[0] = (unsigned char)(0xC0 | (c >> 6));
            buf[1] = (unsigned char)(0x80 | (c & 0x3F));
            k = 2;
        } else if (c < 0x10000) {
            buf[0] = (unsigned char)(0xE0 | (c >> 12));
            buf[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            buf[2] = (unsigned char)(0x80 | (c & 0x3F));
            k = 3;
        } else if (c < 0x110000) {
            buf[0] = (unsigned char)(0xF0 | (c >> 18));
            buf[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            buf[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            buf[3] = (unsigned char)(0x80 | (c & 0x3F));
            k = 4;
        } else {
            continue; /* not a code point */
        }
        if (n + k > cap)
            break;
        memcpy(t->text + n, buf, k);
        n += k;
    }
    t->text[n] = '\0';
    return t->text;
}
