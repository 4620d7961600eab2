#!/usr/bin/env python3
"""Checks a `simhash --report` page as a browser rendered it (`chromium --dump-dom`).

    report_check.py DOM.html REMOVED.jsonl [NETLOG.json]

- every record of REMOVED.jsonl (`simhash dedup --removed`) appears as a pair with its kept
  record (`div.pair` with data-removed / data-kept), both sides' texts rendered;
- the hostile texts were rendered as text: no element that loads anything (img, iframe,
  object, embed, link, audio, video, source) and no `src=`/`href=` with a scheme other
  than `data:` or a `#` fragment;
- the Content-Security-Policy meta forbids the network (default-src 'none');
- with NETLOG (chromium --log-net-log), no request made by the page (see page_requests).

    report_check.py --requests NETLOG   prints the page's requests, one a line (a control).
Exits 1 with the reasons on a failure. Python standard library only.
"""
import json
import re
import sys
from html.parser import HTMLParser

LOADERS = {"img", "iframe", "object", "embed", "link", "audio", "video", "source", "frame"}


class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.pairs = []  # (removed, kept, [side texts])
        self.loaders = []
        self.urls = []
        self.csp = None
        self.stack = []  # open elements: (tag, is pair, is text)
        self.pair = None
        self.text = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag in LOADERS:
            self.loaders.append((tag, a))
        for name in ("src", "href", "action", "formaction", "poster", "srcset"):
            if name in a and a[name] is not None:
                self.urls.append((tag, name, a[name]))
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp = a.get("content")
        is_pair = tag == "div" and "pair" in cls
        is_text = tag == "div" and "text" in cls
        if is_pair:
            self.pair = [a.get("data-removed"), a.get("data-kept"), []]
            self.pairs.append(self.pair)
        if is_text and self.pair is not None:
            self.text = []
        if tag not in ("meta", "input", "br", "hr", "img", "link", "source"):
            self.stack.append((tag, is_pair, is_text))

    def handle_endtag(self, tag):
        while self.stack:
            t, is_pair, is_text = self.stack.pop()
            if is_text and self.text is not None and self.pair is not None:
                self.pair[2].append("".join(self.text))
                self.text = None
            if is_pair:
                self.pair = None
            if t == tag:
                break

    def handle_data(self, data):
        if self.text is not None:
            self.text.append(data)


def page_requests(path):
    """The URLs (not file:, data:, about:) that the page's own origin requested, from a
    chromium --log-net-log file. The browser's requests for itself (update checks and
    the like, which --disable-background-networking does not stop) have the initiator
    "not an origin" and are not the page's."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read().rstrip()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut short when the browser exited
        log = json.loads(text.rstrip(",") + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log.get("events", []):
        params = event.get("params") or {}
        if names.get(event.get("type")) != "URL_REQUEST_START_JOB":
            continue
        url = params.get("url", "")
        if not url or url.startswith(("file:", "data:", "about:", "chrome:")):
            continue
        if params.get("initiator") == "not an origin":
            continue
        urls.append(url)
    return sorted(set(urls))


def main():
    if sys.argv[1] == "--requests":
        for url in page_requests(sys.argv[2]):
            print(url)
        return
    dom_path, removed_path = sys.argv[1], sys.argv[2]
    netlog = sys.argv[3] if len(sys.argv) > 3 else None
    dom = Dom()
    with open(dom_path, encoding="utf-8") as f:
        dom.feed(f.read())
    problems = []
    shown = {}
    for removed, kept, texts in dom.pairs:
        shown[removed] = (kept, texts)
    removed = []
    with open(removed_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                removed.append((str(r["id"]), str(r["duplicate_of"])))
    if not removed:
        problems.append("the run removed nothing: the check needs removals")
    for rid, kept in removed:
        if rid not in shown:
            problems.append(f"removed record {rid!r} is not on the page")
        elif shown[rid][0] != kept:
            problems.append(f"removed record {rid!r} is shown with {shown[rid][0]!r}, not {kept!r}")
        elif len(shown[rid][1]) != 2 or not all(t.strip() for t in shown[rid][1]):
            problems.append(f"removed record {rid!r}: both texts are not rendered")
    for tag, attrs in dom.loaders:
        problems.append(f"an element that loads: <{tag} {attrs}>")
    for tag, name, url in dom.urls:
        if not (url.startswith("data:") or url.startswith("#")):
            problems.append(f"<{tag} {name}={url!r}>")
    if not dom.csp or "default-src 'none'" not in dom.csp:
        problems.append(f"no Content-Security-Policy with default-src 'none': {dom.csp!r}")
    if netlog:
        net = page_requests(netlog)
        for u in net:
            problems.append(f"the page requested {u}")
        print(f"net log: {len(net)} requests by the page outside it")
    print(f"{len(removed)} removed records, {len(dom.pairs)} pairs on the page")
    for p in problems:
        print("FAIL:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
