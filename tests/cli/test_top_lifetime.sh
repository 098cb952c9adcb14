#!/usr/bin/env bash
# `pipeprof top -- CMD` and `pipeprof record -- CMD` never leave CMD running
# on its own: killed (SIGKILL, SIGTERM, SIGHUP), or with top's view closed
# (`top ... | head`, SIGPIPE), pipeprof takes CMD with it; and top ends when
# CMD ends, not when the last grandchild that inherited its live pipe does
# (one once held top for 20 s). CMD is a shell that writes its pid and
# execs a long sleep; the waits below are bounds against hanging (a
# minute), never timings.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

# gone PID: true once PID no longer runs (a zombie counts as gone), within a minute
gone() {
    local state
    for _ in $(seq 1 600); do
        state=$(ps -o stat= -p "$1" 2>/dev/null) || return 0
        [[ $state == Z* ]] && return 0
        sleep 0.1
    done
    return 1
}
# wait_file F: waits (up to a minute) for F to exist and hold a line
wait_file() {
    for _ in $(seq 1 600); do
        [[ -s $1 ]] && return 0
        sleep 0.1
    done
    return 1
}
CMD=(sh -c 'echo $$ > cmd.pid; exec sleep 600')

for sub in top record; do
    for sig in KILL TERM HUP; do
        rm -f cmd.pid
        if [[ $sub == top ]]; then
            "$P" top --interval 100 -- "${CMD[@]}" >/dev/null 2>&1 &
        else
            "$P" record -o t.pptrace -- "${CMD[@]}" >/dev/null 2>&1 &
        fi
        pp=$!
        if ! wait_file cmd.pid; then
            check "$sub: CMD started" false
            kill -KILL "$pp"
            continue
        fi
        cmd=$(cat cmd.pid)
        kill -"$sig" "$pp"
        wait "$pp" 2>/dev/null
        check "$sub killed by SIG$sig: CMD ends too" gone "$cmd"
        kill -KILL "$cmd" 2>/dev/null
    done
done

# The view's reader goes away: top ends, and CMD with it.
rm -f cmd.pid
timeout 60 bash -c '"$1" top --interval 50 -- sh -c "echo \$\$ > cmd.pid; exec sleep 600" | head -n 1 >/dev/null; echo "${PIPESTATUS[0]}" > top.status' _ "$P"
cmd=$(cat cmd.pid 2>/dev/null)
check "top | head: top ends (status $(cat top.status 2>/dev/null), 141 = closed view)" \
    test "$(cat top.status 2>/dev/null)" = 141
check "top | head: CMD ends too" gone "${cmd:-0}"
[[ -n $cmd ]] && kill -KILL "$cmd" 2>/dev/null

# A grandchild keeps the live pipe open after CMD has exited: top ends with CMD.
rm -f gc.pid
# (the grandchild's own output goes elsewhere, so only the live pipe holds on)
run timeout 60 "$P" top --interval 50 -- sh -c 'sleep 600 >/dev/null 2>&1 & echo $! > gc.pid; exit 3'
check "top ends when CMD does, with its status (got $rc; 124 = still waiting after a minute)" \
    test "$rc" = 3
[[ -s gc.pid ]] && kill -KILL "$(cat gc.pid)" 2>/dev/null
finish
