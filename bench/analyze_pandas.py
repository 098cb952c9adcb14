"""analyze_pandas.py — the pandas baseline of bench_analyze.

Computes every figure of a pipeprof report (docs/analysis.md) over the window
after the "warm up" region — devices, tracks, stages, cycles, per-batch and
per-(batch, stage) tables, the data-parallel breakdown, op statistics — with
pandas and numpy, the way a user of those libraries would, and prints them in
the lines bench_analyze prints from the report, then
"TIME load=<s> analyze=<s>".

Input (written by bench_analyze): the event columns and the annotation table
as raw little-endian arrays (read with numpy.fromfile, no parsing) and
tables.txt (tracks and strings).

Usage: analyze_pandas.py DIR
"""
import sys
import time

import numpy as np
import pandas as pd

SPAN, REGION = 0, 5
EXEC, PARTITION, MERGE, STAGE, OP = 1, 2, 3, 4, 5
INT, DOUBLE, STR = 0, 1, 2
SIMULATED = 1
QUANTILES = (50000, 90000, 95000, 97000, 99000, 99900)


def load(d):
    cols = {"kind": np.uint8, "role": np.uint8, "track": np.uint32, "name": np.uint32,
            "stage": np.uint32, "batch": np.int64, "ts": np.int64, "dur": np.int64,
            "hw": np.uint64, "xfer": np.uint64}
    ev = pd.DataFrame({k: np.fromfile(f"{d}/{k}.bin", dtype=t) for k, t in cols.items()})
    acols = {"event": np.int64, "key": np.uint32, "type": np.uint8, "int": np.int64,
             "double": np.float64}
    ann = pd.DataFrame({k: np.fromfile(f"{d}/ann_{k}.bin", dtype=t) for k, t in acols.items()})
    tracks, strings = [], {0: ""}
    with open(f"{d}/tables.txt") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "track":
                tracks.append({"flags": int(p[3]), "device": p[4] or p[5], "name": p[6]})
            else:
                strings[int(p[1])] = p[2]
    return ev, ann, tracks, strings


def ranks(n):
    return [min(n, max(1, (q * n + 99999) // 100000)) for q in QUANTILES]


def summary(values):
    """Nearest-rank summary in integer arithmetic (mean = floor)."""
    v = np.sort(np.asarray(values, dtype=np.int64))
    n = len(v)
    if n == 0:
        return " n=0 min=0 mean=0 p50=0 p90=0 p95=0 p97=0 p99=0 p999=0 max=0 total=0"
    total = int(v.sum())
    p = [int(v[r - 1]) for r in ranks(n)]
    return (f" n={n} min={int(v[0])} mean={total // n} p50={p[0]} p90={p[1]} p95={p[2]} "
            f"p97={p[3]} p99={p[4]} p999={p[5]} max={int(v[-1])} total={total}")


def ratio(num, den):
    return float(num) / float(den) if den else 0.0


def union(s, e, w0, w1):
    """Merged busy intervals of [s, e) clipped to [w0, w1); touching ones merge."""
    s, e = np.clip(s, w0, w1), np.clip(e, w0, w1)
    keep = e > s
    s, e = s[keep], e[keep]
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    if len(s) == 0:
        return s, e
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    last = np.flatnonzero(np.append(new[1:], True))
    return s[new], reach[last]


def busy_and_bubbles(s, e, w0, w1):
    starts, ends = union(s, e, w0, w1)
    busy = int((ends - starts).sum())
    if len(starts) == 0:
        return busy, f" bubbles=0 mean=0 p50=0 p95=0 max=0 total=0 leading={w1 - w0} trailing=0"
    gaps = np.sort(starts[1:] - ends[:-1])
    n = len(gaps)
    lead, trail = int(starts[0] - w0), int(w1 - ends[-1])
    if n == 0:
        return busy, f" bubbles=0 mean=0 p50=0 p95=0 max=0 total=0 leading={lead} trailing={trail}"
    total = int(gaps.sum())
    r = ranks(n)
    return busy, (f" bubbles={n} mean={total // n} p50={int(gaps[r[0] - 1])} "
                  f"p95={int(gaps[r[2] - 1])} max={int(gaps[-1])} total={total} "
                  f"leading={lead} trailing={trail}")


def digest(cols):
    """Position-weighted sums mod 2**64, as bench_analyze computes them."""
    n = len(cols[0]) if cols else 0
    w = np.arange(1, n + 1, dtype=np.uint64)
    return [int((w * np.asarray(c).astype(np.int64).astype(np.uint64)).sum()) for c in cols]


def hw_figures(x, inside, host_unknown):
    """Exec counts and hardware sums of execs x (inside W) and their penalties.
    Host execs have no hardware time: a device does not count them as
    unknown, a stage does (host_unknown), as pipeprof's report does."""
    xi = x[inside]
    dev = xi[~xi.host]
    known = dev[dev.hw != 0]
    wall = int(known.dur.sum())
    pen = known.dur.to_numpy() - known.hw.to_numpy().astype(np.int64)
    unknown = int((dev.hw == 0).sum()) + (int(xi.host.sum()) if host_unknown else 0)
    return {"execs": len(xi), "unknown": unknown, "hw": int(known.hw.sum()),
            "xfer": int(known.xfer.sum()), "wall": wall, "pen": pen,
            "pen_pct": 100.0 * ratio(int(pen.sum()), wall)}


def host_execs(ev, ex, inside):
    """Stage spans with no exec of their (stage, batch) anywhere: host work,
    an exec on the span's own thread track of device "CPU (host)"."""
    st = ev[(ev.kind == SPAN) & (ev.role == STAGE) & (ev.stage != 0) & (ev.batch >= 0)]
    have = pd.MultiIndex.from_frame(ex[["stage", "batch"]])
    hx = st[~pd.MultiIndex.from_frame(st[["stage", "batch"]]).isin(have)].copy()
    hx["inside"] = inside[hx.index]
    hx["device"] = "CPU (host)"
    hx["sim"] = False
    hx["host"] = True
    return hx


def devices_and_tracks(ev, ex, tracks, w0, w1, out):
    W = w1 - w0
    track_util = {}
    lines = []
    for t in sorted(pd.unique(ex.track)):
        x = ex[ex.track == t]
        f = hw_figures(x, x.inside, False)
        busy, bub = busy_and_bubbles(x.ts.to_numpy(), x.end.to_numpy(), w0, w1)
        info = tracks[t]
        device = x.device.iloc[0]
        label = device + (" (simulated)" if x.sim.iloc[0] else "")
        track_util[t] = (device, f["execs"], ratio(f["hw"], W))
        lines.append(f"track {label}/{info['name']} execs={f['execs']} hw_unknown={f['unknown']} "
                     f"busy={busy} hw_util={ratio(f['hw'], W):.9g}{bub}")
    for dev in pd.unique(ex.device):  # order of first exec
        x = ex[ex.device == dev]
        f = hw_figures(x, x.inside, False)
        busy, bub = busy_and_bubbles(x.ts.to_numpy(), x.end.to_numpy(), w0, w1)
        utils = [u for (d, n, u) in (track_util[t] for t in sorted(track_util)) if d == dev and n]
        hw_util = sum(utils, 0.0) / len(utils) if utils else 0.0
        out.append(f"device {dev} sim={int(x.sim.any())} tracks={len(utils)} execs={f['execs']} "
                   f"hw_unknown={f['unknown']} busy={busy} idle={W - busy} "
                   f"wall_util={ratio(busy, W):.9g} hw_util={hw_util:.9g} "
                   f"hw_eff={ratio(f['hw'], f['wall']):.9g} xfer={ratio(f['xfer'], f['hw']):.9g} "
                   f"pen_pct={f['pen_pct']:.9g} penalty{summary(f['pen'])}{bub}")
    out.extend(lines)


def stage_cells(ev, ex, ann, strings, inside):
    """Stage order, and one row per (stage, batch) cell with its hulls."""
    host_all = ev[(ev.kind == SPAN) & ev.role.isin([PARTITION, MERGE, STAGE]) & (ev.stage != 0)]
    x_all = ex[ex.stage != 0]
    host = host_all[inside[host_all.index]]
    xin = x_all[x_all.inside]
    # order of first appearance over the whole trace; stages with nothing inside W left out
    first = pd.concat([host_all.groupby("stage").ts.min(), x_all.groupby("stage").ts.min()])
    first = first.groupby(level=0).min().sort_values(kind="stable")
    present = set(host.stage) | set(xin.stage)
    order = [s for s in first.index if s in present]
    rank = {s: i for i, s in enumerate(order)}
    lab = xin[xin.batch >= 0].copy()
    share_key = next((k for k, v in strings.items() if v == "share"), None)
    shares = ann[(ann.key == share_key) & (ann.type == DOUBLE)].groupby("event").double.first()
    lab["share"] = lab.index.map(shares)
    dev = lab.groupby(["stage", "batch", "device"], sort=False).agg(
        s=("ts", "min"), e=("end", "max"), share=("share", "sum"), annotated=("share", "count"),
        first=("ts", "idxmin"))
    dev["wall"] = dev.e - dev.s
    host = host[host.batch >= 0]
    roles = host.groupby(["stage", "batch", "role"]).agg(s=("ts", "min"), e=("end", "max"))
    roles = roles.unstack("role")
    roles.columns = [f"{side}{role}" for side, role in roles.columns]
    cells = dev.groupby(level=[0, 1]).agg(ndev=("wall", "size"), maxdev=("wall", "max"),
                                          wsum=("wall", "sum"))
    cells = cells.join(roles, how="outer")
    for role in (PARTITION, MERGE, STAGE):
        for side in ("s", "e"):
            if f"{side}{role}" not in cells.columns:
                cells[f"{side}{role}"] = np.nan
    cells["ndev"] = cells.ndev.fillna(0).astype(np.int64)
    length = {r: cells[f"e{r}"] - cells[f"s{r}"] for r in (PARTITION, MERGE, STAGE)}
    dp = cells.ndev > 1
    time_ns = pd.Series(np.nan, index=cells.index)
    time_ns[dp] = (length[PARTITION].fillna(0) + cells.maxdev + length[MERGE].fillna(0))[dp]
    time_ns[cells.ndev == 1] = cells.maxdev[cells.ndev == 1]
    time_ns[cells.ndev == 0] = length[STAGE][cells.ndev == 0]
    both = cells[f"s{PARTITION}"].notna() & cells[f"s{MERGE}"].notna() & dp
    measured = pd.Series(-1, index=cells.index, dtype=np.int64)
    measured[both] = (cells[f"e{MERGE}"] - cells[f"s{PARTITION}"])[both].astype(np.int64)
    cells["time"] = time_ns
    cells["measured"] = measured
    cells["partition"] = length[PARTITION].fillna(0)
    cells["merge"] = length[MERGE].fillna(0)
    cells = cells[cells.time.notna()].copy()
    cells["time"] = cells.time.astype(np.int64)
    cells["rank"] = [rank[s] for s in cells.index.get_level_values(0)]
    return order, rank, cells, dev


def analyze(ev, ann, tracks, strings):
    out = []
    ev["end"] = ev.ts + ev.dur
    warm = next(k for k, v in strings.items() if v == "warm up")
    w0 = int(ev.end[(ev.kind == REGION) & (ev["name"] == warm)].max())
    w1 = int(ev.end.max())
    W = w1 - w0
    out.append(f"window start={w0} end={w1}")
    inside = (ev.ts >= w0) & (ev.end <= w1)
    ex = ev[(ev.kind == SPAN) & (ev.role == EXEC)].copy()
    ex["inside"] = inside[ex.index]
    device_of = {i: t["device"] for i, t in enumerate(tracks)}
    ex["device"] = ex.track.map(device_of)
    sim_tracks = {i for i, t in enumerate(tracks) if t["flags"] & SIMULATED}
    ex["sim"] = ex.track.isin(sim_tracks)
    sim_dev = ex.groupby("device").sim.any()
    ex["sim"] = ex.device.map(sim_dev)
    ex["host"] = False
    ax = pd.concat([ex, host_execs(ev, ex, inside)])  # host execs after the device ones
    devices_and_tracks(ev, ax, tracks, w0, w1, out)

    order, rank, cells, dev = stage_cells(ev, ex, ann, strings, inside)
    times = cells.reset_index().sort_values(["batch", "rank"], kind="stable")
    present = times["rank"].nunique()
    per_batch = times.groupby("batch", sort=True)
    batches = pd.DataFrame({"stages": per_batch.size(), "cycle": per_batch.time.max(),
                            "bottleneck": times.loc[per_batch.time.idxmax(), "rank"].to_numpy()})
    batches["complete"] = batches.stages == present
    ib = ev[inside & (ev.batch >= 0)].groupby("batch").agg(s=("ts", "min"), e=("end", "max"))
    batches["e2e"] = (ib.e - ib.s).reindex(batches.index)
    bcount = batches.bottleneck.value_counts()
    xin = ax[ax.inside]
    for s in order:
        f = hw_figures(xin[xin.stage == s], slice(None), True)
        c = cells[cells.index.get_level_values(0) == s]
        xs = xin[xin.stage == s]
        exec_less = int(len(xs) > 0 and bool(xs.host.all()))  # host work alone
        out.append(f"stage {strings[s]} dp={int((c.ndev > 1).any())} exec_less={exec_less} "
                   f"bottleneck={int(bcount.get(rank[s], 0))} execs={f['execs']} "
                   f"hw_unknown={f['unknown']} hw={f['hw']} xfer={f['xfer']} "
                   f"pen_pct={f['pen_pct']:.9g} time{summary(c.time)} penalty{summary(f['pen'])}")
    cyc = batches.cycle.to_numpy()
    comp = batches.cycle[batches.complete].to_numpy()
    ncomp = len(comp)
    out.append(f"cycles batches={len(cyc)} complete={ncomp} "
               f"bound={len(cyc) * 1e9 / float(cyc.sum()):.9g} "
               f"bound_complete={ncomp * 1e9 / float(comp.sum()):.9g} "
               f"measured={ncomp * 1e9 / float(W):.9g} cycle{summary(cyc)} "
               f"complete{summary(comp)} e2e{summary(batches.e2e)}")
    d = digest([batches.index, batches.complete, batches.stages, batches.cycle,
                batches.bottleneck, batches.e2e])
    out.append(f"batches rows={len(batches)} batch={d[0]} complete={d[1]} stages={d[2]} "
               f"cycle={d[3]} bottleneck={d[4]} e2e={d[5]}")
    d = digest([times["rank"], times.batch, times.time, times.measured])
    out.append(f"stage_times rows={len(times)} stage={d[0]} batch={d[1]} time={d[2]} "
               f"measured={d[3]}")
    data_parallel(cells, dev, order, strings, out)
    ops(ev, ex, ann, tracks, strings, inside, out)
    return out


def data_parallel(cells, dev, order, strings, out):
    for s in order:
        rows = cells[(cells.index.get_level_values(0) == s) & (cells.ndev > 1)]
        rows = rows.sort_index(level=1)
        if len(rows) == 0:
            continue
        mean_wall = (rows.wsum.astype(np.float64) / rows.ndev.astype(np.float64)).to_numpy()
        imbalance = float(rows.maxdev.sum()) / np.cumsum(mean_wall)[-1]
        measured = rows.measured[rows.measured >= 0]
        parts = [rows.partition, rows.maxdev, rows["merge"], rows.time, measured]
        out.append(f"dp {strings[s]} batches={len(rows)} imbalance={imbalance:.9g}"
                   + "".join(summary(p) for p in parts))
        walls = dev.reset_index()
        walls = walls[walls.stage == s].merge(rows[["ndev"]].reset_index(), on=["stage", "batch"])
        walls = walls.sort_values(["batch", "first"], kind="stable")
        walls["part"] = np.where(walls.annotated > 0, walls.share, 1.0 / walls.ndev)
        stats = []
        for name in pd.unique(walls.device):  # order of first appearance
            w = walls[walls.device == name]
            share = float(np.cumsum(w.part.to_numpy())[-1])
            wall = int(w.wall.sum())
            stats.append((name, wall, share / len(rows), share * 1e9 / float(wall) if wall else 0.0))
        rates = 0.0
        for st in stats:
            rates += st[3]
        for name, wall, share, rate in stats:
            out.append(f"dp_device {strings[s]} {name} wall={wall} share={share:.9g} "
                       f"rate={rate:.9g} suggested={(rate / rates if rates > 0 else 0):.9g}")


def ops(ev, ex, ann, tracks, strings, inside, out):
    op = ev[inside & (ev.kind == SPAN) & (ev.role == OP) & ev.track.isin(set(ex.track))].copy()
    keys = {v: k for k, v in strings.items()}
    a = ann[ann.event.isin(op.index)]
    for col, key, typ in (("type", "type", STR), ("exec", "exec_type", STR), ("cpu", "cpu_ns", INT)):
        sel = a[(a.key == keys.get(key, -1)) & (a.type == typ)].groupby("event")["int"].last()
        op[col] = op.index.map(sel)
    op["device"] = op.track.map({i: t["device"] for i, t in enumerate(tracks)})
    op["name_s"] = op["name"].map(strings)
    for col in ("type", "exec"):
        op[col + "_s"] = op[col].map(lambda v: strings[int(v)] if v == v else "")
    lines = []
    for what, by in (("op", ["device", "name_s", "type_s", "exec_s"]),
                     ("op_type", ["device", "type_s", "exec_s"])):
        for key, g in op.groupby(by, sort=False):
            key = dict(zip(by, key))
            v = np.sort(g.dur.to_numpy())
            n, total = len(v), int(v.sum())
            r = ranks(n)
            cpu = g.cpu.dropna()
            lines.append(f"{what} {key['device']}|{key.get('name_s', '')}|{key['type_s']}|"
                         f"{key['exec_s']} count={n} total={total} mean={total // n} "
                         f"p50={int(v[r[0] - 1])} p95={int(v[r[2] - 1])} max={int(v[-1])} "
                         f"cpu_count={len(cpu)} cpu_total={int(cpu.sum())}")
    out.extend(sorted(lines))


def main():
    t0 = time.perf_counter()
    ev, ann, tracks, strings = load(sys.argv[1])
    t1 = time.perf_counter()
    lines = analyze(ev, ann, tracks, strings)
    t2 = time.perf_counter()
    print("\n".join(lines))
    print(f"TIME load={t1 - t0:.3f} analyze={t2 - t1:.3f}")


if __name__ == "__main__":
    main()
