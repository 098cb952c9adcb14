"""Decodes a .pftrace written by pipeprof with the Python protobuf package
against tests/io/perfetto_subset.proto and checks it.

    perfetto_check.py TRACE.pftrace [TRACE.json] [--dump]

Always: the file is a Trace of TracePackets on one sequence; the first
packet clears incremental state and sets the clock; every later track event
needs that state; every interned iid is defined (in its packet or before)
and never redefined; every track is described before its first event; every
slice that begins ends; timestamps never go back.

With TRACE.json, the Chrome JSON written from the same model
(docs/format-chrome-json.md): every process, track, span, range, region,
instant, flow step, counter sample, annotation and the metadata (drops
included) is in the .pftrace with the same values, as
docs/format-perfetto.md maps them, and nothing else is.

When the `perfetto` package is installed (scripts/setup installs it), the
file is also read with Perfetto's own trace proto, which that package ships
compiled: it must hold no field Perfetto does not know, and read the same
names and values as the subset does, so the subset's field numbers and
types are Perfetto's.

--dump prints one line per decoded track and event (tests compare those with
what they constructed). Exit status: 0 ok, 1 a check failed, 77 when the
protobuf or grpcio-tools package is missing."""
import collections
import decimal
import importlib
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SEQ_CLEARED, SEQ_NEEDS = 1, 2
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
CLOCK_BOOTTIME = 6
SIMULATED = " (simulated)"

failures = []


def fail(what):
    failures.append(what)


def load_proto():
    """The subset's generated module, compiled now with grpcio-tools' protoc."""
    try:
        from grpc_tools import protoc
        import google.protobuf  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e.name} is not installed (run scripts/setup)")
        sys.exit(77)
    # The generated module is needed only until it is imported: the folder
    # goes at once, so that no run leaves a pp_proto_* behind in /tmp.
    with tempfile.TemporaryDirectory(prefix="pp_proto_") as out:
        rc = protoc.main(["protoc", f"-I{HERE}", f"--python_out={out}",
                          os.path.join(HERE, "perfetto_subset.proto")])
        if rc != 0:
            print("perfetto_subset.proto does not compile")
            sys.exit(1)
        sys.path.insert(0, out)
        try:
            return importlib.import_module("perfetto_subset_pb2")
        finally:
            sys.path.remove(out)


def value_of(a, strings):
    kind = a.WhichOneof("value")
    if kind == "string_value_iid":
        return ("str", strings.get(a.string_value_iid))
    if kind == "string_value":
        return ("str", a.string_value)
    if kind == "double_value":
        return ("float", a.double_value)
    return ("int", getattr(a, kind))


class Decoded:
    """Tracks and events of a .pftrace, after the structural checks."""

    def __init__(self, pb, path):
        trace = pb.Trace()
        with open(path, "rb") as f:
            trace.ParseFromString(f.read())
        self.tracks = {}
        self.slices, self.instants, self.flows, self.counters = [], [], [], []
        tables = {"event_names": {}, "debug_annotation_names": {},
                  "debug_annotation_string_values": {}}
        open_slices = collections.defaultdict(list)
        cleared, last_ts = False, None
        for n, p in enumerate(trace.packet):
            where = f"packet {n}"
            if p.trusted_packet_sequence_id != 1:
                fail(f"{where}: sequence id {p.trusted_packet_sequence_id}, expected 1")
            if n == 0:
                cleared = p.sequence_flags == SEQ_CLEARED
                if not cleared:
                    fail("the first packet does not clear the incremental state")
                if p.trace_packet_defaults.timestamp_clock_id != CLOCK_BOOTTIME:
                    fail("the first packet does not set the clock to BOOTTIME")
            for table, entries in tables.items():
                for e in getattr(p.interned_data, table):
                    text = e.str.decode() if table == "debug_annotation_string_values" else e.name
                    if e.iid == 0 or entries.get(e.iid, text) != text:
                        fail(f"{where}: {table} iid {e.iid} redefined or 0")
                    entries[e.iid] = text
            if p.HasField("track_descriptor"):
                d = p.track_descriptor
                if d.uuid in self.tracks or d.uuid == 0:
                    fail(f"{where}: track uuid {d.uuid} described twice or 0")
                if d.HasField("parent_uuid") and d.parent_uuid not in self.tracks:
                    fail(f"{where}: track {d.uuid}: parent {d.parent_uuid} not described before")
                self.tracks[d.uuid] = d
                continue
            if not p.HasField("track_event"):
                if n != 0:  # the first packet holds only the sequence's defaults
                    fail(f"{where}: neither a track descriptor nor a track event")
                continue
            ev = p.track_event
            if p.sequence_flags != SEQ_NEEDS or not cleared:
                fail(f"{where}: a track event without SEQ_NEEDS_INCREMENTAL_STATE")
            if last_ts is not None and p.timestamp < last_ts:
                fail(f"{where}: time goes back from {last_ts} to {p.timestamp}")
            last_ts = p.timestamp
            if ev.track_uuid not in self.tracks:
                fail(f"{where}: track {ev.track_uuid} used before it is described")
                continue
            name = None
            if ev.HasField("name_iid"):
                name = tables["event_names"].get(ev.name_iid)
                if name is None:
                    fail(f"{where}: event name iid {ev.name_iid} is not interned")
            args = {}
            for a in ev.debug_annotations:
                key = tables["debug_annotation_names"].get(a.name_iid)
                if key is None:
                    fail(f"{where}: annotation name iid {a.name_iid} is not interned")
                if key in args:
                    fail(f"{where}: annotation {key!r} twice on one event")
                if (a.WhichOneof("value") == "string_value_iid" and
                        a.string_value_iid not in tables["debug_annotation_string_values"]):
                    fail(f"{where}: string value iid {a.string_value_iid} is not interned")
                args[key] = value_of(a, tables["debug_annotation_string_values"])
            track = ev.track_uuid
            if ev.type == BEGIN:
                open_slices[track].append((p.timestamp, name, args))
            elif ev.type == END:
                if not open_slices[track]:
                    fail(f"{where}: an end with no open slice on track {track}")
                    continue
                ts, bname, bargs = open_slices[track].pop()
                self.slices.append((track, ts, p.timestamp - ts, bname, freeze(bargs)))
            elif ev.type == INSTANT and (ev.flow_ids or ev.terminating_flow_ids):
                ids = list(ev.flow_ids) + list(ev.terminating_flow_ids)
                if len(ids) != 1 or args:
                    fail(f"{where}: a flow step with {len(ids)} ids and {len(args)} annotations")
                self.flows.append((track, p.timestamp, name, ids[0], bool(ev.terminating_flow_ids)))
            elif ev.type == INSTANT:
                self.instants.append((track, p.timestamp, name, freeze(args)))
            elif ev.type == COUNTER:
                if not self.tracks[track].HasField("counter"):
                    fail(f"{where}: a counter value on track {track}, not a counter track")
                self.counters.append((track, p.timestamp, ev.double_counter_value))
            else:
                fail(f"{where}: event type {ev.type}")
        for track, stack in open_slices.items():
            if stack:
                fail(f"{len(stack)} slices on track {track} never end")

    def track_name(self, uuid):
        d = self.tracks[uuid]
        if d.HasField("thread"):
            return d.thread.thread_name
        if d.HasField("process"):
            return d.process.process_name
        return d.name

    def dump(self):
        for uuid, d in sorted(self.tracks.items()):
            line = f'track uuid={uuid} name="{self.track_name(uuid)}"'
            if d.HasField("parent_uuid"):
                line += f' parent="{self.track_name(d.parent_uuid)}"'
            if d.HasField("process"):
                line += f" process pid={d.process.pid}"
            if d.HasField("thread"):
                line += f" thread pid={d.thread.pid} tid={d.thread.tid}"
            if d.HasField("counter"):
                line += " counter"
            print(line)
        for kind, items in (("slice", self.slices), ("instant", self.instants)):
            for e in sorted(items, key=lambda e: e[1]):
                track, ts, rest = e[0], e[1], e[2:]
                dur = f" dur={rest[0]}" if kind == "slice" else ""
                name, args = rest[-2], rest[-1]
                text = "".join(f" {k}={show(v)}" for k, v in args)
                print(f'{kind} track="{self.track_name(track)}" ts={ts}{dur} name="{name}"{text}')
        for track, ts, name, fid, terminating in sorted(self.flows, key=lambda e: e[1]):
            end = " terminating" if terminating else ""
            print(f'flow track="{self.track_name(track)}" ts={ts} name="{name}" id={fid}{end}')
        for track, ts, value in sorted(self.counters, key=lambda e: e[1]):
            print(f'counter track="{self.track_name(track)}" ts={ts} value={value!r}')


def show(v):
    return f'"{v[1]}"' if v[0] == "str" else repr(v[1])


def freeze(args):
    return tuple(sorted(args.items()))


def typed(v):
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, decimal.Decimal):
        return ("float", float(v))
    return ("int", v)


def ns(us):
    """Chrome's microseconds with three decimals, as exact nanoseconds."""
    return int(decimal.Decimal(us) * 1000)


def compare(what, got, expected):
    got, expected = collections.Counter(got), collections.Counter(expected)
    if got != expected:
        missing = list((expected - got).elements())[:3]
        extra = list((got - expected).elements())[:3]
        fail(f"{what}: {sum(expected.values())} expected, {sum(got.values())} decoded; "
             f"missing {missing}, unexpected {extra}")


def check_against_chrome(dec, path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events, other = doc["traceEvents"], doc["otherData"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    metas = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    threads = {e["tid"]: (e["pid"], e["args"]["name"], e["args"]["pipeprof_track"]) for e in metas}
    # Tracks: uuid = track index + 1, the order of their thread_name events;
    # a thread track's Chrome tid is its OS thread id where it has one, else
    # that uuid; group uuid = tracks + Chrome pid.
    uuid_of = {e["tid"]: i + 1 for i, e in enumerate(metas)}
    ntracks = len(threads)
    has_thread = {pid for pid, _, t in threads.values() if t["kind"] == "thread"}
    for pid, name in procs.items():
        d = dec.tracks.get(ntracks + pid)
        if d is None:
            fail(f"no track for process {name!r}")
        elif pid in has_thread:
            if d.process.process_name != name or d.process.pid != pid:
                fail(f"process {name!r}: decoded {d}")
        elif d.name != name:
            fail(f"device group {name!r}: decoded name {d.name!r}")
    for tid, (pid, name, t) in threads.items():
        uuid = uuid_of[tid]
        d = dec.tracks.get(uuid)
        real = t["kind"] == "thread" and t["os_tid"] > 0 and tid == t["os_tid"]
        if d is None:
            fail(f"no track for {name!r}")
        elif t["kind"] == "thread":
            want_tid = tid if real else len(procs) + uuid
            if (d.thread.thread_name, d.thread.pid, d.thread.tid) != (name, pid, want_tid):
                fail(f"thread track {name!r}: decoded {d}")
        elif (d.name != name + (SIMULATED if t["simulated"] else "") or
              d.parent_uuid != ntracks + pid):
            fail(f"track {name!r} of {procs[pid]!r}: decoded {d}")
    info_uuid = ntracks + len(procs) + 1
    dropped = other["dropped_records"]
    expected_name = f"pipeprof ({dropped} records dropped)" if dropped else "pipeprof"
    if info_uuid not in dec.tracks or dec.tracks[info_uuid].name != expected_name:
        fail(f"no trace-info track named {expected_name!r}")

    def args_of(e, extra=()):
        a = {("batch" if k == "batch_id" else k): typed(v) for k, v in e.get("args", {}).items()}
        a.update(extra)
        return freeze(a)

    slices, instants, flows, counters = [], [], [], []
    begins = {}
    for e in events:
        ph = e["ph"]
        if ph == "X":
            slices.append((uuid_of[e["tid"]], ns(e["ts"]), ns(e["dur"]), e["name"], args_of(e)))
        elif ph == "b":
            begins[(e["id"], e["name"], e["tid"])] = e
        elif ph == "e":
            b = begins.pop((e["id"], e["name"], e["tid"]))
            slices.append((uuid_of[e["tid"]], ns(b["ts"]), ns(e["ts"]) - ns(b["ts"]), e["name"],
                           args_of(b, {"range_id": ("int", b["id"])})))
        elif ph == "i":
            instants.append((uuid_of[e["tid"]], ns(e["ts"]), e["name"], args_of(e)))
        elif ph in "stf":
            flows.append((uuid_of[e["tid"]], ns(e["ts"]), e["name"], e["id"], ph == "f"))
        elif ph == "C":
            counters.append((ntracks + e["pid"], e["name"], ns(e["ts"]),
                             float(e["args"]["value"])))
    compare("slices (spans, ranges, regions)", dec.slices, slices)
    compare("instants", [i for i in dec.instants if i[0] != info_uuid], instants)
    compare("flow steps", dec.flows, flows)
    compare("counter samples",
            [(dec.tracks[t].parent_uuid, dec.tracks[t].name, ts, v) for t, ts, v in dec.counters],
            counters)
    # Metadata: one "trace info" instant and one "recording thread" per thread.
    meta = [dict(a) for t, _, name, a in dec.instants if t == info_uuid and name == "trace info"]
    expected = {k: typed(other[k]) for k in ("level", "process_name", "dropped_records",
                                             "truncated_bytes", "ignored_events",
                                             "unmatched_ends")}
    # the clock fields, where the JSON has them (recorded, merged traces)
    expected.update({k: typed(other[k]) for k in ("clock", "host", "boot_id", "alignment",
                                                  "alignment_error_ns") if k in other})
    expected["pipeprof_version"] = ("str", other["pipeprof_version"])
    if meta != [expected]:
        fail(f"trace info: decoded {meta}, expected {expected}")
    compare("recording threads",
            [a for t, _, name, a in dec.instants if t == info_uuid and name == "recording thread"],
            [freeze({k: typed(th[k]) for k in ("tid", "name", "recorded", "dropped")})
             for th in other["threads"]])


# Run in a process of its own: Perfetto's module and the subset's both
# define perfetto.protos.* in protobuf's default descriptor pool, which
# refuses a second definition of a name.
OFFICIAL_READER = r"""
import json, sys
from google.protobuf.json_format import MessageToDict
from google.protobuf.unknown_fields import UnknownFieldSet
try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as official
except ImportError:
    sys.exit(77)

def unknown(msg, where):
    found = [where] if len(UnknownFieldSet(msg)) else []
    for field, value in msg.ListFields():
        if field.message_type is not None:
            repeated = getattr(field, "is_repeated", None)  # protobuf >= 6; then label
            if repeated is None:
                repeated = field.label == field.LABEL_REPEATED
            subs = value if repeated else [value]
            for i, sub in enumerate(subs):
                found += unknown(sub, f"{where}.{field.name}[{i}]")
    return found

trace = official.Trace()
trace.ParseFromString(open(sys.argv[1], "rb").read())
json.dump({"unknown": unknown(trace, "trace")[:5],
           "trace": MessageToDict(trace, preserving_proto_field_name=True)}, sys.stdout)
"""


def check_against_perfetto(pb, path):
    """Reads path with Perfetto's trace proto (in a child Python) and with
    the subset; returns the packet count, or None when the perfetto package
    is absent (the subset checks still ran)."""
    import subprocess
    from google.protobuf.json_format import MessageToDict
    p = subprocess.run([sys.executable, "-c", OFFICIAL_READER, path], capture_output=True,
                       text=True)
    if p.returncode == 77:
        return None
    if p.returncode != 0:
        fail(f"Perfetto's trace proto cannot read the file: {p.stderr.strip()[-500:]}")
        return 0
    theirs = json.loads(p.stdout)
    for where in theirs["unknown"]:
        fail(f"Perfetto's trace proto does not know a field in {where}")
    ours = pb.Trace()
    with open(path, "rb") as f:
        ours.ParseFromString(f.read())
    # The same JSON as the child's, so that numbers compare as the child's do.
    if theirs["trace"] != json.loads(json.dumps(MessageToDict(ours,
                                                              preserving_proto_field_name=True))):
        fail("Perfetto's trace proto reads other names or values than perfetto_subset.proto")
    return len(theirs["trace"].get("packet", []))


def main(argv):
    args = [a for a in argv[1:] if a != "--dump"]
    if not 1 <= len(args) <= 2:
        print(__doc__)
        return 2
    pb = load_proto()
    dec = Decoded(pb, args[0])
    official = check_against_perfetto(pb, args[0])
    if len(args) == 2:
        check_against_chrome(dec, args[1])
    if "--dump" in argv:
        dec.dump()
    for f in failures:
        print(f"FAIL: {args[0]}: {f}")
    if failures:
        return 1
    print(f"ok: {args[0]}: {len(dec.tracks)} tracks, {len(dec.slices)} slices, "
          f"{len(dec.instants)} instants, {len(dec.flows)} flow steps, "
          f"{len(dec.counters)} counter samples; "
          + (f"Perfetto's trace proto reads all {official} packets" if official is not None
             else "not read with Perfetto's own trace proto (the perfetto package is absent)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
