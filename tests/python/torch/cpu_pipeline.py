"""A small three-stage CPU pipeline traced with torch.profiler, as a user
would write it: GraphPrep on the main thread, Embedding data parallel over
two persistent worker threads (Partition / Merge around it), Classifier on
the main thread; one ProfilerStep per batch.

Stage annotations on the main thread carry no batch (it comes from the
enclosing ProfilerStep#N); the workers' annotations carry it in their names
("Stage2_Embedding/batch3"), since they run outside the step's nesting.

usage: cpu_pipeline.py OUT.json BATCHES [PREP_LAYERS] [even]
(PREP_LAYERS, default 6: GraphPrep's work, which a before/after comparison
changes. With "even", the two workers do the same work: the data-parallel
halves are identical, and any difference between them is per-batch noise.)"""
import queue
import sys
import threading

import torch
from torch._C._profiler import _ExperimentalConfig
from torch.profiler import ProfilerActivity, profile, record_function, schedule

out, batches = sys.argv[1], int(sys.argv[2])
prep_layers = int(sys.argv[3]) if len(sys.argv) > 3 else 6
even = sys.argv[4:] == ["even"]
torch.set_num_threads(1)
torch.manual_seed(0)
W = torch.randn(128, 128)


def work(rows, layers):
    x = torch.randn(rows, 128)
    for _ in range(layers):
        x = torch.relu(x @ W)
    return x


work_queues = [queue.Queue(), queue.Queue()]
done = queue.Queue()


def worker(i):
    while True:
        item = work_queues[i].get()
        if item is None:
            return
        b, rows = item
        with record_function(f"Stage2_Embedding/batch{b}"):
            y = work(rows, 4 if even else 4 + 2 * i)  # worker 1 does more: an imbalance
        done.put(y)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
with profile(activities=[ProfilerActivity.CPU],
             schedule=schedule(wait=0, warmup=0, active=batches, repeat=1),
             on_trace_ready=lambda p: p.export_chrome_trace(out),
             experimental_config=_ExperimentalConfig(profile_all_threads=True)) as prof:
    for b in range(batches):
        with record_function("Stage1_GraphPrep"):
            x = work(256, prep_layers)
        with record_function("Partition"):
            halves = x.split(128)
        for i in range(2):
            work_queues[i].put((b, halves[i].shape[0]))
        parts = [done.get() for _ in range(2)]
        with record_function("Merge"):
            y = torch.cat(parts)
        with record_function("Stage3_Classifier"):
            work(64, 2)
        prof.step()
for q in work_queues:
    q.put(None)
for t in threads:
    t.join()
