/* plan.c — changes: parsed from the CLI's spelling, described in words, and
 * applied to a description of costs as the scale factors and counts the
 * engine runs (docs/whatif.md, "Changes"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif_impl.h"

/* Copies text[0 .. len) into a 64-byte field; 0 when it does not fit or is
 * empty. */
static int field(char dst[64], const char *text, size_t len) {
    if (len == 0 || len >= 64)
        return 0;
    memcpy(dst, text, len);
    dst[len] = '\0';
    return 1;
}

static int parse_positive(const char *text, double *out) {
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v > 0) || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static int parse_count(const char *text, uint32_t *out) {
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > 64)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

int pp_whatif_change_parse(const char *kind, const char *text, pp_whatif_change *out,
                           pp_error *err) {
    memset(out, 0, sizeof *out);
    const char *eq = strrchr(text, '=');
    if (strcmp(kind, "queue-depth") == 0) {
        out->kind = PP_WHATIF_QUEUE_DEPTH;
        if (!parse_count(text, &out->count))
            return wi_error(err, PP_EINVAL, "--queue-depth \"%s\": expected a count 1..64", text);
        return PP_OK;
    }
    if (!eq)
        return wi_error(err, PP_EINVAL, "--%s \"%s\": expected NAME=VALUE", kind, text);
    const char *value = eq + 1;
    size_t name_len = (size_t)(eq - text);
    if (strcmp(kind, "speedup") == 0) {
        out->kind = PP_WHATIF_SPEEDUP;
        const char *at = memchr(text, '@', name_len);
        size_t stage_len = at ? (size_t)(at - text) : name_len;
        int ok = stage_len == 0 || field(out->stage, text, stage_len);
        if (at)
            ok &= field(out->device, at + 1, (size_t)(eq - at - 1));
        if (!ok || (stage_len == 0 && !at) || !parse_positive(value, &out->factor))
            return wi_error(err, PP_EINVAL,
                            "--speedup \"%s\": expected STAGE=FACTOR, STAGE@DEVICE=FACTOR or "
                            "@DEVICE=FACTOR with a factor > 0 (2 = twice as fast)",
                            text);
        return PP_OK;
    }
    if (strcmp(kind, "requests") == 0) {
        out->kind = PP_WHATIF_REQUESTS;
        if (!field(out->device, text, name_len) || !parse_count(value, &out->count))
            return wi_error(err, PP_EINVAL, "--requests \"%s\": expected DEVICE=N, N in 1..64",
                            text);
        return PP_OK;
    }
    if (strcmp(kind, "move") == 0) {
        out->kind = PP_WHATIF_MOVE;
        if (!field(out->stage, text, name_len) || !field(out->device, value, strlen(value)))
            return wi_error(err, PP_EINVAL, "--move \"%s\": expected STAGE=DEVICE", text);
        return PP_OK;
    }
    if (strcmp(kind, "split") != 0)
        return wi_error(err, PP_EINVAL, "unknown change \"%s\" (have: speedup, split, requests, "
                                        "queue-depth, move)", kind);
    out->kind = PP_WHATIF_SPLIT;
    eq = strchr(text, '=');
    if (!field(out->stage, text, (size_t)(eq - text)))
        return wi_error(err, PP_EINVAL, "--split \"%s\": expected STAGE=DEV:SHARE,DEV:SHARE", text);
    for (const char *p = eq + 1; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *colon = NULL;
        for (size_t k = len; k-- > 0;)
            if (p[k] == ':') {
                colon = p + k;
                break;
            }
        char num[64];
        if (out->nshares == PP_WHATIF_MAX_PARTS || !colon ||
            !field(out->share_devices[out->nshares], p, (size_t)(colon - p)) ||
            !field(num, colon + 1, (size_t)(p + len - colon - 1)) ||
            !parse_positive(num, &out->shares[out->nshares]))
            return wi_error(err, PP_EINVAL,
                            "--split \"%s\": expected STAGE=DEV:SHARE,DEV:SHARE (at most %d "
                            "devices, shares > 0, any scale)",
                            text, PP_WHATIF_MAX_PARTS);
        out->nshares++;
        p += len + (comma != NULL);
    }
    if (out->nshares < 2)
        return wi_error(err, PP_EINVAL, "--split \"%s\": a split names two devices or more", text);
    return PP_OK;
}

/* The normal quantile at p in (0, 1) (Acklam's rational approximation,
 * relative error below 1.2e-9: far finer than a sweep's spread). */
static double normal_quantile(double p) {
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    double q, r;
    if (p < 0.02425) {
        q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425)
        return -normal_quantile(1 - p);
    q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

int pp_whatif_change_move_samples(pp_whatif_change *c, double mean_ns, double sd_ns,
                                  double min_ns) {
    enum { N = 64 };
    free(c->samples);
    c->samples = malloc(N * sizeof *c->samples);
    if (!c->samples) {
        c->nsamples = 0;
        return PP_ENOMEM;
    }
    for (int i = 0; i < N; i++) {
        double v = mean_ns + (sd_ns > 0 ? sd_ns : 0) * normal_quantile((i + 0.5) / N);
        v = v < min_ns ? min_ns : v;
        c->samples[i] = (int64_t)llround(v > 0 ? v : 0);
    }
    c->nsamples = N;
    return PP_OK;
}

void pp_whatif_change_clear(pp_whatif_change *c) {
    if (!c)
        return;
    free(c->samples);
    c->samples = NULL;
    c->nsamples = 0;
}

void pp_whatif_change_describe(const pp_whatif_change *c, char *buf, size_t len) {
    switch (c->kind) {
    case PP_WHATIF_SPEEDUP:
        snprintf(buf, len, "%s%s%s %gx faster", c->stage, c->device[0] ? "@" : "", c->device,
                 c->factor);
        break;
    case PP_WHATIF_SPLIT: {
        int n = snprintf(buf, len, "%s split", c->stage);
        for (size_t i = 0; i < c->nshares && n >= 0 && (size_t)n < len; i++)
            n += snprintf(buf + n, len - (size_t)n, "%s%s:%g", i ? "," : " ",
                          c->share_devices[i], c->shares[i]);
        break;
    }
    case PP_WHATIF_REQUESTS:
        snprintf(buf, len, "%u request%s on %s", c->count, c->count == 1 ? "" : "s", c->device);
        break;
    case PP_WHATIF_QUEUE_DEPTH:
        snprintf(buf, len, "queue depth %u", c->count);
        break;
    case PP_WHATIF_MOVE:
        snprintf(buf, len, "%s moved to %s", c->stage, c->device);
        break;
    }
}

/* "a, b, c" of the model's stage or device names, into buf. */
static const char *names_list(const pp_whatif_costs *c, int devices, char *buf, size_t len) {
    size_t n = devices ? c->ndevices : c->nstages, at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++) {
        int k = snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
                         devices ? c->devices[i] : c->stages[i].name);
        at += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

static int unknown(const pp_whatif_costs *c, pp_error *err, const char *what, const char *name,
                   int devices) {
    char list[400];
    return wi_error(err, PP_EINVAL, "whatif: %s \"%s\" is not in the model (have: %s)", what, name,
                    names_list(c, devices, list, sizeof list));
}

/* The part of stage s on device `name` (as wi_device_index finds it), or -1. */
static int part_on(const pp_whatif_costs *c, const pp_whatif_stage *st, const char *name) {
    int d = wi_device_index(c, name);
    for (size_t p = 0; d >= 0 && p < st->nparts; p++)
        if (strcmp(st->parts[p].device, c->devices[d]) == 0)
            return (int)p;
    return -1;
}

static int apply_speedup(const pp_whatif_costs *c, const pp_whatif_change *ch, wi_plan *pl,
                         pp_error *err) {
    int s = ch->stage[0] ? wi_stage_index(c, ch->stage) : -1;
    if (ch->stage[0] && s < 0)
        return unknown(c, err, "stage", ch->stage, 0);
    if (ch->device[0] && wi_device_index(c, ch->device) < 0)
        return unknown(c, err, "device", ch->device, 1);
    int hit = 0;
    for (size_t k = 0; k < c->nstages; k++) {
        if (s >= 0 && (size_t)s != k)
            continue;
        const pp_whatif_stage *st = &c->stages[k];
        wi_stage_plan *sp = &pl->stages[k];
        if (!ch->device[0]) { /* the whole stage: its parts, partition and merge */
            for (size_t p = 0; p < st->nparts; p++)
                sp->fixed_scale[p] /= ch->factor, sp->work_scale[p] /= ch->factor;
            sp->stage_scale /= ch->factor;
            hit = 1;
            continue;
        }
        int p = part_on(c, st, ch->device);
        if (p >= 0)
            sp->fixed_scale[p] /= ch->factor, sp->work_scale[p] /= ch->factor, hit = 1;
    }
    if (!hit)
        return wi_error(err, PP_EINVAL, "whatif: stage \"%s\" does not run on \"%s\"", ch->stage,
                        ch->device);
    return PP_OK;
}

static int apply_split(const pp_whatif_costs *c, const pp_whatif_change *ch, wi_plan *pl,
                       pp_error *err) {
    int s = wi_stage_index(c, ch->stage);
    if (s < 0)
        return unknown(c, err, "stage", ch->stage, 0);
    const pp_whatif_stage *st = &c->stages[s];
    double total = 0, old_total = 0;
    for (size_t i = 0; i < ch->nshares; i++)
        total += ch->shares[i];
    for (size_t p = 0; p < st->nparts; p++)
        old_total += st->parts[p].share;
    double scale[PP_WHATIF_MAX_PARTS];
    for (size_t p = 0; p < st->nparts; p++)
        scale[p] = 0; /* a part the split leaves out gets no work */
    for (size_t i = 0; i < ch->nshares; i++) {
        int p = part_on(c, st, ch->share_devices[i]);
        if (p < 0)
            return wi_error(err, PP_EINVAL,
                            "whatif: --split %s: the trace has no time of \"%s\" in this stage to "
                            "scale (it may only re-split the devices it ran on)",
                            ch->stage, ch->share_devices[i]);
        /* a part's wall in proportion to its share of the work */
        scale[p] = (ch->shares[i] / total) / (st->parts[p].share / old_total);
    }
    for (size_t p = 0; p < st->nparts; p++) {
        pl->stages[s].work_scale[p] *= scale[p];
        if (scale[p] == 0) /* no work: no exec, no fixed time either */
            pl->stages[s].fixed_scale[p] = 0, pl->stages[s].wait_scale[p] = 0;
    }
    return PP_OK;
}

/* n requests share a part's work; they compute u at a time: the part takes
 * ceil(n / u) rounds of 1/n of the work. */
static double rounds(uint32_t n, uint32_t u) {
    u = u ? u : 1;
    return (double)((n + u - 1) / u) / (double)n;
}

static int apply_requests(const pp_whatif_costs *c, const pp_whatif_change *ch, wi_plan *pl,
                          pp_error *err) {
    int d = wi_device_index(c, ch->device);
    if (d < 0)
        return unknown(c, err, "device", ch->device, 1);
    uint32_t u = c->units[d];
    for (size_t k = 0; k < c->nstages; k++) {
        const pp_whatif_stage *st = &c->stages[k];
        int p = part_on(c, st, ch->device);
        if (p >= 0) {
            uint32_t old = st->parts[p].requests ? st->parts[p].requests : 1;
            pl->stages[k].work_scale[p] *= rounds(ch->count, u) / rounds(old, u);
        }
    }
    return PP_OK;
}

static int apply_move(const pp_whatif_costs *c, const pp_whatif_change *ch, wi_plan *pl,
                      pp_error *err) {
    int s = wi_stage_index(c, ch->stage);
    if (s < 0)
        return unknown(c, err, "stage", ch->stage, 0);
    if (ch->nsamples == 0)
        return wi_error(err, PP_EINVAL, "whatif: --move %s=%s needs the stage's times there "
                                        "(--lookup TABLE)", ch->stage, ch->device);
    pl->stages[s].move_samples = ch->samples;
    pl->stages[s].nmove = ch->nsamples;
    pl->stages[s].move_device = wi_device_index(c, ch->device);
    return PP_OK;
}

static double mean_work(const pp_whatif_stage *st, size_t p) {
    double sum = 0;
    size_t n = 0;
    for (size_t j = 0; j < st->nrows; j++)
        if (st->parts[p].wall_ns[j] >= 0)
            sum += (double)st->parts[p].work_ns[j], n++;
    return n ? sum / (double)n : 0;
}

/* The work other stages put on device d per batch, as measured (new = 0)
 * or as planned (new = 1), leaving out stage `self`. */
static double others_work(const pp_whatif_costs *c, const wi_plan *pl, int d, size_t self,
                          int planned) {
    double sum = 0;
    for (size_t s = 0; s < c->nstages; s++) {
        const wi_stage_plan *sp = &pl->stages[s];
        if (s == self)
            continue;
        if (planned && sp->move_samples) { /* moved: its work is where it went */
            double m = 0;
            for (size_t i = 0; i < sp->nmove; i++)
                m += (double)sp->move_samples[i] / (double)sp->nmove;
            sum += sp->move_device == d ? m : 0;
            continue;
        }
        for (size_t p = 0; p < c->stages[s].nparts; p++)
            if (wi_device_index(c, c->stages[s].parts[p].device) == d)
                sum += mean_work(&c->stages[s], p) * (planned ? sp->work_scale[p] : 1);
    }
    return sum;
}

/* On a device several stages share, a part's wait for the hardware grows
 * and shrinks with the work the others put on it per batch (to first
 * order: the share of time it finds the device taken). */
static void contention(const pp_whatif_costs *c, wi_plan *pl) {
    for (size_t g = 0; g < c->ngroups; g++) {
        int d = wi_device_index(c, c->groups[g].device);
        for (size_t s = 0; d >= 0 && s < c->nstages; s++) {
            int p = part_on(c, &c->stages[s], c->devices[d]);
            double before = p >= 0 ? others_work(c, pl, d, s, 0) : 0;
            if (before > 0)
                pl->stages[s].wait_scale[p] *= others_work(c, pl, d, s, 1) / before;
        }
    }
}

int wi_plan_make(const pp_whatif_costs *c, const pp_whatif_change *changes, size_t n,
                 wi_plan *out, pp_error *err) {
    memset(out, 0, sizeof *out);
    for (size_t s = 0; s < c->nstages; s++) {
        wi_stage_plan *sp = &out->stages[s];
        for (size_t p = 0; p < PP_WHATIF_MAX_PARTS; p++)
            sp->fixed_scale[p] = sp->work_scale[p] = sp->wait_scale[p] = 1;
        sp->stage_scale = 1;
        sp->move_device = -1;
        sp->servers = c->stages[s].servers ? c->stages[s].servers : 1;
    }
    out->queue_depth = c->queue_depth ? c->queue_depth : 1;
    for (size_t i = 0; i < n; i++) {
        const pp_whatif_change *ch = &changes[i];
        int rc = PP_OK;
        switch (ch->kind) {
        case PP_WHATIF_SPEEDUP:
            rc = apply_speedup(c, ch, out, err);
            break;
        case PP_WHATIF_SPLIT:
            rc = apply_split(c, ch, out, err);
            break;
        case PP_WHATIF_REQUESTS:
            rc = apply_requests(c, ch, out, err);
            break;
        case PP_WHATIF_QUEUE_DEPTH:
            out->queue_depth = ch->count;
            break;
        case PP_WHATIF_MOVE:
            rc = apply_move(c, ch, out, err);
            break;
        default:
            rc = wi_error(err, PP_EINVAL, "whatif: unknown change kind %d", (int)ch->kind);
        }
        if (rc != PP_OK)
            return rc;
    }
    contention(c, out);
    return PP_OK;
}
