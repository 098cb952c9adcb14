#!/usr/bin/env bash
# An installed pipeprof works for a program outside this tree: `cmake
# --install` into a temporary prefix, then tests/cli/install_consumer is
# built against it both ways a user would (pkg-config, and CMake's
# find_package with the shared target pipeprof::pipeprof), run, and must
# write its trace.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

for tool in cmake pkg-config cc; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIP: $tool is not installed (scripts/setup installs it)"
        exit 77
    fi
done
consumer_src=$PP_SOURCE_DIR/tests/cli/install_consumer
prefix=$tmp/prefix
san=$(sanitizer_flags)

run cmake --install "$PP_BINARY_DIR" --prefix "$prefix"
expect "cmake --install into a fresh prefix" 0 || finish
for f in bin/pipeprof include/pipeprof/trace.h include/pipeprof/io.h; do
    check "installed: $f" test -e "$prefix/$f"
done
run "$prefix/bin/pipeprof" --version
expect "the installed CLI runs" 0 "pipeprof "

# The .pc file must describe where it was installed, not the configured
# prefix: pkg-config is asked, and must answer with paths under $prefix.
pc=$(find "$prefix" -name pipeprof.pc | head -n 1)
check "installed: pipeprof.pc" test -n "$pc"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir pipeprof)
version=$(pkg-config --modversion pipeprof)
# The .pc file lies in LIBDIR/pkgconfig, so that is where libdir must lead.
check "pkg-config's libdir is where the library was installed" test \
    "$(cd "$libdir" 2>/dev/null && pwd -P)" = "$(cd "$(dirname "$pc")/.." && pwd -P)"
libdir=$(cd "$(dirname "$pc")/.." && pwd -P)
for f in libpipeprof.so libpipeprof.a cmake/pipeprof/pipeprofConfig.cmake; do
    check "installed: $f in libdir" test -e "$libdir/$f"
done

# Uses the trace the consumer wrote: valid JSON holding its one span.
check_trace() {
    local what=$1 file=$2
    check "$what: wrote valid JSON" "$PY" -m json.tool "$file" /dev/null &&
        check "$what: the trace holds its span" test \
            "$(json_get "$file" 'sum(e.get("name") == "installed span" for e in d["traceEvents"])')" = 1
}

# ---- pkg-config -----------------------------------------------------------------
# $san and pkg-config's answer are lists of flags: split on purpose.
# shellcheck disable=SC2046,SC2086
run cc $san -DEXPECTED_VERSION="\"$version\"" "$consumer_src/consumer.c" -o "$tmp/consumer_pc" \
    $(pkg-config --cflags --libs pipeprof)
expect "the consumer builds with pkg-config" 0
run env LD_LIBRARY_PATH="$libdir" "$tmp/consumer_pc" "$tmp/pc.json"
expect "the pkg-config consumer runs" 0
check_trace "pkg-config consumer" "$tmp/pc.json"

# ---- CMake find_package -------------------------------------------------------------
run cmake -S "$consumer_src" -B "$tmp/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san"
expect "the consumer configures with find_package(pipeprof)" 0
run cmake --build "$tmp/consumer-build"
expect "the consumer builds with pipeprof::pipeprof" 0
run env LD_LIBRARY_PATH="$libdir" ldd "$tmp/consumer-build/consumer"
soname=libpipeprof.so.${version%%.*}
expect "pipeprof::pipeprof is the installed shared library" 0 "$soname => $libdir/$soname"
run env LD_LIBRARY_PATH="$libdir" "$tmp/consumer-build/consumer" "$tmp/cmake.json"
expect "the find_package consumer runs" 0
check_trace "find_package consumer" "$tmp/cmake.json"

finish
