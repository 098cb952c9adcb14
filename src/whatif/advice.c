/* advice.c — the predicted effect of the findings' advice, and the one
 * stage worth optimizing (docs/whatif.md, "Advice").
 *
 * The analysis states what it measured and, where a change suggests itself
 * (re-split a data-parallel stage, more requests in flight, a faster or
 * moved stage), names the change as data (pp_finding_action). It cannot
 * predict: prediction is this layer's, above it. Here each action becomes a
 * scenario of the pipeline model, all of them simulated in one call beside
 * one replay, and the result goes back into its finding, which the
 * analysis renders: advice whose predicted gain has an interval reaching 0,
 * or whose model failed its replay check, is withdrawn, never printed as
 * advice. The causal profile's best stage at 1.25x closes the list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif_impl.h"

/* The speed-up of the "worth optimizing" entry: pp_whatif_causal_factors[1]
 * (1.25x), a gain a user can plausibly make (a better kernel, a smaller
 * model), unlike 2x. */
#define WORTH_STEP 1

static int copy_name(char *dst, size_t cap, const char *name) {
    return snprintf(dst, cap, "%s", name) >= (int)cap ? PP_EINVAL : PP_OK;
}

/* The change finding f's action asks for, or a reason it cannot be one. */
static const char *change_of(const pp_report *r, const pp_finding_action *a,
                             pp_whatif_change *ch) {
    size_t nstages, ndevices, ndp;
    const pp_stage_stats *stages = pp_report_stages(r, &nstages);
    const pp_device_stats *devices = pp_report_devices(r, &ndevices);
    const pp_dp_stats *dps = pp_report_dp(r, &ndp);
    memset(ch, 0, sizeof *ch);
    if (a->stage != UINT32_MAX &&
        (a->stage >= nstages || copy_name(ch->stage, sizeof ch->stage, stages[a->stage].name)))
        return "the stage's name is too long for the model";
    switch (a->kind) {
    case PP_ACTION_SPEEDUP:
        ch->kind = PP_WHATIF_SPEEDUP;
        ch->factor = a->factor;
        return NULL;
    case PP_ACTION_REQUESTS:
        ch->kind = PP_WHATIF_REQUESTS;
        ch->count = a->requests;
        if (a->device >= ndevices || copy_name(ch->device, sizeof ch->device,
                                               devices[a->device].name))
            return "the device's name is too long for the model";
        return NULL;
    case PP_ACTION_MOVE:
        return "a move needs the stage's times on the new device: run pipeprof whatif --move "
               "STAGE=DEVICE --lookup TABLE";
    case PP_ACTION_RESPLIT:
        break;
    case PP_ACTION_NONE:
        return "no action";
    }
    const pp_dp_stats *dp = NULL;
    for (size_t i = 0; i < ndp; i++)
        if (dps[i].stage == a->stage)
            dp = &dps[i];
    if (!dp || dp->ndevices != a->nshares || a->nshares > PP_WHATIF_MAX_PARTS)
        return "the split does not match the stage's parts";
    ch->kind = PP_WHATIF_SPLIT;
    ch->nshares = a->nshares;
    for (size_t i = 0; i < a->nshares; i++) {
        if (dp->devices[i].track != UINT32_MAX)
            return "its parts are threads or streams of one device, and the model splits "
                   "work between devices";
        if (copy_name(ch->share_devices[i], sizeof ch->share_devices[i],
                      devices[dp->devices[i].device].name))
            return "a device's name is too long for the model";
        ch->shares[i] = a->shares[i];
    }
    return NULL;
}

static int refuse(pp_report *r, size_t i, const char *why) {
    pp_finding_prediction p = {.state = PP_PREDICTION_REFUSED, .reason = why};
    return pp_report_set_finding_prediction(r, i, &p);
}

/* The causal profile's stage with the largest gain at 1.25x, as the last
 * finding: a speed-up action with its prediction, withdrawn by the
 * renderer when the gain's interval reaches 0. */
static int worth_optimizing(pp_report *r, const pp_whatif_costs *c, const pp_whatif_options *o,
                            pp_error *err) {
    pp_whatif_causal_row *rows = calloc(c->nstages + c->ndevices + 1, sizeof *rows);
    if (!rows)
        return wi_error(err, PP_ENOMEM, "whatif: out of memory");
    size_t n = 0;
    int rc = pp_whatif_causal(c, o, rows, &n, err);
    const pp_whatif_causal_row *best = NULL;
    for (size_t i = 0; rc == PP_OK && i < n; i++)
        if (!rows[i].is_device && (!best || rows[i].gain[WORTH_STEP].mean >
                                                best->gain[WORTH_STEP].mean))
            best = &rows[i];
    if (rc == PP_OK && best) {
        size_t nstages;
        const pp_stage_stats *stages = pp_report_stages(r, &nstages);
        uint32_t s = UINT32_MAX;
        for (size_t i = 0; i < nstages; i++)
            if (strcmp(stages[i].name, best->name) == 0)
                s = (uint32_t)i;
        const pp_whatif_estimate *g = &best->gain[WORTH_STEP];
        double factor = pp_whatif_causal_factors[WORTH_STEP];
        char *sentence = wi_strdupf(
            "Worth optimizing: stage \"%s\" is the one stage whose speed-up pays most by the "
            "what-if model (causal profile: %.2fx faster, every other stage as measured).",
            best->name, factor);
        pp_finding f = {
            .kind = PP_FINDING_WORTH_OPTIMIZING, .stage = s, .device = UINT32_MAX,
            .figure = {.name = "throughput_gain_pct", .unit = "percent", .est = 100 * g->mean,
                       .lo = 100 * g->lo, .hi = 100 * g->hi},
            .significant = g->lo > 0, .sentence = sentence,
            .action = {.kind = PP_ACTION_SPEEDUP, .stage = s, .device = UINT32_MAX,
                       .factor = factor},
            .prediction = {.state = PP_PREDICTION_PREDICTED, .change_pct = 100 * g->mean,
                           .lo_pct = 100 * g->lo, .hi_pct = 100 * g->hi}};
        rc = sentence ? pp_report_add_finding(r, &f)
                      : wi_error(err, PP_ENOMEM, "whatif: out of memory");
        free(sentence);
    }
    free(rows);
    return rc;
}

/* Every advice refused with `why`, and the list's last word saying that
 * nothing was predicted. */
static int refuse_all(pp_report *r, const char *why) {
    size_t nf;
    const pp_finding *fl = pp_report_finding_list(r, &nf);
    int rc = PP_OK;
    for (size_t i = 0; rc == PP_OK && i < nf; i++)
        if (fl[i].action.kind != PP_ACTION_NONE) {
            rc = refuse(r, i, why);
            fl = pp_report_finding_list(r, &nf);
        }
    char *sentence = wi_strdupf("Worth optimizing: no prediction: %s.", why);
    pp_finding f = {.kind = PP_FINDING_WORTH_OPTIMIZING, .stage = UINT32_MAX,
                    .device = UINT32_MAX, .figure = {.name = "", .unit = ""},
                    .significant = -1, .sentence = sentence};
    if (rc == PP_OK)
        rc = sentence ? pp_report_add_finding(r, &f) : PP_ENOMEM;
    free(sentence);
    return rc;
}

static int advise(pp_report *r, const pp_whatif_costs *c, const pp_whatif_options *o,
                  pp_error *err) {
    size_t nf;
    const pp_finding *fl = pp_report_finding_list(r, &nf);
    pp_whatif_change *changes = calloc(nf + 1, sizeof *changes);
    const pp_whatif_change **lists = calloc(nf + 1, sizeof *lists);
    size_t *counts = calloc(nf + 1, sizeof *counts), *finding_of = calloc(nf + 1, sizeof *finding_of);
    pp_whatif_scenario *sc = calloc(nf + 1, sizeof *sc);
    int rc = changes && lists && counts && finding_of && sc
                 ? PP_OK : wi_error(err, PP_ENOMEM, "whatif: out of memory");
    size_t ns = 0;
    for (size_t i = 0; rc == PP_OK && i < nf; i++) {
        if (fl[i].action.kind == PP_ACTION_NONE)
            continue;
        const char *why = change_of(r, &fl[i].action, &changes[ns]);
        if (why) {
            rc = refuse(r, i, why);
            fl = pp_report_finding_list(r, &nf);
            continue;
        }
        lists[ns] = &changes[ns], counts[ns] = 1, finding_of[ns] = i;
        ns++;
    }
    pp_whatif_replay replay;
    if (rc == PP_OK)
        rc = pp_whatif_predict(c, lists, counts, ns, o, &replay, sc, err);
    if (rc == PP_OK && replay.refused) {
        char why[600];
        snprintf(why, sizeof why, "the model's replay is off by %+.1f%% in throughput: %s",
                 100 * replay.error, replay.reason);
        rc = refuse_all(r, why);
    }
    for (size_t k = 0; rc == PP_OK && !replay.refused && k < ns; k++) {
        char what[160];
        pp_whatif_change_describe(&changes[k], what, sizeof what);
        pp_finding_prediction p = {
            .state = PP_PREDICTION_PREDICTED, .change_pct = 100 * sc[k].gain.mean,
            .lo_pct = 100 * sc[k].gain.lo, .hi_pct = 100 * sc[k].gain.hi, .reason = what};
        rc = pp_report_set_finding_prediction(r, finding_of[k], &p);
    }
    if (rc == PP_OK && !replay.refused)
        rc = worth_optimizing(r, c, o, err);
    free(changes), free(lists), free(counts), free(finding_of), free(sc);
    return rc;
}

int pp_whatif_advise(pp_report *r, const pp_model *m, const pp_whatif_options *o,
                     pp_error *err) {
    pp_whatif_costs *c = NULL;
    pp_error why = {{0}};
    int rc = pp_whatif_costs_from_report(r, m, &c, &why);
    if (rc == PP_ENOMEM)
        return wi_error(err, rc, "whatif: out of memory");
    rc = rc != PP_OK ? refuse_all(r, why.msg[0] ? why.msg : pp_strerror(rc))
                     : advise(r, c, o, err);
    pp_whatif_costs_free(c);
    return rc;
}
