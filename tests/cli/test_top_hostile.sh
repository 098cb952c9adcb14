#!/usr/bin/env bash
# pipeprof top reads records any program can write to its live pipe, so it
# trusts none of them: a span that ends before it starts, loss totals of
# 2^64 - 1, a text field with no NUL in it and a record of another kind are
# skipped and counted; names with escape sequences, control characters and
# bytes that are not UTF-8 reach the terminal escaped (\xHH), never raw (an
# ESC [2J once cleared the user's screen). The records are written by hand
# in the layout of src/capture/subrec.c.
set -uo pipefail
# shellcheck source=tests/cli/lib.sh
source "$PP_SOURCE_DIR/tests/cli/lib.sh"
cd "$tmp" || exit 1

cat >writer.py <<'PY'
import os, struct, sys
fd = int(os.environ["PIPEPROF_LIVE_FD"])

def text(b, n):
    return (b + b"\0" * n)[:n]

def span(name, device, start, end, stage=b"S", kind=1, nul=True, role=1):
    r = bytearray(256)
    struct.pack_into("<IBBBB", r, 0, 256, kind, role, 0, 1)  # size, kind, role, flags, version
    struct.pack_into("<qqqQQQi", r, 8, start, end, 0, 0, 0, 0, 0)
    r[64:128] = text(name, 64) if nul else name[:64].ljust(64, b"A")
    r[160:192] = text(device, 32)
    r[192:224] = text(stage, 32)
    return bytes(r)

def status(lost, dropped):
    r = bytearray(256)
    struct.pack_into("<IBBBB", r, 0, 256, 2, 0, 0, 1)
    struct.pack_into("<QQ", r, 32, lost, dropped)
    return bytes(r)

recs = [
    span(b"good", b"GPU\x1b[2J\x07\xff", 1000, 2000),            # shown, escaped
    span(b"op\xff\x80\x80\xc2\x85", b"GPU", 1500, 1600, role=5), # 0xff is no lead byte; U+0085 is C1
    span(b"m\x1b]0;pwned\x07ul\xc3\xa9", b"NPU", 3000, 4000, role=5),  # an op: shown escaped, keeps the e-acute
    span(b"backwards", b"GPU", 5000, 4000),                      # skipped
    span(b"X" * 64, b"GPU", 6000, 7000, nul=False),              # skipped: no NUL in the name
    span(b"neg", b"GPU", -5, 7000),                              # skipped: before the clock began
    status(2**64 - 1, 2**64 - 1),                                # skipped
    span(b"odd", b"GPU", 1, 2, kind=9),                          # skipped: no such kind
]
os.write(fd, b"".join(recs))
PY

out=$("$PP_CLI" top --interval 100 -- "$PY" writer.py 2>&1)
rc=$?
printf '%s\n' "$out" >view.txt
check "top ends with the program's status (got $rc)" test "$rc" = 0
check "no ESC byte reaches the terminal" bash -c '! grep -q $'"'"'\x1b'"'"' view.txt'
check "no BEL byte reaches the terminal" bash -c '! grep -q $'"'"'\x07'"'"' view.txt'
check "no byte that is not UTF-8 reaches the terminal" iconv -f UTF-8 -t UTF-8 view.txt -o /dev/null
check "the device name is shown escaped" grep -qF 'GPU\x1b[2J\x07\xff' view.txt
check "valid UTF-8 is kept" grep -qF $'\xc3\xa9' view.txt
check "a total of 2^64 - 1 is not shown" bash -c '! grep -q 18446744073709551615 view.txt'
check "the 5 bad records are counted (output: $(grep -i 'records' view.txt | tail -n 1))" \
    grep -q "^5 records were not valid pipeprof subscription records" view.txt
check "3 spans were taken" grep -q "3 spans received" view.txt
check "bytes that are not printable UTF-8 are escaped one by one" grep -qF 'op\xff\x80\x80\xc2\x85' view.txt
finish
