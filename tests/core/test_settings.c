/* Collection settings: the levels are presets of the collect bits, collect
 * lists parse by name, and pp_session_set_config changes each setting by
 * name before start, refusing bad keys, bad values and late changes with a
 * message that names them. */
#include "pipeprof/trace.h"
#include "testutil.h"

static void test_levels_are_presets_of_the_collect_bits(void) {
    EXPECT_EQ_U64(pp_collect_preset(0), PP_COLLECT_SPANS);
    EXPECT_EQ_U64(pp_collect_preset(1),
                  PP_COLLECT_SPANS | PP_COLLECT_HW | PP_COLLECT_TRANSFERS | PP_COLLECT_SCHED);
    EXPECT_EQ_U64(pp_collect_preset(2), PP_COLLECT_SPANS | PP_COLLECT_HW | PP_COLLECT_TRANSFERS |
                                            PP_COLLECT_SCHED | PP_COLLECT_OPS);
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_U64(pp_session_collect(s), pp_collect_preset(1)); /* the default level */
    EXPECT_EQ_I64(pp_session_level(s), 1);
    pp_session_close(s);

    cfg.collect = PP_COLLECT_SPANS | PP_COLLECT_OPS; /* given bits win over the level */
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_U64(pp_session_collect(s), PP_COLLECT_SPANS | PP_COLLECT_OPS);
    EXPECT_EQ_I64(pp_session_level(s), 2); /* ops need the devices' per-op profile */
    pp_session_close(s);

    cfg.collect = 1u << 9;
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_EINVAL);
}

static void test_collect_lists_parse_by_name(void) {
    unsigned bits = 0;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_collect_parse("spans,hw+api", &bits, &err), PP_OK);
    EXPECT_EQ_U64(bits, PP_COLLECT_SPANS | PP_COLLECT_HW | PP_COLLECT_API);
    EXPECT_EQ_I64(pp_collect_parse("spans,sched", &bits, &err), PP_OK);
    EXPECT_EQ_U64(bits, PP_COLLECT_SPANS | PP_COLLECT_SCHED);
    EXPECT_EQ_I64(pp_collect_parse("ops", &bits, &err), PP_OK);
    EXPECT_EQ_U64(bits, PP_COLLECT_OPS);
    EXPECT_EQ_I64(pp_collect_parse("all", &bits, &err), PP_OK);
    EXPECT_EQ_U64(bits, PP_COLLECT_ALL);
    EXPECT_EQ_I64(pp_collect_parse("spans,kernels", &bits, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "collect \"spans,kernels\": unknown item \"kernels\"");
    EXPECT_EQ_I64(pp_collect_parse("spans,", &bits, &err), PP_EINVAL);
    EXPECT_CONTAINS(err.msg, "unknown item \"\"");
}

static void test_set_config_changes_each_setting_before_start(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    EXPECT_EQ_I64(pp_session_set_config(s, "level", "2", &err), PP_OK);
    EXPECT_EQ_U64(pp_session_collect(s), pp_collect_preset(2));
    EXPECT_EQ_I64(pp_session_set_config(s, "collect", "spans,api", &err), PP_OK);
    EXPECT_EQ_U64(pp_session_collect(s), PP_COLLECT_SPANS | PP_COLLECT_API);
    EXPECT_EQ_I64(pp_session_level(s), 0);
    EXPECT_EQ_I64(pp_session_set_config(s, "devices", "NPU,GPU.0", &err), PP_OK);
    EXPECT(pp_session_records_device(s, "NPU"));
    EXPECT(pp_session_records_device(s, "GPU.0"));
    EXPECT(!pp_session_records_device(s, "CPU"));
    EXPECT_EQ_I64(pp_session_set_config(s, "devices", "all", &err), PP_OK);
    EXPECT(pp_session_records_device(s, "CPU"));
    EXPECT_EQ_I64(pp_session_set_config(s, "max_records", "100", &err), PP_OK);
    EXPECT_EQ_I64(pp_session_set_config(s, "overflow", "drop", &err), PP_OK);
    EXPECT_EQ_I64(pp_session_set_config(s, "process_name", "server", &err), PP_OK);
    EXPECT_EQ_I64(pp_session_set_config(s, "output", "", &err), PP_OK);

    /* the budget took effect: 100 records kept, the rest dropped */
    EXPECT_EQ_I64(pp_session_start(s), PP_OK);
    pp_track t;
    pp_track_thread(s, "main", &t);
    for (int i = 0; i < 150; i++)
        pp_mark(s, t, pp_intern("tick"), i);
    pp_session_stats st;
    pp_session_stats_get(s, &st);
    EXPECT_EQ_U64(st.recorded, 100);
    EXPECT_EQ_U64(st.dropped, 50);

    EXPECT_EQ_I64(pp_session_set_config(s, "level", "1", &err), PP_ESTATE);
    EXPECT_CONTAINS(err.msg, "set_config level: settings are fixed once the session has started");
    pp_session_close(s);
}

static void test_set_config_refuses_bad_keys_and_values(void) {
    pp_session_config cfg;
    pp_session_config_init(&cfg);
    pp_session *s = NULL;
    pp_error err = {{0}};
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_OK);
    static const struct {
        const char *key, *value, *message;
    } bad[] = {
        {"colour", "red", "set_config: unknown key \"colour\" (have: level, collect"},
        {"level", "3", "level \"3\": must be 0, 1 or 2"},
        {"collect", "hw,gpu", "unknown item \"gpu\""},
        {"devices", "NPU,,GPU", "devices \"NPU,,GPU\": an empty device name"},
        {"max_records", "-5", "max_records \"-5\": must be a positive integer"},
        {"max_records", "0", "max_records \"0\": must be a positive integer"},
        {"overflow", "wrap", "overflow \"wrap\": must be drop or ring"},
        {"process_name", "", "process_name: must not be empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = 0;
        EXPECT_EQ_I64(pp_session_set_config(s, bad[i].key, bad[i].value, &err), PP_EINVAL);
        EXPECT_CONTAINS(err.msg, bad[i].message);
    }
    EXPECT_EQ_U64(pp_session_collect(s), pp_collect_preset(1)); /* nothing changed */
    pp_session_close(s);

    cfg.devices = "NPU,";
    EXPECT_EQ_I64(pp_session_open(&cfg, &s), PP_EINVAL);
}

int main(void) {
    RUN(test_levels_are_presets_of_the_collect_bits);
    RUN(test_collect_lists_parse_by_name);
    RUN(test_set_config_changes_each_setting_before_start);
    RUN(test_set_config_refuses_bad_keys_and_values);
    return pp_test_finish();
}
