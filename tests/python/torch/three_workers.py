"""A torch CPU pipeline with its three stages on three worker threads,
connected by queues, each stage's work in record_function("{stage}/batch{n}"),
as a user writes it: no emit_itt, nothing of pipeprof. Stage2_Embedding
does 24 times the work of the others: the bottleneck, whatever else
the machine runs. A warm-up before the pipeline keeps torch's first-call
cost out of the first batch.

usage: three_workers.py BATCHES            (run as is: `pipeprof record` captures it)
       three_workers.py BATCHES OUT.json   (inside torch.profiler, all threads)"""
import queue
import sys
import threading

import torch
from torch.profiler import record_function

batches = int(sys.argv[1])
torch.set_num_threads(1)
torch.manual_seed(0)
W = torch.randn(256, 256)
STAGES = [("Stage1_GraphPrep", 1), ("Stage2_Embedding", 24), ("Stage3_Classifier", 1)]


def work(x, layers):
    for _ in range(layers):
        x = torch.relu(x @ W)
    return x


def stage(name, layers, inq, outq):
    while True:
        item = inq.get()
        if item is None:
            outq.put(None)
            return
        b, x = item
        with record_function(f"{name}/batch{b}"):
            y = work(x, layers)
        outq.put((b, y))


def run():
    work(torch.randn(256, 256), 4)  # warm-up, outside every stage
    qs = [queue.Queue() for _ in range(len(STAGES) + 1)]
    threads = [threading.Thread(target=stage, args=(n, k, qs[i], qs[i + 1]), name=n)
               for i, (n, k) in enumerate(STAGES)]
    for t in threads:
        t.start()
    for b in range(batches):
        qs[0].put((b, torch.randn(256, 256)))
    qs[0].put(None)
    while qs[-1].get() is not None:
        pass
    for t in threads:
        t.join()


if len(sys.argv) > 2:
    from torch._C._profiler import _ExperimentalConfig
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU],
                 experimental_config=_ExperimentalConfig(profile_all_threads=True)) as prof:
        run()
    prof.export_chrome_trace(sys.argv[2])
else:
    run()
