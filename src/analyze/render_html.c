/* render_html.c — the report as one self-contained HTML page: the static
 * page (report_page.html) with the data spliced in at its marker, and the
 * JSON helpers the data parts share. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/render_html.h"
#include "core/error.h"
#include "io/json_emit.h"

#define MARKER "/*PP_DATA*/"

void hj_raw(pp_outfile *o, const char *s) {
    pp_outfile_write(o, s, strlen(s));
}

/* json_put_string does the JSON escaping; '<' becomes \u003c here so that
 * no text can end the script element ("</script>") or open a comment. */
void hj_str(pp_outfile *o, const char *s) {
    char small[JSON_STRING_MAX(120)];
    size_t n = strlen(s);
    char *buf = n <= 120 ? small : malloc(JSON_STRING_MAX(n));
    if (!buf) {
        o->failed = o->failed ? o->failed : ENOMEM; /* commit reports it */
        return;
    }
    char *e = json_put_string(buf, s, n);
    const char *p = buf;
    for (const char *lt; (lt = memchr(p, '<', (size_t)(e - p))); p = lt + 1) {
        pp_outfile_write(o, p, (size_t)(lt - p));
        hj_raw(o, "\\u003c");
    }
    pp_outfile_write(o, p, (size_t)(e - p));
    if (buf != small)
        free(buf);
}

void hj_i64(pp_outfile *o, int64_t v) {
    char buf[JSON_INT_MAX];
    pp_outfile_write(o, buf, (size_t)(json_put_i64(buf, v) - buf));
}

void hj_dbl(pp_outfile *o, double v) {
    char buf[JSON_DOUBLE_MAX];
    pp_outfile_write(o, buf, (size_t)(json_put_double(buf, v) - buf));
}

void hj_key(pp_outfile *o, const char *key, int first) {
    if (!first)
        hj_raw(o, ", ");
    hj_str(o, key);
    hj_raw(o, ": ");
}

int html_hist_bin(int64_t ns) {
    if (ns <= 1)
        return 0;
    int k = (int)floor(log2((double)ns) * 4.0);
    return k < HTML_HIST_BINS ? k : HTML_HIST_BINS - 1;
}

void hj_hist(pp_outfile *o, const uint64_t *counts) {
    int first = 0, last = HTML_HIST_BINS - 1;
    while (first <= last && counts[first] == 0)
        first++;
    while (last >= first && counts[last] == 0)
        last--;
    hj_raw(o, "[");
    for (int k = first; k <= last; k++) {
        hj_raw(o, k > first ? ", [" : "[");
        hj_i64(o, (int64_t)ceil(exp2(k / 4.0)));
        hj_raw(o, ", ");
        hj_i64(o, (int64_t)counts[k]);
        hj_raw(o, "]");
    }
    hj_raw(o, "]");
}

int pp_report_write_html(const pp_report *r, const pp_model *m, const char *path,
                         pp_error *err) {
    const char *marker = strstr(html_page, MARKER);
    if (!marker)
        return pp_set_error(err, PP_EINVAL, "the built-in report page has no data marker");
    pp_outfile o;
    int rc = pp_outfile_open(&o, path, err);
    if (rc != PP_OK)
        return rc;
    pp_outfile_write(&o, html_page, (size_t)(marker - html_page));
    hj_raw(&o, "{\"schema\": \"pipeprof-html\", \"version\": 1, ");
    rc = html_write_report(r, &o, err);
    if (rc == PP_OK) {
        hj_raw(&o, ",\n\"timeline\": ");
        rc = html_write_timeline(r, m, &o, err);
    }
    if (rc != PP_OK) {
        pp_outfile_abort(&o);
        return rc;
    }
    hj_raw(&o, "}");
    const char *rest = marker + strlen(MARKER);
    pp_outfile_write(&o, rest, html_page_len - (size_t)(rest - html_page));
    return pp_outfile_commit(&o, err);
}
