"""The Python baseline of bench_json: how fast Python's json module reads and
writes the same Chrome JSON file.

Usage: json_python.py FILE

Prints two lines for bench_json to parse, each the best of 3 rounds, in MB/s
(1 MB = 10^6 bytes) of the bytes read or written:

    load_MBps=<v>   json.load of FILE
    dump_MBps=<v>   writing the loaded document back as compact JSON

The dump uses json.dumps and one write: the faster of Python's two ways
(json.dump streams through a Python-level generator), so the baseline is the
best Python offers.
"""
import json
import os
import sys
import time

ROUNDS = 3


def best_seconds(fn):
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: json_python.py FILE")
    path = sys.argv[1]
    out = path + ".python.json"
    doc = None

    def load():
        nonlocal doc
        doc = None  # free the previous round's document first
        with open(path, "rb") as f:
            doc = json.load(f)

    def dump():
        with open(out, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc, separators=(",", ":")))

    load_s = best_seconds(load)
    dump_s = best_seconds(dump)
    dumped = os.path.getsize(out)
    os.remove(out)
    print(f"load_MBps={os.path.getsize(path) / 1e6 / load_s:.1f}")
    print(f"dump_MBps={dumped / 1e6 / dump_s:.1f}")


if __name__ == "__main__":
    main()
