//! `simhash explain`: its decision is `simhash dedup`'s on the same two records (random and
//! adversarial pairs, every method and keep policy), its figures are brute force's, its
//! errors exit 2, and its full output is pinned by golden files (`tests/golden/`;
//! `SIMHASH_BLESS=1 cargo test -p simhash-cli --test integration explain` rewrites them).

use std::collections::{BTreeSet, HashSet};

use serde_json::{Value, json};
use simhash_core::Fingerprinter;

use crate::util::{Dir, Rng};

const WORDS: &[&str] = &[
    "river", "stone", "light", "harbor", "window", "copper", "meadow", "signal", "orange",
    "vessel", "paper", "garden", "thunder", "silver", "basket", "lantern", "engine", "pocket",
];

fn words(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n).map(|_| WORDS[rng.below(WORDS.len() as u64) as usize].to_string()).collect()
}

/// `text` with `edits` random word replacements, insertions and deletions.
fn edited(rng: &mut Rng, text: &[String], edits: usize) -> Vec<String> {
    let mut out = text.to_vec();
    for _ in 0..edits {
        let at = rng.below(out.len() as u64 + 1) as usize;
        match rng.below(3) {
            0 if at < out.len() => out[at] = words(rng, 1).remove(0),
            1 if at < out.len() => {
                out.remove(at);
            }
            _ => out.insert(at, words(rng, 1).remove(0)),
        }
    }
    out
}

fn shingles(text: &str) -> BTreeSet<u64> {
    let mut set = BTreeSet::new();
    Fingerprinter::new().for_each_shingle(text, |h| {
        set.insert(h);
    });
    set
}

fn jaccard(a: &str, b: &str) -> Option<(usize, usize)> {
    let (x, y) = (shingles(a), shingles(b));
    if x.is_empty() || y.is_empty() {
        return None;
    }
    let shared = x.intersection(&y).count();
    Some((shared, x.len() + y.len() - shared))
}

fn distance(a: &str, b: &str) -> Option<u32> {
    let f = Fingerprinter::new();
    Some(f.fingerprint(a)?.distance(f.fingerprint(b)?))
}

/// Random pairs (from copies to unrelated texts) and adversarial ones: identical, empty,
/// one to three words, case and punctuation only, fingerprints exactly 3 and 4 bits apart,
/// Jaccard exactly 0.4 (2 of 5, 4 of 10) and just under it.
fn pairs() -> Vec<(String, String)> {
    let mut rng = Rng(0x5eed_1234_abcd);
    let mut out: Vec<(String, String)> = Vec::new();
    for i in 0..30 {
        let len = 3 + rng.below(40) as usize;
        let base = words(&mut rng, len);
        let other = edited(&mut rng, &base, i % 12);
        out.push((base.join(" "), other.join(" ")));
    }
    let text = words(&mut rng, 20).join(" ");
    // A paragraph of its own added: `overlap` one way and `same` the other, so the pair
    // (`pairs`, `cluster`) reads `same` where the record that would go reads `overlap`.
    let longer = format!(
        "{text} the committee approved proposals concerning irrigation canals bridges schools \
         hospitals libraries museums parks roads tunnels airports railways and their stations"
    );
    // Three times, so that whichever of them the input order swaps, one has it later.
    out.push((text.clone(), longer.clone()));
    out.push((longer.clone(), text.clone()));
    out.push((text.clone(), longer));
    for (a, b) in [
        (text.clone(), text.clone()),
        (text.clone(), text.to_uppercase() + "!"),
        (String::new(), String::new()),
        (String::new(), text.clone()),
        ("river".into(), "river".into()),
        ("river stone".into(), "river stone".into()),
        ("river stone light".into(), "river stone light".into()),
        ("river stone light".into(), "river stone lights".into()),
        ("   ".into(), "?!".into()),
    ] {
        out.push((a, b));
    }
    let (mut wanted_bits, mut wanted_ratio): (Vec<u32>, Vec<(usize, usize)>) =
        (vec![3, 4], vec![(2, 5), (4, 10), (7, 18)]);
    for _ in 0..20_000 {
        if wanted_bits.is_empty() && wanted_ratio.is_empty() {
            break;
        }
        let len = 3 + rng.below(14) as usize;
        let base = words(&mut rng, len);
        let edits = 1 + rng.below(4) as usize;
        let other = edited(&mut rng, &base, edits);
        let (a, b) = (base.join(" "), other.join(" "));
        if let Some(d) = distance(&a, &b)
            && let Some(at) = wanted_bits.iter().position(|&w| w == d)
        {
            wanted_bits.remove(at);
            out.push((a.clone(), b.clone()));
        }
        if let Some(ratio) = jaccard(&a, &b)
            && let Some(at) = wanted_ratio.iter().position(|&w| w == ratio)
        {
            wanted_ratio.remove(at);
            out.push((a, b));
        }
    }
    assert!(wanted_bits.is_empty() && wanted_ratio.is_empty(), "{wanted_bits:?} {wanted_ratio:?}");
    out
}

/// The `--removed` line of the record dedup removes of the two of `pair.jsonl` (none: both
/// kept).
fn dedup_removes(dir: &Dir, settings: &[&str]) -> Option<Value> {
    let mut args = vec!["dedup", "pair.jsonl", "-q", "-o", "kept.jsonl", "--removed", "r.jsonl"];
    args.extend(settings);
    dir.run(&args).code(0);
    let removed = dir.read("r.jsonl");
    let mut lines = removed.lines();
    let first = lines.next().map(|l| serde_json::from_str::<Value>(l).unwrap());
    assert!(lines.next().is_none());
    first
}

#[test]
fn explain_decides_as_dedup_on_random_and_adversarial_pairs() {
    let settings: [&[&str]; 7] = [
        &[],
        &["--jaccard", "0.9"],
        &["--lsh-threshold", "0.9", "--jaccard", "0.3"],
        &["--keep", "longest"],
        &["--keep", "lowest-id", "--mode", "components"],
        &["--method", "simhash", "-k", "3"],
        &["--method", "simhash", "-k", "3", "--keep", "longest"],
    ];
    let pairs = pairs();
    // One thread per setting, each in a directory of its own.
    let cases: HashSet<String> = std::thread::scope(|scope| {
        let threads: Vec<_> =
            settings.iter().map(|s| scope.spawn(|| agree_on_pairs(&pairs, s))).collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    for case in [
        "match",
        "below_threshold",
        "lsh_miss",
        "dissimilar",
        "featureless",
        "within_distance",
        "beyond_distance",
        "overlap",
        "pair_differs",
    ] {
        assert!(cases.contains(case), "no pair gave {case}: {cases:?}");
    }
}

/// Runs `explain --json` and `dedup` on each pair with `settings`, checks that they agree
/// and that the report's figures are brute force's; returns the cases seen.
fn agree_on_pairs(pairs: &[(String, String)], settings: &[&str]) -> HashSet<String> {
    let dir = Dir::new();
    let mut cases = HashSet::new();
    for (n, (a, b)) in pairs.iter().enumerate() {
        // Ids of both kinds, and the records in either order in the input.
        let (id_a, id_b) =
            if n % 2 == 0 { (json!(10 + n), json!(n)) } else { (json!("a"), json!("b")) };
        let mut records = [json!({"id": id_a, "text": a}), json!({"id": id_b, "text": b})];
        if n % 3 == 0 {
            records.swap(0, 1);
        }
        dir.write("pair.jsonl", format!("{}\n{}\n", records[0], records[1]));
        let arg = |id: &Value| id.as_str().map_or_else(|| id.to_string(), str::to_string);
        let (arg_a, arg_b) = (arg(&id_a), arg(&id_b));
        let mut args = vec!["explain", "--json", "-i", "pair.jsonl", &arg_a, &arg_b];
        args.extend(settings);
        let run = dir.run(&args);
        run.code(0);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let decision = &report["decision"];
        let line = dedup_removes(&dir, settings);
        let want = line.as_ref().map_or(Value::Null, |l| l["id"].clone());
        assert_eq!(decision["removed"], want, "{settings:?} {a:?} {b:?}");
        // The removal's relation and Jaccard as `--removed` writes them, in every mode.
        if let Some(line) = line.as_ref().filter(|_| !settings.contains(&"simhash")) {
            assert_eq!(decision["relation"], line["relation"], "{settings:?} {a:?} {b:?}");
            let j = decision["verified_jaccard"].as_f64().expect("a Jaccard");
            let written = line["jaccard"].as_f64().expect("a Jaccard");
            assert!((j - written).abs() < 6e-5, "{j} and {written}: {settings:?} {a:?} {b:?}");
        }
        cases.insert(decision["case"].as_str().unwrap().to_string());
        check_figures(&report, a, b, settings);
        if !settings.iter().any(|s| ["--method", "--keep"].contains(s))
            && check_pair(&dir, &report, settings)
        {
            cases.insert("pair_differs".into());
        }
    }
    cases
}

/// `pairs` lists the pair exactly when it verifies and its relation as a pair (explain's
/// `pair`, the lesser of both directions) is one it acts on, with that relation; true when
/// it lists a pair whose relation differs from the directed one explain reads.
fn check_pair(dir: &Dir, report: &Value, settings: &[&str]) -> bool {
    let mut args = vec!["pairs", "pair.jsonl", "-q"];
    args.extend(settings);
    let run = dir.run(&args);
    run.code(0);
    let listed: Vec<&str> = run.stdout.lines().skip(1).collect();
    let m = &report["minhash"];
    let verified = !m["bands_met"].as_array().unwrap().is_empty()
        && m["jaccard"].as_f64().unwrap() >= report["settings"]["jaccard"].as_f64().unwrap()
        && report["decision"]["case"] != "featureless";
    let pair = report["relation"]["pair"].as_str();
    if verified && pair != Some("overlap") {
        assert_eq!(listed.len(), 1, "{report}");
        assert_eq!(listed[0].split('\t').nth(3), pair, "{report}");
        pair != report["relation"]["relation"].as_str()
    } else {
        assert!(listed.is_empty(), "{listed:?}: {report}");
        false
    }
}

/// The report's figures are brute force's, and its case agrees with them.
fn check_figures(report: &Value, a: &str, b: &str, settings: &[&str]) {
    let removed = !report["decision"]["removed"].is_null();
    let case = report["decision"]["case"].as_str().unwrap();
    assert_eq!(report["simhash"]["distance"], json!(distance(a, b)), "{a:?} {b:?}");
    if settings.contains(&"simhash") {
        let within = distance(a, b).is_some_and(|d| d <= 3);
        assert_eq!(removed, within, "{settings:?} {a:?} {b:?}");
        return;
    }
    let m = &report["minhash"];
    let threshold = report["settings"]["jaccard"].as_f64().unwrap();
    let exact = jaccard(a, b).map_or(0.0, |(s, u)| s as f64 / u as f64);
    let reported = m["jaccard"].as_f64().unwrap();
    assert!((reported - exact).abs() < 1e-12, "{reported} against {exact}: {a:?} {b:?}");
    let met = !m["bands_met"].as_array().unwrap().is_empty();
    let featureless = jaccard(a, b).is_none();
    let verified = !featureless && met && exact >= threshold;
    // A verified pair is kept only when the record that would go has content of its own.
    let overlap = case == "overlap";
    assert!(!overlap || report["relation"]["relation"] == "overlap", "{case} {a:?} {b:?}");
    assert_eq!(removed, verified && !overlap, "{case} {a:?} {b:?}");
    if let Some((shared, union)) = jaccard(a, b) {
        let counts = m["shared"].as_u64().unwrap()
            + m["only_a"].as_u64().unwrap()
            + m["only_b"].as_u64().unwrap();
        assert_eq!((m["shared"].as_u64().unwrap(), counts), (shared as u64, union as u64));
    }
}

#[test]
fn explain_errors_exit_2_with_a_message() {
    let dir = Dir::new();
    dir.write(
        "c.jsonl",
        "{\"id\":\"x\",\"text\":\"a b c d\"}\n{\"id\":\"y\",\"text\":\"a b c e\"}\n",
    );
    dir.write("twice.jsonl", "{\"id\":\"x\",\"text\":\"a\"}\n{\"id\":\"x\",\"text\":\"b\"}\n{\"id\":\"y\",\"text\":\"c\"}\n");
    dir.write(
        "bad.jsonl",
        "{\"id\":\"x\",\"text\":\"a\"}\nnot json\n{\"id\":\"y\",\"text\":\"c\"}\n",
    );
    dir.write("h.tsv", "id\thash\nx\t1\ny\t2\n");
    // An id after records without: dedup skips it as a bad record.
    dir.write("mixed.jsonl", "{\"text\":\"a b c d\"}\n{\"id\":\"x\",\"text\":\"a b c d\"}\n");
    let cases: [(&[&str], &str); 7] = [
        (&["explain", "-i", "c.jsonl", "x", "z"], "no record has the id \"z\" in the input"),
        (
            &["explain", "-i", "twice.jsonl", "x", "y"],
            "duplicate id \"x\": at twice.jsonl:1 and at twice.jsonl:2",
        ),
        (&["explain", "-i", "bad.jsonl", "x", "y"], "bad.jsonl:2: bad record"),
        (
            &["explain", "-i", "mixed.jsonl", "0", "x"],
            "mixed.jsonl:2: bad record: has an id, but earlier records have none",
        ),
        (&["explain", "-i", "c.jsonl", "x", "x"], "A and B are the same id"),
        (&["explain", "-i", "h.tsv", "x", "y"], "explain needs the records' text"),
        (&["explain", "a b", "a c", "--jaccard", "2"], "--jaccard must be"),
    ];
    for (args, want) in cases {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains(want), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn explain_colours_only_when_asked_or_on_a_terminal() {
    let dir = Dir::new();
    let args = ["explain", "river stone light harbor", "river stone light window"];
    // Standard output is a pipe here: auto means no colour.
    let plain = dir.run(&args);
    plain.code(0);
    assert!(!plain.stdout.contains('\x1b'));
    let always = dir.run(&[&args[..], &["--color", "always"]].concat());
    assert!(always.stdout.contains("\x1b[1m"));
    let never = dir.run(&[&args[..], &["--color", "never"]].concat());
    assert_eq!(never.stdout, plain.stdout);
    // Without the escapes, the same text.
    let stripped = always.stdout.replace("\x1b[0m", "").replace("\x1b[1m", "");
    let stripped = stripped.replace("\x1b[1;31m", "").replace("\x1b[1;32m", "");
    assert_eq!(stripped, plain.stdout);
}

/// The golden cases: a name and the arguments (run in a directory holding
/// `golden/corpus.jsonl` as `corpus.jsonl`).
const GOLDEN: &[(&str, &[&str])] = &[
    (
        "minhash-match",
        &[
            "explain",
            "the quick brown fox jumps over the lazy dog near the river bank today",
            "the quick brown fox jumps over the lazy dog near the river bank tonight",
        ],
    ),
    (
        "minhash-dissimilar",
        &[
            "explain",
            "the quick brown fox jumps over the lazy dog",
            "a completely different sentence about ships and harbours",
        ],
    ),
    (
        "minhash-below-threshold",
        &[
            "explain",
            "--jaccard",
            "0.9",
            "the quick brown fox jumps over the lazy dog near the river bank today",
            "the quick brown fox jumps over the lazy dog near the river bank tonight",
        ],
    ),
    (
        "simhash",
        &[
            "explain",
            "--method",
            "simhash",
            "-k",
            "3",
            "the quick brown fox jumps over the lazy dog near the river bank today",
            "the quick brown fox jumps over the lazy dog near the river bank tonight",
        ],
    ),
    (
        "minhash-phrase-replaced",
        &[
            "explain",
            "DisplayCAL tool. Creates profiles of synthetic colorspaces. Calibrates and \
             characterizes display devices using a hardware sensor, driven by the open source \
             color management system Argyll CMS.",
            "DisplayCAL tool. Shows calibration tone response curves. Calibrates and \
             characterizes display devices using a hardware sensor, driven by the open source \
             color management system Argyll CMS.",
        ],
    ),
    (
        "minhash-stock-sentence",
        &[
            "explain",
            "Zstandard is a fast lossless compression algorithm targeting real time compression \
             scenarios at zlib level and better compression ratios. This package contains the \
             development headers and the static library.",
            "Zstandard is a fast lossless compression algorithm targeting real time compression \
             scenarios at zlib level and better compression ratios. Questo pacchetto contiene \
             la documentazione di sviluppo della libreria.",
        ],
    ),
    (
        "minhash-stock-sentence-kept",
        &[
            "explain",
            "The OpenAL Utility Toolkit is a portable library for loading sounds and creating \
             contexts. This package contains the development headers and the static library.",
            "The OpenAL Utility Toolkit is a portable library for loading sounds and creating \
             contexts.",
        ],
    ),
    (
        "minhash-sentence-added",
        &[
            "explain",
            "GNU Emacs is the extensible self-documenting text editor. This package contains \
             the editor with its full set of features and the manuals.",
            "GNU Emacs is the extensible self-documenting text editor. This package contains \
             the editor with its full set of features and the manuals. This variant is for \
             working without an X server.",
        ],
    ),
    // A notice added to a long page: the same document (an edition), not a variant.
    ("minhash-edition", &["explain", "-i", "edition.jsonl", "ga", "beta"]),
    // A longer notice, with new words enough to be a sentence added: still an edition's,
    // never also called a variant's.
    ("minhash-edition-sentence", &["explain", "-i", "edition.jsonl", "ga", "beta-warning"]),
    ("featureless", &["explain", "", "some text"]),
    ("ids-keep-longest", &["explain", "-i", "corpus.jsonl", "--keep", "longest", "d1", "7"]),
    (
        "ids-lowest-id",
        &["explain", "-i", "corpus.jsonl", "--keep", "lowest-id", "--shingles", "2", "d2", "d1"],
    ),
];

#[test]
fn explain_output_matches_the_golden_files() {
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("SIMHASH_BLESS").is_some();
    let dir = Dir::new();
    for corpus in ["corpus.jsonl", "edition.jsonl"] {
        std::fs::copy(golden.join(corpus), dir.path(corpus)).unwrap();
    }
    let mut failed = Vec::new();
    for (name, args) in GOLDEN {
        for (ext, extra) in [("txt", &["--color", "never"][..]), ("json", &["--json"])] {
            let run = dir.run(&[*args, extra].concat());
            run.code(0);
            let path = golden.join(format!("explain-{name}.{ext}"));
            if bless {
                std::fs::write(&path, &run.stdout).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(run.stdout.as_str()) {
                failed.push(format!("{}:\n{}", path.display(), run.stdout));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "outputs differ from the golden files (SIMHASH_BLESS=1 rewrites them):\n{}",
        failed.join("\n")
    );
}

/// Numeric ids past a 64-bit integer, or written with a fraction's zeros: `explain -i`
/// orders them as `dedup --keep lowest-id` does (integers first, in their order, then other
/// ids as text) and shows them as the input wrote them (the text report as written; `--json`
/// as a string where a JSON number would round them).
#[test]
fn explain_keeps_numeric_ids_as_written() {
    let dir = Dir::new();
    let text = "alpha beta gamma delta epsilon zeta eta";
    // The two records' ids, and the one `dedup --keep lowest-id` removes.
    for (first, second, removed) in [
        ("-20000000000000000000", "3", "3"),
        ("2", "30000000000000000000", "30000000000000000000"),
        ("1.50", "7", "1.50"),
    ] {
        let record = |id: &str, text: &str| format!("{{\"id\":{id},\"text\":\"{text}\"}}\n");
        dir.write("in.jsonl", record(first, text) + &record(second, &format!("{text} theta")));
        let args = ["dedup", "in.jsonl", "--keep", "lowest-id", "-q", "-o", "k"];
        dir.run(&[&args[..], &["--removed", "r"]].concat()).code(0);
        let line = dir.read("r");
        assert!(line.starts_with(&format!("{{\"id\":{removed},")), "{line}");
        for (a, b) in [(first, second), (second, first)] {
            let common = ["explain", "-i", "in.jsonl", "--keep", "lowest-id"];
            let run = dir.run(&[&common[..], &["--json", "--", a, b]].concat());
            let json: Value = serde_json::from_str(&run.code(0).stdout).expect("json");
            let id = &json["decision"]["removed"];
            let shown = id.as_str().map_or_else(|| id.to_string(), str::to_string);
            assert_eq!(shown, removed, "{first} {second}: {json}");
            let text = dir.run(&[&common[..], &["--color", "never", "--", a, b]].concat());
            let stdout = &text.code(0).stdout;
            assert!(stdout.contains(&format!("id {first} (in.jsonl:1)")), "{stdout}");
        }
    }
}
