//! `explain`'s report: the text (coloured on a terminal) and the JSON object
//! (docs/explain.md lists its fields). Both say the same things, in the same order.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

use serde_json::{Value, json};
use simhash_index::lsh;

use crate::flags::{ClusterMode, ColorChoice, KeepPolicy};
use crate::settings::{ExplainSettings, Matching};

use super::analysis::{Analysis, Related, Sets, Shingle};
use super::records::Found;
use super::{Decision, Outcome};

/// Everything the report shows.
pub struct Report<'a> {
    /// The settings the pair was explained with.
    pub settings: &'a ExplainSettings,
    /// Record A.
    pub a: &'a Found,
    /// Record B.
    pub b: &'a Found,
    /// What the matching sees of them.
    pub analysis: &'a Analysis,
    /// Dedup's decision.
    pub decision: Decision,
}

/// Whether to colour: always, never, or (auto) when standard output is a terminal and
/// `NO_COLOR` is unset or empty.
pub fn colored(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Why dedup decided as it did: a name for scripts and a sentence.
struct Why {
    case: &'static str,
    reason: String,
}

fn why(report: &Report<'_>) -> Why {
    let Report { settings, analysis, decision, .. } = report;
    let removed = decision.outcome != Outcome::KeepBoth;
    let featureless = match (&analysis.sets, analysis.a.fingerprint, analysis.b.fingerprint) {
        (Some(sets), ..) => {
            sets.counts[0] + sets.counts[1] == 0 || sets.counts[0] + sets.counts[2] == 0
        }
        (None, a, b) => a.is_none() || b.is_none(),
    };
    if featureless && !removed {
        return Why {
            case: "featureless",
            reason: "a record without features (no shingles) matches no other".into(),
        };
    }
    match (&settings.dedup.matching, &analysis.sets) {
        (Matching::Minhash { jaccard: t, templates, .. }, Some(sets)) => {
            let (name, related) = candidate(report).unzip();
            let why = minhash_why(sets, *t, removed);
            match (why.case, related.map(|r| r.evidence.relation)) {
                ("unexpected", Some(lsh::Relation::Overlap)) => Why {
                    case: "overlap",
                    reason: format!(
                        "the exact Jaccard {:.4} reaches {t}, but {} has {}: dedup never \
                         removes it",
                        sets.jaccard,
                        name.unwrap_or("B"),
                        related.map_or_else(String::new, |r| own_content(&r.evidence))
                    ),
                },
                ("unexpected", Some(lsh::Relation::Template)) => Why {
                    case: "template_kept",
                    reason: format!(
                        "the exact Jaccard {:.4} reaches {t}, but the two are template \
                         siblings and --templates is {templates}",
                        sets.jaccard
                    ),
                },
                _ => why,
            }
        }
        (Matching::Simhash { distance: k, .. }, _) => {
            let d = analysis.distance.unwrap_or(0);
            if removed {
                Why {
                    case: "within_distance",
                    reason: format!("their fingerprints are {d} bits apart, within -k {k}"),
                }
            } else {
                Why {
                    case: "beyond_distance",
                    reason: format!("their fingerprints are {d} bits apart, more than -k {k}"),
                }
            }
        }
        (Matching::Minhash { .. }, None) => {
            Why { case: "unknown", reason: "no shingle sets".into() }
        }
    }
}

fn minhash_why(sets: &Sets, t: f64, removed: bool) -> Why {
    let (j, met, bands) = (sets.jaccard, sets.bands_met.len(), sets.bands);
    let (case, reason) = match (removed, met > 0, j >= t) {
        (true, true, _) => (
            "match",
            format!("the exact Jaccard {j:.4} reaches {t}, and {met} of {bands} LSH bands meet"),
        ),
        (true, false, _) => (
            "match",
            format!("the exact Jaccard {j:.4} reaches {t}; their 32-bit band keys collide"),
        ),
        (false, true, false) => (
            "below_threshold",
            format!(
                "{met} of {bands} LSH bands meet, so they are compared, but the exact Jaccard \
                 {j:.4} is under {t}"
            ),
        ),
        (false, false, true) => (
            "lsh_miss",
            format!(
                "the exact Jaccard {j:.4} reaches {t}, but no LSH band meets: LSH misses this \
                 pair (a lower --lsh-threshold finds more such pairs)"
            ),
        ),
        (false, false, false) => {
            ("dissimilar", format!("the exact Jaccard {j:.4} is under {t}, and no LSH band meets"))
        }
        (false, true, true) => (
            "unexpected",
            format!("kept though the exact Jaccard {j:.4} reaches {t} and {met} bands meet"),
        ),
    };
    Why { case, reason }
}

/// The side the walk would consider removing (the later in the keep order, or the one
/// removed) and its relation to the other.
fn candidate<'r>(report: &'r Report<'_>) -> Option<(&'static str, &'r Related)> {
    let (as_b, as_a) = report.analysis.relations.as_ref()?;
    let b = match report.decision.outcome {
        Outcome::RemoveA => false,
        Outcome::RemoveB => true,
        Outcome::KeepBoth => report.decision.b_later,
    };
    Some(if b { ("B", as_b) } else { ("A", as_a) })
}

fn keep_name(keep: KeepPolicy) -> &'static str {
    match keep {
        KeepPolicy::First => "first",
        KeepPolicy::Longest => "longest",
        KeepPolicy::LowestId => "lowest-id",
    }
}

fn keep_note(keep: KeepPolicy) -> &'static str {
    match keep {
        KeepPolicy::First => "--keep first: the first in input order",
        KeepPolicy::Longest => "--keep longest: the longer text, the first of equals",
        KeepPolicy::LowestId => "--keep lowest-id: the lower id, numbers before text",
    }
}

fn mode_name(mode: ClusterMode) -> &'static str {
    match mode {
        ClusterMode::Star => "star",
        ClusterMode::Components => "components",
    }
}

fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

/// An id as the input wrote it: a number stays a number, where a JSON number of this
/// report holds it exactly (an integer of 64 bits, a decimal written as it prints); a number
/// past that (`-20000000000000000000`, `1.50`) is its text as written, a string, not a
/// rounded float.
fn id_value(found: &Found) -> Value {
    if found.id.number
        && let Ok(n) = serde_json::from_str::<serde_json::Number>(&found.id.text)
        && n.to_string() == *found.id.text
    {
        return Value::Number(n);
    }
    Value::String(found.id.text.to_string())
}

/// An id as the text report shows it: a number as the input wrote it, a string quoted.
fn id_text(found: &Found) -> String {
    if found.id.number {
        found.id.text.to_string()
    } else {
        Value::from(&*found.id.text).to_string()
    }
}

/// The settings as one JSON object.
fn settings_json(report: &Report<'_>) -> Value {
    let dedup = &report.settings.dedup;
    let mut s = serde_json::Map::new();
    s.insert("method".into(), dedup.matching.method().into());
    if let Some(f) = &dedup.input.reading.fingerprinter {
        s.insert("preset".into(), f.preset().to_string().into());
        s.insert("window".into(), f.window().into());
    }
    match &dedup.matching {
        Matching::Simhash { distance, blocks } => {
            s.insert("distance".into(), (*distance).into());
            s.insert("blocks".into(), blocks.to_string().into());
        }
        Matching::Minhash { jaccard, lsh_threshold, num_perm, .. } => {
            s.insert("jaccard".into(), (*jaccard).into());
            s.insert("lsh_threshold".into(), (*lsh_threshold).into());
            s.insert("num_perm".into(), (*num_perm).into());
            if let Some(sets) = &report.analysis.sets {
                s.insert("bands".into(), sets.bands.into());
                s.insert("rows".into(), sets.rows.into());
            }
        }
    }
    s.insert("mode".into(), mode_name(dedup.grouping.mode).into());
    s.insert("keep".into(), keep_name(dedup.grouping.keep).into());
    Value::Object(s)
}

/// Writes the report as one JSON object on one line.
pub fn json(report: &Report<'_>, out: &mut dyn Write) -> anyhow::Result<()> {
    let Report { a, b, analysis, decision, .. } = report;
    let side = |found: &Found, side: &super::analysis::Side| {
        json!({
            "id": id_value(found),
            "place": found.place,
            "bytes": side.bytes,
            "fingerprint": side.fingerprint.map(|f| hex(f.get())),
            "shingles": side.shingles.as_ref().map(Vec::len),
        })
    };
    let minhash = analysis.sets.as_ref().map(|s| {
        let list = |l: &[Shingle]| {
            l.iter().map(|s| json!({"hash": hex(s.hash), "text": s.text})).collect::<Vec<_>>()
        };
        json!({
            "jaccard": s.jaccard,
            "estimate": s.estimate,
            "shared": s.counts[0],
            "only_a": s.counts[1],
            "only_b": s.counts[2],
            "sample": {"shared": list(&s.shared), "only_a": list(&s.only_a), "only_b": list(&s.only_b)},
            "bands_met": s.bands_met,
            "bands": s.bands,
        })
    });
    let relation = candidate(report).map(|(side, r)| {
        let e = &r.evidence;
        json!({
            "of": side.to_lowercase(),
            "relation": e.relation.name(),
            "own_words": e.own_words,
            "new_words": e.new_words,
            "filled_words": e.filled_words,
            "numbers": e.numbers,
            "swapped": e.swapped,
            "replaced": e.replaced,
            "stock_words": e.stock_words,
            "other_stock_words": e.kept_stock_words,
            "sentence_added": e.sentence_added(),
            "edition": e.edition,
            "alone": r.removed_alone,
            "other_alone": r.kept_alone,
            "pair": pair_relation(report).map(lsh::Relation::name),
        })
    });
    let why = why(report);
    let (outcome, removed, kept) = match decision.outcome {
        Outcome::KeepBoth => ("keep_both", Value::Null, vec![id_value(a), id_value(b)]),
        Outcome::RemoveB => ("remove_b", id_value(b), vec![id_value(a)]),
        Outcome::RemoveA => ("remove_a", id_value(a), vec![id_value(b)]),
    };
    let object = json!({
        "a": side(a, &analysis.a),
        "b": side(b, &analysis.b),
        "settings": settings_json(report),
        "simhash": {"distance": analysis.distance},
        "minhash": minhash,
        "relation": relation,
        "decision": {
            "outcome": outcome,
            "removed": removed,
            "kept": kept,
            "case": why.case,
            "reason": why.reason,
            "verified_jaccard": decision.verified_jaccard,
            "relation": decision.relation.map(lsh::Relation::name),
        },
    });
    serde_json::to_writer(&mut *out, &object)?;
    writeln!(out)?;
    Ok(())
}

/// ANSI styles, or none.
struct Paint(bool);

impl Paint {
    fn style(&self, code: &str, text: &str) -> String {
        if self.0 { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    fn label(&self, label: &str) -> String {
        self.style("1", &format!("{label:<9}"))
    }
}

/// Writes the text report: one labelled line per fact, the decision last.
pub fn text(report: &Report<'_>, color: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let paint = Paint(color);
    let Report { settings, a, b, analysis, decision } = report;
    writeln!(out, "{} {}", paint.label("settings"), settings_line(report))?;
    for (name, found, side) in [("A", a, &analysis.a), ("B", b, &analysis.b)] {
        let mut line = if settings.by_id {
            format!("id {} ({}), ", id_text(found), found.place)
        } else {
            String::new()
        };
        let _ = write!(line, "{} bytes", side.bytes);
        if let Some(shingles) = &side.shingles {
            let _ = write!(
                line,
                ", {} shingle{}",
                shingles.len(),
                if shingles.len() == 1 { "" } else { "s" }
            );
        }
        match side.fingerprint {
            Some(fp) => {
                let _ = write!(line, ", simhash {}", hex(fp.get()));
            }
            None => line.push_str(", no features (no simhash)"),
        }
        writeln!(out, "{} {line}", paint.label(name))?;
    }
    let distance = match analysis.distance {
        Some(d) => format!("{d} of 64 bits apart"),
        None => "no distance (a record has no features)".into(),
    };
    writeln!(out, "{} {distance}", paint.label("simhash"))?;
    if let Some(sets) = &analysis.sets {
        sets_lines(sets, &paint, out)?;
    }
    if let Some((side, r)) = candidate(report) {
        relation_lines(side, r, pair_relation(report), &paint, out)?;
    }
    let why = why(report);
    let (verdict, code) = match decision.outcome {
        Outcome::KeepBoth => ("dedup would keep both".to_string(), "32"),
        Outcome::RemoveB => ("dedup would remove B as a near-duplicate of A".to_string(), "31"),
        Outcome::RemoveA => ("dedup would remove A as a near-duplicate of B".to_string(), "31"),
    };
    let verdict = paint.style(&format!("1;{code}"), &verdict);
    writeln!(out, "{} {verdict}: {} [{}]", paint.label("decision"), why.reason, why.case)?;
    let keep = settings.dedup.grouping.keep;
    let kept = match decision.outcome {
        Outcome::KeepBoth => "A and B".to_string(),
        Outcome::RemoveB => format!("A ({})", keep_note(keep)),
        Outcome::RemoveA => format!("B ({})", keep_note(keep)),
    };
    writeln!(out, "{} {kept}", paint.label("kept"))?;
    Ok(())
}

/// What an [`lsh::Relation::Overlap`] pair's removed side has of its own: content (words
/// the other lacks), or a phrase in place of one of the other's.
fn own_content(e: &lsh::Evidence) -> String {
    if e.own_words < lsh::OWN_WORDS && e.new_words < lsh::NEW_WORDS && e.replaced > 0 {
        format!(
            "a phrase of its own in place of one of the other's ({} words the other lacks)",
            e.replaced
        )
    } else {
        format!("content of its own ({} words the other lacks)", e.own_words)
    }
}

/// The pair's relation with no removed side, as `pairs`, `cluster` and `--mode components`
/// read it: the lesser of its two directions ([`lsh::pair_relation`]).
fn pair_relation(report: &Report<'_>) -> Option<lsh::Relation> {
    let (as_b, as_a) = report.analysis.relations.as_ref()?;
    Some(as_b.evidence.relation.min(as_a.evidence.relation))
}

/// The relation of `side` (the record the walk would consider removing) to the other, and
/// what each has alone; the pair's (`pair`) when it differs.
fn relation_lines(
    side: &str,
    r: &Related,
    pair: Option<lsh::Relation>,
    paint: &Paint,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let other = if side == "A" { "B" } else { "A" };
    let e = &r.evidence;
    let replaced = if e.replaced > 0 {
        format!("; a phrase of {} words in place of one of {other}'s", e.replaced)
    } else {
        String::new()
    };
    let stock = if e.stock_words > 0 {
        format!(" ({} of them stock packaging words)", e.stock_words)
    } else {
        String::new()
    };
    // A stock sentence the other has alone makes the pair siblings, not the same text.
    let other_stock = if e.kept_stock_words >= lsh::KEPT_STOCK_WORDS {
        format!("; {} stock packaging words alone in {other}", e.kept_stock_words)
    } else {
        String::new()
    };
    // A sentence added to the whole of the other text, too short to be content of its own
    // (such a pair is never an overlap): a variant's, or in a long text a revision's (an
    // edition's says so below).
    let added = if e.sentence_added() && !e.edition {
        let whose = if e.relation == lsh::Relation::Same { "a revision's" } else { "a variant's" };
        format!(
            "; a sentence added to the whole of {other}, under {} words: {whose}",
            lsh::ADDED_WORDS
        )
    } else {
        String::new()
    };
    // Words added to the whole of a long other text, past 1%: an edition's.
    let edition = if e.edition {
        format!(
            "; words added to the whole of {other}, at most {}% of a text of {} tokens or \
             more: an edition's",
            lsh::EDITION_PERCENT,
            lsh::EDITION_TOKENS
        )
    } else {
        String::new()
    };
    // `pairs` and `cluster` read the pair both ways: say so where that differs.
    let as_pair = match pair.filter(|&p| p != e.relation) {
        Some(p) => format!("; as a pair (pairs, cluster): {p}"),
        None => String::new(),
    };
    let readings = format!("{other_stock}{replaced}{added}{edition}");
    writeln!(
        out,
        "{} {side} to {other}: {} ({} words of its own, {} new to {other}; {} words alone in \
         all{stock}, {} names or numbers, {} words swapped{readings}){as_pair}",
        paint.label("relation"),
        e.relation,
        e.own_words,
        e.new_words,
        e.filled_words,
        e.numbers,
        e.swapped
    )?;
    let quoted = |runs: &[String]| runs.iter().map(|r| quote(r)).collect::<Vec<_>>();
    for (who, runs) in [(side, &r.removed_alone), (other, &r.kept_alone)] {
        if !runs.is_empty() {
            writeln!(out, "{} {}", paint.label(&format!("{who} alone")), quoted(runs).join(" | "))?;
        }
    }
    Ok(())
}

/// The settings in one line, as flags.
fn settings_line(report: &Report<'_>) -> String {
    let dedup = &report.settings.dedup;
    let mut line = format!("--method {}", dedup.matching.method());
    if let Some(f) = &dedup.input.reading.fingerprinter {
        let _ = write!(line, " --preset {} --window {}", f.preset(), f.window());
    }
    match &dedup.matching {
        Matching::Simhash { distance, blocks } => {
            let _ = write!(line, " -k {distance} --blocks {blocks}");
        }
        Matching::Minhash { jaccard, lsh_threshold, num_perm, .. } => {
            let _ = write!(
                line,
                " --jaccard {jaccard} --lsh-threshold {lsh_threshold} --num-perm {num_perm}"
            );
            if let Some(sets) = &report.analysis.sets {
                let _ = write!(line, " ({} bands of {} rows)", sets.bands, sets.rows);
            }
        }
    }
    let _ = write!(
        line,
        " --mode {} --keep {}",
        mode_name(dedup.grouping.mode),
        keep_name(dedup.grouping.keep)
    );
    line
}

/// The MinHash lines: shingle counts and samples, the Jaccard, the bands.
fn sets_lines(sets: &Sets, paint: &Paint, out: &mut dyn Write) -> anyhow::Result<()> {
    let [shared, only_a, only_b] = sets.counts;
    writeln!(
        out,
        "{} {shared} shared, {only_a} only in A, {only_b} only in B",
        paint.label("shingles")
    )?;
    for (label, list) in
        [("  shared", &sets.shared), ("  only A", &sets.only_a), ("  only B", &sets.only_b)]
    {
        if !list.is_empty() {
            let texts: Vec<String> = list.iter().map(|s| quote(&s.text)).collect();
            writeln!(out, "{} {}", paint.label(label), texts.join(" "))?;
        }
    }
    let union = shared + only_a + only_b;
    let slots = (sets.estimate * sets.num_perm as f64).round() as usize;
    writeln!(
        out,
        "{} {:.4} exact ({shared} of {union} shingles), {:.4} MinHash estimate ({slots} of {} slots)",
        paint.label("jaccard"),
        sets.jaccard,
        sets.estimate,
        sets.num_perm
    )?;
    let met: Vec<String> = sets.bands_met.iter().map(ToString::to_string).collect();
    let list = if met.is_empty() { String::new() } else { format!(": {}", met.join(" ")) };
    writeln!(out, "{} {} of {} meet{list}", paint.label("bands"), met.len(), sets.bands)?;
    Ok(())
}

/// `text` in double quotes as the record wrote it: only a quote, a backslash and control
/// characters escaped (Rust's `{:?}` also escapes combining marks, `"cafe\u{301}"`, and
/// the vowel signs of Devanagari or Thai).
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    /// Text is quoted as written, combining marks and vowel signs too; only what would
    /// break the quoting or the line is escaped, as `{:?}` escapes it.
    #[test]
    fn quoted_as_written() {
        assert_eq!(quote("cafe\u{301} au lait"), "\"cafe\u{301} au lait\"");
        assert_eq!(quote("मैं आज बाज़ार"), "\"मैं आज बाज़ार\"");
        let awkward = "a \"b\" \\ c\td\n\u{1b}";
        assert_eq!(quote(awkward), format!("{awkward:?}"));
    }
}
