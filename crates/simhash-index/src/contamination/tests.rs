//! The engine against a brute-force scan written apart from it (only the public tokenizer
//! is shared), on random small-vocabulary texts; thread counts; hash collisions; settings.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use rayon::prelude::*;
use simhash_core::for_each_normalized_token;

use super::*;

pub(super) use crate::test_rng::Rng;

/// A normalized word and where it is written.
pub(super) type Word = (String, Range<usize>);

pub(super) fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for_each_normalized_token(text, |w, r| out.push((w.to_string(), r)));
    out
}

/// What a hit says, in a form to compare.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Said {
    pub(super) doc: u64,
    pub(super) set: String,
    pub(super) item: String,
    pub(super) matched: u32,
    pub(super) ngrams: u32,
    pub(super) longest: usize,
    pub(super) spans: Vec<Range<usize>>,
}

pub(super) fn said(report: &Report<'_>) -> Vec<Said> {
    report
        .hits
        .iter()
        .map(|h| {
            let overlap = f64::from(h.matched) / f64::from(h.ngrams);
            assert!(h.overlap.to_bits() == overlap.to_bits(), "{} {overlap}", h.overlap);
            Said {
                doc: h.doc,
                set: h.set.to_string(),
                item: h.item.to_string(),
                matched: h.matched,
                ngrams: h.ngrams,
                longest: h.longest,
                spans: h.spans.clone(),
            }
        })
        .collect()
}

/// The eval sets as the oracle sees them: (set, item id, text), in the order added.
pub(super) type Items = Vec<(String, String, String)>;

/// The brute-force scan: every item n-gram against every run of every document, as the
/// module docs define it. Returns the hits (by document, then item) and the number of
/// distinct n-grams dropped.
pub(super) fn oracle(
    items: &Items,
    docs: &[String],
    n: usize,
    max_df: MaxDf,
    min_overlap: f64,
) -> (Vec<Said>, usize) {
    let docs: Vec<Vec<Word>> = docs.iter().map(|d| words(d)).collect();
    let texts: Vec<Vec<String>> =
        docs.iter().map(|d| d.iter().map(|w| w.0.clone()).collect()).collect();
    // Each item's n-grams by position.
    let grams: Vec<Vec<Vec<String>>> = items
        .iter()
        .map(|(_, _, text)| {
            let w: Vec<String> = words(text).into_iter().map(|w| w.0).collect();
            if w.is_empty() {
                vec![]
            } else if w.len() < n {
                vec![w]
            } else {
                w.windows(n).map(<[String]>::to_vec).collect()
            }
        })
        .collect();
    // Where each document has each run of words, for every length an n-gram has.
    let lengths: BTreeSet<usize> = grams.iter().flatten().map(Vec::len).collect();
    let runs: Vec<HashMap<&[String], Vec<usize>>> = texts
        .iter()
        .map(|t| {
            let mut runs: HashMap<&[String], Vec<usize>> = HashMap::new();
            for &len in &lengths {
                for j in 0..(t.len() + 1).saturating_sub(len) {
                    runs.entry(&t[j..j + len]).or_default().push(j);
                }
            }
            runs
        })
        .collect();
    let none = Vec::new();
    let places = |d: usize, gram: &[String]| runs[d].get(gram).unwrap_or(&none);
    let distinct: BTreeSet<&Vec<String>> = grams.iter().flatten().collect();
    let mut dropped = BTreeSet::new();
    for gram in &distinct {
        let df = (0..docs.len()).filter(|&d| !places(d, gram).is_empty()).count() as u64;
        if max_df.drops(df, docs.len() as u64) {
            dropped.insert((*gram).clone());
        }
    }
    let mut hits = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        for (i, (set, id, _)) in items.iter().enumerate() {
            let item = &grams[i];
            let kept: Vec<usize> =
                (0..item.len()).filter(|&p| !dropped.contains(&item[p])).collect();
            let found: BTreeMap<usize, &Vec<usize>> = kept
                .iter()
                .map(|&p| (p, places(d, &item[p])))
                .filter(|(_, at)| !at.is_empty())
                .collect();
            if found.is_empty() || (found.len() as f64 / kept.len() as f64) < min_overlap {
                continue;
            }
            let width = item[0].len();
            let mut longest = 0;
            let mut spans: Vec<Range<usize>> = Vec::new();
            for (&p, at) in &found {
                for &j in *at {
                    let mut run = 1;
                    while found.get(&(p + run)).is_some_and(|a| a.contains(&(j + run))) {
                        run += 1;
                    }
                    longest = longest.max(run + width - 1);
                    spans.push(doc[j].1.start..doc[j + width - 1].1.end);
                }
            }
            spans.sort_by_key(|r| (r.start, r.end));
            let mut merged: Vec<Range<usize>> = Vec::new();
            for r in spans {
                if let Some(last) = merged.last_mut().filter(|l| r.start <= l.end) {
                    last.end = last.end.max(r.end);
                } else {
                    merged.push(r);
                }
            }
            hits.push(Said {
                doc: d as u64,
                set: set.clone(),
                item: id.clone(),
                matched: found.len() as u32,
                ngrams: kept.len() as u32,
                longest,
                spans: merged,
            });
        }
    }
    (hits, dropped.len())
}

pub(super) fn build(
    items: &Items,
    n: usize,
    max_df: MaxDf,
    min_overlap: f64,
    mask: Option<u64>,
) -> EvalSets {
    let mut b = EvalSets::builder();
    b.ngram(n).max_df(max_df).min_overlap(min_overlap);
    if let Some(mask) = mask {
        b.collide(mask);
    }
    let mut sets: BTreeMap<String, SetId> = BTreeMap::new();
    for (set, id, text) in items {
        let s = *sets.entry(set.clone()).or_insert_with(|| b.add_set(set).unwrap());
        b.add_item(s, id, text).unwrap();
    }
    b.build().unwrap()
}

pub(super) fn run_sequential<'e>(eval: &'e EvalSets, docs: &[String]) -> Report<'e> {
    let mut tally = Tally::new(eval);
    for (d, text) in docs.iter().enumerate() {
        tally.add(d as u64, eval.scan(text));
    }
    eval.finish(tally).unwrap()
}

fn run_parallel<'e>(eval: &'e EvalSets, docs: &[String], threads: usize) -> Report<'e> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let tally = pool.install(|| {
        docs.par_iter()
            .enumerate()
            .fold(
                || Tally::new(eval),
                |mut t, (d, text)| {
                    t.add(d as u64, eval.scan(text));
                    t
                },
            )
            .reduce(
                || Tally::new(eval),
                |mut a, b| {
                    a.merge(b).unwrap();
                    a
                },
            )
    });
    eval.finish(tally).unwrap()
}

const VOCAB: &[&str] = &["a", "b", "c", "d", "e", "Ab", "AB", "東", "京", "École", "ÉCOLE", "x1"];
const SEPARATORS: &[&str] = &[" ", " ", " ", "\n", ", ", "  \n\t", "-", "! "];

fn random_text(rng: &mut Rng, max_words: usize) -> String {
    let len = rng.index(max_words + 1);
    let mut text = String::new();
    for _ in 0..len {
        text.push_str(VOCAB[rng.index(VOCAB.len())]);
        text.push_str(SEPARATORS[rng.index(SEPARATORS.len())]);
    }
    text
}

/// Re-case and re-space a text: the same normalized words.
fn disguise(rng: &mut Rng, text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c == ' ' {
            out.push_str(SEPARATORS[rng.index(SEPARATORS.len())]);
        } else if rng.chance(30) && c.is_ascii() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Random eval sets and a corpus: items long and short (some shorter than any `n`, some
/// empty), overlapping (one item a piece of another), repeated; documents with items
/// planted, disguised, repeated, cut, or none, and empty documents.
pub(super) fn random_case(rng: &mut Rng) -> (Items, Vec<String>) {
    let mut items: Items = Vec::new();
    for i in 0..=rng.index(6) {
        let set = if rng.chance(50) { "one" } else { "two" };
        let text = match rng.index(5) {
            0 if !items.is_empty() => {
                // A piece of an earlier item: overlapping items.
                let other: Vec<String> =
                    words(&items[rng.index(items.len())].2).into_iter().map(|w| w.0).collect();
                let a = rng.index(other.len() + 1);
                let b = a + rng.index(other.len() - a + 1);
                other[a..b].join(" ")
            }
            1 => random_text(rng, 3),
            _ => random_text(rng, 16),
        };
        items.push((set.to_string(), format!("i{i}"), text));
    }
    let mut docs = Vec::new();
    for _ in 0..rng.index(7) {
        let mut doc = random_text(rng, 12);
        for _ in 0..rng.index(3) {
            let (_, _, text) = &items[rng.index(items.len())];
            let planted = match rng.index(3) {
                0 => text.clone(),
                1 => disguise(rng, text),
                _ => {
                    let cut: Vec<String> = words(text).into_iter().map(|w| w.0).collect();
                    cut[..cut.len() / 2].join(" ")
                }
            };
            doc.push(' ');
            doc.push_str(&planted);
            doc.push(' ');
            doc.push_str(&random_text(rng, 4));
        }
        docs.push(doc);
    }
    (items, docs)
}

fn max_dfs() -> [MaxDf; 4] {
    [MaxDf::Unlimited, MaxDf::Count(1), MaxDf::Count(3), MaxDf::Share(0.5)]
}

#[test]
fn agrees_with_brute_force() {
    // What the random cases exercise, so that they are known not to be trivial.
    let (mut hits, mut dropped_runs, mut partial, mut repeated) = (0, 0, 0, 0);
    for seed in 0..400 {
        let mut rng = Rng(seed);
        let (items, docs) = random_case(&mut rng);
        let n = 1 + rng.index(5);
        let max_df = max_dfs()[rng.index(4)];
        let min_overlap = [0.0, 0.3, 0.5, 1.0][rng.index(4)];
        let eval = build(&items, n, max_df, min_overlap, None);
        let report = run_sequential(&eval, &docs);
        let (want, dropped) = oracle(&items, &docs, n, max_df, min_overlap);
        assert_eq!(
            said(&report),
            want,
            "seed {seed}: n {n}, {max_df:?}, {min_overlap}\n{items:?}\n{docs:?}"
        );
        assert_eq!(report.dropped, dropped, "seed {seed}");
        assert_eq!(report.documents, docs.len() as u64);
        hits += want.len();
        dropped_runs += usize::from(dropped > 0);
        partial += want.iter().filter(|h| h.matched < h.ngrams).count();
        repeated += want.iter().filter(|h| h.spans.len() > 1).count();
    }
    assert!(
        hits > 400 && dropped_runs > 50 && partial > 50 && repeated > 50,
        "{hits} hits, {dropped_runs} runs with drops, {partial} partial, {repeated} repeated"
    );
}

#[test]
fn long_documents_agree_with_brute_force() {
    // Thousands of words: the scan's window of recent words slides many times.
    for seed in 0..20 {
        let mut rng = Rng(1000 + seed);
        let (items, docs) = random_case(&mut rng);
        let long: String = (0..400)
            .map(|i| docs.get(i % docs.len().max(1)).map_or("a b", |d| d))
            .collect::<Vec<_>>()
            .join(" ");
        let docs = [long];
        let n = 1 + rng.index(5);
        let eval = build(&items, n, MaxDf::Unlimited, 0.0, None);
        let report = run_sequential(&eval, &docs);
        let (want, _) = oracle(&items, &docs, n, MaxDf::Unlimited, 0.0);
        assert_eq!(said(&report), want, "seed {seed}");
    }
}

#[test]
fn a_match_across_the_scans_window_slide_is_one_run() {
    // The scan keeps the last 1,024 words at most: an item planted across that point.
    let item = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19";
    let items: Items = vec![("s".into(), "q".into(), item.into())];
    let eval = build(&items, 3, MaxDf::Unlimited, 1.0, None);
    for filler in 990..1040 {
        let doc = format!("{}{item} z", "z ".repeat(filler));
        let report = run_sequential(&eval, &[doc]);
        let hit = &report.hits[0];
        assert_eq!((hit.longest, hit.spans[0].start), (20, 2 * filler), "{filler}");
    }
}

#[test]
fn hash_collisions_are_never_matches() {
    // Every n-gram hash cut to 2 bits: four buckets, every lookup meets other n-grams.
    for seed in 0..200 {
        let mut rng = Rng(seed);
        let (items, docs) = random_case(&mut rng);
        let n = 1 + rng.index(4);
        let max_df = max_dfs()[rng.index(4)];
        let eval = build(&items, n, max_df, 0.0, Some(0b11));
        let report = run_sequential(&eval, &docs);
        let (want, _) = oracle(&items, &docs, n, max_df, 0.0);
        assert_eq!(said(&report), want, "seed {seed}");
    }
}

#[test]
fn identical_at_any_thread_count() {
    let mut rng = Rng(7);
    let mut items = Items::new();
    let mut docs = Vec::new();
    for _ in 0..20 {
        let (i, d) = random_case(&mut rng);
        for (set, id, text) in i {
            items.push((set, format!("{id}-{}", items.len()), text));
        }
        docs.extend(d);
    }
    for max_df in max_dfs() {
        let eval = build(&items, 3, max_df, 0.2, None);
        let one = run_sequential(&eval, &docs);
        assert!(!one.hits.is_empty());
        for threads in [1, 2, 4] {
            assert_eq!(run_parallel(&eval, &docs, threads), one, "{threads} threads, {max_df:?}");
        }
        // Documents in another order, tallied in parts merged backwards.
        let mut order: Vec<usize> = (0..docs.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.index(i + 1));
        }
        let mut parts: Vec<Tally> = order
            .chunks(7)
            .map(|chunk| {
                let mut t = Tally::new(&eval);
                for &d in chunk {
                    t.add(d as u64, eval.scan(&docs[d]));
                }
                t
            })
            .collect();
        let mut all = parts.pop().unwrap();
        while let Some(part) = parts.pop() {
            all.merge(part).unwrap();
        }
        assert_eq!(eval.finish(all).unwrap(), one, "shuffled, {max_df:?}");
    }
}

#[test]
fn an_item_repeated_in_a_document_counts_once_with_every_place() {
    let items: Items = vec![("s".into(), "q".into(), "one two three four".into())];
    let doc = "One two three four. x ONE\ntwo three four".to_string();
    let eval = build(&items, 2, MaxDf::Unlimited, 1.0, None);
    let report = run_sequential(&eval, std::slice::from_ref(&doc));
    let hit = &report.hits[0];
    assert_eq!((hit.matched, hit.ngrams, hit.longest), (3, 3, 4));
    assert_eq!(hit.spans, [0..18, 22..40]);
    let texts: Vec<String> =
        hit.spans.iter().map(|s| doc.chars().skip(s.start).take(s.len()).collect()).collect();
    assert_eq!(texts, ["One two three four", "ONE\ntwo three four"]);
}

#[test]
fn short_items_match_only_whole() {
    let items: Items = vec![
        ("s".into(), "short".into(), "red green".into()),
        ("s".into(), "empty".into(), " ... ".into()),
    ];
    let eval = build(&items, 5, MaxDf::Unlimited, 0.0, None);
    let docs =
        ["red, GREEN!".to_string(), "red blue green".into(), "green red".into(), String::new()];
    let report = run_sequential(&eval, &docs);
    assert_eq!(said(&report).iter().map(|s| (s.doc, s.longest)).collect::<Vec<_>>(), [(0, 2)]);
    assert_eq!((report.items, report.unmatchable), (2, 1));
}

#[test]
fn frequent_ngrams_are_dropped_and_counted() {
    let items: Items = vec![("s".into(), "q".into(), "a b c d e f".into())];
    // "a b c" in every document (boilerplate), "d e f" in one.
    let docs = ["a b c".to_string(), "a b c".into(), "x a b c d e f".into()];
    let eval = build(&items, 3, MaxDf::Count(2), 0.5, None);
    let report = run_sequential(&eval, &docs);
    assert_eq!((report.ngrams, report.dropped), (4, 1));
    // 3 of the 3 kept n-grams ("b c d", "c d e", "d e f"): the dropped one counts nowhere.
    let hit = &report.hits[0];
    assert_eq!((hit.doc, hit.matched, hit.ngrams, hit.longest), (2, 3, 3, 5));
    assert_eq!(hit.spans, vec![4..13]);
}

#[test]
fn settings_are_checked() {
    let kind = |f: &dyn Fn(&mut EvalSetsBuilder)| {
        let mut b = EvalSets::builder();
        f(&mut b);
        b.build().unwrap_err().kind()
    };
    assert_eq!(kind(&|b| _ = b.ngram(0)), ContaminationErrorKind::Ngram);
    assert_eq!(kind(&|b| _ = b.ngram(MAX_NGRAM + 1)), ContaminationErrorKind::Ngram);
    assert_eq!(kind(&|b| _ = b.min_overlap(1.5)), ContaminationErrorKind::MinOverlap);
    assert_eq!(kind(&|b| _ = b.min_overlap(f64::NAN)), ContaminationErrorKind::MinOverlap);
    assert_eq!(kind(&|b| _ = b.max_df(MaxDf::Count(0))), ContaminationErrorKind::MaxDf);
    assert_eq!(kind(&|b| _ = b.max_df(MaxDf::Share(0.0))), ContaminationErrorKind::MaxDf);
    assert_eq!(kind(&|b| _ = b.max_df(MaxDf::Share(f64::NAN))), ContaminationErrorKind::MaxDf);

    let mut b = EvalSets::builder();
    let s = b.add_set("s").unwrap();
    assert_eq!(b.add_set("s").unwrap_err().kind(), ContaminationErrorKind::DuplicateSet);
    b.add_item(s, "1", "x").unwrap();
    let e = b.add_item(s, "1", "y").unwrap_err();
    assert_eq!(e.kind(), ContaminationErrorKind::DuplicateItem);
    assert_eq!(e.to_string(), r#"the item "1" is added twice to the eval set "s""#);
    assert_eq!(
        b.add_item(SetId(9), "2", "y").unwrap_err().kind(),
        ContaminationErrorKind::UnknownSet
    );

    let eval = b.build().unwrap();
    let other = build(
        &vec![("t".into(), "i".into(), "p q r s t u v w x".into())],
        2,
        MaxDf::Unlimited,
        0.5,
        None,
    );
    let mut tally = Tally::new(&eval);
    assert_eq!(
        tally.merge(Tally::new(&other)).unwrap_err().kind(),
        ContaminationErrorKind::Mismatch
    );
    assert_eq!(
        eval.finish(Tally::new(&other)).unwrap_err().kind(),
        ContaminationErrorKind::Mismatch
    );
    tally.add(4, eval.scan("x"));
    tally.add(4, eval.scan("x"));
    assert_eq!(eval.finish(tally).unwrap_err().kind(), ContaminationErrorKind::DuplicateDocument);
}

#[test]
fn max_df_reads_and_prints() {
    for (text, want) in [
        ("none", MaxDf::Unlimited),
        ("100", MaxDf::Count(100)),
        ("0.01", MaxDf::Share(0.01)),
        ("1.0", MaxDf::Share(1.0)),
    ] {
        let got: MaxDf = text.parse().unwrap();
        assert_eq!(got, want, "{text}");
        assert_eq!(got.to_string().parse::<MaxDf>().unwrap(), want);
    }
    for bad in ["0", "0.0", "1.5", "-1", "", "x", "NaN"] {
        let e = bad.parse::<MaxDf>().unwrap_err();
        assert_eq!(e.kind(), ContaminationErrorKind::MaxDf, "{bad}");
    }
}

/// Each set's figures: its items, its distinct n-grams (one two sets share counts in
/// both), those dropped, and its items left with no n-gram.
#[test]
fn set_figures_count_each_set() {
    let mut builder = EvalSets::builder();
    builder.ngram(2).max_df(MaxDf::Count(1));
    let a = builder.add_set("a").unwrap();
    let b = builder.add_set("b").unwrap();
    builder.add_item(a, "a1", "red green blue").unwrap();
    builder.add_item(a, "a2", "red green").unwrap();
    builder.add_item(b, "b1", "green blue black").unwrap();
    builder.add_item(b, "b2", "").unwrap();
    let eval = builder.build().unwrap();
    let mut tally = Tally::new(&eval);
    // "green blue" in two documents: dropped; it is in both sets.
    for (doc, text) in ["green blue", "green blue", "red green"].iter().enumerate() {
        tally.add(doc as u64, eval.scan(text));
    }
    let report = eval.finish(tally).unwrap();
    let figures: Vec<_> =
        report.sets.iter().map(|s| (s.name, s.items, s.ngrams, s.dropped, s.unmatchable)).collect();
    // a: "red green", "green blue" (a2's only n-gram is a1's first); b: "green blue",
    // "blue black", and b2 with no words.
    assert_eq!(figures, [("a", 2, 2, 1, 0), ("b", 2, 2, 1, 1)]);
    assert_eq!((report.ngrams, report.dropped, report.unmatchable), (3, 1, 1));
}
