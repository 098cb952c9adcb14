"""analyze_pandas.py — the pandas baseline of bench_analyze.

Computes the device and stage metrics of docs/analysis.md that bench_analyze
compares (busy time as a union over streams, bubbles, stage time including the
data-parallel formula, nearest-rank percentiles in integer arithmetic, cycle
latency and completeness) from the raw columns bench_analyze writes, and prints
them in the same lines as the pipeprof side, then
"TIME load=<s> analyze=<s>".

Usage: analyze_pandas.py DIR   (DIR holds role.bin track.bin stage.bin
batch.bin ts.bin dur.bin tables.txt)
"""
import sys
import time

import numpy as np
import pandas as pd

EXEC, PARTITION, MERGE, STAGE = 1, 2, 3, 4


def load(d):
    cols = {"role": np.uint8, "track": np.uint32, "stage": np.uint32,
            "batch": np.int64, "ts": np.int64, "dur": np.int64}
    df = pd.DataFrame({k: np.fromfile(f"{d}/{k}.bin", dtype=t) for k, t in cols.items()})
    devices, strings = {}, {}
    with open(f"{d}/tables.txt") as f:
        for line in f:
            kind, idx, text = line.rstrip("\n").split(" ", 2)
            (devices if kind == "track" else strings)[int(idx)] = text
    return df, devices, strings


def nearest_rank(sorted_vals, q_milli):
    n = len(sorted_vals)
    rank = max(1, min(n, (q_milli * n + 99999) // 100000))
    return int(sorted_vals[rank - 1])


def union_busy(s, e):
    """Length of the union of [s, e) and the number of merged intervals."""
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]  # touching intervals merge
    group = np.cumsum(new) - 1
    starts = s[new]
    ends = pd.Series(reach).groupby(group).max().to_numpy()
    return int((ends - starts).sum()), int(new.sum()), int(ends[-1] - starts[0])


def analyze(df, devices, strings):
    out = []
    end = df.ts + df.dur
    w0, w1 = int(df.ts.min()), int(end.max())
    inside = (df.ts >= w0) & (end <= w1)
    ex = df[(df.role == EXEC)].copy()
    ex["device"] = ex.track.map(devices)
    ex["end"] = ex.ts + ex.dur
    for dev in pd.unique(ex.device):  # order of first exec
        x = ex[ex.device == dev]
        s = np.clip(x.ts.to_numpy(), w0, w1)
        e = np.clip(x.end.to_numpy(), w0, w1)
        busy, merged, hull = union_busy(s, e)
        n_inside = int(inside[x.index].sum())
        out.append(f"device {dev} execs={n_inside} busy={busy} bubbles={merged - 1} "
                   f"bubble_total={hull - busy}")

    lab = ex[inside[ex.index] & (ex.stage != 0) & (ex.batch >= 0)]
    per_dev = lab.groupby(["stage", "batch", "device"]).agg(s=("ts", "min"), e=("end", "max"))
    per_dev["wall"] = per_dev.e - per_dev.s
    g = per_dev.groupby(level=[0, 1]).agg(ndev=("wall", "size"), maxdev=("wall", "max"),
                                          s=("s", "min"), e=("e", "max"))
    host = df[inside & df.role.isin([PARTITION, MERGE, STAGE]) & (df.stage != 0) & (df.batch >= 0)]
    host = host.assign(end=host.ts + host.dur)
    hull = host.groupby(["stage", "batch", "role"]).agg(s=("ts", "min"), e=("end", "max"))
    hull = (hull.e - hull.s).unstack("role")
    for r in (PARTITION, MERGE, STAGE):
        if r not in hull.columns:
            hull[r] = np.nan
    t = g.join(hull, how="outer")
    dp = t.ndev > 1
    single = t.ndev == 1
    time_ns = pd.Series(np.nan, index=t.index)
    time_ns[dp] = t[PARTITION].fillna(0)[dp] + t.maxdev[dp] + t[MERGE].fillna(0)[dp]
    time_ns[single] = (t.e - t.s)[single]
    nox = t.ndev.isna()
    time_ns[nox] = t[STAGE][nox]
    time_ns = time_ns.dropna().astype(np.int64)

    first = pd.concat([lab.groupby("stage").ts.min(), host.groupby("stage").ts.min()])
    first = first.groupby(level=0).min().sort_values(kind="stable")
    present = 0
    for st in first.index:
        v = np.sort(time_ns.xs(st, level=0).to_numpy()) if st in time_ns.index.get_level_values(0) else []
        if len(v) == 0:
            continue
        present += 1
        out.append(f"stage {strings[int(st)]} n={len(v)} mean={int(v.sum()) // len(v)} "
                   f"p50={nearest_rank(v, 50000)} p95={nearest_rank(v, 95000)} "
                   f"p99={nearest_rank(v, 99000)} max={int(v[-1])}")
    per_batch = time_ns.groupby(level=1).agg(["max", "size"])
    cyc = np.sort(per_batch["max"].to_numpy())
    complete = int((per_batch["size"] == present).sum())
    out.append(f"cycles batches={len(cyc)} complete={complete} mean={int(cyc.sum()) // len(cyc)} "
               f"p50={nearest_rank(cyc, 50000)} p95={nearest_rank(cyc, 95000)} max={int(cyc[-1])}")
    return out


def main():
    t0 = time.perf_counter()
    df, devices, strings = load(sys.argv[1])
    t1 = time.perf_counter()
    lines = analyze(df, devices, strings)
    t2 = time.perf_counter()
    print("\n".join(lines))
    print(f"TIME load={t1 - t0:.3f} analyze={t2 - t1:.3f}")


if __name__ == "__main__":
    main()
