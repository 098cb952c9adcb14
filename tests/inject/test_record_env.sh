#!/usr/bin/env bash
# pipeprof record points NVTX_INJECTION64_PATH and INTEL_LIBITTNOTIFY64 at
# its own libraries: next to the binary in the build tree, in the library
# folder of an installed copy (where they must then work, by RPATH alone);
# --no-nvtx / --no-itt leave the user's values as they are. `env` shows the
# child's environment (it writes no trace, so record exits 1).
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

# child_var CLI VAR [RECORD ARGS...]: the value of VAR in the child's environment.
child_var() {
    local cli=$1 var=$2
    shift 2
    "$cli" record -o "$tmp/none.json" "$@" -- env 2>/dev/null | sed -n "s/^$var=//p"
}

check "build tree: INTEL_LIBITTNOTIFY64 is the built collector" test \
    "$(child_var "$PP_CLI" INTEL_LIBITTNOTIFY64)" = "$(realpath "$PP_BINARY_DIR/libpipeprof_itt.so")"
check "--no-itt leaves the user's INTEL_LIBITTNOTIFY64" test \
    "$(INTEL_LIBITTNOTIFY64=/opt/other.so child_var "$PP_CLI" INTEL_LIBITTNOTIFY64 --no-itt)" = /opt/other.so
if [[ -n ${PP_NVTX_PROGRAM:-} ]]; then
    check "build tree: NVTX_INJECTION64_PATH is the built injection" test \
        "$(child_var "$PP_CLI" NVTX_INJECTION64_PATH)" = "$(realpath "$PP_BINARY_DIR/libpipeprof_nvtx.so")"
    check "--no-nvtx leaves the user's NVTX_INJECTION64_PATH unset" test \
        -z "$(env -u NVTX_INJECTION64_PATH "$PP_CLI" record -o "$tmp/none.json" --no-nvtx -- env 2>/dev/null |
              grep '^NVTX_INJECTION64_PATH=')"
fi
run "$PP_CLI" record --help
expect "record --help names both options" 0 "--no-nvtx" "--no-itt" "NVTX_INJECTION64_PATH"

# ---- an installed copy ----
prefix=$tmp/prefix
run cmake --install "$PP_BINARY_DIR" --prefix "$prefix"
expect "cmake --install into a fresh prefix" 0 || finish
itt=$(find "$prefix" -name libpipeprof_itt.so | head -n 1)
check "installed: libpipeprof_itt.so" test -n "$itt"
check "installed record points ITT at the installed collector" test \
    "$(child_var "$prefix/bin/pipeprof" INTEL_LIBITTNOTIFY64)" = "$(realpath "$itt")"
run "$prefix/bin/pipeprof" record -o "$tmp/installed.json" -- "$PP_ITT_STATIC_PART"
expect "the installed collector records an ITT program" 0 "wrote $tmp/installed.json"
if [[ -n ${PP_NVTX_PROGRAM:-} ]]; then
    run "$prefix/bin/pipeprof" record -o "$tmp/installed_nvtx.json" -- "$PP_NVTX_PROGRAM"
    expect "the installed NVTX injection records an NVTX program" 0 "wrote $tmp/installed_nvtx.json"
fi

finish
