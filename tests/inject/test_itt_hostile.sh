#!/usr/bin/env bash
# Children forked while another thread creates ITT domains and string
# handles through the collector (tests/inject/itt_hostile.c) never hang: the
# collector's create lock is taken around fork, and creating a name that
# exists takes no lock at all (with the old list scan under the lock, 83 of
# these 100 children hung).
source "$PP_SOURCE_DIR/tests/cli/lib.sh"

run "$PP_CLI" record -o "$tmp/fork.json" -- "$PP_ITT_HOSTILE" fork 100
expect "100 forks while a thread creates domains: none hangs" 0 "100 forks: 0 hung, 0 failed"

finish
