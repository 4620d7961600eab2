//! `simhash decontaminate`: eval items planted into real documents (the judged sets' texts)
//! found where they were planted, at any thread count; an unplanted corpus of real text
//! against a brute-force scan written here; `-o`, `--annotate` and `--cut` against the
//! hits; refusals.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Range;

use serde_json::Value;
use simhash_core::for_each_normalized_token;

use crate::util::{Dir, Rng};

const SOURCES: &str = include_str!("../../../benches/judged/pairs.jsonl");
const HOSTS: &str = include_str!("../../../benches/judged/fresh.jsonl");

/// The texts of one field of a judged set.
fn real(jsonl: &str, field: &str) -> Vec<String> {
    jsonl
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()[field].as_str().unwrap().to_string())
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Whole,
    Rewrapped,
    Recased,
    Repunctuated,
    Half,
    Surrounded,
}

const KINDS: [Kind; 6] =
    [Kind::Whole, Kind::Rewrapped, Kind::Recased, Kind::Repunctuated, Kind::Half, Kind::Surrounded];

fn pick<'a>(rng: &mut Rng, of: &[&'a str]) -> &'a str {
    of[rng.below(of.len() as u64) as usize]
}

/// The item as planted.
fn disguise(rng: &mut Rng, item: &str, kind: Kind) -> String {
    let words: Vec<&str> = item.split(' ').collect();
    match kind {
        Kind::Whole | Kind::Surrounded => item.to_string(),
        Kind::Rewrapped => {
            let mut out = words[0].to_string();
            for w in &words[1..] {
                out.push_str(pick(rng, &["\n", "  ", " \n ", "\t", "\r\n", " "]));
                out.push_str(w);
            }
            out
        }
        Kind::Recased => words
            .iter()
            .map(|w| if rng.below(2) == 0 { w.to_uppercase() } else { w.to_lowercase() })
            .collect::<Vec<_>>()
            .join(" "),
        Kind::Repunctuated => {
            let mut out = String::new();
            for (i, w) in words.iter().enumerate() {
                if i > 0 {
                    out.push_str(pick(rng, &[" ", " ", ", ", "; ", " - ", ". "]));
                }
                for c in w.chars() {
                    if c.is_ascii_punctuation() {
                        out.push_str(pick(rng, &[",", ".", ";", ":", "!", "?", "-", " "]));
                    } else {
                        out.push(c);
                    }
                }
            }
            out
        }
        Kind::Half => {
            let half = words.len() / 2;
            let from = if rng.below(2) == 0 { 0 } else { words.len() - half };
            words[from..from + half].join(" ")
        }
    }
}

/// A planted item: the document, the item and where its text is (code points).
struct Plant {
    doc: usize,
    item: String,
    kind: Kind,
    at: Range<usize>,
}

/// The judged hosts, unplanted, then `items` items (cut from the other judged set) each
/// planted once per kind into a host; the items and the documents' texts.
struct Planted {
    items: Vec<(String, String)>,
    docs: Vec<String>,
    plants: Vec<Plant>,
}

fn planted(seed: u64, items: usize, hosts: usize) -> Planted {
    let sources = real(SOURCES, "removed");
    let hosts: Vec<String> = real(HOSTS, "kept").into_iter().take(hosts).collect();
    let mut rng = Rng(seed);
    let mut p = Planted { items: Vec::new(), docs: hosts.clone(), plants: Vec::new() };
    let mut tried = 0;
    while p.items.len() < items {
        let words: Vec<&str> = sources[tried % sources.len()].split_whitespace().collect();
        tried += 1;
        if words.len() < 30 {
            continue;
        }
        let len = (30 + rng.below(61) as usize).min(words.len());
        let from = rng.below((words.len() - len + 1) as u64) as usize;
        let text = words[from..from + len].join(" ");
        let id = format!("item-{}", p.items.len());
        p.items.push((id.clone(), text.clone()));
        for kind in KINDS {
            let host = &hosts[rng.below(hosts.len() as u64) as usize];
            let planted = disguise(&mut rng, &text, kind);
            let gaps: Vec<usize> =
                host.char_indices().filter(|c| c.1 == ' ').map(|c| c.0).collect();
            let cut = if gaps.is_empty() {
                host.len()
            } else {
                gaps[rng.below(gaps.len() as u64) as usize]
            };
            let (before, after) = host.split_at(cut);
            let (open, close) =
                if kind == Kind::Surrounded { (" ", " ") } else { ("\n\n", "\n\n") };
            let start = before.chars().count() + open.chars().count();
            p.docs.push(format!("{before}{open}{planted}{close}{after}"));
            let at = start..start + planted.chars().count();
            p.plants.push(Plant { doc: p.docs.len() - 1, item: id.clone(), kind, at });
        }
    }
    p
}

fn jsonl(rows: impl IntoIterator<Item = (String, String)>) -> String {
    rows.into_iter()
        .map(|(id, text)| serde_json::json!({"id": id, "text": text}).to_string() + "\n")
        .collect()
}

fn write_planted(dir: &Dir, p: &Planted) {
    dir.write(
        "corpus.jsonl",
        jsonl(p.docs.iter().enumerate().map(|(i, t)| (format!("d{i}"), t.clone()))),
    );
    dir.write("quiz.jsonl", jsonl(p.items.iter().cloned()));
}

/// A hit as the hits file says it.
#[derive(Clone, Debug, PartialEq)]
struct Hit {
    id: String,
    item: String,
    matched: u64,
    ngrams: u64,
    longest: u64,
    spans: Vec<Range<usize>>,
}

fn hits(text: &str) -> Vec<Hit> {
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let overlap = v["matched"].as_f64().unwrap() / v["ngrams"].as_f64().unwrap();
            assert!((v["overlap"].as_f64().unwrap() - overlap).abs() < 1e-12, "{l}");
            Hit {
                id: v["id"].as_str().unwrap().to_string(),
                item: v["item"].as_str().unwrap().to_string(),
                matched: v["matched"].as_u64().unwrap(),
                ngrams: v["ngrams"].as_u64().unwrap(),
                longest: v["longest"].as_u64().unwrap(),
                spans: v["spans"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s[0].as_u64().unwrap() as usize..s[1].as_u64().unwrap() as usize)
                    .collect(),
            }
        })
        .collect()
}

/// Normalized words and where they are written (code points).
fn words(text: &str) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    for_each_normalized_token(text, |w, r| out.push((w.to_string(), r)));
    out
}

#[test]
fn planted_items_are_found_where_they_were_planted_at_any_thread_count() {
    let dir = Dir::new();
    let p = planted(43, 40, 120);
    write_planted(&dir, &p);
    let base = ["decontaminate", "corpus.jsonl", "--eval", "quiz.jsonl", "--max-df", "none", "-q"];
    let mut outputs = Vec::new();
    for j in ["1", "2", "4"] {
        let hits_file = format!("hits{j}.jsonl");
        let annotated = format!("annotated{j}.jsonl");
        let mut args = base.to_vec();
        args.extend(["-j", j, "--hits", &hits_file, "-o", &annotated, "--annotate"]);
        dir.run(&args).code(0);
        outputs.push((dir.read(&hits_file), dir.read(&annotated)));
    }
    assert!(outputs.iter().all(|o| *o == outputs[0]), "outputs differ between thread counts");
    let found = hits(&outputs[0].0);
    for kind in KINDS {
        let of_kind: Vec<&Plant> = p.plants.iter().filter(|pl| pl.kind == kind).collect();
        let mut recalled = 0;
        for plant in &of_kind {
            let id = format!("d{}", plant.doc);
            let Some(hit) = found.iter().find(|h| h.id == id && h.item == plant.item) else {
                continue;
            };
            recalled += 1;
            // Every planted word is inside a span.
            for (word, at) in words(&p.docs[plant.doc]) {
                if at.start >= plant.at.start && at.end <= plant.at.end {
                    assert!(
                        hit.spans.iter().any(|s| s.start <= at.start && at.end <= s.end),
                        "{kind:?} {id}: planted word {word:?} at {at:?} not in {:?}",
                        hit.spans
                    );
                }
            }
        }
        let recall = f64::from(recalled) / of_kind.len() as f64;
        let floor = if kind == Kind::Half { 0.95 } else { 0.99 };
        assert!(recall >= floor, "{kind:?}: recall {recall} of {}", of_kind.len());
    }
    // The annotated corpus is the corpus, each hit document with its hits.
    let annotated: Vec<Value> =
        outputs[0].1.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(annotated.len(), p.docs.len());
    let hit_ids: BTreeSet<&str> = found.iter().map(|h| h.id.as_str()).collect();
    for record in &annotated {
        let id = record["id"].as_str().unwrap();
        assert_eq!(record["contamination"].is_array(), hit_ids.contains(id), "{id}");
    }
}

/// (document, item) → (matched, n-grams, longest, spans).
type Found = BTreeMap<(usize, String), (u64, u64, u64, Vec<Range<usize>>)>;

/// The brute-force scan: every item n-gram (or the whole item, when shorter) against
/// every run of every document's words, no document-frequency limit; (document, item) →
/// (matched, n-grams, longest, spans).
fn oracle(items: &[(String, String)], docs: &[String], n: usize, min_overlap: f64) -> Found {
    let mut out = BTreeMap::new();
    for (d, doc) in docs.iter().enumerate() {
        let dw = words(doc);
        // Every run of the document's words, by length: where each is written.
        let mut runs: HashMap<usize, HashMap<Vec<&str>, Vec<usize>>> = HashMap::new();
        for (id, text) in items {
            let iw: Vec<String> = words(text).into_iter().map(|w| w.0).collect();
            if iw.is_empty() {
                continue;
            }
            let width = n.min(iw.len());
            let grams: Vec<&[String]> = iw.windows(width).collect();
            // (item position, document word) of every n-gram found.
            let of_width = runs.entry(width).or_insert_with(|| {
                let mut all: HashMap<Vec<&str>, Vec<usize>> = HashMap::new();
                for (at, run) in dw.windows(width).enumerate() {
                    all.entry(run.iter().map(|w| w.0.as_str()).collect()).or_default().push(at);
                }
                all
            });
            let mut found: Vec<(usize, usize)> = Vec::new();
            for (pos, g) in grams.iter().enumerate() {
                let key: Vec<&str> = g.iter().map(String::as_str).collect();
                for &at in of_width.get(&key).into_iter().flatten() {
                    found.push((pos, at));
                }
            }
            let matched = found.iter().map(|f| f.0).collect::<BTreeSet<_>>().len();
            if matched == 0 || (matched as f64) / (grams.len() as f64) < min_overlap {
                continue;
            }
            let set: HashSet<(usize, usize)> = found.iter().copied().collect();
            let mut best = 0;
            for &(pos, at) in &found {
                let mut run = 1;
                while set.contains(&(pos + run, at + run)) {
                    run += 1;
                }
                best = best.max(run);
            }
            let mut places: Vec<Range<usize>> =
                found.iter().map(|&(_, at)| dw[at].1.start..dw[at + width - 1].1.end).collect();
            places.sort_by_key(|r| (r.start, r.end));
            let mut spans: Vec<Range<usize>> = Vec::new();
            for r in places {
                match spans.last_mut() {
                    Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                    _ => spans.push(r),
                }
            }
            let longest = (best + width - 1) as u64;
            out.insert((d, id.clone()), (matched as u64, grams.len() as u64, longest, spans));
        }
    }
    out
}

#[test]
fn an_unplanted_corpus_agrees_with_a_brute_force_scan() {
    let dir = Dir::new();
    // Items cut from one judged set's real texts, the other set's documents unplanted: the
    // hits are text they really share (man-page and documentation boilerplate).
    let p = planted(7, 60, 150);
    let docs = &p.docs[..150];
    dir.write(
        "corpus.jsonl",
        jsonl(docs.iter().enumerate().map(|(i, t)| (format!("d{i}"), t.clone()))),
    );
    dir.write("quiz.jsonl", jsonl(p.items.iter().cloned()));
    for (n, min_overlap) in [("10", 0.2), ("5", 0.05)] {
        let args = [
            "decontaminate",
            "corpus.jsonl",
            "--eval",
            "quiz.jsonl",
            "--max-df",
            "none",
            "--ngram",
            n,
            "--min-overlap",
            &min_overlap.to_string(),
            "--hits",
            "hits.jsonl",
            "-q",
        ];
        dir.run(&args).code(0);
        let got: Found = hits(&dir.read("hits.jsonl"))
            .into_iter()
            .map(|h| {
                let doc = h.id[1..].parse().unwrap();
                ((doc, h.item), (h.matched, h.ngrams, h.longest, h.spans))
            })
            .collect();
        let want = oracle(&p.items, docs, n.parse().unwrap(), min_overlap);
        assert!(!want.is_empty(), "n {n}: the scan finds nothing: the test cannot fail");
        assert_eq!(got, want, "n {n}, min overlap {min_overlap}");
    }
}

/// `text` without the code points of `spans`, each widened by `window` on both sides.
fn cut(text: &str, spans: &[Range<usize>], window: usize) -> String {
    text.chars()
        .enumerate()
        .filter(|(i, _)| {
            !spans.iter().any(|s| s.start.saturating_sub(window) <= *i && *i < s.end + window)
        })
        .map(|(_, c)| c)
        .collect()
}

#[test]
fn output_annotate_and_cut_follow_the_hits() {
    let dir = Dir::new();
    let p = planted(5, 12, 40);
    write_planted(&dir, &p);
    let args = [
        "decontaminate",
        "corpus.jsonl",
        "--eval",
        "quiz.jsonl",
        "--max-df",
        "none",
        "--hits",
        "hits.jsonl",
        "-o",
        "clean.jsonl",
        "--cut",
        "cut.jsonl",
        "--cut-window",
        "3",
        "-q",
    ];
    dir.run(&args).code(0);
    let found = hits(&dir.read("hits.jsonl"));
    assert!(found.len() >= 60, "{} hits", found.len());
    let mut spans: BTreeMap<&str, Vec<Range<usize>>> = BTreeMap::new();
    for h in &found {
        spans.entry(&h.id).or_default().extend(h.spans.iter().cloned());
    }
    let corpus = dir.read("corpus.jsonl");
    // -o: the lines of the documents without hits, byte for byte.
    let mut clean = String::new();
    for line in corpus.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if !spans.contains_key(v["id"].as_str().unwrap()) {
            clean.push_str(line);
            clean.push('\n');
        }
    }
    assert_eq!(dir.read("clean.jsonl"), clean);
    // --cut: every record; those with hits have their spans (and 3 characters around) cut.
    let cut_lines: Vec<&str> = dir.read("cut.jsonl").leak().lines().collect();
    assert_eq!(cut_lines.len(), p.docs.len());
    for (line, (i, text)) in cut_lines.iter().zip(p.docs.iter().enumerate()) {
        let id = format!("d{i}");
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["id"], id.as_str());
        match spans.get(id.as_str()) {
            None => assert_eq!(*line, corpus.lines().nth(i).unwrap()),
            Some(s) => assert_eq!(v["text"].as_str().unwrap(), cut(text, s, 3), "{id}"),
        }
    }
    // What --cut left has no item left in it.
    dir.run(&[
        "decontaminate",
        "cut.jsonl",
        "--eval",
        "quiz.jsonl",
        "--max-df",
        "none",
        "--hits",
        "again.jsonl",
        "-q",
    ])
    .code(0);
    assert_eq!(dir.read("again.jsonl"), "");
}

#[test]
fn hits_go_to_standard_output_and_the_summary_counts_each_set() {
    let dir = Dir::new();
    dir.write(
        "corpus.jsonl",
        "{\"id\":1,\"text\":\"Trivia: which planet is known as the red planet? Mars. <b>x</b>\"}\n\
         not json\n\
         {\"id\":2,\"text\":\"Nothing to see here.\"}\n",
    );
    // Every set's items are read by the same fields: question, then answer.
    let a = "{\"id\":\"q1\",\"q\":\"Which planet is known as the Red Planet?\",\"a\":\"Mars\"}\n";
    dir.write("a.jsonl", a);
    dir.write(
        "quiz.jsonl",
        "{\"id\":\"q1\",\"text\":\"Which planet is known as the Red Planet?\"}\n",
    );
    dir.write(
        "b.jsonl",
        "{\"q\":\"Who wrote Moby-Dick?\",\"a\":\"Melville\"}\n{\"q\":\"only a question\"}\n",
    );
    let run = dir.run(&[
        "decontaminate",
        "corpus.jsonl",
        "--eval",
        "a.jsonl",
        "--eval",
        "other=b.jsonl",
        "--eval-field",
        "q",
        "--eval-field",
        "a",
        "--ngram",
        "4",
        "--stats",
        "stats.json",
        "--report",
        "page.html",
    ]);
    // A bad corpus line and a bad eval record, each reported where it is: exit 1.
    run.code(1);
    assert!(run.stderr.contains("corpus.jsonl:2: invalid JSON"), "{}", run.stderr);
    assert!(run.stderr.contains("b.jsonl:2: missing text field \"a\""), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let stats: Value = serde_json::from_str(&dir.read("stats.json")).unwrap();
    let d = &stats["decontamination"];
    // Each counted as what it is: the corpus line a skipped record, the eval record apart.
    assert_eq!(
        (stats["records_skipped"].as_u64(), d["eval_records_skipped"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(d["evals"][0]["name"], "a");
    assert_eq!(d["evals"][1]["name"], "other");
    assert_eq!(
        (d["evals"][0]["items_found"].as_u64(), d["evals"][1]["items"].as_u64()),
        (Some(1), Some(1))
    );
    let page = dir.read("page.html");
    assert!(page.contains("<mark>which planet is known as the red planet? Mars</mark>"), "{page}");
    assert!(page.contains("&lt;b&gt;x&lt;/b&gt;") && !page.contains("<b>x</b>"), "{page}");
    assert!(page.contains("default-src 'none'"));
    // No output asked for: the hits on standard output.
    let run =
        dir.run(&["decontaminate", "corpus.jsonl", "--eval", "quiz.jsonl", "--ngram", "4", "-q"]);
    assert_eq!(
        run.stdout,
        "{\"id\":1,\"eval\":\"quiz\",\"item\":\"q1\",\"overlap\":1.0,\"longest\":8,\"spans\":[[8,47]],\"matched\":5,\"ngrams\":5}\n"
    );
}

#[test]
fn refusals() {
    let dir = Dir::new();
    let corpus = "{\"id\":1,\"text\":\"which planet is known as the red planet\"}\n";
    dir.write("corpus.jsonl", corpus);
    dir.write(
        "quiz.jsonl",
        "{\"id\":\"q1\",\"text\":\"Which planet is known as the Red Planet?\"}\n",
    );
    let refused = |args: &[&str], says: &str| {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    };
    let base = ["decontaminate", "corpus.jsonl", "--eval", "quiz.jsonl"];
    let with = |more: &[&'static str]| [&base[..], more].concat();
    refused(&with(&["-o", "corpus.jsonl"]), "refusing to overwrite");
    refused(&with(&["--hits", "quiz.jsonl"]), "refusing to overwrite");
    refused(&with(&["--cut", "x.jsonl", "-o", "x.jsonl"]), "x.jsonl");
    // --annotate marks -o's records: alone, it has nothing to mark.
    refused(&with(&["--annotate"]), "--output");
    refused(&["decontaminate", "corpus.jsonl", "--eval", "missing.jsonl"], "missing.jsonl");
    refused(&with(&["--eval", "quiz.jsonl"]), "two eval sets are named \"quiz\"");
    refused(&with(&["--eval", "other=sub/quiz.jsonl"]), "sub/quiz.jsonl");
    refused(&with(&["--ngram", "0"]), "n-gram length");
    refused(&with(&["--min-overlap", "1.5"]), "minimum overlap");
    // Standard input once: not as the corpus (none given) and an eval set, nor as two sets.
    let once = "standard input (-) can be read once";
    refused(&["decontaminate", "--eval", "-", "-o", "out.jsonl"], once);
    refused(&["decontaminate", "corpus.jsonl", "--eval", "a=-", "--eval", "b=-"], once);
    let run = dir.run(&with(&["--max-df", "often"]));
    assert_eq!(run.code, 2, "{}", run.stderr);
    // Fingerprints have no text to scan: --format takes json alone, and the help says so.
    refused(&with(&["--format", "hash"]), "[possible values: json]");
    dir.run(&with(&["--format", "json"])).code(0);
    let help = dir.run(&["decontaminate", "--help"]);
    let format = help.stdout.split("--format").nth(1).expect("--format in the help");
    let format = format.split("--text-column").next().unwrap_or_default();
    assert!(!format.contains("hash") && format.contains("json"), "{format}");
    // Nothing was written by a refused run, and the inputs are as they were.
    assert_eq!(dir.read("corpus.jsonl"), corpus);
    assert_eq!(dir.files(), ["corpus.jsonl", "quiz.jsonl"]);
}

#[test]
fn parquet_and_standard_input_give_the_hits_of_jsonl() {
    use crate::parquet::{batch, column_strings, read_back, write_parquet};
    let dir = Dir::new();
    let p = planted(11, 6, 30);
    write_planted(&dir, &p);
    let rows: Vec<(String, String)> =
        p.docs.iter().enumerate().map(|(i, t)| (format!("d{i}"), t.clone())).collect();
    write_parquet(&dir, "corpus.parquet", &batch(&rows), parquet::basic::Compression::SNAPPY);
    let run = |input: &str, more: &[&str], stdin: Option<&[u8]>| {
        let mut args =
            vec!["decontaminate", input, "--eval", "quiz.jsonl", "--max-df", "none", "-q"];
        args.extend(more);
        dir.run_bin("simhash", &args, stdin).code(0);
    };
    run("corpus.jsonl", &["--hits", "jsonl.jsonl", "-o", "clean.jsonl"], None);
    run("corpus.parquet", &["--hits", "parquet.jsonl", "-o", "clean.parquet"], None);
    run("corpus.parquet", &["-o", "marked.parquet", "--annotate"], None);
    let corpus = dir.read("corpus.jsonl");
    run("-", &["--hits", "stdin.jsonl", "-o", "stdin-clean.jsonl"], Some(corpus.as_bytes()));
    let jsonl = dir.read("jsonl.jsonl");
    assert!(jsonl.lines().count() >= 30, "{jsonl}");
    assert_eq!(dir.read("parquet.jsonl"), jsonl);
    assert_eq!(dir.read("stdin.jsonl"), jsonl);
    assert_eq!(dir.read("stdin-clean.jsonl"), dir.read("clean.jsonl"));
    // The Parquet outputs: the rows without hits, and every row with its hits as JSON.
    let clean: Vec<String> = dir
        .read("clean.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(column_strings(&read_back(&dir, "clean.parquet").0, "id"), clean);
    let (marked, schema, _) = read_back(&dir, "marked.parquet");
    assert_eq!(schema.fields().len(), 4);
    assert_eq!(column_strings(&marked, "id").len(), p.docs.len());
    // --cut writes JSONL records only.
    let refused = dir.run(&[
        "decontaminate",
        "corpus.parquet",
        "--eval",
        "quiz.jsonl",
        "--cut",
        "cut.parquet",
    ]);
    refused.code(2);
    assert!(refused.stderr.contains("--cut rewrites JSONL records only"), "{}", refused.stderr);
}

/// A bad record of an eval set alone (the corpus clean) ends the run with exit 1, as a bad
/// corpus record does, and `--strict` stops at it (exit 2, nothing written).
#[test]
fn a_bad_eval_record_alone_exits_1() {
    let dir = Dir::new();
    dir.write(
        "corpus.jsonl",
        "{\"id\":\"d1\",\"text\":\"Which planet is known as the Red Planet? Mars.\"}\n",
    );
    dir.write(
        "quiz.jsonl",
        "{\"id\":\"q1\",\"text\":\"Which planet is known as the Red Planet?\"}\nnot json\n",
    );
    let args = ["decontaminate", "corpus.jsonl", "--eval", "quiz.jsonl", "--ngram", "4"];
    let run = dir.run(&[&args[..], &["--hits", "hits.jsonl", "--stats", "s.json"]].concat());
    run.code(1);
    assert!(run.stderr.contains("quiz.jsonl:2: invalid JSON"), "{}", run.stderr);
    let stats: Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(stats["records_skipped"].as_u64(), Some(0));
    assert_eq!(stats["decontamination"]["eval_records_skipped"].as_u64(), Some(1));
    assert!(dir.read("hits.jsonl").contains("\"item\":\"q1\""));
    let strict = dir.run(&[&args[..], &["--hits", "strict.jsonl", "--strict"]].concat());
    strict.code(2);
    assert!(!dir.path("strict.jsonl").exists());
}
