#!/usr/bin/env bash
# PyTorch's own ITT annotations are recorded with no code change:
# torch.profiler.itt ranges, and with emit_itt() one task per operator,
# nested in the record_function ranges around them (tests/inject/
# torch_program.py, tests/inject/trace_expect.py). PyTorch is no package of
# the project venv: the test installs `torch==2.13.0` (PyTorch's CPU build)
# into a folder of its own in the build tree, once, and skips with pip's
# reason when that fails.
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

if [[ -n ${PP_SANITIZE:-} ]]; then
    echo "skipped: PyTorch runs in the plain build only (it would load under a sanitizer" \
         "runtime preloaded into Python; the ITT path itself is tested there by test_itt)"
    exit 77
fi
target=$PP_BINARY_DIR/torch-2.13.0
if [[ ! -f $target/.installed ]]; then
    rm -rf "$target" "$target.part"
    if ! log=$("$PY" -m pip install --quiet --disable-pip-version-check --target "$target.part" \
            torch==2.13.0 2>&1); then
        echo "skipped: cannot install torch==2.13.0: $(tail -n 1 <<<"$log")"
        rm -rf "$target.part"
        exit 77
    fi
    mv "$target.part" "$target" && touch "$target/.installed"
fi
export PYTHONPATH=$target

run "$PP_CLI" record -o "$tmp/torch.json" -- "$PY" "$PP_SOURCE_DIR/tests/inject/torch_program.py"
expect "record runs the PyTorch program and writes the trace" 0 "wrote $tmp/torch.json"
run "$PY" "$PP_SOURCE_DIR/tests/inject/trace_expect.py" "$tmp/torch.json" torch
expect "the trace holds PyTorch's ranges and operators" 0
echo "$out"

finish
