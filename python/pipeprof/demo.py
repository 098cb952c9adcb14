"""python -m pipeprof.demo — a streaming GNN-style pipeline from Python, on
any machine, in seconds: dummy models, three stages, a trace and a report.

  GraphPrep   host work: a plain Python function (feature normalization)
  Embedding   data parallel over the CPU and a simulated NPU (pipeprof.Stage)
  Classifier  OpenVINO's CPU device through its Python API (StageExecutor
              over a dummy MatMul model), or a simulated GPU without OpenVINO

Writes DIR/trace.json (open it in ui.perfetto.dev), and through
trace.report(DIR): summary.txt, report.html, report.json, the CSV tables
and trace.pptrace; prints the analysis of the measured batches. Simulated
devices are labeled "(simulated)" in all of it.
"""
import argparse
import os
import sys

import numpy as np

import pipeprof
from pipeprof import workloads

NODES, EDGES, FEATURES = 1024, 8192, 64


def graph_prep(x):
    """Per-feature standardization: the host work before the model."""
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)


def classifier(backend):
    model = workloads.matmul(NODES, FEATURES, 16, seed=3)
    if backend == "openvino":
        from pipeprof.openvino import StageExecutor
        return ("Classifier", StageExecutor(model.to_openvino(), "CPU", requests=2))
    return pipeprof.Stage("Classifier", "sim:GPU", model, requests=2)


def build(backend):
    cpu = "openvino:CPU" if backend == "openvino" else "cpu"
    embed = workloads.matmul(NODES, FEATURES, FEATURES, layers=2, seed=2)
    return pipeprof.Pipeline([
        ("GraphPrep", graph_prep),
        pipeprof.Stage("Embedding", [cpu, pipeprof.device("sim:NPU")], embed),
        classifier(backend),
    ])


def has_openvino():
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return "openvino" in pipeprof.features.split()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m pipeprof.demo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="pipeprof-demo", help="where the files go")
    ap.add_argument("--batches", type=int, default=50, help="measured batches (default 50)")
    ap.add_argument("--warmup", type=int, default=2, help="warm-up batches (default 2)")
    ap.add_argument("--backend", choices=("openvino", "cpu"), default=None,
                    help="what runs the CPU work: OpenVINO (default when installed) or the "
                         "built-in cpu backend")
    args = ap.parse_args(argv)
    if args.batches < 1 or args.warmup < 0:
        ap.error("--batches must be at least 1 and --warmup at least 0")
    backend = args.backend or ("openvino" if has_openvino() else "cpu")
    if backend == "openvino" and not has_openvino():
        ap.error("--backend openvino: the openvino package or libpipeprof's openvino backend "
                 "is missing (pipeprof.features: " + pipeprof.features + ")")
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(1)
    inputs = (rng.random((NODES, FEATURES), dtype=np.float32)
              for _ in range(args.warmup + args.batches))
    with pipeprof.Profiler(os.path.join(args.out, "trace.json")) as prof:
        pipe = build(backend)
        pipe.run(inputs, warmup=args.warmup)
    run = pipe.last_run
    trace = prof.trace()
    files = trace.report(args.out, exclude_region="warm up")
    print(f"demo: {run['batches']} batches streaming in {run['wall_ns'] / 1e9:.3f} s "
          f"({run['batches_per_s']:.1f} batches/s), backend {backend}; wrote "
          f"{os.path.join(args.out, 'trace.json')} and {', '.join(files)} in {args.out}")
    print(trace.table("stages", exclude_region="warm up"))
    print(trace.table(exclude_region="warm up"), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
