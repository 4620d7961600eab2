#!/usr/bin/env python3
"""Writes news.jsonl: short wire stories, some republished with small edits (near-duplicates),
some exact copies, some unrelated. Deterministic; run from this folder to regenerate."""
import json

stories = [
    "The city council voted on Tuesday to expand the downtown bike lane network by twelve miles, "
    "citing a sharp rise in cycling commuters since the spring. Construction is expected to begin "
    "in March and finish before the end of next year, according to the transportation department. "
    "Opponents argued that the plan removes too many parking spaces from busy shopping streets.",
    "Researchers at the university announced a new battery design that charges in under ten minutes "
    "and keeps ninety percent of its capacity after two thousand cycles. The team said the cells use "
    "abundant materials such as sodium and iron, which could lower costs for grid storage. A startup "
    "has licensed the technology and plans a pilot factory within two years.",
    "Heavy rain caused flooding across the northern valley overnight, closing several highways and "
    "forcing hundreds of residents to leave their homes. Emergency crews rescued drivers stranded on "
    "flooded roads, and the weather service warned that more storms would arrive by the weekend. "
    "Schools in three districts will remain closed on Friday.",
    "The national football team secured a place in the final after a dramatic penalty shootout that "
    "ended a tense semifinal. The goalkeeper saved two penalties, and the captain scored the winning "
    "kick in front of a crowd of sixty thousand. The final will be played on Sunday evening against "
    "the defending champions.",
    "Shares of the largest chip maker fell six percent after the company lowered its revenue forecast "
    "for the coming quarter, blaming weaker demand for personal computers. Analysts said the outlook "
    "reflects a broader slowdown in consumer electronics, although data center sales continued to grow "
    "at a healthy pace.",
    "A rare comet will be visible to the naked eye next week for the first time in more than fifty "
    "years, astronomers said. The best views will come shortly before dawn, low on the eastern horizon, "
    "away from city lights. Binoculars will reveal its long tail, which stretches across several "
    "degrees of sky.",
    "The museum reopened its ancient history wing after a three year renovation that added climate "
    "controlled galleries and new lighting. Visitors can now see more than four hundred objects that had "
    "been kept in storage, including bronze tools, painted pottery and a carved stone gate from an early "
    "city.",
    "Officials confirmed that the annual music festival will return to the riverside park this summer "
    "with three stages and more than eighty performers. Ticket sales open on Monday, and organizers "
    "promised shorter lines at the gates after complaints about long waits last year.",
]

unrelated = [
    "Recipe of the week: roast the vegetables with olive oil, garlic and rosemary for forty minutes, "
    "then toss them with lemon juice and fresh parsley before serving warm.",
    "The library will extend its opening hours during the exam period, staying open until midnight "
    "from Monday to Thursday, and offering extra study rooms that can be booked online.",
    "Local volunteers planted more than two thousand trees along the river banks on Saturday, part of a "
    "long term effort to restore habitat for birds and reduce erosion.",
    "A new ferry route will connect the two islands starting in June, cutting travel time to forty "
    "minutes and running six times a day in both directions.",
]

def substitute(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)

records = []
def add(id_, text, source):
    records.append({"id": id_, "source": source, "text": text})

add("wire-001", stories[0], "wire")
add("wire-002", stories[1], "wire")
add("blog-101", substitute(stories[0], "twelve miles", "12 miles"), "blog")
add("wire-003", stories[2], "wire")
add("paper-201", stories[1] + " Reporting by the science desk.", "paper")
add("wire-004", stories[3], "wire")
add("misc-301", unrelated[0], "misc")
add("paper-202", stories[2].upper(), "paper")
add("wire-005", stories[4], "wire")
add("blog-102", substitute(stories[3], "sixty thousand", "nearly sixty thousand"), "blog")
add("wire-006", stories[5], "wire")
add("misc-302", unrelated[1], "misc")
add("paper-203", stories[4], "paper")
add("wire-007", stories[6], "wire")
add("blog-103", substitute(stories[5], "naked eye", "unaided eye"), "blog")
add("misc-303", unrelated[2], "misc")
add("wire-008", stories[7], "wire")
add("paper-204", substitute(stories[6], "three year", "three-year").replace("  ", " "), "paper")
add("misc-304", unrelated[3], "misc")
add("blog-104", stories[7].replace(" Ticket sales open on Monday,", " Ticket sales open Monday,"), "blog")
add("short-401", "Breaking news.", "misc")
add("short-402", "...", "misc")

with open("news.jsonl", "w", encoding="utf-8") as f:
    for r in records:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
