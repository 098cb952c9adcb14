"""A program that records through ITT (ittapi: the ITT collector pipeprof's
record attaches, and the libpipeprof it loads) and through the pipeprof
package (the libpipeprof PIPEPROF_LIBRARY names) in one process. The ITT
call comes first, so the collector's libpipeprof is loaded before the
package's: with two different files, two copies. Prints the counts it
recorded: {"itt": tasks, "package": spans}.

usage: itt_and_package.py BATCHES"""
import json
import sys
import time

import ittapi

d = ittapi.domain("pipeline")
with ittapi.task("start", domain=d):
    pass
import pipeprof  # noqa: E402

prof = pipeprof.default_profiler()
batches = int(sys.argv[1])
for b in range(batches):
    with ittapi.task("infer", domain=d):
        time.sleep(0.0005)
    with prof.span("Stage1", stage="Stage1", batch=b):
        time.sleep(0.0005)
print(json.dumps({"itt": batches + 1, "package": batches}))
