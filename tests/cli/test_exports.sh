#!/usr/bin/env bash
# libpipeprof.so exports its public API and nothing else: every function it
# exports is declared in include/pipeprof/*.h, and every function declared
# there is exported (a user's program and the Python package can call all of
# them). It once exported 89 internal functions (an_*, chrome_*, jreader_*)
# that any program could bind to, and clash with, by accident.
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
lib=$PP_BINARY_DIR/libpipeprof.so
if ! command -v nm >/dev/null || [[ ! -f $lib ]]; then
    echo "SKIP: needs nm and $lib"
    exit 77
fi
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u >"$tmp/exported"
# a declaration starts its line: a return type, then pp_NAME(
grep -hE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]pp_[a-z0-9_]+\(' "$PP_SOURCE_DIR"/include/pipeprof/*.h |
    grep -v '^static ' | grep -oE 'pp_[a-z0-9_]+\(' | tr -d '(' | sort -u >"$tmp/declared"

extra=$(comm -23 "$tmp/exported" "$tmp/declared" | head -n 20 | tr '\n' ' ')
check "nothing but the public API is exported${extra:+ (also: $extra...)}" test -z "$extra"
missing=$(comm -13 "$tmp/exported" "$tmp/declared" | tr '\n' ' ')
check "every public function is exported${missing:+ (missing: $missing)}" test -z "$missing"
check "the public API is there (pp_session_open, pp_report_build, pp_struct_size)" \
    grep -qx -e pp_session_open "$tmp/exported"
check "pp_report_build is exported" grep -qx pp_report_build "$tmp/exported"
check "pp_struct_size is exported" grep -qx pp_struct_size "$tmp/exported"
finish
