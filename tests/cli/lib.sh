# shellcheck shell=bash
# tests/cli/lib.sh — what the CLI's shell tests share (sourced, not run).
#
# A test runs commands with `run`, states what it expects with `expect` or
# `check`, and ends with `finish`, which prints "N passed, N failed" and
# exits 1 on any failure, 77 (skipped) when a part could not run here, else 0.
# CTest gives these variables (tests/CMakeLists.txt):
: "${PP_CLI:?}" "${PP_SOURCE_DIR:?}" "${PP_BINARY_DIR:?}" "${PP_TEST_TMP:?}"

PY=${PP_PYTHON:-}
[[ -n $PY && -x $PY ]] || PY=python3
checks=0
failures=0
skipped=()

# A fresh folder for this test, removed at exit.
tmp=$(mktemp -d "$PP_TEST_TMP/$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run CMD [ARGS...]: runs it; its stdout+stderr go to $out, its status to $rc.
run() {
    out=$("$@" 2>&1)
    rc=$?
}

# expect WHAT CODE [TEXT...]: the last `run` exited CODE and printed every TEXT.
expect() {
    local what=$1 code=$2 text
    shift 2
    checks=$((checks + 1))
    if [[ $rc != "$code" ]]; then
        failures=$((failures + 1))
        printf 'FAIL: %s: exit status %s, expected %s; output:\n%s\n' "$what" "$rc" "$code" "$out"
        return 1
    fi
    for text in "$@"; do
        if [[ $out != *"$text"* ]]; then
            failures=$((failures + 1))
            printf 'FAIL: %s: expected "%s" in the output:\n%s\n' "$what" "$text" "$out"
            return 1
        fi
    done
    echo "ok   $what"
}

# check WHAT CMD [ARGS...]: CMD succeeds.
check() {
    local what=$1
    shift
    checks=$((checks + 1))
    if "$@"; then
        echo "ok   $what"
    else
        failures=$((failures + 1))
        echo "FAIL: $what"
        return 1
    fi
}

# wait_run PID OUTFILE: waits for a `CMD >OUTFILE 2>&1 &` started by the
# test and takes its status and output as `run` would.
wait_run() {
    wait "$1"
    rc=$?
    out=$(cat "$2")
}

# kill_mid_way FILE N TOTAL CMD [ARGS...]: runs CMD in the background and
# SIGKILLs it once FILE (a line per finished unit of work) has N lines, to
# test that its work resumes. A loaded machine can see the N-th line late:
# a run that finished all TOTAL lines before the kill is run again, up to
# three times, with FILE's folder cleared. Sets killed_lines.
kill_mid_way() {
    local file=$1 n=$2 total=$3 attempt _ pid
    shift 3
    for attempt in 1 2 3; do
        rm -rf "$(dirname "$file")"
        "$@" >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 1 3000); do
            [[ -f $file ]] && (($(wc -l <"$file") >= n)) && break
            sleep 0.01
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        killed_lines=$(wc -l <"$file" 2>/dev/null || echo 0)
        ((killed_lines < total)) && return 0
        echo "note: attempt $attempt finished before its kill; again"
    done
}

# skip_part WHY: a part of the test that cannot run here; said, and counted.
skip_part() {
    skipped+=("$1")
    echo "SKIP: $1"
}

finish() {
    echo "$((checks - failures)) passed, $failures failed"
    ((failures == 0)) || exit 1
    if ((${#skipped[@]})); then
        printf 'SKIP (part of this test did not run): %s\n' "${skipped[@]}"
        exit 77
    fi
    exit 0
}

# Compiler flags for a program a test builds against this build's
# libpipeprof: a sanitized library needs a sanitized program to load it.
sanitizer_flags() {
    case ${PP_SANITIZE:-} in
    address) echo "-fsanitize=address,undefined" ;;
    thread) echo "-fsanitize=thread" ;;
    *) echo "" ;;
    esac
}

# json_get FILE EXPR: prints the Python expression EXPR evaluated with `d`
# bound to the parsed JSON file (fails if the file is not valid JSON).
json_get() {
    "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# pftrace_check WHAT FILE.pftrace [FILE.json]: tests/io/perfetto_check.py
# decodes FILE.pftrace (with the protobuf package) and finds it sound, and
# equal to FILE.json when given; its --dump goes to $out. A Python without
# protobuf skips the check.
pftrace_check() {
    local what=$1
    shift
    run "$PY" "$PP_SOURCE_DIR/tests/io/perfetto_check.py" "$@" --dump
    if [[ $rc == 77 ]]; then
        skip_part "$what: $out"
        return 0
    fi
    expect "$what" 0 "ok: $1:"
}
