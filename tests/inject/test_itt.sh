#!/usr/bin/env bash
# pipeprof record captures the ITT annotations of a Python program made with
# the ittapi package, whose native module carries Intel's ITT static part:
# the real loader of INTEL_LIBITTNOTIFY64 and caller of __itt_api_init, so
# this also checks src/inject/itt_abi.h against it. Nesting, domains, an
# overlapped task ended on another thread, pause/resume
# (tests/inject/itt_program.py, tests/inject/trace_expect.py).
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
source "$PP_SOURCE_DIR/tests/inject/python_env.sh"

if ! "$PY" -c 'import ittapi' 2>/dev/null; then
    echo "skipped: $PY has no ittapi package (scripts/setup installs it)"
    exit 77
fi

run "$PP_CLI" --version
expect "--version names the ITT collector" 0 " itt"

run "$PP_CLI" record -o "$tmp/itt.json" -- "$PY" "$PP_SOURCE_DIR/tests/inject/itt_program.py"
expect "record runs the ITT program and writes the trace" 0 "wrote $tmp/itt.json" "from 2 threads"
run "$PY" "$PP_SOURCE_DIR/tests/inject/trace_expect.py" "$tmp/itt.json" itt
expect "the trace holds each task as the program made it" 0
echo "$out"

# batches from the enclosing "step N" tasks, stages by name
run "$PP_CLI" analyze "$tmp/itt.json" --json --batch-pattern '^step (?<batch>[0-9]+)$' \
    --stage-pattern '^(?<stage>prep|embed)$'
expect "analyze takes stages by name and batches from the enclosing steps" 0
printf '%s\n' "$out" >"$tmp/report.json"
check "stages prep and embed in three complete batches" test \
    "$(json_get "$tmp/report.json" 'sorted(s["name"] for s in d["stages"]), [(b["batch"], b["complete"], b["stages"]) for b in d["batches"]]')" \
    = "(['embed', 'prep'], [(0, True, 2), (1, True, 2), (2, True, 2)])"

run "$PP_CLI" record --no-itt -o "$tmp/off.json" -- "$PY" "$PP_SOURCE_DIR/tests/inject/itt_program.py"
expect "--no-itt records nothing from ITT" 1 "wrote no trace to $tmp/off.json"

finish
