"""itt_program.py — a Python program annotated with ITT through the ittapi
package (the Python binding over Intel's own ITT static part), and nothing
of pipeprof: tests/inject/test_itt.sh records it and trace_expect.py says
what each annotation must become."""
import threading
import time

import ittapi


def spin(us):
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


d = ittapi.domain("pipeline")

# nesting
with ittapi.task("outer", domain=d):
    with ittapi.task("inner", domain=d):
        spin(200)

# an overlapped task begun here and ended on another thread
request = ittapi.task("request", domain=d, overlapped=True)
request.begin()


def worker():
    with ittapi.task("worker", domain=d):
        spin(200)
        request.end()


t = threading.Thread(target=worker)
t.start()
t.join()

# paused: nothing of this is recorded
ittapi.pause()
with ittapi.task("hidden", domain=d):
    spin(100)
ittapi.resume()

# a two-stage pipeline, four batches, named for --batch-pattern
for b in range(4):
    with ittapi.task(f"prep/batch{b}", domain=d):
        spin(300)
    with ittapi.task(f"embed/batch{b}", domain=d):
        spin(1500 if b == 2 else 600)

# the same stages again, each batch a "step N" task around them: the
# analyzer takes the batch from the enclosing step
for b in range(3):
    with ittapi.task(f"step {b}", domain=d):
        with ittapi.task("prep", domain=d):
            spin(300)
        with ittapi.task("embed", domain=d):
            spin(600)
