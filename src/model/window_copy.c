/* The events of a model inside a time window, copied (model/window_copy.h). */
#include <string.h>

#include "model/ann_table.h"
#include "core/error.h"
#include "model/columns.h"
#include "model/window_copy.h"

int pp_model_copy_head(const pp_model *src, pp_model **out) {
    pp_model *m = NULL;
    int rc = pp_model_create(&m);
    for (size_t id = 1; rc == PP_OK && id < pp_model_string_count(src); id++) {
        const char *text = pp_model_string(src, (uint32_t)id);
        uint32_t got;
        rc = pp_model_intern(m, text, strlen(text), &got);
    }
    for (uint32_t t = 0; rc == PP_OK && t < pp_model_track_count(src); t++)
        rc = pp_model_add_track(m, pp_model_track(src, t), NULL);
    for (size_t t = 0; rc == PP_OK && t < pp_model_thread_count(src); t++)
        rc = pp_model_add_thread(m, pp_model_thread(src, t));
    if (rc == PP_OK)
        *pp_model_meta_mut(m) = *pp_model_meta_get(src);
    if (rc != PP_OK) {
        pp_model_free(m);
        m = NULL;
    }
    *out = m;
    return rc;
}

int pp_model_append_window(pp_model *dst, const pp_model *src, int64_t from, int64_t to) {
    pp_cols c;
    pp_model_cols(src, &c);
    size_t nanns, a = 0;
    const pp_ann *ann = pp_model_anns(src, &nanns);
    for (size_t i = 0; i < c.count; i++) {
        while (a < nanns && ann[a].event < i)
            a++;
        if (!pp_in_window(pp_cols_ts(&c, i), pp_cols_dur(&c, i), from, to))
            continue;
        pp_event e;
        pp_model_event(src, i, &e);
        int rc = pp_model_add_event(dst, &e);
        for (; rc == PP_OK && a < nanns && ann[a].event == i; a++) {
            pp_annotation copy;
            pp_ann_unpack(&ann[a], &copy);
            copy.event = pp_model_event_count(dst) - 1;
            rc = pp_model_add_annotation(dst, &copy);
        }
        if (rc != PP_OK)
            return rc;
    }
    return PP_OK;
}
