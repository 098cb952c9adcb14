"""The Python baseline of bench_json: how fast Python's json module reads and
writes the same Chrome JSON file.

Usage: json_python.py FILE

Prints two lines for bench_json to parse, each the best of 3 rounds, in MB/s
(1 MB = 10^6 bytes) of the bytes read or written:

    load_MBps=<v>   json.load of FILE
    dump_MBps=<v>   writing the loaded document back as compact JSON
    load_gc_MBps=<v> json.load as a program normally runs it (collector on)

The baseline is the best Python offers: the garbage collector is off while
timing, as timeit does (left on, it rescans the million new dicts again and
again and halves json.load's rate), and the dump uses json.dumps and one
write, the faster of Python's two ways (json.dump streams through a
Python-level generator).
"""
import gc
import json
import os
import sys
import time

ROUNDS = 3


def best_seconds(fn, collector_off=True):
    """The best time of ROUNDS calls of fn, and the last call's result (the
    previous result is freed before each call, outside the timing)."""
    best, result = float("inf"), None
    for _ in range(ROUNDS):
        result = None
        gc.collect()
        if collector_off:
            gc.disable()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
        gc.enable()
    return best, result


def load(path):
    with open(path, "rb") as f:
        return json.load(f)


def dump(doc, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, separators=(",", ":")))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: json_python.py FILE")
    path = sys.argv[1]
    out = path + ".python.json"
    load_s, doc = best_seconds(lambda: load(path))
    dump_s, _ = best_seconds(lambda: dump(doc, out))
    doc = None
    load_gc_s, _ = best_seconds(lambda: load(path), collector_off=False)
    dumped = os.path.getsize(out)
    os.remove(out)
    print(f"load_MBps={os.path.getsize(path) / 1e6 / load_s:.1f}")
    print(f"dump_MBps={dumped / 1e6 / dump_s:.1f}")
    print(f"load_gc_MBps={os.path.getsize(path) / 1e6 / load_gc_s:.1f}")


if __name__ == "__main__":
    main()
