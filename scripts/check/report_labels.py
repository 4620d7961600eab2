#!/usr/bin/env python3
"""Labels pairs of a `simhash --report` page in headless Chromium, as a person would.

    report_labels.py PAGE.html OUTDIR

Drives Chromium over the DevTools protocol (`--remote-debugging-pipe`: NUL-terminated JSON
messages on file descriptors 3 and 4; Python's standard library only): labels the first 5
pairs of the labelling order with the keyboard (1 2 3 4 1), checks that the similarity and
the tool's relation are hidden until a pair is labelled and that `s` shows them, reloads
the page and checks that the 5 labels are still there ("5 of N labelled"), clicks
"export labels" and checks the downloaded labels file: 5 lines, the page's run id, the
pairs' ids and the labels given. Then checks from Chromium's net log that the page made
no request. Writes OUTDIR/labels.jsonl (the export) and OUTDIR/labels-netlog.json.
Exits 1 with the reasons on a failure.
"""
import fcntl
import json
import os
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import page_requests  # noqa: E402

KEYS = ["1", "2", "3", "4", "1"]
LABEL_OF_KEY = {"1": "DUP", "2": "TEMPLATE", "3": "DISTINCT", "4": "UNSURE"}
TIMEOUT = 30.0


class Browser:
    """Chromium with a DevTools pipe: `call` sends a command and waits for its answer."""

    def __init__(self, profile, netlog):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Out of the way of 3 and 4, so that the child's dup2 never overwrites one with the other.
        hi_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        hi_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)

        def child():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--remote-debugging-pipe", f"--user-data-dir={profile}",
             f"--log-net-log={netlog}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child, close_fds=False)
        for fd in (to_browser_r, from_browser_w, hi_r, hi_w):
            os.close(fd)
        self.out, self.inp = to_browser_w, from_browser_r
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.inp], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed its pipe")
            self.buf += chunk
        message, self.buf = self.buf.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def close(self):
        try:
            self.call("Browser.close")
        except (EOFError, OSError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    page, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    downloads = os.path.join(outdir, "downloads")
    os.makedirs(downloads, exist_ok=True)
    for name in os.listdir(downloads):
        os.remove(os.path.join(downloads, name))
    netlog = os.path.join(outdir, "labels-netlog.json")
    problems = []
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(profile, netlog)
        try:
            run(browser, page, downloads, outdir, problems)
        finally:
            browser.close()
    requests = page_requests(netlog)
    for url in requests:
        problems.append(f"the page requested {url}")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(f"labelling: 5 pairs labelled with the keyboard, kept across a reload, exported; "
              f"{len(requests)} requests by the page")
    sys.exit(1 if problems else 0)


def new_tab(browser):
    """A new tab: its DevTools session, and `js(expression)`, the expression's value there."""
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def js(expression):
        result = browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                              session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    return session, js


def run(browser, page, downloads, outdir, problems):
    browser.call("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    session, js = new_tab(browser)

    def loaded():
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if js("document.readyState === 'complete' && !!document.getElementById('label-progress')"
                  " && document.getElementById('label-progress').textContent.length > 0"):
                return
            time.sleep(0.05)
        raise TimeoutError("the page did not load")

    def key(k):
        code = f"Digit{k}" if k.isdigit() else f"Key{k.upper()}"
        vk = ord(k.upper())
        common = {"key": k, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
        browser.call("Input.dispatchKeyEvent", {"type": "keyDown", "text": k, **common}, session)
        browser.call("Input.dispatchKeyEvent", {"type": "keyUp", **common}, session)

    browser.call("Page.navigate", {"url": "file://" + page}, session)
    loaded()
    run_id = js("JSON.parse(document.getElementById('data').textContent).run_id")
    total = js("document.querySelectorAll('#pairs-list .pair').length")
    if total < len(KEYS):
        problems.append(f"the page has {total} pairs: the check needs {len(KEYS)}")
        return
    first = js("Array.from(document.querySelectorAll('#pairs-list .pair')).slice(0, 5)"
               ".map(function (c) { return [c.dataset.removed, c.dataset.kept]; })")
    hidden = "getComputedStyle(document.querySelectorAll('#pairs-list .pair')[%d]"\
             ".querySelector('.secret')).visibility"
    if js(hidden % 0) != "hidden":
        problems.append("the similarity of an unlabelled pair is shown")
    for k in KEYS:
        key(k)
    if js(hidden % 0) != "visible":
        problems.append("the similarity of a labelled pair is hidden")
    key("s")
    if js(hidden % (len(KEYS) + 1 if total > len(KEYS) + 1 else 0)) != "visible":
        problems.append("`s` does not show the similarity of an unlabelled pair")
    key("s")
    want_progress = f"{len(KEYS)} of {total} labelled"
    if js("document.getElementById('label-progress').textContent") != want_progress:
        problems.append(f"progress before the reload: not {want_progress!r}")

    browser.call("Page.reload", {}, session)
    time.sleep(0.2)
    loaded()
    got = js("document.getElementById('label-progress').textContent")
    if got != want_progress:
        problems.append(f"after the reload the page says {got!r}, not {want_progress!r}")
    want = {(a, b, LABEL_OF_KEY[k]) for (a, b), k in zip(first, KEYS)}
    shown = js("Array.from(document.querySelectorAll('#pairs-list .pair[data-label]'))"
               ".map(function (c) { return [c.dataset.removed, c.dataset.kept, c.dataset.label]; })")
    if {tuple(x) for x in shown} != want:
        problems.append(f"after the reload the labelled pairs are {shown}, not {sorted(want)}")

    js("document.getElementById('export').click()")
    # The download is named before its bytes are all there (an empty file for a moment, on a
    # busy machine): read until it holds a line per label given, or the time is up.
    deadline = time.monotonic() + TIMEOUT
    files, text = [], ""
    while time.monotonic() < deadline:
        files = [f for f in os.listdir(downloads) if f.endswith(".jsonl")]
        if files:
            with open(os.path.join(downloads, files[0]), encoding="utf-8") as f:
                text = f.read()
            if text.endswith("\n") and len(text.splitlines()) >= len(KEYS):
                break
        time.sleep(0.1)
    if not files:
        problems.append("export: no labels file was downloaded")
        return
    with open(os.path.join(outdir, "labels.jsonl"), "w", encoding="utf-8") as f:
        f.write(text)
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    exported = {(r.get("id_a"), r.get("id_b"), r.get("label")) for r in lines}
    if len(lines) != len(KEYS) or exported != want:
        problems.append(f"the labels file holds {lines}, not {sorted(want)}")
    if any(r.get("run_id") != run_id for r in lines):
        problems.append(f"the labels file's run ids are not the page's {run_id}")


if __name__ == "__main__":
    main()
