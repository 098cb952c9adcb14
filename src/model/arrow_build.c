/* Building one Arrow record batch column by column and handing it out
 * through the C Data Interface (model/arrow_build.h, pipeprof/arrow.h).
 *
 * Every struct of an export (the root schema and array, each column's, each
 * dictionary's) shares one `export` record that counts the structs not yet
 * released: the specification lets a consumer move a child out and release
 * it after its parent, so the memory goes with the last release, not the
 * root's. */
#include "model/arrow_build.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WANT_MAX 64

typedef struct column {
    const char *name, *format;
    const void *values;      /* fixed width values or dictionary indices; NULL for utf8 */
    const uint8_t *validity; /* NULL: not nullable */
    const pp_arrow_dict *dict;
    const pp_arrow_dict *utf8; /* a plain utf8 column */
} column;

/* What outlives pp_arrow_finish: the allocations and the model held. */
typedef struct export {
    _Atomic size_t live; /* structs handed out and not yet released */
    pp_model *held;
    void **allocs;
    size_t nallocs, capallocs;
} export;

struct pp_arrow_table {
    char name[32];
    size_t rows;
    export *x;
    column *cols;
    size_t ncols, capcols;
    char *want_text;
    const char *want[WANT_MAX];
    uint8_t want_seen[WANT_MAX];
    size_t nwant;
    const char *known[WANT_MAX]; /* every name a builder asked about, for messages */
    size_t nknown;
    int rc;
    char msg[sizeof(((pp_error *)0)->msg)];
};

/* Buffers of no bytes: the specification prefers a pointer to NULL. */
static const uint64_t empty_buffer[1];

static void export_free(export *x) {
    for (size_t i = 0; i < x->nallocs; i++)
        free(x->allocs[i]);
    free(x->allocs);
    pp_model_free(x->held);
    free(x);
}

void pp_arrow_fail(pp_arrow_table *t, int rc, const char *fmt, ...) {
    if (t->rc)
        return;
    t->rc = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->msg, sizeof t->msg, fmt, ap);
    va_end(ap);
}

static int remember(export *x, void *p) {
    if (x->nallocs == x->capallocs) {
        size_t cap = x->capallocs ? 2 * x->capallocs : 64;
        void **a = realloc(x->allocs, cap * sizeof *a);
        if (!a)
            return 0;
        x->allocs = a;
        x->capallocs = cap;
    }
    x->allocs[x->nallocs++] = p;
    return 1;
}

void *pp_arrow_alloc(pp_arrow_table *t, size_t bytes) {
    if (t->rc)
        return NULL;
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p || !remember(t->x, p)) {
        free(p);
        pp_arrow_fail(t, PP_ENOMEM, "out of memory");
        return NULL;
    }
    return p;
}

pp_arrow_table *pp_arrow_table_new(const char *name, size_t rows, const char *columns,
                                   const pp_model *hold) {
    pp_arrow_table *t = calloc(1, sizeof *t);
    export *x = calloc(1, sizeof *x);
    if (!t || !x) {
        free(t);
        free(x);
        return NULL;
    }
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rows = rows;
    t->x = x;
    if (columns && *columns) {
        t->want_text = strdup(columns);
        if (!t->want_text) {
            pp_arrow_table_discard(t);
            return NULL;
        }
        char *save = NULL;
        for (char *w = strtok_r(t->want_text, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
            if (t->nwant == WANT_MAX) {
                pp_arrow_fail(t, PP_EINVAL, "%s: more than %d columns named", name, WANT_MAX);
                break;
            }
            t->want[t->nwant++] = w;
        }
    }
    if (hold)
        x->held = pp_model_retain(hold);
    return t;
}

void pp_arrow_table_discard(pp_arrow_table *t) {
    if (!t)
        return;
    if (t->x)
        export_free(t->x);
    free(t->cols);
    free(t->want_text);
    free(t);
}

int pp_arrow_wants(pp_arrow_table *t, const char *name) {
    size_t k = 0;
    while (k < t->nknown && strcmp(t->known[k], name) != 0)
        k++;
    if (k == t->nknown && k < WANT_MAX)
        t->known[t->nknown++] = name;
    if (t->rc)
        return 0;
    if (t->nwant == 0)
        return 1;
    for (size_t i = 0; i < t->nwant; i++)
        if (strcmp(t->want[i], name) == 0)
            return t->want_seen[i] = 1;
    return 0;
}

const pp_arrow_dict *pp_arrow_dict_of(pp_arrow_table *t, const char *const *texts, size_t n) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += texts[i] ? strlen(texts[i]) : 0;
    if (total > INT32_MAX) {
        pp_arrow_fail(t, PP_EFULL, "%s: %zu bytes of strings, past the 2 GiB of an Arrow utf8 array",
                      t->name, total);
        return NULL;
    }
    pp_arrow_dict *d = pp_arrow_alloc(t, sizeof *d);
    int32_t *off = pp_arrow_alloc(t, (n + 1) * sizeof *off);
    char *data = pp_arrow_alloc(t, total);
    if (!d || !off || !data)
        return NULL;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = texts[i] ? strlen(texts[i]) : 0;
        memcpy(data + at, texts[i] ? texts[i] : "", len);
        at += len;
        off[i + 1] = (int32_t)at;
    }
    *d = (pp_arrow_dict){n, off, data};
    return d;
}

uint8_t *pp_arrow_bitmap(pp_arrow_table *t) {
    size_t bytes = (t->rows + 7) / 8;
    uint8_t *b = pp_arrow_alloc(t, bytes);
    if (b)
        memset(b, 0xff, bytes);
    return b;
}

static column *add_column(pp_arrow_table *t, const char *name) {
    if (t->rc)
        return NULL;
    if (t->ncols == t->capcols) {
        size_t cap = t->capcols ? 2 * t->capcols : 16;
        column *c = realloc(t->cols, cap * sizeof *c);
        if (!c) {
            pp_arrow_fail(t, PP_ENOMEM, "out of memory");
            return NULL;
        }
        t->cols = c;
        t->capcols = cap;
    }
    column *c = &t->cols[t->ncols++];
    *c = (column){.name = name};
    return c;
}

void pp_arrow_add(pp_arrow_table *t, const char *name, const char *format, const void *values,
                  const uint8_t *validity, const pp_arrow_dict *dict) {
    column *c = add_column(t, name);
    if (!c)
        return;
    c->format = format;
    c->values = values ? values : empty_buffer;
    c->validity = validity;
    c->dict = dict;
}

void pp_arrow_add_utf8(pp_arrow_table *t, const char *name, const pp_arrow_dict *d) {
    column *c = add_column(t, name);
    if (c) {
        c->format = "u";
        c->utf8 = d;
    }
}

/* ---- gathering columns from arrays of structs ---- */

static const char *const field_format[] = {
    [PP_AF_I64] = "l", [PP_AF_U64] = "L", [PP_AF_SIZE] = "L", [PP_AF_I32] = "i",
    [PP_AF_U32] = "I", [PP_AF_U8] = "C",  [PP_AF_F64] = "g",  [PP_AF_BOOL] = "b",
};
static const size_t field_width[] = {
    [PP_AF_I64] = 8, [PP_AF_U64] = 8, [PP_AF_SIZE] = 8, [PP_AF_I32] = 4,
    [PP_AF_U32] = 4, [PP_AF_U8] = 1,  [PP_AF_F64] = 8,
};

/* Whether the field at p is its null rule's sentinel. */
static int field_is_null(const pp_arrow_field *f, const unsigned char *p) {
    int64_t i64;
    uint32_t u32;
    int32_t i32;
    switch (f->null_rule) {
    case PP_NULL_NEG1:
        if (f->type == PP_AF_I32) {
            memcpy(&i32, p, 4);
            return i32 == -1;
        }
        memcpy(&i64, p, 8);
        return i64 == -1;
    case PP_NULL_ZERO:
        if (f->type == PP_AF_U32) {
            memcpy(&u32, p, 4);
            return u32 == 0;
        }
        memcpy(&i64, p, 8);
        return i64 == 0;
    case PP_NULL_U32MAX:
        memcpy(&u32, p, 4);
        return u32 == UINT32_MAX;
    default:
        return 0;
    }
}

static void add_cstr_rows(pp_arrow_table *t, const pp_arrow_field *f, const unsigned char *rows,
                          size_t stride) {
    const char **texts = pp_arrow_alloc(t, t->rows * sizeof *texts);
    if (!texts)
        return;
    for (size_t i = 0; i < t->rows; i++)
        memcpy(&texts[i], rows + i * stride + f->offset, sizeof texts[i]);
    pp_arrow_add_utf8(t, f->name, pp_arrow_dict_of(t, texts, t->rows));
}

void pp_arrow_add_rows(pp_arrow_table *t, const void *rows, size_t stride,
                       const pp_arrow_field *f, size_t nf, const pp_arrow_dict *const *dicts) {
    const unsigned char *base = rows;
    for (size_t k = 0; k < nf; k++) {
        if (!pp_arrow_wants(t, f[k].name))
            continue;
        if (f[k].type == PP_AF_CSTR) {
            add_cstr_rows(t, &f[k], base, stride);
            continue;
        }
        uint8_t *validity = f[k].null_rule != PP_NULL_NEVER ? pp_arrow_bitmap(t) : NULL;
        int is_bool = f[k].type == PP_AF_BOOL;
        size_t w = is_bool ? 0 : field_width[f[k].type];
        unsigned char *out = pp_arrow_alloc(t, is_bool ? (t->rows + 7) / 8 : t->rows * w);
        if (!out)
            return;
        for (size_t i = 0; i < t->rows; i++) {
            const unsigned char *p = base + i * stride + f[k].offset;
            if (validity && field_is_null(&f[k], p))
                pp_arrow_set_null(validity, i);
            if (is_bool) {
                int v;
                memcpy(&v, p, sizeof v);
                if (v)
                    out[i >> 3] |= (uint8_t)(1u << (i & 7));
            } else {
                memcpy(out + i * w, p, w); /* size_t is 8 bytes on every platform built for */
            }
        }
        pp_arrow_add(t, f[k].name, field_format[f[k].type], out, validity,
                     f[k].dict ? dicts[f[k].dict - 1] : NULL);
    }
}

/* ---- handing out ---- */

static void export_unref(export *x) {
    if (atomic_fetch_sub_explicit(&x->live, 1, memory_order_acq_rel) == 1)
        export_free(x);
}

static void release_schema(struct ArrowSchema *s) {
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->release)
            s->children[i]->release(s->children[i]);
    if (s->dictionary && s->dictionary->release)
        s->dictionary->release(s->dictionary);
    export *x = s->private_data;
    s->release = NULL;
    export_unref(x);
}

static void release_array(struct ArrowArray *a) {
    for (int64_t i = 0; i < a->n_children; i++)
        if (a->children[i]->release)
            a->children[i]->release(a->children[i]);
    if (a->dictionary && a->dictionary->release)
        a->dictionary->release(a->dictionary);
    export *x = a->private_data;
    a->release = NULL;
    export_unref(x);
}

/* The schema's metadata in the specification's encoding: int32 count, then
 * per pair int32 length and bytes of key and of value, native endianness. */
static char *metadata(pp_arrow_table *t, const char *const *kv, int32_t n) {
    size_t bytes = 4;
    for (int32_t i = 0; i < n; i++)
        bytes += 8 + strlen(kv[2 * i]) + strlen(kv[2 * i + 1]);
    char *m = pp_arrow_alloc(t, bytes), *p = m;
    if (!m)
        return NULL;
    memcpy(p, &n, 4);
    p += 4;
    for (int32_t i = 0; i < n; i++)
        for (int j = 0; j < 2; j++) {
            int32_t len = (int32_t)strlen(kv[2 * i + j]);
            memcpy(p, &len, 4);
            memcpy(p + 4, kv[2 * i + j], (size_t)len);
            p += 4 + len;
        }
    return m;
}

static int64_t null_count(const uint8_t *validity, size_t rows) {
    int64_t nulls = 0;
    for (size_t i = 0; validity && i < rows; i++)
        nulls += !(validity[i >> 3] >> (i & 7) & 1);
    return nulls;
}

/* Fills the schema and array of a utf8 array of dictionary d. */
static void utf8_structs(pp_arrow_table *t, const pp_arrow_dict *d, const char *name,
                         struct ArrowSchema *s, struct ArrowArray *a) {
    const void **bufs = pp_arrow_alloc(t, 3 * sizeof *bufs);
    if (!bufs)
        return;
    bufs[1] = d->offsets;
    bufs[2] = d->n ? (const void *)d->data : empty_buffer;
    *s = (struct ArrowSchema){.format = "u", .name = name, .release = release_schema,
                              .private_data = t->x};
    *a = (struct ArrowArray){.length = (int64_t)d->n, .n_buffers = 3, .buffers = bufs,
                             .release = release_array, .private_data = t->x};
}

static void column_structs(pp_arrow_table *t, const column *c, struct ArrowSchema *s,
                           struct ArrowArray *a, struct ArrowSchema *ds, struct ArrowArray *da) {
    if (c->utf8) {
        utf8_structs(t, c->utf8, c->name, s, a);
        return;
    }
    const void **bufs = pp_arrow_alloc(t, 2 * sizeof *bufs);
    if (!bufs)
        return;
    bufs[0] = c->validity;
    bufs[1] = c->values;
    *s = (struct ArrowSchema){.format = c->format, .name = c->name,
                              .flags = c->validity ? ARROW_FLAG_NULLABLE : 0,
                              .release = release_schema, .private_data = t->x};
    *a = (struct ArrowArray){.length = (int64_t)t->rows,
                             .null_count = null_count(c->validity, t->rows), .n_buffers = 2,
                             .buffers = bufs, .release = release_array, .private_data = t->x};
    if (c->dict) {
        utf8_structs(t, c->dict, "", ds, da);
        s->dictionary = ds;
        a->dictionary = da;
    }
}

int pp_arrow_finish(pp_arrow_table *t, struct ArrowSchema *schema, struct ArrowArray *array,
                    pp_error *err) {
    for (size_t i = 0; i < t->nwant && !t->rc; i++) {
        if (t->want_seen[i])
            continue;
        char have[384] = "";
        for (size_t k = 0, at = 0; k < t->nknown && at < sizeof have; k++)
            at += (size_t)snprintf(have + at, sizeof have - at, "%s%s", k ? ", " : "", t->known[k]);
        pp_arrow_fail(t, PP_EINVAL, "table %s has no column \"%s\" (have: %s)", t->name, t->want[i],
                      have);
    }
    size_t n = t->ncols;
    struct ArrowSchema **sc = pp_arrow_alloc(t, n * sizeof *sc);
    struct ArrowArray **ac = pp_arrow_alloc(t, n * sizeof *ac);
    struct ArrowSchema *s = pp_arrow_alloc(t, 2 * n * sizeof *s);
    struct ArrowArray *a = pp_arrow_alloc(t, 2 * n * sizeof *a);
    const void **root_bufs = pp_arrow_alloc(t, sizeof *root_bufs);
    char version[16];
    snprintf(version, sizeof version, "%d", PP_ARROW_SCHEMA_VERSION);
    const char *kv[] = {"pipeprof.table", t->name, "pipeprof.schema_version", version};
    char *meta = metadata(t, kv, 2);
    char *name = pp_arrow_alloc(t, strlen(t->name) + 1);
    for (size_t i = 0; i < n && !t->rc; i++) {
        column_structs(t, &t->cols[i], &s[i], &a[i], &s[n + i], &a[n + i]);
        sc[i] = &s[i];
        ac[i] = &a[i];
    }
    if (t->rc) {
        if (err)
            snprintf(err->msg, sizeof err->msg, "%s", t->msg);
        int rc = t->rc;
        pp_arrow_table_discard(t);
        return rc;
    }
    memcpy(name, t->name, strlen(t->name) + 1);
    size_t live = 2; /* the root schema and array, then each column's and dictionary's */
    for (size_t i = 0; i < n; i++)
        live += t->cols[i].dict ? 4 : 2;
    atomic_init(&t->x->live, live);
    *schema = (struct ArrowSchema){.format = "+s", .name = name, .metadata = meta,
                                   .n_children = (int64_t)n, .children = sc,
                                   .release = release_schema, .private_data = t->x};
    *array = (struct ArrowArray){.length = (int64_t)t->rows, .n_buffers = 1, .buffers = root_bufs,
                                 .n_children = (int64_t)n, .children = ac,
                                 .release = release_array, .private_data = t->x};
    t->x = NULL; /* the consumer's now */
    pp_arrow_table_discard(t);
    return PP_OK;
}
