"""nvtx_program.py — a Python program annotated with the nvtx package
(NVIDIA's Python binding over the NVTX v3 headers) and nothing of pipeprof:
tests/inject/test_nvtx_python.sh records it and trace_expect.py says what
each annotation must become. No GPU is involved: NVTX needs none."""
import threading
import time

import nvtx


def spin(us):
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


# nesting, in the package's default domain "NVTX"
with nvtx.annotate("outer"):
    with nvtx.annotate("inner"):
        spin(200)

# a domain of its own, a named category and a payload
with nvtx.annotate("load", domain="pipeline", category="io", payload=42):
    spin(50)

# push/pop on another thread has a row of its own
def worker():
    nvtx.push_range("worker", domain="pipeline")
    spin(100)
    nvtx.pop_range(domain="pipeline")


t = threading.Thread(target=worker)
t.start()
t.join()

# a start/end range, ended on another thread
request = nvtx.start_range("request", domain="pipeline")
t = threading.Thread(target=nvtx.end_range, args=(request,))
t.start()
t.join()

nvtx.mark("checkpoint", domain="pipeline")
