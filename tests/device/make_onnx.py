"""make_onnx.py OUT.onnx IN_DIM OUT_DIM WEIGHTS.f32...

Writes a MatMul chain as an ONNX model, for the openvino backend's test of
ONNX model files (tests/device/test_openvino_onnx.c): input "x" of shape
[rows, IN_DIM] with the rows dynamic, one MatMul per weights file (raw
row-major float32, K x OUT_DIM, K = IN_DIM for the first and OUT_DIM for
the others), output "y". Exit status 77 when the onnx package is missing."""
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipped: the {e.name} package is not installed (run scripts/setup)")
    sys.exit(77)


def main(out, in_dim, out_dim, weight_files):
    nodes, weights = [], []
    prev, k = "x", in_dim
    for i, path in enumerate(weight_files):
        w = np.fromfile(path, dtype=np.float32).reshape(k, out_dim)
        weights.append(numpy_helper.from_array(w, name=f"w{i}"))
        name = "y" if i == len(weight_files) - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [name], name=f"matmul_{i}"))
        prev, k = name, out_dim
    graph = helper.make_graph(
        nodes, "matmul_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", in_dim])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", out_dim])],
        initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
