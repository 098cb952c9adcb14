#!/usr/bin/env bash
# `pipeprof record` and its child live and die together: SIGHUP (a closed
# terminal) reaches the child, and a pipeprof killed outright (SIGKILL, which
# it cannot pass on) takes the child with it. Before, the child of a killed
# pipeprof recorded on as an orphan (once for 10 minutes, to its budget).
source "$(dirname "$0")/lib.sh"
P=$PP_CLI
cd "$tmp" || exit 1

# wait_for FILE: up to 10 s for FILE to exist.
wait_for() {
    for _ in $(seq 1 1000); do
        [[ -s $1 ]] && return 0
        sleep 0.01
    done
    return 1
}
# gone PID: up to 10 s for PID to exit.
gone() {
    for _ in $(seq 1 1000); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.01
    done
    return 1
}

"$P" record -o hup.json -- bash -c 'echo $$ >child.pid; trap "echo hup >hup.seen; exit 3" HUP
    sleep 30 & wait' >hup.log 2>&1 &
rec=$!
check "the child started" wait_for child.pid
sleep 0.2 # the child's trap is set once it waits
kill -HUP "$rec"
wait_run "$rec" hup.log
check "SIGHUP reached the child" test -s hup.seen
expect "record exits with the child's status" 3

rm -f child.pid
"$P" record -o orphan.json -- bash -c 'echo $$ >child.pid; exec sleep 30' >orphan.log 2>&1 &
rec=$!
check "the second child started" wait_for child.pid
child=$(cat child.pid)
kill -KILL "$rec"
wait "$rec" 2>/dev/null
check "the child of a SIGKILLed pipeprof record dies with it" gone "$child"
kill -KILL "$child" 2>/dev/null
finish
