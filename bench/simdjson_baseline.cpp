/* simdjson as bench_json's baseline (see simdjson_baseline.h). */
#include "simdjson_baseline.h"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <simdjson.h>
#include <string>
#include <unordered_map>

#include "pipeprof/model.h"

namespace od = simdjson::ondemand;

namespace {

/* Kept across calls, as a program reading many files keeps its parser:
 * the baseline at its best, its buffers already allocated from the second
 * call on (bench_json keeps the best of several rounds). */
od::parser ondemand_parser;
simdjson::dom::parser dom_parser;

/* The file as simdjson is given it at its fastest: mapped, with no copy,
 * when the rest of its last page holds the SIMDJSON_PADDING bytes simdjson
 * may read past the end (they read as zeros); else loaded into a padded
 * copy (padded_string::load, which reads it into fresh memory). */
class json_file {
public:
    explicit json_file(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        long page = sysconf(_SC_PAGESIZE);
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
            size_t size = (size_t)st.st_size, mapped = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
            if (mapped - size >= simdjson::SIMDJSON_PADDING) {
                void *p = mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE, fd, 0);
                if (p != MAP_FAILED) {
                    map_ = p;
                    mapped_ = mapped;
                    view_ = simdjson::padded_string_view((const char *)p, size, mapped);
                }
            }
        }
        if (fd >= 0)
            close(fd);
        if (!map_) {
            copy_ = simdjson::padded_string::load(path);
            view_ = simdjson::padded_string_view(copy_);
        }
    }
    ~json_file() {
        if (map_)
            munmap(map_, mapped_);
    }
    json_file(const json_file &) = delete;
    json_file &operator=(const json_file &) = delete;
    simdjson::padded_string_view view() const { return view_; }

private:
    void *map_ = nullptr;
    size_t mapped_ = 0;
    simdjson::padded_string copy_;
    simdjson::padded_string_view view_;
};

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
        json_file json(path);
        od::document doc = ondemand_parser.iterate(json.view());
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

namespace {

/* What a simdjson-based reader would keep while it builds the model: the
 * same name cache as the reader under test (first bytes and length ->
 * string id, checked in full on a hit) and its (pid, tid) -> track map. */
struct model_builder {
    pp_model *m = nullptr;
    struct cached {
        std::string text;
        uint32_t id = 0;
    };
    cached names[256];
    std::unordered_map<uint64_t, uint32_t> tracks;

    uint32_t intern(std::string_view s) {
        uint64_t head = 0;
        std::memcpy(&head, s.data(), s.size() < 8 ? s.size() : 8);
        cached &c = names[((head ^ s.size()) * 0x9E3779B97F4A7C15ull) >> 56];
        if (c.id && c.text == s)
            return c.id;
        uint32_t id = 0;
        if (pp_model_intern(m, s.data(), s.size(), &id) != PP_OK)
            throw simdjson::simdjson_error(simdjson::MEMALLOC);
        c.text.assign(s);
        c.id = id;
        return id;
    }

    uint32_t track(int64_t pid, int64_t tid) {
        uint64_t key = (uint64_t)pid << 32 ^ (uint64_t)tid;
        auto it = tracks.find(key);
        if (it != tracks.end())
            return it->second;
        pp_track_info t;
        pp_track_info_init(&t);
        t.pid = pid;
        t.tid = tid;
        uint32_t index = 0;
        if (pp_model_add_track(m, &t, &index) != PP_OK)
            throw simdjson::simdjson_error(simdjson::MEMALLOC);
        tracks.emplace(key, index);
        return index;
    }
};

/* Microseconds as written ("1700000000000263.123", at most 3 decimals) to
 * exact nanoseconds, as the reader under test converts them; simdjson's own
 * conversion is to double, which cannot hold them. */
int64_t us_to_ns(std::string_view t) {
    int64_t v = 0;
    size_t i = 0;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; i++)
        v = v * 10 + (t[i] - '0');
    int frac = 0;
    if (i < t.size() && t[i] == '.')
        for (i++; i < t.size() && frac < 3 && t[i] >= '0' && t[i] <= '9'; i++, frac++)
            v = v * 10 + (t[i] - '0');
    if (i != t.size() || t.empty())
        throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);
    for (; frac < 3; frac++)
        v *= 10;
    return v;
}

const char *const role_names[] = {"none", "exec", "partition", "merge", "stage", "op", "user"};

/* A span's args: its pipeline fields, every other scalar as an annotation. */
void span_args(model_builder &b, od::object args, pp_event &ev, std::vector<pp_annotation> &anns) {
    for (auto field : args) {
        std::string_view key = field.unescaped_key();
        od::value v = field.value();
        if (key == "stage") {
            ev.stage = b.intern(v.get_string());
        } else if (key == "batch_id") {
            ev.batch = v.get_int64();
        } else if (key == "hw_ns") {
            ev.hw_ns = v.get_uint64();
        } else if (key == "transfer_ns") {
            ev.xfer_ns = v.get_uint64();
        } else if (key == "role") {
            std::string_view r = v.get_string();
            for (uint8_t i = 0; i < sizeof role_names / sizeof role_names[0]; i++)
                if (r == role_names[i])
                    ev.role = i;
        } else if (v.type() == od::json_type::number) {
            pp_annotation a = {};
            a.key = b.intern(key);
            a.type = PP_VALUE_INT;
            a.v.i = v.get_int64();
            anns.push_back(a);
        }
    }
}

/* One event of the kinds the bench file holds (X, i, C, s/t/f; M skipped). */
void build_event(model_builder &b, od::object event, std::vector<pp_annotation> &anns) {
    pp_event ev;
    pp_event_init(&ev);
    char ph = 0;
    int64_t pid = 0, tid = 0;
    anns.clear();
    for (auto field : event) {
        std::string_view key = field.unescaped_key();
        od::value v = field.value();
        if (key == "ph") {
            std::string_view s = v.get_string();
            ph = s.size() == 1 ? s[0] : 0;
        } else if (key == "name") {
            ev.name = b.intern(v.get_string());
        } else if (key == "pid") {
            pid = v.get_int64();
        } else if (key == "tid") {
            tid = v.get_int64();
        } else if (key == "ts") {
            ev.ts_ns = us_to_ns(v.raw_json_token());
        } else if (key == "dur") {
            ev.dur_ns = us_to_ns(v.raw_json_token());
        } else if (key == "id") {
            ev.id = v.get_uint64();
        } else if (key == "args" && (ph == 'X' || ph == 'i')) {
            span_args(b, v.get_object(), ev, anns);
        } else if (key == "args" && ph == 'C') {
            for (auto arg : v.get_object())
                ev.value = arg.value().get_double();
        }
    }
    if (ph == 'M')
        return;
    ev.track = b.track(pid, tid);
    ev.kind = ph == 'X' ? PP_EV_SPAN : ph == 'i' ? PP_EV_INSTANT : ph == 'C' ? PP_EV_COUNTER : PP_EV_FLOW;
    ev.phase = ph == 's' ? PP_FLOW_BEGIN : ph == 't' ? PP_FLOW_STEP : PP_FLOW_END;
    if (pp_model_add_event(b.m, &ev) != PP_OK)
        throw simdjson::simdjson_error(simdjson::MEMALLOC);
    for (pp_annotation &a : anns) {
        a.event = pp_model_event_count(b.m) - 1;
        if (pp_model_add_annotation(b.m, &a) != PP_OK)
            throw simdjson::simdjson_error(simdjson::MEMALLOC);
    }
}

} // namespace

extern "C" int simdjson_model_file(const char *path, pp_model **out) {
    model_builder b;
    if (pp_model_create(&b.m) != PP_OK)
        return -1;
    try {
        json_file json(path);
        od::document doc = ondemand_parser.iterate(json.view());
        std::vector<pp_annotation> anns;
        for (auto field : doc.get_object()) {
            std::string_view key = field.unescaped_key();
            if (key != "traceEvents")
                continue;
            for (od::value event : field.value().get_array())
                build_event(b, event.get_object(), anns);
        }
        *out = b.m;
        return 0;
    } catch (const simdjson::simdjson_error &) {
        pp_model_free(b.m);
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
