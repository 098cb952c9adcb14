/* The rows of .pptrace EVENTS and ANNOTATIONS blocks (docs/format-pptrace.md):
 * decoded straight into the model's slots (model/event_slots.h), appended
 * under the model's rules, and the first row the model refuses named with
 * the byte offset of its bad field. Also, for the skeleton read, the
 * counting of those blocks' rows (io/trace_read.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/pptrace_codec.h"
#include "io/pptrace_format.h"
#include "io/pptrace_reader.h"
#include "model/event_slots.h"

enum { C_TS, C_DUR, C_BATCH, C_HW, C_XFER, C_ID, C_VALUE, C_NAME, C_STAGE, C_TRACK, C_KIND,
       C_ROLE, C_PHASE, NCOLS };
static const unsigned char col_width[NCOLS] = {8, 8, 8, 8, 8, 8, 8, 4, 4, 4, 1, 1, 1};

/* Where the fields of the row being checked lie in the payload, for
 * messages: version 1 columns of fixed width, or version 2 columns. */
typedef struct row_site {
    const unsigned char *const *v1_cols; /* version 1: each column's start */
    const unsigned char *v1_row;         /* version 1 annotations: the first row */
    const pptrace_decoder *v2;
    uint32_t row;                        /* within the block */
    /* A block the workers decoded (v2 NULL): its payload is read into the
     * buffer again, and its columns found, only for a message. */
    pptrace_decoder reread;
} row_site;

/* The version-2 columns of the block, reading its payload again when the
 * workers decoded it; NULL when that read fails. */
static const pptrace_decoder *site_columns(reader *r, row_site *s) {
    if (s->v2)
        return s->v2;
    size_t got;
    if (rd_read_bytes(r, r->payload_at, r->buf, r->len, &got) != PP_OK || got < r->len)
        return NULL;
    pptrace_layout_problem problem = r->type == PPTRACE_EVENTS
                                         ? pptrace_events_open(&s->reread, r->buf, r->len)
                                         : pptrace_annotations_open(&s->reread, r->buf, r->len);
    if (problem != PPTRACE_LAYOUT_OK) /* the worker found it sound: the file changed since */
        return NULL;
    return s->v2 = &s->reread;
}

/* The file offset of field c (C_*) of the event at `s`. The first ten
 * columns have the same order in both versions; version 2 keeps kind, role
 * and phase in one byte. */
static uint64_t event_field_at(reader *r, row_site *s, int c) {
    if (s->v1_cols)
        return rd_at(r, s->v1_cols[c] + (size_t)col_width[c] * s->row);
    const pptrace_decoder *d = site_columns(r, s);
    return d ? rd_at(r, pptrace_events_field(d, c >= C_KIND ? PPTRACE_EV_FLAGS : c, s->row))
             : r->block_at;
}

/* Names the first invalid field of event `e`. */
static int bad_event(reader *r, const pp_event *e, row_site *s) {
    unsigned long long idx = events_read(r);
    size_t ntracks = pp_model_track_count(r->m), nstrings = pp_model_string_count(r->m);
    if (e->dur_ns < 0)
        return rd_fail(r, event_field_at(r, s, C_DUR), "event %llu: negative duration %lld ns", idx,
                       (long long)e->dur_ns);
    if (e->ts_ns == INT64_MIN) /* -INT64_MIN does not exist: no text form reads it back */
        return rd_fail(r, event_field_at(r, s, C_TS),
                       "event %llu: time %lld ns is out of range (the "
                       "earliest is %lld)",
                       idx, (long long)e->ts_ns, (long long)-INT64_MAX);
    if (e->ts_ns > 0 && e->dur_ns > INT64_MAX - e->ts_ns)
        return rd_fail(r, event_field_at(r, s, C_DUR),
                       "event %llu: ends past the largest time (%lld + %lld ns)", idx,
                       (long long)e->ts_ns, (long long)e->dur_ns);
    if (e->track >= ntracks)
        return rd_fail(r, event_field_at(r, s, C_TRACK),
                       "event %llu: track index %u out of range (%zu tracks)", idx, e->track,
                       ntracks);
    if (e->kind > PP_EV_REGION)
        return rd_fail(r, event_field_at(r, s, C_KIND), "event %llu: unknown kind %u", idx,
                       e->kind);
    if (e->role > PP_ROLE_USER)
        return rd_fail(r, event_field_at(r, s, C_ROLE), "event %llu: unknown role %u", idx,
                       e->role);
    if (e->phase > PP_FLOW_END)
        return rd_fail(r, event_field_at(r, s, C_PHASE), "event %llu: unknown flow phase %u", idx,
                       e->phase);
    const char *field = e->name >= nstrings ? "name" : "stage";
    return rd_fail(r, event_field_at(r, s, e->name >= nstrings ? C_NAME : C_STAGE),
                   "event %llu: %s string id %u out of range (%zu strings defined before it)", idx,
                   field, e->name >= nstrings ? e->name : e->stage, nstrings);
}

/* Appends the n events decoded into the model's slots; names the first
 * the model refuses. */
static int commit_events(reader *r, uint32_t n, row_site *site) {
    pp_event refused;
    size_t ok = pp_model_events_commit(r->m, n, &refused);
    if (ok == n)
        return PP_OK;
    site->row = (uint32_t)ok;
    return bad_event(r, &refused, site);
}

/* Version 1: events stored column after column at fixed widths. */
int rd_events_v1(reader *r, const unsigned char *p, uint32_t n) {
    const unsigned char *col[NCOLS];
    col[0] = p;
    for (int c = 1; c < NCOLS; c++)
        col[c] = col[c - 1] + (size_t)col_width[c - 1] * n;
    pp_event_slots s;
    if (pp_model_events_reserve(r->m, n, &s))
        return rd_no_memory(r);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t value_bits = pptrace_get64(col[C_VALUE] + 8 * (size_t)i);
        double value;
        memcpy(&value, &value_bits, sizeof value);
        if (pp_slot_put_ts(&s, i, (int64_t)pptrace_get64(col[C_TS] + 8 * (size_t)i)) |
            pp_slot_put_dur(&s, i, (int64_t)pptrace_get64(col[C_DUR] + 8 * (size_t)i)) |
            pp_slot_put_batch(&s, i, (int64_t)pptrace_get64(col[C_BATCH] + 8 * (size_t)i)) |
            pp_slot_put_sparse32(&s, s.hw32, PP_WIDE_HW, i, pptrace_get64(col[C_HW] + 8 * (size_t)i)) |
            pp_slot_put_sparse32(&s, s.xfer32, PP_WIDE_XFER, i,
                           pptrace_get64(col[C_XFER] + 8 * (size_t)i)) |
            pp_slot_put_stage(&s, i, pptrace_get32(col[C_STAGE] + 4 * (size_t)i)) |
            pp_slot_put_track(&s, i, pptrace_get32(col[C_TRACK] + 4 * (size_t)i)))
            return rd_no_memory(r);
        pp_slot_put_u64(s.id, i, pptrace_get64(col[C_ID] + 8 * (size_t)i));
        pp_slot_put_f64(s.value, i, value);
        s.name[i] = pptrace_get32(col[C_NAME] + 4 * (size_t)i);
        s.kind[i] = col[C_KIND][i];
        s.role[i] = col[C_ROLE][i];
        pp_slot_put_u8(s.phase, i, col[C_PHASE][i]);
    }
    row_site site = {.v1_cols = col};
    return commit_events(r, n, &site);
}

/* The message for a version-2 payload whose layout is wrong. */
static int bad_layout(reader *r, pptrace_layout_problem problem, const pptrace_decoder *d,
                      uint32_t len) {
    const char *name = pptrace_block_name(r->type);
    switch (problem) {
    case PPTRACE_LAYOUT_SHORT:
        return rd_fail(r, r->block_at + 4,
                       "%s block length %u is below its row count and column "
                       "directory",
                       name, len);
    case PPTRACE_LAYOUT_ROWS:
        return rd_fail(r, r->payload_at, "%s block holds %u rows (at most %u allowed)", name,
                       d->rows, PPTRACE_ROWS_PER_BLOCK);
    case PPTRACE_LAYOUT_BYTES:
        return rd_fail(r, r->payload_at,
                       "%s block: its %s column does not hold one byte per row "
                       "(%u rows)",
                       name, r->type == PPTRACE_EVENTS ? "flags" : "type", d->rows);
    default:
        return rd_fail(r, r->payload_at + 4,
                       "%s block: its column lengths do not add up to its "
                       "length %u",
                       name, len);
    }
}

/* A version-2 column with bytes after its last row's value. */
static int leftover(reader *r, const pptrace_decoder *d, int ncols, const char *const *names) {
    int k = pptrace_decoder_leftover(d, ncols);
    if (k < 0)
        return PP_OK;
    return rd_fail(r, rd_at(r, d->at[k]),
                   "%s block: %zu bytes after the last value of its %s column",
                   pptrace_block_name(r->type), (size_t)(d->end[k] - d->at[k]), names[k]);
}

/* Version 2: columns of varints (pptrace_codec.h), decoded straight into
 * the model's columns. */
int rd_events_v2(reader *r, const unsigned char *p, uint32_t len) {
    pptrace_decoder d;
    pptrace_layout_problem problem = pptrace_events_open(&d, p, len);
    if (problem)
        return bad_layout(r, problem, &d, len);
    pp_event_slots s;
    if (pp_model_events_reserve(r->m, d.rows, &s))
        return rd_no_memory(r);
    uint32_t row;
    int col = pptrace_events_decode(&d, &s, d.rows, &row);
    if (col == PPTRACE_DECODE_NO_ROOM)
        return rd_no_memory(r);
    if (col >= 0)
        return rd_fail(r, rd_at(r, pptrace_events_field(&d, col, row)),
                       "event %llu: malformed %s value (a varint that runs past its column or "
                       "does not fit the field)",
                       (unsigned long long)events_read(r) + row, pptrace_event_column_names[col]);
    row_site site = {.v2 = &d};
    int rc = commit_events(r, d.rows, &site);
    return rc ? rc : leftover(r, &d, PPTRACE_EV_COLUMNS, pptrace_event_column_names);
}

/* Where field c (PPTRACE_AN_*) of the annotation at `s` lies. */
static uint64_t annotation_field_at(reader *r, row_site *s, int c) {
    static const unsigned char v1_offset[PPTRACE_AN_COLUMNS] = {0, 8, 12, 13};
    if (s->v1_row)
        return rd_at(r, s->v1_row + (size_t)s->row * PPTRACE_ANNOTATION_ROW + v1_offset[c]);
    const pptrace_decoder *d = site_columns(r, s);
    return d ? rd_at(r, pptrace_annotations_field(d, c, s->row)) : r->block_at;
}

/* Names the first problem of annotation `a`, whose value field as stored
 * is `value`, which the model refused (or would). */
static int bad_annotation(reader *r, const pp_annotation *a, uint64_t value, row_site *s) {
    size_t held;
    const pp_ann *prev = pp_model_anns(r->m, &held);
    unsigned long long idx = annotations_read(r), nevents = events_read(r);
    unsigned long long event = r->event_base + a->event; /* as the file numbers it */
    if (event >= nevents)
        return rd_fail(r, annotation_field_at(r, s, PPTRACE_AN_EVENT),
                       "annotation %llu: event index %llu out of range (%llu events)", idx, event,
                       nevents);
    if (held && a->event < prev[held - 1].event)
        return rd_fail(r, annotation_field_at(r, s, PPTRACE_AN_EVENT),
                       "annotation %llu: event %llu is before the previous annotation's event "
                       "%llu (annotations are sorted by event)",
                       idx, event, (unsigned long long)(r->event_base + prev[held - 1].event));
    if (a->type > PP_VALUE_STR)
        return rd_fail(r, annotation_field_at(r, s, PPTRACE_AN_TYPE),
                       "annotation %llu: unknown value type %u", idx, a->type);
    size_t nstrings = pp_model_string_count(r->m);
    int bad_key = a->key >= nstrings;
    return rd_fail(r, annotation_field_at(r, s, bad_key ? PPTRACE_AN_KEY : PPTRACE_AN_VALUE),
                   "annotation %llu: %s string id %llu out of range (%zu strings defined before "
                   "it)",
                   idx, bad_key ? "key" : "value", (unsigned long long)(bad_key ? a->key : value),
                   nstrings);
}

/* Chunks: makes the events of n annotations indices into the chunk, up to
 * the first of an event already handed on; returns how many it made. The
 * skeleton read found none such in the file (pptrace_read_skeleton). */
static uint32_t to_chunk_events(const reader *r, pp_annotation *a, uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        if (a[k].event < r->event_base)
            return k;
        a[k].event -= r->event_base;
    }
    return n;
}

/* Room for n annotations as decoded in r->anns; NULL on no memory. */
static pp_annotation *decoded_room(reader *r, uint32_t n) {
    if (n > r->anns_cap) {
        pp_annotation *p = realloc(r->anns, (size_t)n * sizeof *p);
        if (!p)
            return NULL;
        r->anns = p;
        r->anns_cap = n;
    }
    return r->anns;
}

/* Appends n annotations as decoded (in r->anns), whose string values are
 * still whole in v.i: each is range-checked before it is narrowed to v.s,
 * and packed into the model's slots (model/ann_table.h). Names the first
 * annotation the model refuses. */
static int commit_annotations(reader *r, pp_annotation *a, uint32_t n, row_site *site) {
    size_t nstrings = pp_model_string_count(r->m);
    uint32_t k = 0;
    if (r->event_base && (k = to_chunk_events(r, a, n)) < n) {
        site->row = k;
        return rd_fail(r, annotation_field_at(r, site, PPTRACE_AN_EVENT),
                       "annotation %llu: event %llu was converted with an earlier block (the file "
                       "changed while it was read)",
                       (unsigned long long)annotations_read(r) + k, (unsigned long long)a[k].event);
    }
    pp_ann *slots;
    if (pp_model_annotations_reserve(r->m, n, &slots))
        return rd_no_memory(r);
    int bad_string = 0;
    for (k = 0; k < n; k++) {
        if (a[k].type == PP_VALUE_STR) {
            if ((bad_string = (uint64_t)a[k].v.i >= nstrings))
                break;
            a[k].v.s = (uint32_t)a[k].v.i;
        }
        if (!pp_ann_pack(&a[k], &slots[k])) /* one the model's rules refuse too */
            break;
    }
    size_t ok = pp_model_annotations_commit(r->m, k);
    if (ok == n)
        return PP_OK;
    site->row = (uint32_t)ok;
    if (ok < k || !bad_string) /* refused for a reason of its own; its string value is
                                * narrowed */
        return bad_annotation(r, &a[ok], a[ok].type == PP_VALUE_STR ? a[ok].v.s : 0, site);
    return bad_annotation(r, &a[k], (uint64_t)a[k].v.i, site);
}

int rd_annotations_v1(reader *r, const unsigned char *p, uint32_t n) {
    pp_annotation *a = decoded_room(r, n);
    if (!a)
        return rd_no_memory(r);
    for (uint32_t i = 0; i < n; i++, p += PPTRACE_ANNOTATION_ROW) {
        uint64_t value = pptrace_get64(p + 13);
        a[i].event = pptrace_get64(p);
        a[i].key = pptrace_get32(p + 8);
        a[i].type = p[12];
        if (a[i].type == PP_VALUE_DOUBLE)
            memcpy(&a[i].v.d, &value, sizeof a[i].v.d);
        else
            a[i].v.i = (int64_t)value; /* a string id stays whole until checked */
    }
    row_site site = {.v1_row = p - (size_t)n * PPTRACE_ANNOTATION_ROW};
    return commit_annotations(r, a, n, &site);
}

int rd_annotations_v2(reader *r, const unsigned char *p, uint32_t len) {
    pptrace_decoder d;
    pptrace_layout_problem problem = pptrace_annotations_open(&d, p, len);
    if (problem)
        return bad_layout(r, problem, &d, len);
    pp_annotation *a = decoded_room(r, d.rows);
    if (!a)
        return rd_no_memory(r);
    uint32_t row = 0;
    int col = pptrace_annotations_decode(&d, a, d.rows, &row);
    row_site site = {.v2 = &d};
    /* the rows before a malformed one are checked first: a message names
     * the first problem in the file */
    int rc = commit_annotations(r, a, col >= 0 ? row : d.rows, &site);
    if (rc)
        return rc;
    if (col >= 0) {
        unsigned long long idx = annotations_read(r);
        site.row = row;
        if (col == PPTRACE_AN_TYPE)
            return rd_fail(r, annotation_field_at(r, &site, col),
                           "annotation %llu: unknown value type %u", idx, a[row].type);
        return rd_fail(r, annotation_field_at(r, &site, col),
                       "annotation %llu: malformed %s value (a varint that runs past its column "
                       "or does not fit the field)",
                       idx, pptrace_annotation_column_names[col]);
    }
    return leftover(r, &d, PPTRACE_AN_COLUMNS, pptrace_annotation_column_names);
}

/* Appends the rows the workers decoded, under the same rules and with the
 * same messages as rows decoded here (the checksum, layout and values were
 * checked by the worker). */
int rd_commit_decoded(reader *r, uint32_t rows) {
    row_site site = {0};
    if (r->type == PPTRACE_EVENTS)
        return commit_events(r, rows, &site);
    pp_ann *packed; /* the rows the workers packed, within the reserved room */
    pp_annotation *a = decoded_room(r, rows);
    if (!a || pp_model_annotations_reserve(r->m, rows, &packed))
        return rd_no_memory(r);
    for (uint32_t k = 0; k < rows; k++)
        pp_ann_unpack(&packed[k], &a[k]);
    return commit_annotations(r, a, rows, &site);
}

/* Skeleton: an EVENTS or ANNOTATIONS block is counted, not kept. An
 * ANNOTATIONS block whose first event lies before the last EVENTS block
 * makes the file one that chunks cannot carry (an event handed on before
 * its annotations were read). Any fault here is left for the read that
 * decodes the block to name. */
int rd_count_rows(reader *r, uint32_t len) {
    pptrace_decoder d;
    uint32_t rows = 0;
    uint64_t first = 0;
    int events = r->type == PPTRACE_EVENTS;
    if (r->version >= 2) {
        pptrace_layout_problem problem = events ? pptrace_events_open(&d, r->buf, len)
                                                : pptrace_annotations_open(&d, r->buf, len);
        if (problem)
            return bad_layout(r, problem, &d, len);
        rows = d.rows;
        pp_annotation a = {0};
        uint32_t row;
        if (!events && rows && pptrace_annotations_decode(&d, &a, 1, &row) >= 0)
            return rd_fail(r, r->payload_at, "ANNOTATIONS block: malformed first row");
        first = a.event;
    } else {
        int rc = rd_table_rows(r, r->buf, len, events ? PPTRACE_EVENT_ROW : PPTRACE_ANNOTATION_ROW,
                               &rows);
        if (rc)
            return rc;
        first = rows ? pptrace_get64(r->buf + 4) : 0;
    }
    if (events) {
        r->events_block_first = r->event_base;
        r->event_base += rows;
    } else {
        r->interleaved |= rows && first < r->events_block_first;
        r->annotation_base += rows;
    }
    return PP_OK;
}
