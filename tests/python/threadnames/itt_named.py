"""Threads the program names, recorded through ITT (ittapi): a worker named
by threading, one renamed after it started, one named by ITT's
__itt_thread_set_name; pipeprof imported (its threading hook) when argv[1]
is "hook". Prints each thread's expected name and OS thread id as JSON.

usage: itt_named.py hook|nohook"""
import json
import sys
import threading
import time

if sys.argv[1] == "hook":
    import pipeprof  # noqa: F401  (installs the threading hook)
import ittapi

d = ittapi.domain("names")
names = {}


def spin(us):
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


def work(label, rename=None, itt_name=None):
    if itt_name:
        ittapi.thread_set_name(itt_name)
    with ittapi.task(label, domain=d):
        spin(200)
    if rename:
        threading.current_thread().name = rename
    with ittapi.task(label + " again", domain=d):
        spin(200)
    names[threading.get_native_id()] = itt_name or rename or threading.current_thread().name


threads = [threading.Thread(target=work, args=("prep",), name="prep-worker"),
           threading.Thread(target=work, args=("embed",), kwargs={"rename": "embed-renamed"},
                            name="embed-worker"),
           threading.Thread(target=work, args=("cls",), kwargs={"itt_name": "itt-named"})]
for t in threads:
    t.start()
    t.join()
print(json.dumps({str(k): v for k, v in names.items()}))
