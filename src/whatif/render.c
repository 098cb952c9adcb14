/* render.c — a prediction as text (80 columns) and as JSON
 * (docs/whatif.md, "Output"): the model's notes, measured / replayed /
 * predicted side by side, and the causal profile. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "whatif/whatif_impl.h"


static void text_model(const pp_whatif_costs *c, FILE *out) {
    fprintf(out, "model: %zu stage%s, %llu batches, queue depth %u%s%s\n", c->nstages,
            c->nstages == 1 ? "" : "s", (unsigned long long)c->batches, c->queue_depth,
            c->queue_depth_inferred ? " (inferred)" : "",
            c->timed ? "" : " (untimed: stage times only)");
    for (size_t s = 0; s < c->nstages; s++) {
        const pp_whatif_stage *st = &c->stages[s];
        fprintf(out, "  %-16s %u server%s%s, parts:", st->name, st->servers,
                st->servers == 1 ? "" : "s", st->servers_inferred ? " (inferred)" : "");
        for (size_t p = 0; p < st->nparts; p++)
            fprintf(out, " %s%s", st->parts[p].device, st->data_parallel ? "" : "");
        if (st->data_parallel) {
            fprintf(out, " (shares");
            for (size_t p = 0; p < st->nparts; p++)
                fprintf(out, " %.2f", st->parts[p].share);
            fprintf(out, ")");
        }
        if (st->waits_for > s + 1 && st->waits_for <= c->nstages) /* inferred: costs_timing.c */
            fprintf(out, ", its thread's next batch after %s (inferred)",
                    c->stages[st->waits_for - 1].name);
        fprintf(out, "\n");
    }
    for (size_t i = 0; i < c->nnotes; i++)
        fprintf(out, "  note: %s\n", c->notes[i]);
}

static void text_row(FILE *out, const char *label, double measured, const pp_whatif_estimate *r,
                     const pp_whatif_estimate *p, double scale, const char *unit) {
    fprintf(out, "  %-20s %10.4g %10.4g", label, measured * scale, r->mean * scale);
    if (p)
        fprintf(out, " %10.4g [%.4g..%.4g]", p->mean * scale, p->lo * scale, p->hi * scale);
    fprintf(out, " %s\n", unit);
}

static void text_result(const pp_whatif_costs *c, const pp_whatif_replay *rp,
                        const pp_whatif_result *p, FILE *out) {
    const pp_whatif_figures *m = &c->measured;
    const pp_whatif_result *r = &rp->replayed;
    fprintf(out, "  %-20s %10s %10s%s\n", "", "measured", "replayed",
            p ? "  predicted [95% of seeds]" : "");
    text_row(out, "throughput", m->throughput_per_s, &r->throughput_per_s,
             p ? &p->throughput_per_s : NULL, 1, "/s");
    text_row(out, "cycle mean", m->cycle_mean_ns, &r->cycle_mean_ns, p ? &p->cycle_mean_ns : NULL,
             1e-6, "ms");
    text_row(out, "cycle p95", m->cycle_p95_ns, &r->cycle_p95_ns, p ? &p->cycle_p95_ns : NULL,
             1e-6, "ms");
    text_row(out, "end-to-end p50", m->e2e_p50_ns, &r->e2e_p50_ns, p ? &p->e2e_p50_ns : NULL,
             1e-6, "ms");
    text_row(out, "end-to-end p95", m->e2e_p95_ns, &r->e2e_p95_ns, p ? &p->e2e_p95_ns : NULL,
             1e-6, "ms");
    for (size_t d = 0; d < c->ndevices; d++) {
        char label[40];
        snprintf(label, sizeof label, "busy %.15s", c->devices[d]);
        fprintf(out, "  %-20s %9.1f%% %9.1f%%", label, 100 * m->busy[d], 100 * r->busy[d]);
        if (p)
            fprintf(out, " %9.1f%%", 100 * p->busy[d]);
        fprintf(out, "\n");
    }
    for (size_t s = 0; s < c->nstages; s++) {
        char label[40];
        snprintf(label, sizeof label, "bottleneck %.9s", c->stages[s].name);
        fprintf(out, "  %-20s %9.1f%% %9.1f%%", label, 100 * m->bottleneck[s],
                100 * r->bottleneck[s]);
        if (p)
            fprintf(out, " %9.1f%%", 100 * p->bottleneck[s]);
        fprintf(out, "\n");
    }
}

int pp_whatif_write_text(const pp_whatif_costs *c, const pp_whatif_replay *rp,
                         const pp_whatif_change *const *changes, const size_t *nchanges,
                         const pp_whatif_scenario *sc, size_t nscenarios,
                         const pp_whatif_causal_row *rows, size_t nrows, FILE *out) {
    text_model(c, out);
    if (isnan(rp->error))
        fprintf(out, "\nreplay (the unchanged model): not checked: %s\n", rp->reason);
    else
        fprintf(out, "\nreplay (the unchanged model): throughput error %+.1f%%, cycle error %+.1f%%\n",
                100 * rp->error, 100 * rp->cycle_error);
    if (rp->refused) {
        fprintf(out, "  no prediction: the replay is off by more than the %.0f%% it may be.\n"
                     "  why: %s\n",
                100 * PP_WHATIF_REPLAY_THRESHOLD, rp->reason);
        text_result(c, rp, NULL, out);
    }
    for (size_t i = 0; !rp->refused && i < nscenarios; i++) {
        fprintf(out, "\nscenario %zu:", i + 1);
        for (size_t k = 0; k < nchanges[i]; k++) {
            char what[200];
            pp_whatif_change_describe(&changes[i][k], what, sizeof what);
            fprintf(out, "%s %s", k ? "," : "", what);
        }
        fprintf(out, "\n  throughput %+.1f%% [%+.1f%% .. %+.1f%%] against the replay\n",
                100 * sc[i].gain.mean, 100 * sc[i].gain.lo, 100 * sc[i].gain.hi);
        text_result(c, rp, &sc[i].result, out);
    }
    if (nscenarios == 0 && !rp->refused)
        text_result(c, rp, NULL, out);
    if (rows && nrows > 0 && !rp->refused) {
        fprintf(out, "\ncausal profile: throughput change if it were faster\n");
        fprintf(out, "  %-24s", "");
        for (int k = 0; k < PP_WHATIF_CAUSAL_STEPS; k++)
            fprintf(out, " %8.3gx", pp_whatif_causal_factors[k]);
        fprintf(out, "\n");
        for (size_t i = 0; i < nrows; i++) {
            char label[40];
            snprintf(label, sizeof label, "%s %.17s", rows[i].is_device ? "device" : "stage ",
                     rows[i].name);
            fprintf(out, "  %-24s", label);
            for (int k = 0; k < PP_WHATIF_CAUSAL_STEPS; k++)
                fprintf(out, " %+8.1f%%", 100 * rows[i].gain[k].mean);
            fprintf(out, "\n");
        }
    }
    return ferror(out) ? PP_EIO : PP_OK;
}

/* ---- JSON ---- */

static void json_str(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void json_num(FILE *out, double v) {
    if (isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}

static void json_est(FILE *out, const char *key, const pp_whatif_estimate *e) {
    fprintf(out, "\"%s\":{\"mean\":", key);
    json_num(out, e->mean);
    fputs(",\"lo\":", out);
    json_num(out, e->lo);
    fputs(",\"hi\":", out);
    json_num(out, e->hi);
    fputc('}', out);
}

static void json_shares(FILE *out, const pp_whatif_costs *c, const double *busy,
                        const double *bottleneck) {
    fputs("\"busy\":{", out);
    for (size_t d = 0; d < c->ndevices; d++) {
        fputs(d ? "," : "", out);
        json_str(out, c->devices[d]);
        fputc(':', out);
        json_num(out, busy[d]);
    }
    fputs("},\"bottleneck\":{", out);
    for (size_t s = 0; s < c->nstages; s++) {
        fputs(s ? "," : "", out);
        json_str(out, c->stages[s].name);
        fputc(':', out);
        json_num(out, bottleneck[s]);
    }
    fputc('}', out);
}

static void json_result(FILE *out, const pp_whatif_costs *c, const pp_whatif_result *r) {
    json_est(out, "throughput_per_s", &r->throughput_per_s);
    fputs(",\"cycle_ns\":{", out);
    json_est(out, "mean", &r->cycle_mean_ns);
    fputc(',', out);
    json_est(out, "p95", &r->cycle_p95_ns);
    fputs("},\"e2e_ns\":{\"p50\":", out);
    json_num(out, r->e2e_p50_ns.mean);
    fputs(",\"p95\":", out);
    json_num(out, r->e2e_p95_ns.mean);
    fputc(',', out);
    json_est(out, "p50_interval", &r->e2e_p50_ns);
    fputc(',', out);
    json_est(out, "p95_interval", &r->e2e_p95_ns);
    fputs("},", out);
    json_shares(out, c, r->busy, r->bottleneck);
}

static void json_model(FILE *out, const pp_whatif_costs *c) {
    fprintf(out, "\"model\":{\"batches\":%llu,\"timed\":%s,\"queue_depth\":%u,"
                 "\"queue_depth_inferred\":%s,\"stages\":[",
            (unsigned long long)c->batches, c->timed ? "true" : "false", c->queue_depth,
            c->queue_depth_inferred ? "true" : "false");
    for (size_t s = 0; s < c->nstages; s++) {
        const pp_whatif_stage *st = &c->stages[s];
        fputs(s ? ",{\"name\":" : "{\"name\":", out);
        json_str(out, st->name);
        fprintf(out, ",\"data_parallel\":%s,\"host\":%s,\"servers\":%u,\"servers_inferred\":%s,"
                     "\"parts\":[",
                st->data_parallel ? "true" : "false", st->host ? "true" : "false", st->servers,
                st->servers_inferred ? "true" : "false");
        for (size_t p = 0; p < st->nparts; p++) {
            fputs(p ? ",{\"device\":" : "{\"device\":", out);
            json_str(out, st->parts[p].device);
            fputs(",\"share\":", out);
            json_num(out, st->parts[p].share);
            fprintf(out, ",\"requests\":%u}", st->parts[p].requests);
        }
        fputs("]}", out);
    }
    fputs("],\"shared_devices\":[", out);
    for (size_t g = 0; g < c->ngroups; g++) {
        fputs(g ? "," : "", out);
        json_str(out, c->groups[g].device);
    }
    fputs("],\"notes\":[", out);
    for (size_t i = 0; i < c->nnotes; i++) {
        fputs(i ? "," : "", out);
        json_str(out, c->notes[i]);
    }
    fputs("]}", out);
}

int pp_whatif_write_json(const pp_whatif_costs *c, const pp_whatif_replay *rp,
                         const pp_whatif_change *const *changes, const size_t *nchanges,
                         const pp_whatif_scenario *sc, size_t nscenarios,
                         const pp_whatif_causal_row *rows, size_t nrows, FILE *out) {
    const pp_whatif_figures *m = &c->measured;
    fputc('{', out);
    json_model(out, c);
    fputs(",\"measured\":{\"throughput_per_s\":", out);
    json_num(out, m->throughput_per_s);
    fputs(",\"cycle_ns\":{\"mean\":", out);
    json_num(out, m->cycle_mean_ns);
    fputs(",\"p95\":", out);
    json_num(out, m->cycle_p95_ns);
    fputs("},\"e2e_ns\":{\"p50\":", out);
    json_num(out, m->e2e_p50_ns);
    fputs(",\"p95\":", out);
    json_num(out, m->e2e_p95_ns);
    fputs("},", out);
    json_shares(out, c, m->busy, m->bottleneck);
    fputs("},\"replay\":{\"throughput_per_s\":", out);
    json_num(out, rp->replayed.throughput_per_s.mean);
    fputs(",\"error\":", out);
    json_num(out, rp->error);
    fputs(",\"cycle_error\":", out);
    json_num(out, rp->cycle_error);
    fprintf(out, ",\"threshold\":%g,\"refused\":%s,\"reason\":", PP_WHATIF_REPLAY_THRESHOLD,
            rp->refused ? "true" : "false");
    json_str(out, rp->reason);
    fputs(",\"result\":{", out);
    json_result(out, c, &rp->replayed);
    fputs("}},\"scenarios\":[", out);
    for (size_t i = 0; !rp->refused && i < nscenarios; i++) {
        fputs(i ? ",{\"changes\":[" : "{\"changes\":[", out);
        for (size_t k = 0; k < nchanges[i]; k++) {
            char what[200];
            pp_whatif_change_describe(&changes[i][k], what, sizeof what);
            fputs(k ? "," : "", out);
            json_str(out, what);
        }
        fputs("],", out);
        json_est(out, "gain", &sc[i].gain);
        fputc(',', out);
        json_result(out, c, &sc[i].result);
        fputc('}', out);
    }
    fputs("],\"causal\":[", out);
    for (size_t i = 0; rows && !rp->refused && i < nrows; i++) {
        fputs(i ? ",{\"kind\":" : "{\"kind\":", out);
        json_str(out, rows[i].is_device ? "device" : "stage");
        fputs(",\"name\":", out);
        json_str(out, rows[i].name);
        fputs(",\"gains\":[", out);
        for (int k = 0; k < PP_WHATIF_CAUSAL_STEPS; k++) {
            fprintf(out, "%s{\"speedup\":%g,", k ? "," : "", pp_whatif_causal_factors[k]);
            json_est(out, "gain", &rows[i].gain[k]);
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputs("]}\n", out);
    return ferror(out) ? PP_EIO : PP_OK;
}
