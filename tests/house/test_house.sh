#!/usr/bin/env bash
# tests/house/test_house.sh — the repository keeps its own house: what a user
# of the repository reads is inside it, and the suite leaves nothing behind.
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
cd "$PP_SOURCE_DIR" || exit 1

# The architecture is in the repository and everything cites it there: users
# do not have the project's private ../shared folder.
check "docs/architecture.md exists" test -s docs/architecture.md
cited=$(grep -rIl 'shared/DESIGN' src include bench cmake docs examples python tests CMakeLists.txt README.md \
        --exclude-dir=build --exclude-dir=__pycache__ 2>/dev/null | grep -v '^tests/house/')
check "no file cites ../shared/DESIGN.md${cited:+ (cited by: $cited)}" test -z "$cited"
# nor the page by its name alone ("DESIGN.md §4"): sections are cited as
# docs/architecture.md §N
cited=$(grep -rIlE '\bDESIGN(\.md)?\b' src include bench cmake examples python tests fuzz CMakeLists.txt \
        --exclude-dir=build --exclude-dir=__pycache__ 2>/dev/null | grep -v '^tests/house/')
check "no code cites DESIGN.md by name${cited:+ (cited by: $cited)}" test -z "$cited"

# tests/io/perfetto_check.py compiles its proto into a temporary folder that
# it removes: run with TMPDIR on an empty folder, the folder stays empty.
mkdir "$tmp/tmpdir"
run "$PP_CLI" convert tests/io/data/kineto_small.json "$tmp/t.pftrace"
expect "convert writes a .pftrace to check" 0
TMPDIR=$tmp/tmpdir pftrace_check "perfetto_check.py reads the .pftrace" "$tmp/t.pftrace"
left=$(ls -A "$tmp/tmpdir")
check "perfetto_check.py leaves nothing in TMPDIR${left:+ (left: $left)}" test -z "$left"
finish
