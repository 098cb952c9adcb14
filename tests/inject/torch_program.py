"""torch_program.py — PyTorch code with ITT annotations of its own kind and
nothing of pipeprof: tests/inject/test_torch_itt.sh records it, and
trace_expect.py says what each annotation must become."""
import torch

assert torch.profiler.itt.is_available(), "PyTorch found no ITT collector"

with torch.profiler.itt.range("outer"):
    torch.profiler.itt.range_push("inner")
    torch.profiler.itt.range_pop()

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
x = torch.randn(8, 16)
with torch.no_grad(), torch.autograd.profiler.emit_itt():
    for b in range(3):
        with torch.profiler.record_function(f"infer/batch{b}"):
            model(x)
