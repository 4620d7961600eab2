//! The audit's estimate against values computed by hand.

use super::*;

const RUN: &str = "00112233aabbccdd";

/// A page of three buckets: 0.40–0.45 (100 removals, 4 on the page), 0.90–0.95 (12
/// removals, 2 of them matches of the index, 2 on the page), 0.95–1 (50, 3 on the page).
fn page() -> Page {
    let relations =
        ["same", "template", "template", "same", "same", "same", "same", "same", "same"];
    let buckets = [8, 8, 8, 8, 18, 18, 19, 19, 19];
    let pairs: Vec<serde_json::Value> = (0..9)
        .map(|i| serde_json::json!([2 * i, 2 * i + 1, "0.5000", relations[i], buckets[i]]))
        .collect();
    let docs: Vec<serde_json::Value> = (0..9)
        .flat_map(|i| {
            [serde_json::json!({"id": format!("r{i}")}), serde_json::json!({"id": format!("k{i}")})]
        })
        .collect();
    let json = serde_json::json!({
        "run_id": RUN, "command": "dedup", "measure": "jaccard", "what": "removals",
        "pairs": pairs, "order": [], "clusters": [], "docs": docs, "text_chars": 1500,
        "buckets": [
            {"bucket": 8, "label": "0.40–0.45", "total": 100, "unsampled": 0, "sampled": 4},
            {"bucket": 18, "label": "0.90–0.95", "total": 12, "unsampled": 2, "sampled": 2},
            {"bucket": 19, "label": "0.95–1", "total": 50, "unsampled": 0, "sampled": 3},
        ],
    });
    let html = format!(
        "<!DOCTYPE html><html><body>{DATA_OPEN}{json}</script><script>x</script></body></html>"
    );
    parse_page(&html).expect("page")
}

fn line(a: &str, b: &str, label: &str) -> String {
    format!("{{\"run_id\":\"{RUN}\",\"id_a\":\"{a}\",\"id_b\":\"{b}\",\"label\":\"{label}\"}}\n")
}

/// Six labels, and five lines that are not labels of the page's pairs.
fn labels_file() -> String {
    let mut text = String::new();
    for (i, l) in ["DUP", "DUP", "TEMPLATE", "DISTINCT", "DUP", "dup"].iter().enumerate() {
        text += &line(&format!("r{i}"), &format!("k{i}"), l);
    }
    text += "not json\n\n";
    text += &line("r6", "k6", "MAYBE");
    text += &line("r6", "k0", "DUP");
    text += &line("r0", "k0", "DISTINCT");
    text += "{\"id_a\":\"r7\",\"id_b\":\"k7\",\"label\":\"DUP\"}\n";
    text
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn wilson_by_hand() {
    // Values computed by hand (Python, the formula of Wilson 1927, z = 1.959963984540054).
    for (k, n, low, high) in [
        (2, 4, 0.150038989152149, 0.849961010847851),
        (1, 4, 0.045587260809701, 0.699358157417598),
        (0, 4, 0.0, 0.489890836454597),
        (2, 2, 0.342380227506653, 1.0),
        (0, 2, 0.0, 0.657619772493347),
    ] {
        let (l, h) = wilson(f64::from(k) / f64::from(n), f64::from(n));
        assert!(close(l, low) && close(h, high), "{k}/{n}: {l} {h}");
    }
    assert_eq!(wilson(0.0, 0.0), (0.0, 1.0));
}

/// A bucket's row: (bucket, population, labelled, weight, per label (count, share, low,
/// high)).
type Row = (usize, u64, u64, Option<f64>, [(u64, Option<f64>, f64, f64); 4]);

#[test]
fn shares_weights_and_intervals_by_hand() {
    let page = page();
    let labels =
        parse_labels("labels.jsonl", &labels_file(), &page, "report.html").expect("labels");
    assert_eq!(labels.read, 6);
    assert_eq!(
        labels.problems,
        [
            "labels.jsonl:7: not a label: expected ident at line 1 column 2",
            "labels.jsonl:9: not a label: \"MAYBE\" (DUP, TEMPLATE, DISTINCT or UNSURE)",
            "labels.jsonl:10: the pair \"r6\", \"k0\" is not on the page",
            "labels.jsonl:11: the pair \"r0\", \"k0\" was labelled on line 1 already",
            "labels.jsonl:12: no \"run_id\"",
        ]
    );
    let e = estimate(&page, &labels, "report.html");
    // (bucket, population, labelled, weight, [(count, share, low, high); 4]): by hand.
    let table: [Row; 3] = [
        (
            0,
            100,
            4,
            Some(25.0),
            [
                (2, Some(0.5), 0.150038989152149, 0.849961010847851),
                (1, Some(0.25), 0.045587260809701, 0.699358157417598),
                (1, Some(0.25), 0.045587260809701, 0.699358157417598),
                (0, Some(0.0), 0.0, 0.489890836454597),
            ],
        ),
        (
            1,
            10,
            2,
            Some(5.0),
            [
                (2, Some(1.0), 0.342380227506653, 1.0),
                (0, Some(0.0), 0.0, 0.657619772493347),
                (0, Some(0.0), 0.0, 0.657619772493347),
                (0, Some(0.0), 0.0, 0.657619772493347),
            ],
        ),
        // No labels: no share, the interval from zero pairs, no division by zero.
        (2, 50, 0, None, [(0, None, 0.0, 1.0); 4]),
    ];
    for (b, population, labelled, weight, shares) in table {
        let got = &e.buckets[b];
        assert_eq!(
            (got.population, got.labelled, got.weight),
            (population, labelled, weight),
            "{b}"
        );
        for (s, (count, share, low, high)) in got.shares.iter().zip(shares) {
            assert_eq!((s.count, s.share), (count, share), "{b} {}", s.label);
            assert!(close(s.low, low) && close(s.high, high), "{b} {s:?}");
        }
    }
    // Weighted over 0.40–0.45 and 0.90–0.95: 110 removals, each labelled pair standing
    // for 25 or 5; Kish's n = 110² / (100²/4 + 10²/2).
    let w = &e.weighted;
    assert_eq!((w.population, w.total, w.labelled), (110, 162, 6));
    assert!(close(w.effective_n.expect("n"), 4.745098039215686));
    for (s, (share, low, high)) in w.shares.iter().zip([
        (60.0 / 110.0, 0.191451059182534, 0.858787069564236),
        (25.0 / 110.0, 0.043579793327544, 0.654991434191838),
        (25.0 / 110.0, 0.043579793327544, 0.654991434191838),
        (0.0, 0.0, 0.447380583785533),
    ]) {
        assert!(close(s.share.expect("share"), share), "{s:?}");
        assert!(close(s.low, low) && close(s.high, high), "{s:?}");
    }
    let lost = &e.lost_as_distinct;
    assert!(close(lost.estimate.expect("lost"), 25.0));
    assert!((lost.low - 4.793777).abs() < 1e-6 && (lost.high - 72.049058).abs() < 1e-6);
    assert_eq!((e.not_covered, e.unsampled), (52, 2));
    assert_eq!(e.buckets_without_labels, ["0.95–1"]);
    // The tool's relation against the labels.
    assert_eq!(e.confusion.relations, ["same", "template"]);
    assert_eq!(e.confusion.pairs, [vec![3, 0, 1, 0], vec![1, 1, 0, 0]]);
    assert_eq!(e.confusion.weighted, [vec![35.0, 0.0, 25.0, 0.0], vec![25.0, 25.0, 0.0, 0.0]]);
    let text = e.text();
    for want in [
        "audit of report.html (dedup, run 00112233aabbccdd): 6 labels from labels.jsonl, 5 bad lines left out",
        "0.40–0.45              100        4         4    25.00  50.0 (15.0–85.0)       25.0 (4.6–69.9)        25.0 (4.6–69.9)        0.0 (0.0–49.0)",
        "0.90–0.95               10        2         2     5.00  100.0 (34.2–100.0)",
        "0.95–1                  50        3         0        -  no labels: each share is unknown, 0–100 (an interval from zero pairs)",
        "54.5 (19.1–85.9)       22.7 (4.4–65.5)        22.7 (4.4–65.5)        0.0 (0.0–44.7)         (effective n 4.7)",
        "documents lost as distinct: 25 of 110 removals (95%: 5–72)",
        "not in the estimate: 52 of 162 removals: 50 in buckets without labels (0.95–1); 2 that matched the index (never sampled)",
        "same        3 (35)              0 (0)               1 (25)              0 (0)",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
}

#[test]
fn labels_of_another_run_are_refused_naming_both() {
    let page = page();
    let other = labels_file().replace(RUN, "ffffffffffffffff");
    let err = parse_labels("l.jsonl", &other, &page, "report.html").expect_err("refused");
    let message = err.to_string();
    assert!(message.contains("ffffffffffffffff") && message.contains(RUN), "{message}");
    assert!(message.starts_with("l.jsonl:1: "), "{message}");
}

#[test]
fn no_labels_at_all() {
    let page = page();
    let labels = parse_labels("l.jsonl", "", &page, "r.html").expect("labels");
    let e = estimate(&page, &labels, "r.html");
    assert!(
        e.buckets.iter().all(|b| b.weight.is_none() && b.shares.iter().all(|s| s.share.is_none()))
    );
    assert_eq!((e.weighted.population, e.weighted.effective_n), (0, None));
    assert!(e.weighted.shares.iter().all(|s| (s.share, s.low, s.high) == (None, 0.0, 1.0)));
    assert_eq!(e.lost_as_distinct.estimate, None);
    assert!(e.confusion.relations.is_empty());
    let text = e.text();
    assert!(text.contains("documents lost as distinct: unknown, no labels"), "{text}");
    assert!(text.contains("not in the estimate: 162 of 162 removals"), "{text}");
    // The JSON has no NaN or infinity.
    let json = serde_json::to_string(&e).expect("json");
    assert!(!json.contains("NaN") && !json.contains("inf"), "{json}");
}

#[test]
fn pages_without_labelling_are_named() {
    let err = parse_page("<html>no data</html>").expect_err("no page");
    assert!(err.to_string().contains("not a simhash --report page"));
    let old = format!(
        "{DATA_OPEN}{{\"command\":\"dedup\",\"measure\":\"jaccard\",\"pairs\":[],\"docs\":[]}}</script>"
    );
    assert!(parse_page(&old).expect_err("old").to_string().contains("no run id"));
}

/// A page whose bucket list names one bucket twice (edited by hand) is refused: its pairs
/// would be weighted twice.
#[test]
fn a_bucket_listed_twice_is_refused() {
    let bucket = serde_json::json!(
        {"bucket": 8, "label": "0.40–0.45", "total": 1, "unsampled": 0, "sampled": 1}
    );
    let json = serde_json::json!({
        "run_id": RUN, "command": "dedup", "measure": "jaccard", "what": "removals",
        "pairs": [[0, 1, "0.5000", "same", 8]], "order": [], "clusters": [],
        "docs": [{"id": "r0"}, {"id": "k0"}], "text_chars": 1500,
        "buckets": [bucket.clone(), bucket.clone()],
    });
    let html = format!("{DATA_OPEN}{json}</script>");
    let err = parse_page(&html).expect_err("refused");
    assert!(err.to_string().contains("bucket 8 listed twice"), "{err}");
    let once = json.to_string().replacen(&format!(",{bucket}"), "", 1);
    parse_page(&format!("{DATA_OPEN}{once}</script>")).expect("one bucket");
}
