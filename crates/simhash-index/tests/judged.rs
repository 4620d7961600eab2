//! The relation of each pair of the judged real-text sets (`benches/judged/pairs.jsonl`,
//! `debian.jsonl`, `debian2.jsonl`: removals of the old default read by judges, labels of
//! `JUDGING.md`; `fresh*.jsonl`, `debian3.jsonl`: removals of the default with relations)
//! against the judges' labels, with floors: the scorer of the sets, as a test that fails
//! when the relation gets worse. `cargo test -p simhash-index --test judged -- --nocapture` prints
//! the confusion matrix per similarity bucket, as `docs/accuracy.md` shows it.

#![allow(clippy::print_stdout, reason = "the scorer prints the confusion matrix with --nocapture")]

use std::collections::BTreeMap;

use simhash_core::Fingerprinter;
use simhash_index::lsh::{Relation, Templates, relation};

/// The judges' labels, in the order of the matrix's rows.
const LABELS: [&str; 4] = ["DUP", "TEMPLATE", "DISTINCT", "UNSURE"];

struct Pair {
    bucket: usize,
    label: String,
    relation: Relation,
}

fn words(fp: &Fingerprinter, text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    fp.for_each_shingle_and_token(text, |_| {}, |t| out.push(t));
    out
}

/// A file of `benches/judged`, whole.
fn judged_file(name: &str) -> String {
    let path = format!("{}/../../benches/judged/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A judged set of `benches/judged`.
fn judged_set(name: &str) -> Vec<Pair> {
    let data = judged_file(name);
    let fp = Fingerprinter::new();
    data.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let text = |k: &str| v[k].as_str().expect("a text").to_string();
            Pair {
                bucket: v["bucket"].as_u64().expect("a bucket") as usize,
                label: text("label"),
                relation: relation(&words(&fp, &text("removed")), &words(&fp, &text("kept"))),
            }
        })
        .collect()
}

/// The share of the pairs labelled `label` that `pick` holds.
fn share(pairs: &[Pair], label: &str, pick: impl Fn(Relation) -> bool) -> f64 {
    let of: Vec<&Pair> = pairs.iter().filter(|p| p.label == label).collect();
    of.iter().filter(|p| pick(p.relation)).count() as f64 / of.len().max(1) as f64
}

/// A judged set of removals of the old default (every label drawn from its removals) scored
/// as the targets read: shares of pairs by label.
struct Scores {
    distinct_kept: f64,
    same_removed: f64,
    templates_removed: f64,
    templates_named: f64,
    same_named: f64,
    keep_removes_templates: f64,
    keep_removes_same: f64,
}

/// Prints a judged set's confusion matrix, per bucket and over all, and its [`Scores`]; the
/// set holds at least `at_least` pairs.
fn scores(name: &str, at_least: usize) -> Scores {
    let pairs = judged_set(name);
    assert!(pairs.len() >= at_least, "{} judged pairs in {name}", pairs.len());
    scores_of(name, &pairs)
}

/// [`scores`] of `pairs`, printed under `name`.
fn scores_of(name: &str, pairs: &[Pair]) -> Scores {
    let mut cells: BTreeMap<(usize, &str, Relation), usize> = BTreeMap::new();
    for p in pairs {
        let label = LABELS.iter().find(|&&l| l == p.label).expect("a known label");
        *cells.entry((p.bucket, label, p.relation)).or_default() += 1;
        *cells.entry((usize::MAX, label, p.relation)).or_default() += 1;
    }
    let buckets: Vec<usize> = pairs
        .iter()
        .map(|p| p.bucket)
        .chain([usize::MAX])
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    println!("{name}");
    for b in buckets {
        let bucket = if b == usize::MAX { "all".to_string() } else { format!("bucket {b}") };
        println!("{bucket}: label -> same / template / overlap");
        for label in LABELS {
            let row: Vec<usize> = Relation::ALL
                .iter()
                .map(|&r| cells.get(&(b, label, r)).copied().unwrap_or(0))
                .collect();
            if row.iter().sum::<usize>() > 0 {
                println!("  {label:9} {:4} {:4} {:4}", row[0], row[1], row[2]);
            }
        }
    }
    let removed = |t: Templates| move |r: Relation| t.acts_on(r);
    let s = Scores {
        distinct_kept: 1.0 - share(pairs, "DISTINCT", removed(Templates::Remove)),
        same_removed: share(pairs, "DUP", removed(Templates::Remove)),
        templates_removed: share(pairs, "TEMPLATE", removed(Templates::Remove)),
        templates_named: share(pairs, "TEMPLATE", |r| r == Relation::Template),
        same_named: share(pairs, "DUP", |r| r == Relation::Same),
        keep_removes_templates: share(pairs, "TEMPLATE", removed(Templates::Keep)),
        keep_removes_same: share(pairs, "DUP", removed(Templates::Keep)),
    };
    println!(
        "{name}: distinct kept {:.3}, same removed {:.3}, templates removed {:.3}; templates \
         named template {:.3}, same named same {:.3}; --templates keep removes {:.3} of the \
         templates, {:.3} of the same",
        s.distinct_kept,
        s.same_removed,
        s.templates_removed,
        s.templates_named,
        s.same_named,
        s.keep_removes_templates,
        s.keep_removes_same
    );
    s
}

/// Fails when a set's scores fall under `floor`'s (for `--templates keep`'s share of the
/// templates, over it: a ceiling).
fn assert_floors(name: &str, s: &Scores, floor: &Scores) {
    let at_least = [
        ("distinct documents kept", s.distinct_kept, floor.distinct_kept),
        ("same documents removed", s.same_removed, floor.same_removed),
        ("templates removed", s.templates_removed, floor.templates_removed),
        ("templates named template", s.templates_named, floor.templates_named),
        ("same documents named same", s.same_named, floor.same_named),
        ("--templates keep removes the same", s.keep_removes_same, floor.keep_removes_same),
    ];
    for (what, got, min) in at_least {
        assert!(got >= min, "{name}: {what}: {got:.3}, under {min}");
    }
    let (got, max) = (s.keep_removes_templates, floor.keep_removes_templates);
    assert!(got <= max, "{name}: --templates keep removes templates: {got:.3}, over {max}");
}

#[test]
fn the_relation_agrees_with_the_judges() {
    // Floors: what the relation reaches on this set today (a worse relation fails).
    let floor = Scores {
        distinct_kept: 0.95,
        same_removed: 0.97,
        templates_removed: 0.90,
        templates_named: 0.85,
        same_named: 0.85,
        keep_removes_templates: 0.10,
        keep_removes_same: 0.90,
    };
    assert_floors("pairs.jsonl", &scores("pairs.jsonl", 300), &floor);
}

/// The Debian set (`benches/judged/debian.jsonl`): removals of the old default on Debian's
/// package descriptions in eight languages (`build_debian.py`), out of sample for every
/// rule but the stock packaging words, which were read off it. Its floors are today's
/// figures, below the targets (docs/accuracy.md says where and why).
#[test]
fn the_relation_on_debian_package_descriptions() {
    let floor = Scores {
        distinct_kept: 0.89,
        same_removed: 0.98,
        templates_removed: 0.88,
        templates_named: 0.83,
        same_named: 0.85,
        keep_removes_templates: 0.06,
        keep_removes_same: 0.85,
    };
    assert_floors("debian.jsonl", &scores("debian.jsonl", 300), &floor);
}

/// A second Debian set (`benches/judged/debian2.jsonl`: the old default's removals on the
/// same corpus, less the first set's, judged after the stock words were chosen on the
/// first): out of sample for them. Its distinct floor is under the 0.90: a sentence
/// added to the whole of the kept text reads as a variant's ([`ADDED_WORDS`]), and one of
/// its 23 distinct pairs is such ("It contains files to run Akonadi based tests").
///
/// [`ADDED_WORDS`]: simhash_index::lsh::ADDED_WORDS
#[test]
fn the_relation_on_a_second_debian_sample() {
    let floor = Scores {
        distinct_kept: 0.86,
        same_removed: 0.95,
        templates_removed: 0.91,
        templates_named: 0.87,
        same_named: 0.95,
        keep_removes_templates: 0.06,
        keep_removes_same: 0.95,
    };
    assert_floors("debian2.jsonl", &scores("debian2.jsonl", 200), &floor);
}

/// Each bucket's weight in a set: its share of the run's removals (`*-buckets.tsv`).
fn weights(name: &str) -> Vec<f64> {
    let data = judged_file(name);
    let counts: Vec<f64> = data
        .lines()
        .map(|l| l.split('\t').nth(3).and_then(|n| n.trim().parse().ok()).expect("a count"))
        .collect();
    let total: f64 = counts.iter().sum();
    counts.iter().map(|c| c / total).collect()
}

/// What the judges say of a fresh sample's removals (every pair was removed, so every
/// relation acts; the estimate of the default's removals on that corpus, weighted by
/// bucket): the shares of same documents, template siblings and distinct documents among
/// the removals the relation still acts on, and of the same documents named `same` and the
/// template siblings named `template` (pairs).
struct Fresh {
    same: f64,
    template: f64,
    distinct: f64,
    same_named: f64,
    template_named: f64,
}

fn fresh(set: &str, buckets: &str) -> Fresh {
    let pairs = judged_set(set);
    let weights = weights(buckets);
    assert!(pairs.len() >= 140, "{} judged pairs in {set}", pairs.len());
    let estimate = |label: &str, pick: &dyn Fn(&Pair) -> bool| -> f64 {
        weights
            .iter()
            .enumerate()
            .map(|(b, w)| {
                let of: Vec<&Pair> = pairs.iter().filter(|p| p.bucket == b).collect();
                let hits = of.iter().filter(|p| p.label == label && pick(p)).count();
                w * hits as f64 / of.len().max(1) as f64
            })
            .sum()
    };
    let acted = |p: &Pair| Templates::Remove.acts_on(p.relation);
    let all = |_: &Pair| true;
    let named = |label: &str, r: Relation| share(&pairs, label, |x| x == r);
    let f = Fresh {
        same: estimate("DUP", &all),
        template: estimate("TEMPLATE", &all),
        distinct: estimate("DISTINCT", &acted),
        same_named: named("DUP", Relation::Same),
        template_named: named("TEMPLATE", Relation::Template),
    };
    println!(
        "{set} removals (weighted): same {:.3}, template {:.3}, distinct {:.3}; same named \
         same {:.3}, templates named template {:.3} (pairs)",
        f.same, f.template, f.distinct, f.same_named, f.template_named
    );
    f
}

/// The three sets of the old default's removals as one (924 pairs, as the hidden set
/// is one): the targets are the floors, but for `--templates keep`'s share of the
/// same documents (0.95 asked; the gcloud pages of one command in its GA and beta tracks
/// are named `template`).
#[test]
fn the_three_judged_sets_as_one_meet_the_targets() {
    let pairs: Vec<Pair> =
        ["pairs.jsonl", "debian.jsonl", "debian2.jsonl"].into_iter().flat_map(judged_set).collect();
    assert!(pairs.len() >= 900, "{} judged pairs", pairs.len());
    let floor = Scores {
        distinct_kept: 0.90,
        same_removed: 0.97,
        templates_removed: 0.90,
        templates_named: 0.80,
        same_named: 0.85,
        keep_removes_templates: 0.10,
        keep_removes_same: 0.90,
    };
    assert_floors("the three sets", &scores_of("the three sets", &pairs), &floor);
}

/// What reading a sentence added to the whole of the kept text as a variant's
/// ([`ADDED_WORDS`]) newly removes (`benches/judged/added-*-removed.jsonl`: a uniform sample,
/// 40 of the 501 records it newly removes on the Debian corpus and 40 of the 67 on the
/// 500 MB real corpus that no other set had judged; two judges each): the relation still
/// removes them, and at most 8% are distinct documents (6 of the 80: about the default's
/// share, and far above the 0.5% the issue asks of all removals; see docs/accuracy.md).
///
/// [`ADDED_WORDS`]: simhash_index::lsh::ADDED_WORDS
#[test]
fn what_a_sentence_added_to_the_kept_text_removes() {
    for set in ["added-debian-removed.jsonl", "added-real-removed.jsonl"] {
        let pairs = judged_set(set);
        assert_eq!(pairs.len(), 40, "{set}");
        let acted = |p: &&Pair| Templates::Remove.acts_on(p.relation);
        let removed = pairs.iter().filter(acted).count();
        let distinct = pairs.iter().filter(acted).filter(|p| p.label == "DISTINCT").count();
        println!("{set}: {removed} of {} removed, {distinct} distinct", pairs.len());
        assert!(removed >= 38, "{set}: {removed} of 40 removed");
        assert!(distinct * 100 <= 8 * removed, "{set}: {distinct} of {removed} distinct");
    }
}

/// What an edition's allowance (`simhash_index::lsh::EDITION_PERCENT`: words added to the
/// whole of a long kept text) names `same`, which `--templates keep` then removes: on the
/// 500 MB real corpus mostly one page's release tracks and changelog entries, the same
/// document (30 of 37), and on the Debian corpus, where descriptions are short, almost
/// nothing (1 of 40).
#[test]
fn what_an_editions_allowance_names_the_same() {
    let named = |set: &str| {
        let pairs = judged_set(set);
        assert_eq!(pairs.len(), 40, "{set}");
        let same: Vec<Pair> = pairs.into_iter().filter(|p| p.relation == Relation::Same).collect();
        let dup = same.iter().filter(|p| p.label == "DUP").count();
        println!("{set}: {} of 40 named same, {dup} of them the same document", same.len());
        (same.len(), dup)
    };
    let (same, dup) = named("words-added-real.jsonl");
    assert!(same >= 35 && dup * 4 >= same * 3, "real: {dup} of {same} named same are the same");
    let (same, _) = named("words-added-debian.jsonl");
    assert!(same <= 2, "Debian: {same} named same");
    // Of the real sample's 33 same documents, 3 are not named same: pages under 300 tokens.
    let real = judged_set("words-added-real.jsonl");
    let missed = real.iter().filter(|p| p.label == "DUP" && p.relation != Relation::Same).count();
    assert!(missed <= 3, "{missed} same documents of the real sample not named same");
}

/// A fresh sample's floors: today's figures (the targets are stricter: see
/// docs/accuracy.md), with at most `distinct` distinct documents among the removals and at
/// least `template_named` of the template siblings named `template`.
fn fresh_floors(f: &Fresh, distinct: f64, template_named: f64) {
    assert!(f.distinct <= distinct, "distinct documents among the removals: {:.3}", f.distinct);
    assert!(
        f.template_named >= template_named,
        "templates named template: {:.3}",
        f.template_named
    );
    assert!(f.same_named >= 0.75, "same documents named same: {:.3}", f.same_named);
}

/// The fresh sample: removals of the default with relations on another real corpus, out of
/// sample for the thresholds chosen on the first set.
#[test]
fn a_fresh_sample_of_the_defaults_removals() {
    fresh_floors(&fresh("fresh.jsonl", "fresh-buckets.tsv"), 0.08, 0.95);
}

/// A second fresh sample, of the default's removals after the rules chosen on the first
/// two sets (a word swapped, a phrase replaced), from the same corpus less the first
/// fresh sample's removed records: out of sample for those rules.
#[test]
fn a_second_fresh_sample_of_the_defaults_removals() {
    fresh_floors(&fresh("fresh2.jsonl", "fresh2-buckets.tsv"), 0.11, 0.95);
}

/// A fresh sample of the default's removals on Debian's package descriptions (30 Nov,
/// fourth session: `debian3.jsonl`, the records the Debian sets had not judged), out of
/// sample for every rule.
#[test]
fn a_fresh_sample_of_the_defaults_removals_on_debian() {
    fresh_floors(&fresh("debian3.jsonl", "debian3-buckets.tsv"), 0.08, 0.92);
}

/// The second reading of 117 judged pairs (`benches/judged/rejudge.jsonl`, two more judges
/// a pair, blind to the first label and the relation; see `rejudge.py`): each names a pair
/// of its set with that pair's label, and the readings agree as often as
/// `docs/accuracy.md` reports (a re-merge that shifted the pairs would not).
#[test]
fn a_second_reading_of_the_contested_pairs_holds_their_labels() {
    let read = judged_file;
    let sets: BTreeMap<&str, Vec<serde_json::Value>> =
        ["pairs.jsonl", "fresh.jsonl", "fresh2.jsonl"]
            .into_iter()
            .map(|s| {
                (
                    s,
                    read(s)
                        .lines()
                        .map(|l| serde_json::from_str(l).expect("a JSON line"))
                        .collect(),
                )
            })
            .collect();
    let (mut pairs, mut agree, mut all_three) = (0, 0, 0);
    let mut by_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for line in read("rejudge.jsonl").lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let set = r["set"].as_str().expect("a set");
        let at = r["line"].as_u64().expect("a line") as usize;
        let judged = &sets.get(set).unwrap_or_else(|| panic!("no set {set}"))[at];
        let label = r["label"].as_str().expect("a label");
        assert_eq!(judged["label"].as_str(), Some(label), "{set}:{at}");
        let second: Vec<&str> = r["second"]
            .as_array()
            .expect("readings")
            .iter()
            .map(|l| l.as_str().expect("a label"))
            .collect();
        assert_eq!(second.len(), 2, "{set}:{at}");
        assert!(second.iter().all(|l| LABELS.contains(l)), "{set}:{at}: {second:?}");
        pairs += 1;
        agree += usize::from(second[0] == second[1]);
        let held = second.iter().all(|&l| l == label);
        all_three += usize::from(held);
        let c =
            by_category.entry(r["category"].as_str().expect("a category").to_string()).or_default();
        (c.0, c.1) = (c.0 + 1, c.1 + usize::from(held));
    }
    let share = |n: usize| n as f64 / pairs as f64;
    println!(
        "second reading of {pairs} pairs: the two readings agree {:.3}, both hold the label {:.3}",
        share(agree),
        share(all_three)
    );
    for (category, (n, held)) in &by_category {
        println!("  {category}: {held} of {n} labels held by both readings");
    }
    assert_eq!(pairs, 117);
    assert!(share(agree) >= 0.95 && share(all_three) >= 0.90, "{agree} and {all_three} of {pairs}");
}

/// Per category of a second reading's file (`rejudge*.jsonl`): its pairs and how many of
/// their labels both new readings hold. `check(entry, label)` asserts that the entry names a
/// pair of its set with that label; each reading must be one of the labels.
fn held_by_category(
    file: &str,
    mut check: impl FnMut(&serde_json::Value, &str),
) -> BTreeMap<String, (usize, usize)> {
    let mut held: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for line in judged_file(file).lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let label = r["label"].as_str().expect("a label");
        check(&r, label);
        let second: Vec<&str> =
            r["second"].as_array().expect("readings").iter().filter_map(|l| l.as_str()).collect();
        assert!(second.len() == 2 && second.iter().all(|l| LABELS.contains(l)), "{second:?}");
        let c = held.entry(r["category"].as_str().expect("a category").to_string()).or_default();
        (c.0, c.1) = (c.0 + 1, c.1 + usize::from(second.iter().all(|&l| l == label)));
    }
    for (category, (n, kept)) in &held {
        println!("{file}, {category}: {kept} of {n} labels held by both readings");
    }
    held
}

/// The second reading of the one-line-synopsis shape (`benches/judged/rejudge-synopsis.jsonl`:
/// two more judges a pair, blind to the first label): each entry names a pair of its set
/// with that pair's label, and the readings hold the fresh Debian sample's DISTINCT labels
/// and its random TEMPLATE ones as `docs/accuracy.md` reports, while they overturn most of
/// the TEMPLATE labels one judge gave a crate's or module's own synopsis.
#[test]
fn a_second_reading_of_the_synopsis_shape() {
    let json =
        |line: &str| -> serde_json::Value { serde_json::from_str(line).expect("a JSON line") };
    // Each set named, read once.
    let mut sets: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    let held = held_by_category("rejudge-synopsis.jsonl", |r, label| {
        let set = r["set"].as_str().expect("a set");
        let pairs = sets
            .entry(set.to_string())
            .or_insert_with(|| judged_file(set).lines().map(json).collect());
        let found = pairs.iter().any(|p| {
            p["removed_id"] == r["removed_id"]
                && p["kept_id"] == r["kept_id"]
                && p["label"] == label
        });
        assert!(
            found,
            "{set} has no pair {} <- {} labelled {label}",
            r["removed_id"], r["kept_id"]
        );
    });
    assert_eq!(held.get("d3-distinct"), Some(&(15, 14)));
    assert_eq!(held.get("control"), Some(&(7, 7)));
    assert_eq!(held.get("nk-template"), Some(&(8, 2)));
}

/// The second reading of the template siblings the relation keeps on the Debian sets
/// (`benches/judged/rejudge-templates.jsonl`, `rejudge.py select-templates`: every TEMPLATE
/// pair of `debian.jsonl` and `debian2.jsonl` the relation named `overlap` when it was
/// drawn, with TEMPLATE pairs named `template` and DISTINCT pairs named `overlap` as
/// controls; two more judges a pair, blind to the first label, the relation and the
/// category): each entry names a pair of its set with that pair's label, and the readings
/// hold the labels as `docs/accuracy.md` reports: the templates the default keeps are
/// template siblings for both new judges in 44 of 48 (the four others a crate's own
/// synopsis), so they are the relation's misses, not the labels'.
#[test]
fn a_second_reading_of_the_templates_the_default_keeps() {
    let json =
        |line: &str| -> serde_json::Value { serde_json::from_str(line).expect("a JSON line") };
    let sets: BTreeMap<&str, Vec<serde_json::Value>> = ["debian.jsonl", "debian2.jsonl"]
        .into_iter()
        .map(|s| (s, judged_file(s).lines().map(json).collect()))
        .collect();
    let held = held_by_category("rejudge-templates.jsonl", |r, label| {
        let set = r["set"].as_str().expect("a set");
        let at = r["line"].as_u64().expect("a line") as usize;
        let judged = &sets.get(set).unwrap_or_else(|| panic!("no set {set}"))[at];
        assert_eq!(judged["label"].as_str(), Some(label), "{set}:{at}");
    });
    assert_eq!(held.get("missed-template"), Some(&(48, 44)));
    assert_eq!(held.get("template-control"), Some(&(24, 23)));
    assert_eq!(held.get("distinct-control"), Some(&(12, 7)));
}
