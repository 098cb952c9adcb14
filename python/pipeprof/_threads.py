"""Threads named as the user named them: each Python thread's `threading`
name goes to libpipeprof (pp_thread_name_set) for its OS thread id, so that
the host tracks of that thread — recorded by this package, or by the ITT and
NVTX libraries in the same process — carry "Thread-3 (worker)" or the name
the program gave, not the OS name "python" every Python thread shares.

Installed once when the package is imported: the threads running then are
named at once; a thread started later names itself on its first Python call
(a `threading.setprofile` hook that removes itself from that thread), and
renaming a started thread (`t.name = ...`) names it again. The hook is not
installed over a profile function the program set with
threading.setprofile before importing pipeprof."""
import sys
import threading

from . import _lib

_installed = False


def name_thread(thread):
    """Gives libpipeprof `thread`'s name for its OS thread id (once started)."""
    nid = getattr(thread, "native_id", None)
    if nid:
        try:
            _lib.pp_thread_name_set(nid, _lib.encode(thread.name))
        except Exception:  # naming must never break the program's thread
            pass


def _first_call(frame, event, arg):
    sys.setprofile(None)  # once per thread: the hook costs nothing after
    name_thread(threading.current_thread())


def install():
    global _installed
    if _installed:
        return
    _installed = True
    for t in threading.enumerate():
        name_thread(t)
    get = getattr(threading, "getprofile", None)
    if get is None or get() is None:
        threading.setprofile(_first_call)
    prop = threading.Thread.__dict__.get("name")
    if isinstance(prop, property) and prop.fset is not None:
        def set_name(self, value, _set=prop.fset):
            _set(self, value)
            name_thread(self)
        threading.Thread.name = property(prop.fget, set_name, prop.fdel, prop.__doc__)
