# shellcheck shell=bash
# tests/inject/python_env.sh — sourced by the tests that load an injection
# library into Python. A sanitized library needs its runtime loaded first
# (Python is not built with it); ThreadSanitizer cannot be preloaded that
# way, so those tests skip under it. LeakSanitizer is off: Python's own
# allocations at exit are not pipeprof's (the C tests check leaks).
case ${PP_SANITIZE:-} in
address)
    LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    export LD_PRELOAD
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    ;;
thread)
    echo "skipped: Python cannot load a ThreadSanitizer library (it is not built with it)"
    exit 77
    ;;
esac
