#!/usr/bin/env bash
# run_pytest.sh TEST_FILE — runs one of the Python package's test files
# (tests/python/test_*.py; ctest registers each as a test of its own) with
# pytest in the project venv, against this build's libpipeprof
# (PIPEPROF_LIBRARY) and the package's sources (PYTHONPATH), so every suite
# tests its own library. A file whose every test was skipped exits 77, so
# that ctest reports it as skipped (with pytest's reasons above), not passed.
set -u
py=${PP_PYTHON:-}
if [[ -z $py || ! -x $py ]]; then
    echo "skipped: no project venv Python (configure with -DPIPEPROF_PYTHON=.venv/bin/python)"
    exit 77
fi
if ! missing=$("$py" -c 'import importlib.util as u, sys
print(" ".join(m for m in ("pytest", "numpy", "pandas") if u.find_spec(m) is None))') || [[ -n $missing ]]; then
    echo "skipped: $py lacks ${missing:-pytest/numpy/pandas} (run scripts/setup)"
    exit 77
fi
case ${PP_SANITIZE:-} in
    address)
        # The library is built with ASan + UBSan and Python is not: their
        # runtimes must be loaded first. Python's own allocations at exit are
        # not leaks of pipeprof's, so LeakSanitizer is off here (the C tests
        # of the same build check leaks).
        asan=$(cc -print-file-name=libasan.so) ubsan=$(cc -print-file-name=libubsan.so)
        export LD_PRELOAD="$asan $ubsan"
        export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
        ;;
    thread)
        echo "skipped: the Python tests do not run under ThreadSanitizer (Python is not built with it)"
        exit 77
        ;;
esac
export PIPEPROF_LIBRARY=$PP_BINARY_DIR/libpipeprof.so
export PYTHONPATH=$PP_SOURCE_DIR/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
cd "$PP_TEST_TMP" || exit 1
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
"$py" -m pytest -q -rs -p no:cacheprovider "$1" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# pytest's last line: "3 passed, 1 skipped in 0.5s" or "2 skipped in 0.1s";
# a file skipped as a whole collects no test, and pytest exits 5 for that.
last=$(tail -n 1 "$log")
if ((rc == 0 || rc == 5)) && [[ $last == *" skipped"* && ! $last =~ [0-9]+\ (passed|failed|error) ]]; then
    exit 77
fi
exit "$rc"
