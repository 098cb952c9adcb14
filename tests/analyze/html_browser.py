"""html_browser.py — opens pipeprof HTML reports in headless Chromium and
checks them as a user would see them (test_html_browser.sh runs it).

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-
pipe: commands on fd 3, replies on fd 4, NUL-separated JSON), so nothing
listens on a port and only the standard library is needed. For each page it
checks: no console error and no uncaught exception, no network request other
than the file itself, the key sections rendered into the DOM with the
report's content (the bandwidth table included), hovering a span shows its fields, the wheel zooms; then it
writes a full-page screenshot.

usage: html_browser.py CHROMIUM PROFILE_DIR REPORT.html SCREENSHOT.png [EXPECT_SUMMARIZED]
Prints one line per check; exits 1 on any failure.
"""
import base64
import json
import os
import select
import subprocess
import sys
import time

TIMEOUT_S = 60


class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():  # chromium reads fd 3 and writes fd 4 (copies first: they may be 3 or 4)
            r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.deadline = time.monotonic() + TIMEOUT_S

    def _read_message(self):
        while b"\0" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_chrome], [], [], left)[0]:
                raise RuntimeError("chromium did not answer within %d s" % TIMEOUT_S)
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe (exit status %s)" % self.proc.poll())
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=None, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method):
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            e = self._read_message()
            if e.get("method") == method:
                return e
            self.events.append(e)

    def close(self):
        try:
            self.call("Browser.close")
        except RuntimeError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL: ") + what + ("" if ok else ": " + detail))
    if not ok:
        failures += 1


# What the rendered DOM holds, read in the page after its script ran.
PROBE = """JSON.stringify({
  rendered: document.body.dataset.rendered || "",
  title: document.title,
  banner: document.getElementById("banner").hidden ? "" : document.getElementById("banner").textContent,
  findings: [...document.querySelectorAll("#findings li")].map((e) => e.textContent),
  canvas_h: document.getElementById("tl-canvas").clientHeight,
  tl_note: document.getElementById("tl-note").textContent,
  util_bars: document.querySelectorAll("#utilization .bar").length,
  util_labels: [...document.querySelectorAll("#utilization .bars > div")].map((e) => e.textContent),
  bubble_charts: document.querySelectorAll("#bubbles svg").length,
  bubble_bars: document.querySelectorAll("#bubbles svg rect").length,
  latency_charts: document.querySelectorAll("#latency svg").length,
  stage_rows: [...document.querySelectorAll("#stages tbody tr")].map((r) => r.cells[0].textContent),
  cycle_rows: document.querySelectorAll("#cycles tbody tr").length,
  dp_text: document.getElementById("data-parallel").textContent,
  decomp_bars: [...document.querySelectorAll("#decomposition .stack")].map((b) =>
    [...b.children].reduce((sum, seg) => sum + parseFloat(seg.style.width || "0"), 0)),
  sched_bars: [...document.querySelectorAll("#sched .stack")].map((b) =>
    [...b.children].reduce((sum, seg) => sum + parseFloat(seg.style.width || "0"), 0)),
  sched_note: document.querySelector("#sched .note").textContent,
  bw_rows: [...document.querySelectorAll("#bandwidth tbody tr")].map((r) => r.cells[1].textContent),
  bw_note: document.querySelector("#bandwidth .note").textContent,
  data: JSON.parse(document.getElementById("pp-data").textContent)
})"""

# Zooms the timeline onto the first span in view (a third of the plot
# wide) and returns its middle in whole page pixels, as mouse events carry
# them; the page's top-level bindings are visible to evaluate.
SPAN_POINT = """(() => {
  const ok = (s) => s.depth === 0 && s[2] > 0 && s[1] >= view[0];
  const L = layout.find((l) => l.row !== undefined && byRow[l.row].some(ok));
  const s = byRow[L.row].find(ok);
  view = [s[1] - s[2], s[1] + 2 * s[2]];
  draw();
  const r = canvas.getBoundingClientRect();
  return JSON.stringify([Math.round(r.left + (toX(s[1]) + toX(s[1] + s[2])) / 2),
                         Math.round(r.top + L.y + 2 + LANE / 2), TL.strings[s[3]]]);
})()"""


def evaluate(b, session, expr):
    res = b.call("Runtime.evaluate", session, expression=expr, returnByValue=True)
    if "exceptionDetails" in res:
        raise RuntimeError("evaluate: %s" % res["exceptionDetails"])
    return res["result"].get("value")


def main():
    chromium, profile, report, shot = sys.argv[1:5]
    expect_summarized = len(sys.argv) > 5 and sys.argv[5] == "summarized"
    url = "file://" + os.path.abspath(report)
    b = Browser(chromium, profile)
    try:
        target = b.call("Target.createTarget", url="about:blank")["targetId"]
        session = b.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            b.call(domain + ".enable", session)
        b.call("Emulation.setDeviceMetricsOverride", session, width=1280, height=900,
               deviceScaleFactor=1, mobile=False)
        b.call("Page.navigate", session, url=url)
        b.wait_event("Page.loadEventFired")
        dom = json.loads(evaluate(b, session, PROBE))
        data = dom["data"]

        check("the page's script ran to the end", dom["rendered"] == "yes", repr(dom["rendered"]))
        check("the title names the trace", data["source"] in dom["title"], dom["title"])
        check("findings are listed, as in the report",
              dom["findings"] == data["findings"] and len(data["findings"]) > 0, repr(dom["findings"]))
        sim = [d["name"] for d in data["devices"] if d["simulated"]]
        check("a banner names the simulated devices",
              bool(sim) and all(n in dom["banner"] for n in sim) and "imulated" in dom["banner"],
              repr(dom["banner"]))
        lost = any(data["data_loss"].values())
        check("the banner states data loss exactly when there is some",
              lost == ("Data loss" in dom["banner"]), repr(dom["banner"]))
        align = data.get("clock_alignment")
        check("the banner states a merged trace's clock alignment exactly when it is one",
              (align is not None) == ("clock alignment" in dom["banner"])
              and (align is None or align["how"] in dom["banner"]), repr(dom["banner"]))
        check("the timeline is drawn with a row per track",
              dom["canvas_h"] > 20 * len(data["timeline"]["rows"]), "height %s for %d rows"
              % (dom["canvas_h"], len(data["timeline"]["rows"])))
        # host work has no hardware time: wall only
        bars = sum(1 if d["host"] else 2 for d in data["devices"])
        check("two utilization bars per device (wall only for host work)",
              dom["util_bars"] == bars, "%s, expected %d" % (dom["util_bars"], bars))
        check("simulated devices are labeled in the utilization chart",
              all(any(n + " (simulated)" == t for t in dom["util_labels"]) for n in sim),
              repr(dom["util_labels"]))
        check("a bubble histogram per device", dom["bubble_charts"] == len(data["devices"]),
              str(dom["bubble_charts"]))
        check("bubble histograms have bars", dom["bubble_bars"] > 0, str(dom["bubble_bars"]))
        check("a latency histogram per stage", dom["latency_charts"] == len(data["stages"]),
              str(dom["latency_charts"]))
        check("the stage table has every stage",
              [r.split(" (")[0] for r in dom["stage_rows"]] == [s["name"] for s in data["stages"]],
              repr(dom["stage_rows"]))
        check("the cycle table has a row per batch (up to its cap)",
              dom["cycle_rows"] == min(data["cycles"]["batches"], data["cycles"]["rows_cap"]) > 0,
              str(dom["cycle_rows"]))
        check("the data-parallel breakdown names its stages and devices",
              all(p["stage"] in dom["dp_text"] for p in data["data_parallel"]) and
              "suggested share" in dom["dp_text"], dom["dp_text"][:200])
        check("a stacked bar per stage and device whose parts fill it",
              len(dom["decomp_bars"]) == len(data["decomposition"]) > 0 and
              all(abs(w - 100) < 0.01 for w in dom["decomp_bars"]), repr(dom["decomp_bars"]))
        check("a scheduler bar per host-span row whose parts fill it, or a note saying none",
              (len(dom["sched_bars"]) == len(data["sched"]["rows"]) > 0 and
               all(abs(w - 100) < 0.01 for w in dom["sched_bars"]))
              if data["sched"]["method"] else
              (not dom["sched_bars"] and "no scheduler figures" in dom["sched_note"]),
              repr(dom["sched_bars"]) + " " + dom["sched_note"])
        check("the bandwidth table has a row per device, track and stage that moved bytes",
              dom["bw_rows"] == [b["name"] for b in data["bandwidth"]] and
              (data["bandwidth"] or "carries bytes" in dom["bw_note"]), repr(dom["bw_rows"]))
        tl = data["timeline"]
        check("the timeline holds at most its cap of spans", len(tl["spans"]) <= tl["cap"],
              "%d spans" % len(tl["spans"]))
        check("the page states the cap", str(tl["cap"]) in dom["tl_note"], dom["tl_note"])
        if expect_summarized:
            check("a large trace is summarized beyond the cap",
                  tl["spans_total"] > tl["cap"] and "buckets" in tl and "summarizes" not in dom["tl_note"],
                  dom["tl_note"])
        else:
            check("a small trace is drawn in full", len(tl["spans"]) == tl["spans_total"], dom["tl_note"])

        x, y, name = json.loads(evaluate(b, session, SPAN_POINT))
        b.call("Input.dispatchMouseEvent", session, type="mouseMoved", x=x, y=y)
        tip = evaluate(b, session, "document.getElementById('tl-tip').textContent")
        check("hovering a span shows its fields", tip.startswith(name) and "duration:" in tip, repr(tip))
        before = evaluate(b, session, "JSON.stringify(view)")
        b.call("Input.dispatchMouseEvent", session, type="mouseWheel", x=x, y=y, deltaX=0, deltaY=-300)
        after = evaluate(b, session, "JSON.stringify(view)")
        v0, v1 = json.loads(before), json.loads(after)
        check("the wheel zooms in", v1[1] - v1[0] < v0[1] - v0[0], "%s -> %s" % (before, after))

        evaluate(b, session, "document.getElementById('tl-reset').click()")
        back = json.loads(evaluate(b, session, "JSON.stringify(view)"))
        want = tl["detail"] if tl["detail"][1] > tl["detail"][0] else [0, tl["duration_ns"]]
        check("'busiest window' returns to the stretch drawn in full", back == want,
              "%s, expected %s" % (back, want))

        requests = [e["params"]["request"]["url"] for e in b.events
                    if e.get("method") == "Network.requestWillBeSent"]
        check("the page loads nothing but itself", all(u == url for u in requests), repr(requests))
        errors = [e["params"] for e in b.events if e.get("method") == "Runtime.exceptionThrown" or
                  (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert")) or
                  (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
        check("no console errors", not errors, json.dumps(errors)[:2000])

        height = evaluate(b, session, "document.documentElement.scrollHeight")
        b.call("Emulation.setDeviceMetricsOverride", session, width=1280, height=min(int(height), 8000),
               deviceScaleFactor=1, mobile=False)
        png = base64.b64decode(b.call("Page.captureScreenshot", session, format="png")["data"])
        with open(shot, "wb") as f:
            f.write(png)
        check("a screenshot was written", png[:8] == b"\x89PNG\r\n\x1a\n", shot)
        print("screenshot: " + shot)
    finally:
        b.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
