"""make_models.py DIR FEATURES OUT_DIM

Writes the two model files of the sweep's model-file tests
(tests/sweep/test_cli_sweep_models.sh) into DIR, both with a dynamic
node and edge count:

  gnn.onnx  (onnx package) inputs "x" [nodes, FEATURES] f32 and
            "edge_index" [2, edges] i64: each node adds the mean of the
            features of the edges' source nodes, then MatMul + ReLU to
            OUT_DIM: output "y" [nodes, OUT_DIM]
  pairs.xml (OpenVINO's Python opset, saved as IR with pairs.bin) input "x"
            [nodes, FEATURES] f32: rows are taken two by two (a Reshape to
            [-1, 2 * FEATURES]), so an odd node count cannot be compiled
            (the failing size), then MatMul to OUT_DIM: [nodes / 2, OUT_DIM]

Exit status 77 when a package is missing."""
import sys

try:
    import numpy as np
    import onnx
    import openvino as ov
    import openvino.opset13 as ops
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipped: the {e.name} package is not installed (run scripts/setup)")
    sys.exit(77)


def gnn_onnx(path, features, out_dim):
    rng = np.random.default_rng(1)
    w = (rng.uniform(-1, 1, (features, out_dim)) / np.sqrt(features)).astype(np.float32)
    axis0 = numpy_helper.from_array(np.array([0], dtype=np.int64), name="axis0")
    nodes = [
        helper.make_node("Gather", ["edge_index", "zero"], ["src"], axis=0),
        helper.make_node("Gather", ["x", "src"], ["msgs"], axis=0),
        helper.make_node("ReduceMean", ["msgs", "axis0"], ["agg"], keepdims=1),
        helper.make_node("Add", ["x", "agg"], ["h"]),
        helper.make_node("MatMul", ["h", "w"], ["hw"]),
        helper.make_node("Relu", ["hw"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "gnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["nodes", features]),
         helper.make_tensor_value_info("edge_index", TensorProto.INT64, [2, "edges"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["nodes", out_dim])],
        initializer=[numpy_helper.from_array(w, name="w"), axis0,
                     numpy_helper.from_array(np.array(0, dtype=np.int64), name="zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def pairs_ir(path, features, out_dim):
    rng = np.random.default_rng(2)
    x = ops.parameter(ov.PartialShape([-1, features]), ov.Type.f32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    pairs = ops.reshape(x, ops.constant(np.array([-1, 2 * features], dtype=np.int64)), False)
    w = rng.uniform(-1, 1, (2 * features, out_dim)).astype(np.float32)
    y = ops.matmul(pairs, ops.constant(w), False, False)
    ov.save_model(ov.Model([y], [x], "pairs"), path, compress_to_fp16=False)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    out, f, o = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    gnn_onnx(out + "/gnn.onnx", f, o)
    pairs_ir(out + "/pairs.xml", f, o)
