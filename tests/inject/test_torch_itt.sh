#!/usr/bin/env bash
# PyTorch's own ITT annotations are recorded with no code change:
# torch.profiler.itt ranges, and with emit_itt() one task per operator,
# nested in the record_function ranges around them (tests/inject/
# torch_program.py, tests/inject/trace_expect.py). PyTorch is no package of
# the project venv: like tests/python/torch_site.py, the test installs
# `torch==2.13.0` (PyTorch's CPU build) once into .cache/torch-2.13.0 at the
# repository root, which the suites share (one installs, the others wait on
# the lock), and skips with pip's reason when that fails.
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

if [[ -n ${PP_SANITIZE:-} ]]; then
    echo "skipped: PyTorch runs in the plain build only (it would load under a sanitizer" \
         "runtime preloaded into Python; the ITT path itself is tested there by test_itt)"
    exit 77
fi
target=$PP_SOURCE_DIR/.cache/torch-2.13.0
mkdir -p "$(dirname "$target")"
exec 9>"$target.lock"
flock 9
if [[ ! -f $target/.complete ]]; then
    if ! log=$("$PY" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
            --target "$target" torch==2.13.0 2>&1); then
        echo "skipped: torch==2.13.0 cannot be installed here: $(tail -n 1 <<<"$log")"
        exit 77
    fi
    touch "$target/.complete"
fi
flock -u 9
export PYTHONPATH=$target

run "$PP_CLI" record -o "$tmp/torch.json" -- "$PY" "$PP_SOURCE_DIR/tests/inject/torch_program.py"
expect "record runs the PyTorch program and writes the trace" 0 "wrote $tmp/torch.json"
run "$PY" "$PP_SOURCE_DIR/tests/inject/trace_expect.py" "$tmp/torch.json" torch
expect "the trace holds PyTorch's ranges and operators" 0
echo "$out"

# the record_function ranges name a stage and a batch: host stage instances
run "$PP_CLI" analyze "$tmp/torch.json" --json --batch-pattern '^(?<stage>.+)/batch(?<batch>[0-9]+)$'
expect "analyze labels the ranges with the pattern" 0
printf '%s\n' "$out" >"$tmp/report.json"
check "one stage, infer, in three complete batches" test \
    "$(json_get "$tmp/report.json" '[s["name"] for s in d["stages"]], [(b["batch"], b["complete"]) for b in d["batches"]]')" \
    = "(['infer'], [(0, True), (1, True), (2, True)])"

finish
