/* consumer — the first user of an installed pipeprof, built against the
 * installed headers and library only (tests/cli/test_install.sh builds it
 * with pkg-config and with find_package). It checks that the library it
 * loaded is the version the package files announced, records one span and
 * writes it to the .json named on its command line. */
#include <stdio.h>
#include <string.h>

#include <pipeprof/trace.h>

#ifndef EXPECTED_VERSION
#error "build with -DEXPECTED_VERSION=\"x.y.z\": the version pkg-config or find_package reported"
#endif

int main(int argc, char **argv) {
    pp_session_config cfg;
    pp_session *s = NULL;
    pp_error err = {{0}};
    pp_track main_row;
    pp_span_rec rec;

    if (argc != 2) {
        fprintf(stderr, "usage: consumer OUTPUT.json\n");
        return 2;
    }
    if (strcmp(pp_version(), EXPECTED_VERSION) != 0) {
        fprintf(stderr, "consumer: loaded libpipeprof %s, the package announced %s\n", pp_version(),
                EXPECTED_VERSION);
        return 1;
    }
    pp_session_config_init(&cfg);
    cfg.output = argv[1];
    if (pp_session_open(&cfg, &s) != PP_OK || pp_session_start(s) != PP_OK ||
        pp_track_thread(s, "main", &main_row) != PP_OK) {
        fprintf(stderr, "consumer: cannot start a session\n");
        pp_session_close(s);
        return 1;
    }
    pp_span_rec_init(&rec);
    rec.track = main_row;
    rec.name = pp_intern("installed span");
    rec.ts_ns = pp_now();
    rec.dur_ns = 1000;
    int rc = pp_span(s, &rec);
    if (rc == PP_OK)
        rc = pp_session_stop(s, &err);
    pp_session_close(s);
    if (rc != PP_OK) {
        fprintf(stderr, "consumer: %s\n", err.msg[0] ? err.msg : pp_strerror(rc));
        return 1;
    }
    return 0;
}
