// Saving a model file with static input shapes as OpenVINO IR. OpenVINO's
// C API reads, reshapes and compiles models but cannot save one, so this
// one function is C++ (ov::save_model), called from C (model_export.c).
#include <openvino/openvino.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <string>

// Only the last line of OpenVINO's message: the first ones name its sources.
static void last_line(const char *msg, char *why, size_t why_len) {
    std::string s(msg);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    size_t at = s.rfind('\n');
    std::snprintf(why, why_len, "%s", at == std::string::npos ? s.c_str() : s.c_str() + at + 1);
}

extern "C" int pp_ov_export_static(const char *model_path, size_t n, const char *const *names,
                                   const int *ranks, const int64_t *const *dims,
                                   const char *xml_path, char *why, size_t why_len) {
    try {
        ov::Core core;
        std::shared_ptr<ov::Model> model = core.read_model(model_path);
        std::map<std::string, ov::PartialShape> shapes;
        for (size_t i = 0; i < n; i++)
            shapes[names[i]] = ov::PartialShape(std::vector<ov::Dimension>(dims[i], dims[i] + ranks[i]));
        model->reshape(shapes);
        ov::save_model(model, xml_path, false);
        return 0;
    } catch (const std::exception &e) {
        last_line(e.what(), why, why_len);
        return -1;
    }
}
