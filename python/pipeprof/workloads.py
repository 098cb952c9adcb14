"""Dummy models sized like the seeds' GNN stages, so that a pipeline runs at
once without a model of one's own (include/pipeprof/device.h, workloads):

    w = pipeprof.workloads.matmul(nodes=1024, in_dim=64, out_dim=64, layers=2)
    pipeprof.Stage("Embedding", ["cpu", "sim:NPU"], w)     # the built-in backends
    StageExecutor(w.to_openvino(), "CPU")                   # OpenVINO's Python API

The built-in backends (cpu, sim, openvino:*) build the model themselves
from the description; to_openvino() builds a matmul chain with OpenVINO's
Python opset for pipeprof.openvino.
"""
import ctypes
import dataclasses

import numpy as np

from . import _lib
from ._lib import check

KINDS = ("matmul", "sage")


@dataclasses.dataclass(frozen=True)
class Workload:
    """One request's model: `nodes` rows of `in_dim` features in, `out_dim`
    out. matmul: `layers` chained MatMuls; sage: a GraphSAGE-like layer over
    a random graph of `edges` edges (mean over in-neighbours, MatMul, bias,
    ReLU). Weights and graph come from `seed`."""
    kind: str
    nodes: int
    in_dim: int
    out_dim: int
    layers: int = 1
    edges: int = 0
    seed: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise _lib.PipeprofError(_lib.PP_EINVAL, f"workload: kind {self.kind!r}: one of "
                                     f"{', '.join(KINDS)}")
        err = _lib.Error()
        check(_lib.pp_workload_check(ctypes.byref(self.to_c()), ctypes.byref(err)), "workload",
              err)

    def to_c(self):
        w = _lib.Workload()
        _lib.pp_workload_init(ctypes.byref(w))
        w.kind = KINDS.index(self.kind)
        w.nodes, w.in_dim, w.out_dim = self.nodes, self.in_dim, self.out_dim
        w.layers, w.edges, w.seed = self.layers, self.edges, self.seed
        return w

    def input(self, seed=0):
        """A batch for it: nodes x in_dim float32 values in [-0.5, 0.5)."""
        rng = np.random.default_rng(seed)
        return (rng.random((self.nodes, self.in_dim), dtype=np.float32) - 0.5)

    def to_openvino(self):
        """The matmul chain as an openvino.Model (any number of rows), for
        pipeprof.openvino.StageExecutor. A sage workload runs on OpenVINO
        through the built-in backend instead: Stage(..., ["openvino:CPU"], w)."""
        if self.kind != "matmul":
            raise _lib.PipeprofError(_lib.PP_EUNSUPPORTED,
                                     "workload: to_openvino builds matmul chains; run a sage "
                                     "workload on pipeprof.device('openvino:CPU')")
        import openvino as ov
        from openvino import opset13 as ops
        rng = np.random.default_rng(self.seed)
        x = ops.parameter(ov.PartialShape([-1, self.in_dim]), np.float32, "x")
        y, width = x, self.in_dim
        for _ in range(self.layers):
            w = ((rng.random((width, self.out_dim)) - 0.5) / np.sqrt(width)).astype(np.float32)
            y = ops.matmul(y, ops.constant(w), False, False)
            width = self.out_dim
        return ov.Model([ops.result(y)], [x], f"matmul_{self.layers}x{self.out_dim}")


def matmul(nodes=1024, in_dim=64, out_dim=64, layers=1, seed=1):
    """`layers` chained MatMuls: in_dim -> out_dim -> ... -> out_dim."""
    return Workload("matmul", nodes, in_dim, out_dim, layers=layers, seed=seed)


def sage(nodes=1024, edges=8192, in_dim=64, out_dim=64, seed=1):
    """A GraphSAGE-like layer on a graph of `nodes` and `edges`."""
    return Workload("sage", nodes, in_dim, out_dim, edges=edges, seed=seed)
