"""bench/diff_accuracy.py — how often `pipeprof diff` and `pipeprof gate`
are right about runs whose truth is known (docs/diff.md, "Accuracy").

A/A: 20 pairs of runs of one configuration (tests/diff/data/sim_base.json,
simulated devices; cpu_base.json, the cpu backend): the share of tested
figures reported significant (target: at most 5%), and the share of pairs
that pass the gate 'throughput>=-5%' 'stage:Embedding.p95<=+5%'
'e2e.p50<=+5%', and that pass each of its rules (target: at least 95%).

A/B: 20 pairs of sim_base.json against sim_slow.json, whose Embedding
device takes 50 us more launch and computes at 4/1.1 GFLOP/s: its modeled
time is 102.4 us (10%) longer per batch. The share of pairs where
Embedding's time (mean and p50) is significant with the right sign, and
the share where the 95% interval of the p50 change holds the modeled
change (102.4 us over the base's p50).

Prints `BENCH name value=... unit=share baseline=target:...` lines. Runs
`pipeprof` from $PP_CLI (default build/pipeprof); about a minute.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("PP_CLI", os.path.join(ROOT, "build", "pipeprof"))
DATA = os.path.join(ROOT, "tests", "diff", "data")
PAIRS = int(os.environ.get("PP_DIFF_PAIRS", "20"))
WINDOW = ["--exclude-region", "warm up"]
GATE = ["throughput>=-5%", "stage:Embedding.p95<=+5%", "e2e.p50<=+5%"]
# 256 x 64 x 64 MatMul: 2 * 256 * 64 * 64 FLOP at 4 and 4/1.1 GFLOP/s, plus 50 us launch
MODELED_DELTA_NS = 2 * 256 * 64 * 64 / 4 * 0.1 + 50000


def run(config, out):
    subprocess.run([CLI, "run", os.path.join(DATA, config), "--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(out, "trace.pptrace")


def diff(a, b):
    p = subprocess.run([CLI, "diff", a, b, "--json"] + WINDOW, check=True, capture_output=True,
                       text=True)
    return json.loads(p.stdout)


def gate(a, b):
    p = subprocess.run([CLI, "gate", a, b] + GATE + WINDOW, capture_output=True, text=True)
    failed = [line for line in p.stdout.splitlines() if line.startswith("FAIL")]
    return p.returncode, failed


def figure(d, key):
    return next(f for f in d["figures"] if f["key"] == key)


def bench(name, value, target):
    print(f"BENCH {name} value={value:.3f} unit=share baseline=target:{target} "
          f"ratio={value / target:.3f}")


def aa(config, label, tmp):
    tested = significant = passed = 0
    rule_fails = {rule: 0 for rule in GATE}
    for i in range(PAIRS):
        a = run(config, os.path.join(tmp, f"{label}a{i}"))
        b = run(config, os.path.join(tmp, f"{label}b{i}"))
        d = diff(a, b)
        fs = [f for f in d["figures"] if f["tested"]]
        tested += len(fs)
        significant += sum(f["significant"] for f in fs)
        rc, failed = gate(a, b)
        passed += rc == 0
        for rule in GATE:
            rule_fails[rule] += any(line.split()[-1] == rule for line in failed)
        print(f"{label} A/A pair {i}: {sum(f['significant'] for f in fs)} of {len(fs)} "
              f"significant: {[(f['key'], round(f['rel'], 3)) for f in fs if f['significant']]}; "
              f"gate {failed}", file=sys.stderr)
    bench(f"diff_aa_{label}_quiet_figures", 1 - significant / tested, 0.95)
    bench(f"diff_aa_{label}_gate_passes", passed / PAIRS, 0.95)
    for rule, fails in rule_fails.items():
        name = rule.split("<")[0].split(">")[0].replace(":", "_").replace(".", "_")
        bench(f"diff_aa_{label}_gate_{name}_passes", 1 - fails / PAIRS, 0.95)


def ab(tmp):
    found_mean = found_p50 = covered = 0
    for i in range(PAIRS):
        d = diff(run("sim_base.json", os.path.join(tmp, f"abA{i}")),
                 run("sim_slow.json", os.path.join(tmp, f"abB{i}")))
        mean, p50 = figure(d, "stage:Embedding.mean"), figure(d, "stage:Embedding.p50")
        found_mean += mean["significant"] and mean["rel"] > 0
        found_p50 += p50["significant"] and p50["rel"] > 0
        expected = MODELED_DELTA_NS / p50["base"]
        covered += p50["ci"][0] <= expected <= p50["ci"][1]
        print(f"A/B pair {i}: p={p50['p']:.2g}, mean {mean['rel']:+.3f} sig={mean['significant']}, p50 "
              f"{p50['rel']:+.3f} {p50['ci']} sig={p50['significant']}, modeled {expected:+.3f}",
              file=sys.stderr)
    bench("diff_ab_sim_found_mean", found_mean / PAIRS, 0.95)
    bench("diff_ab_sim_found_p50", found_p50 / PAIRS, 0.95)
    bench("diff_ab_sim_p50_interval_holds_modeled", covered / PAIRS, 0.95)


def main():
    if not os.access(CLI, os.X_OK):
        print(f"diff_accuracy: {CLI} is not built", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        aa("sim_base.json", "sim", tmp)
        aa("cpu_base.json", "cpu", tmp)
        ab(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
