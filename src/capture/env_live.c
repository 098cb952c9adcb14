/* Collection settings and the live stream of the env-activated session
 * (env_live.h). Like env.c, this prints its complaints: there is no caller
 * to hand a status to. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/env_live.h"
#include "pipeprof/subscribe.h"

static pp_subscription *live;

int pp_env_live_requested(void) {
    const char *v = getenv("PIPEPROF_LIVE_FD");
    return v && *v;
}

int pp_env_apply_settings(pp_session *s) {
    static const struct {
        const char *var, *key;
    } settings[] = {{"PIPEPROF_COLLECT", "collect"}, {"PIPEPROF_DEVICES", "devices"}};
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const char *v = getenv(settings[i].var);
        pp_error err = {{0}};
        if (v && *v && pp_session_set_config(s, settings[i].key, v, &err) != PP_OK) {
            fprintf(stderr, "pipeprof: %s: %s; not recording\n", settings[i].var, err.msg);
            return -1;
        }
    }
    return 0;
}

int pp_env_live_open(pp_session *s) {
    const char *v = getenv("PIPEPROF_LIVE_FD");
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long fd = strtol(v, &end, 10);
    if (errno || *end || fd < 0 || fd > 1 << 20) {
        fprintf(stderr, "pipeprof: PIPEPROF_LIVE_FD=%s: must be a file descriptor number; "
                        "no live stream\n", v);
        return -1;
    }
    pp_subscription_config cfg;
    pp_subscription_config_init(&cfg);
    cfg.fd = (int)fd;
    cfg.roles = PP_SUB_ALL_SPANS;
    pp_error err = {{0}};
    if (pp_subscription_open(s, &cfg, &live, &err) != PP_OK) {
        fprintf(stderr, "pipeprof: PIPEPROF_LIVE_FD=%s: %s; no live stream\n", v, err.msg);
        return -1;
    }
    unsetenv("PIPEPROF_LIVE_FD");
    return 0;
}

void pp_env_live_close(void) {
    pp_subscription_close(live, NULL);
    live = NULL;
}
