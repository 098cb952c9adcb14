/* arrow_build.h — building one Arrow record batch (pipeprof/arrow.h) column
 * by column: for the model's tables (model/arrow_model.c) and the report's
 * (analyze/arrow_report.c). Not public.
 *
 * A table under construction owns every buffer it makes (pp_arrow_alloc);
 * a column either borrows a buffer (the model's, held alive by the export)
 * or points at one made here. pp_arrow_finish turns the table into the
 * consumer's ArrowSchema and ArrowArray; from then on the memory is freed
 * when the consumer has released the last struct of the export.
 *
 * Errors are sticky: after a failed allocation every call does nothing and
 * pp_arrow_finish reports it, so a table's builder checks once, at the end. */
#ifndef PP_MODEL_ARROW_BUILD_H
#define PP_MODEL_ARROW_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "pipeprof/arrow.h"

typedef struct pp_arrow_table pp_arrow_table;

/* A utf8 array of strings, shared as the dictionary of several columns. */
typedef struct pp_arrow_dict {
    size_t n;
    const int32_t *offsets;
    const char *data;
} pp_arrow_dict;

/* A new table named `name` of `rows` rows, wanting the columns listed in
 * `columns` (comma separated; NULL or "" for all). `hold`, unless NULL, is
 * a model the export keeps alive (pp_model_retain) for the columns that
 * borrow its memory. NULL on no memory. */
pp_arrow_table *pp_arrow_table_new(const char *name, size_t rows, const char *columns,
                                   const pp_model *hold);
/* Frees a table never finished. Accepts NULL. */
void pp_arrow_table_discard(pp_arrow_table *t);

/* Whether the caller asked for column `name`: a builder skips the work of
 * the columns not wanted. Every name a builder checks is one of its table's
 * (pp_arrow_finish refuses a wanted name no builder checked). */
int pp_arrow_wants(pp_arrow_table *t, const char *name);
/* `bytes` zeroed bytes freed with the export, or NULL (the table then
 * fails). */
void *pp_arrow_alloc(pp_arrow_table *t, size_t bytes);

/* The strings texts[0..n) as a dictionary (NULL texts read ""), or NULL
 * (the table then fails: no memory, or PP_EFULL past 2 GiB of text). */
const pp_arrow_dict *pp_arrow_dict_of(pp_arrow_table *t, const char *const *texts, size_t n);

/* Validity bitmaps: pp_arrow_bitmap gives one for the table's rows, every
 * row valid; pp_arrow_set_null clears row i's bit. */
uint8_t *pp_arrow_bitmap(pp_arrow_table *t);
static inline void pp_arrow_set_null(uint8_t *bitmap, size_t i) {
    bitmap[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

/* Adds a column of fixed-width values (format: "l", "L", "i", "I", "C",
 * "g", "b" for a bitmap of booleans). `validity` NULL: no nulls (the
 * column is then not nullable); else its null count is counted here.
 * `dict` non-NULL makes the values dictionary indices into it. The column
 * goes where the table's order says: builders add in that order. */
void pp_arrow_add(pp_arrow_table *t, const char *name, const char *format, const void *values,
                  const uint8_t *validity, const pp_arrow_dict *dict);
/* Adds a dictionary's strings as a plain utf8 column (the strings table). */
void pp_arrow_add_utf8(pp_arrow_table *t, const char *name, const pp_arrow_dict *d);

/* One column gathered from an array of structs: the value at `offset` in
 * each row, of `type`; rows whose value is the null rule's sentinel are
 * null. A PP_AF_U8 / PP_AF_U32 field with a dictionary is its indices. */
typedef enum {
    PP_AF_I64, PP_AF_U64, PP_AF_SIZE, PP_AF_I32, PP_AF_U32, PP_AF_U8, PP_AF_F64,
    PP_AF_BOOL, /* an int field, nonzero = true */
    PP_AF_CSTR  /* a const char * field: a utf8 column (NULL reads "") */
} pp_arrow_field_type;
typedef enum { PP_NULL_NEVER, PP_NULL_NEG1, PP_NULL_ZERO, PP_NULL_U32MAX } pp_arrow_null_rule;

typedef struct pp_arrow_field {
    const char *name;
    uint8_t type, null_rule;
    uint8_t dict; /* 0: none; k: dicts[k - 1] of pp_arrow_add_rows */
    size_t offset;
} pp_arrow_field;

/* Adds the wanted fields of f[0..nf) as columns, gathered from the table's
 * rows, `stride` bytes apart from `rows`; dicts are the dictionaries the
 * fields name. */
void pp_arrow_add_rows(pp_arrow_table *t, const void *rows, size_t stride,
                       const pp_arrow_field *f, size_t nf, const pp_arrow_dict *const *dicts);

/* Fails the table with `rc` and a message (the first failure wins). */
void pp_arrow_fail(pp_arrow_table *t, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Hands the table to the consumer as *schema and *array, or frees it and
 * returns its failure (err says why). The table is gone either way. */
int pp_arrow_finish(pp_arrow_table *t, struct ArrowSchema *schema, struct ArrowArray *array,
                    pp_error *err);

#endif
