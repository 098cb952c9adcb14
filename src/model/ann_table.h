/* ann_table.h — the model's annotations as the library itself reads them.
 * Not public: pp_model_annotations (pipeprof/model.h) is the API.
 *
 * Why packed: a pipeline trace carries most of an annotation an event
 * (shares, op types, byte counts), and the public pp_annotation takes 24
 * bytes, its 64-bit event index and one-byte type each padded out. Here
 * an annotation takes 16: a 32-bit event index and the value type in the
 * top two bits of the key (docs/analysis.md, "Memory"). So a model
 * annotates events below 2^32 - 1 with keys among the first 2^30 strings,
 * which a model that fits in memory never passes; pp_model_add_annotation
 * refuses the rest (PP_EINVAL). */
#ifndef PP_MODEL_ANN_TABLE_H
#define PP_MODEL_ANN_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pipeprof/model.h"

#define PP_ANN_KEY_MAX ((UINT32_C(1) << 30) - 1) /* keys below this */
#define PP_ANN_EVENT_MAX UINT32_MAX              /* events below this */

typedef struct pp_ann {
    uint32_t event;
    uint32_t key_type; /* key | type << 30 */
    union {
        int64_t i;
        double d;
        uint32_t s;
    } v;
} pp_ann;

static inline uint32_t pp_ann_key(const pp_ann *a) {
    return a->key_type & PP_ANN_KEY_MAX;
}

static inline uint8_t pp_ann_type(const pp_ann *a) {
    return (uint8_t)(a->key_type >> 30);
}

/* Packs a into *out: 1, or 0 when it does not fit (event, key or type too
 * large), leaving *out as it was. */
static inline int pp_ann_pack(const pp_annotation *a, pp_ann *out) {
    if (a->event >= PP_ANN_EVENT_MAX || a->key >= PP_ANN_KEY_MAX || a->type > PP_VALUE_STR)
        return 0;
    out->event = (uint32_t)a->event;
    out->key_type = a->key | (uint32_t)a->type << 30;
    memcpy(&out->v, &a->v, sizeof out->v);
    return 1;
}

static inline void pp_ann_unpack(const pp_ann *a, pp_annotation *out) {
    *out = (pp_annotation){.event = a->event, .key = pp_ann_key(a), .type = pp_ann_type(a)};
    memcpy(&out->v, &a->v, sizeof out->v);
}

/* Every annotation, sorted by event; never NULL. */
const pp_ann *pp_model_anns(const pp_model *m, size_t *count);

/* Keeps only the annotations whose key is one of keys[0..n) (none for n =
 * 0; n at most PP_ANN_KEYS_MAX, the rest ignored), or drops those, in
 * their order, in a table of their size: for an owner that has read the
 * others for the last time (pp_report_build_owned). A key 0 in keys names
 * none (pp_model_find_string gives 0 for a string the model lacks). On no
 * memory for the smaller table the kept ones stay in the larger. */
#define PP_ANN_KEYS_MAX 4
void pp_model_anns_keep(pp_model *m, const uint32_t *keys, size_t n);
void pp_model_anns_drop(pp_model *m, const uint32_t *keys, size_t n);

#endif
