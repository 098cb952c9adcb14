#!/usr/bin/env bash
# `pipeprof report -o DIR` stopped by SIGINT, SIGTERM or SIGHUP while it
# writes leaves neither DIR nor its staging directory DIR.tmp-XXXXXX behind
# (29 of 45 such runs once left the staging directory), and dies of the
# signal. The signal is sent once the staging directory exists; a run that
# finished first is run again (up to 5 times), and one that never was caught
# mid-way is skipped, not passed.
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
cd "$tmp" || exit 1

# 200 000 execs on 4 devices: every output takes a while to write
"$PY" - <<'PY'
import json
with open("big.json", "w") as f:
    f.write('{"traceEvents":[')
    for i in range(200000):
        d = i % 4
        f.write(('' if i == 0 else ',') + json.dumps(
            {"ph": "X", "cat": "exec", "name": "infer", "pid": d + 1, "tid": 1, "ts": i, "dur": 0.5,
             "args": {"stage": f"S{d}", "batch_id": i // 4, "role": "exec"}}))
    f.write(']}')
PY

for sig in INT TERM HUP; do
    caught=0
    for attempt in 1 2 3 4 5; do
        rm -rf out out.tmp-*
        # a background job of a script starts with SIGINT ignored: restore it
        "$PY" -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
            "$PP_CLI" report big.json -o out >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 1 3000); do
            compgen -G "out.tmp-*/*" >/dev/null && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.01
        done
        kill -"$sig" "$pid" 2>/dev/null
        wait "$pid"
        status=$?
        if [[ -d out ]]; then # it finished before the signal came
            continue
        fi
        caught=1
        break
    done
    if ((caught == 0)); then
        skip_part "SIG$sig: report finished before the signal, 5 times"
        continue
    fi
    check "SIG$sig: report dies of the signal (status $status)" test "$status" -gt 128
    left=$(compgen -G "out*" | tr '\n' ' ')
    check "SIG$sig: no staging directory or DIR is left${left:+ (left: $left)}" test -z "$left"
done
finish
