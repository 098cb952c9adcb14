/* finding_list.c — findings as data: their storage, their rendered lines
 * and the predicted effect of their advice.
 *
 * The steps that decide what to say (findings.c, decompose.c) add a
 * finding with its kind, subject and sentence and then set its figure and
 * action; an_findings_render makes each one's line once all are added, and
 * pp_report_set_finding_prediction makes it again when the what-if layer
 * (above analyze) gives the predicted effect of an action. The line is the
 * one thing every renderer prints (text, HTML, xlsx, pp_report_findings),
 * so they cannot disagree; JSON and Python carry the fields beside it. */
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "core/error.h"

static const char *const kind_names[PP_FINDING_KIND_COUNT] = {
    "data_loss", "unlabeled", "bottleneck", "throughput", "idle",
    "imbalance", "hw_quality", "wall_part", "hw_unknown", "back_pressure", "handoff",
    "sched", "worth_optimizing"};

const char *pp_finding_kind_name(pp_finding_kind k) {
    return (unsigned)k < PP_FINDING_KIND_COUNT ? kind_names[k] : "?";
}

const char *pp_finding_action_name(pp_finding_action_kind k) {
    switch (k) {
    case PP_ACTION_NONE: return "none";
    case PP_ACTION_RESPLIT: return "resplit";
    case PP_ACTION_REQUESTS: return "requests";
    case PP_ACTION_SPEEDUP: return "speedup";
    case PP_ACTION_MOVE: return "move";
    }
    return "?";
}

pp_finding *an_finding_add(pp_report *r, pp_finding_kind kind, uint32_t stage, uint32_t device,
                           char *sentence) {
    if (!sentence)
        return NULL;
    pp_finding *g = realloc(r->finding_list, (r->nfindings + 1) * sizeof *g);
    if (!g) {
        free(sentence);
        return NULL;
    }
    r->finding_list = g;
    g[r->nfindings] = (pp_finding){.kind = kind, .stage = stage, .device = device,
                                   .figure = {.name = "", .unit = ""}, .significant = -1,
                                   .sentence = sentence,
                                   .action = {.stage = AN_NONE, .device = AN_NONE}};
    return &g[r->nfindings++];
}

pp_finding *an_finding_add_text(pp_report *r, pp_finding_kind kind, char *sentence) {
    return an_finding_add(r, kind, AN_NONE, AN_NONE, sentence);
}

void an_finding_figure(pp_finding *f, const char *name, const char *unit, double est, double lo,
                       double hi) {
    f->figure = (pp_finding_figure){.name = name, .unit = unit, .est = est, .lo = lo, .hi = hi};
}

/* Whether a prediction withdraws the advice: refused, no gain outside
 * its interval, or a gain under PP_FINDING_MIN_GAIN_PCT, which reruns of
 * one configuration vary by more than (docs/whatif.md, "Measured error"). */
static int withdrawn(const pp_finding_prediction *p) {
    return p->state == PP_PREDICTION_REFUSED ||
           (p->state == PP_PREDICTION_PREDICTED &&
            (!(p->lo_pct > 0) || p->change_pct < PP_FINDING_MIN_GAIN_PCT));
}

/* The line of finding f: its sentence, and for advice its predicted
 * effect. */
static char *line_of(const pp_finding *f) {
    if (f->action.kind == PP_ACTION_NONE)
        return an_strdupf("%s", f->sentence);
    const pp_finding_prediction *p = &f->prediction;
    const char *why = p->reason && p->reason[0] ? p->reason : "no reason given";
    if (p->state == PP_PREDICTION_NONE)
        return an_strdupf("%s Predicted effect: not computed.", f->sentence);
    if (p->state == PP_PREDICTION_REFUSED)
        return an_strdupf("%s No change advised: the what-if model gives no prediction (%s).",
                          f->sentence, why);
    if (withdrawn(p))
        return an_strdupf("%s No change advised: the predicted throughput change, %+.1f%% "
                          "(%+.1f .. %+.1f%%), %s.",
                          f->sentence, p->change_pct, p->lo_pct, p->hi_pct,
                          p->lo_pct > 0 ? "is under the 1% gain worth a change"
                                        : "includes no gain");
    return an_strdupf("%s Predicted effect: %+.1f%% throughput (%+.1f .. %+.1f%%).", f->sentence,
                      p->change_pct, p->lo_pct, p->hi_pct);
}

static int render_one(pp_report *r, size_t i) {
    char *line = line_of(&r->finding_list[i]);
    if (!line)
        return PP_ENOMEM;
    free(r->findings[i]);
    r->findings[i] = line;
    r->finding_list[i].text = line;
    return PP_OK;
}

int an_findings_render(pp_report *r) {
    r->findings = calloc(r->nfindings + 1, sizeof *r->findings);
    if (!r->findings)
        return PP_ENOMEM;
    for (size_t i = 0; i < r->nfindings; i++)
        if (render_one(r, i) != PP_OK)
            return PP_ENOMEM;
    return PP_OK;
}

void an_findings_free(pp_report *r) {
    for (size_t i = 0; i < r->nfindings; i++) {
        pp_finding *f = &r->finding_list[i];
        free((char *)f->sentence);
        free((double *)f->action.shares);
        free((char *)f->prediction.reason);
        if (r->findings)
            free(r->findings[i]);
    }
    free(r->finding_list);
    free(r->findings);
    r->finding_list = NULL;
    r->findings = NULL;
    r->nfindings = 0;
}

const pp_finding *pp_report_finding_list(const pp_report *r, size_t *n) {
    *n = r->nfindings;
    return r->finding_list;
}

const char *const *pp_report_findings(const pp_report *r, size_t *n) {
    *n = r->nfindings;
    return (const char *const *)r->findings;
}

int pp_report_set_finding_prediction(pp_report *r, size_t i, const pp_finding_prediction *p) {
    if (!r || !p || i >= r->nfindings || r->finding_list[i].action.kind == PP_ACTION_NONE ||
        !r->findings)
        return PP_EINVAL;
    pp_finding *f = &r->finding_list[i];
    char *reason = NULL;
    if (p->reason && !(reason = strdup(p->reason)))
        return PP_ENOMEM;
    pp_finding_prediction was = f->prediction;
    f->prediction = *p;
    f->prediction.reason = reason;
    if (render_one(r, i) != PP_OK) {
        f->prediction = was;
        free(reason);
        return PP_ENOMEM;
    }
    free((char *)was.reason);
    return PP_OK;
}

int pp_report_add_finding(pp_report *r, const pp_finding *f) {
    if (!r || !f || !f->sentence || (unsigned)f->kind >= PP_FINDING_KIND_COUNT || !r->findings)
        return PP_EINVAL;
    char **lines = realloc(r->findings, (r->nfindings + 2) * sizeof *lines);
    if (!lines)
        return PP_ENOMEM;
    r->findings = lines;
    lines[r->nfindings] = lines[r->nfindings + 1] = NULL;
    char *sentence = strdup(f->sentence);
    char *reason = f->prediction.reason ? strdup(f->prediction.reason) : NULL;
    double *shares = f->action.nshares ? malloc(f->action.nshares * sizeof *shares) : NULL;
    if (!sentence || (f->prediction.reason && !reason) || (f->action.nshares && !shares)) {
        free(sentence), free(reason), free(shares);
        return PP_ENOMEM;
    }
    if (shares)
        memcpy(shares, f->action.shares, f->action.nshares * sizeof *shares);
    pp_finding *g = an_finding_add(r, f->kind, f->stage, f->device, sentence);
    if (!g) {
        free(reason), free(shares);
        return PP_ENOMEM;
    }
    const char *text = g->text;
    *g = *f;
    g->sentence = sentence, g->text = text;
    g->action.shares = shares;
    g->prediction.reason = reason;
    if (render_one(r, r->nfindings - 1) != PP_OK)
        return PP_ENOMEM; /* the finding stays, its line empty: freed with the report */
    return PP_OK;
}
