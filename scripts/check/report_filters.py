#!/usr/bin/env python3
"""Checks the relation filter of a MinHash `simhash --report` page in headless Chromium.

    report_filters.py PAGE.html [RELATION...]

Loads the page over the DevTools protocol (report_labels.Browser) and checks that the
relation filter offers "any" and exactly the relations the sampled pairs have, in the order
same, template, overlap; that each RELATION named is among them (so that a page made to have
one is known to show it); and that choosing each shows exactly the pairs of that relation,
and "any" all of them again, with the count line saying how many. Exits 1 with the reasons
on a failure. Python's standard library only.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_labels import TIMEOUT, Browser, new_tab  # noqa: E402

ORDER = ["same", "template", "overlap"]


def main():
    page, wanted = os.path.abspath(sys.argv[1]), sys.argv[2:]
    problems = []
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(profile, os.path.join(profile, "netlog.json"))
        try:
            checked = run(browser, page, wanted, problems)
        finally:
            browser.close()
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(f"relation filter: {', '.join(checked)} each show their pairs and no other")
    sys.exit(1 if problems else 0)


def run(browser, page, wanted, problems):
    session, js = new_tab(browser)
    browser.call("Page.navigate", {"url": "file://" + page}, session)
    deadline = time.monotonic() + TIMEOUT
    while not js("document.readyState === 'complete' && !!document.getElementById('filter-relation')"):
        if time.monotonic() > deadline:
            problems.append("the page did not load, or has no relation filter")
            return []
        time.sleep(0.05)
    cards = js("Array.from(document.querySelectorAll('#pairs-list .pair'))"
               ".map(function (c) { return c.dataset.relation || ''; })")
    options = js("Array.from(document.getElementById('filter-relation').options)"
                 ".map(function (o) { return o.value; })")
    present = [r for r in ORDER if r in cards]
    if options != [""] + present:
        problems.append(f"the filter offers {options}, the pairs have {sorted(set(cards))}")
    for r in wanted:
        if r not in present:
            problems.append(f"no sampled pair is {r!r}: the page cannot show its filter")
    if any(r not in ORDER for r in cards):
        problems.append(f"a pair has no relation, or an unknown one: {sorted(set(cards))}")
    for value in present + [""]:
        js("(function (box) { box.value = %r; box.dispatchEvent(new Event('input')); })"
           "(document.getElementById('filter-relation'))" % value)
        shown = js("Array.from(document.querySelectorAll('#pairs-list .pair'))"
                   ".filter(function (c) { return c.style.display !== 'none'; })"
                   ".map(function (c) { return c.dataset.relation || ''; })")
        want = [r for r in cards if not value or r == value]
        if shown != want:
            problems.append(f"{value or 'any'}: {len(shown)} pairs shown ({sorted(set(shown))}), "
                            f"not the {len(want)} of that relation")
        count = js("document.querySelector('#pairs-controls .count').textContent")
        if not count.startswith(f"{len(want)} of {len(cards)} "):
            problems.append(f"{value or 'any'}: the count says {count!r}")
    return present


if __name__ == "__main__":
    main()
