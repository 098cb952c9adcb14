/* simdjson as bench_json's baseline (see simdjson_baseline.h). */
#include "simdjson_baseline.h"

#include <cstdio>
#include <ctime>
#include <simdjson.h>
#include <string>

namespace od = simdjson::ondemand;

namespace {

/* Kept across calls, as a program reading many files keeps its parser:
 * the baseline at its best, its buffers already allocated from the second
 * call on (bench_json keeps the best of several rounds). */
od::parser ondemand_parser;
simdjson::dom::parser dom_parser;

double cpu_seconds() {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A string decoded, or a number or anything else taken as its text.
 * Numbers are not converted: simdjson's conversion is to double, which
 * loses the nanoseconds of an epoch-scale "ts" and takes its slow path on
 * these 19-digit decimals, so leaving it out keeps the baseline at its
 * fastest (the reader under test converts every number exactly). Errors
 * throw simdjson_error (caught in simdjson_walk_file). */
simdjson_inline size_t take(od::value v) {
    if (v.type() == od::json_type::string)
        return std::string_view(v.get_string()).size();
    return v.raw_json_token().size();
}

/* One event the way a Chrome JSON reader uses On-Demand: fields in file
 * order, dispatched on the key; args' keys and values taken one by one. */
simdjson_inline uint64_t walk_event(od::value event) {
    uint64_t sum = 0;
    for (auto field : event.get_object()) {
        std::string_view key = field.unescaped_key();
        od::value v = field.value();
        sum += key.size();
        if (key != "args") {
            sum += take(v);
            continue;
        }
        for (auto arg : v.get_object()) {
            sum += std::string_view(arg.unescaped_key()).size();
            sum += take(arg.value());
        }
    }
    return sum;
}

} // namespace

extern "C" int simdjson_walk_file(const char *path, size_t *events, uint64_t *checksum) {
    try {
        simdjson::padded_string json = simdjson::padded_string::load(path);
        od::document doc = ondemand_parser.iterate(json);
        uint64_t sum = 0;
        size_t n = 0;
        for (auto field : doc.get_object()) {
            std::string_view key = field.unescaped_key();
            if (key != "traceEvents") {
                sum += take(field.value());
                continue;
            }
            for (od::value event : field.value().get_array()) {
                sum += walk_event(event);
                n++;
            }
        }
        *events = n;
        *checksum = sum;
        return 0;
    } catch (const simdjson::simdjson_error &) {
        return -1;
    }
}

extern "C" int simdjson_write_file(const char *in, const char *out, double *cpu_s, size_t *bytes) {
    simdjson::dom::element doc;
    if (dom_parser.load(in).get(doc))
        return -1;
    double t0 = cpu_seconds();
    std::string text = simdjson::minify(doc);
    FILE *f = std::fopen(out, "wb");
    if (!f)
        return -1;
    size_t put = std::fwrite(text.data(), 1, text.size(), f);
    if (std::fclose(f) != 0 || put != text.size())
        return -1;
    *cpu_s = cpu_seconds() - t0;
    *bytes = text.size();
    return 0;
}

extern "C" const char *simdjson_kernel(void) {
    static std::string name = simdjson::get_active_implementation()->name();
    return name.c_str();
}
