//! `simhash explain A B`: why two records are (or are not) near-duplicates, and what
//! `dedup` would do with them.
//!
//! The settings are dedup's own ([`ExplainSettings`] resolves them through
//! [`DedupSettings::new`](crate::settings::DedupSettings::new)), and the decision is
//! dedup's own: the two records are written to a temporary JSONL file and read, matched
//! and clustered by the same code `simhash dedup` runs ([`simhash_jobs::Session::read`],
//! [`simhash_jobs::matching::clusters`]). The rest of the report (the fingerprints, the shingle
//! sets, the bands that meet) explains that decision from the same fingerprinter and
//! sketcher ([`analysis`]).

mod analysis;
mod records;
mod render;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use simhash_io::{Columns, IdValue, Parser, Score};
use simhash_jobs::Reading;
use simhash_jobs::matching::{Grouped, clusters, removal_relation, removal_score};

use crate::settings::{ExplainSettings, Matching, Run};

use records::Found;

/// What dedup does with the pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Both are kept.
    KeepBoth,
    /// B is removed as a near-duplicate of A.
    RemoveB,
    /// A is removed as a near-duplicate of B (the keep policy prefers B).
    RemoveA,
}

/// Dedup's decision on the pair, from its engine.
#[derive(Clone, Copy, Debug)]
pub struct Decision {
    /// Kept, removed as a duplicate of the other, or neither.
    pub outcome: Outcome,
    /// The removed record's Jaccard similarity to the kept one, as the walk verified it
    /// (MinHash, star mode).
    pub verified_jaccard: Option<f64>,
    /// The removed record's relation to the kept one, as the walk read it (MinHash, star
    /// mode).
    pub relation: Option<simhash_index::lsh::Relation>,
    /// Whether B is the record the walk would remove first (B comes after A in the keep
    /// order): the direction the relation is read in when both are kept.
    pub b_later: bool,
}

/// Runs `simhash explain`: the two records (texts, or ids in `--input`), what dedup's matching sees
/// of them, and its decision.
pub fn run(settings: &ExplainSettings) -> anyhow::Result<ExitCode> {
    // Its report goes to standard output: closed, it would go to Rust's `/dev/null`.
    if simhash_io::stdout_was_closed() {
        return Err(simhash_io::closed_stdout_error("").into());
    }
    let input = &settings.dedup.input;
    let Parser::Json(columns) = &input.reading.parser else {
        anyhow::bail!("explain needs the records' text: the input holds fingerprints (hash TSV)");
    };
    let [a, b] = if settings.by_id {
        records::find(&input.inputs, columns, input.max_record_bytes, &settings.a, &settings.b)?
    } else {
        let text = |id: &str, text: &str, position| Found {
            id: IdValue { text: id.to_owned().into(), number: false },
            text: text.to_owned(),
            position,
            place: format!("argument {id}"),
        };
        [text("A", &settings.a, 0), text("B", &settings.b, 1)]
    };
    let fingerprinter = input
        .reading
        .fingerprinter
        .as_ref()
        .context("internal error: no fingerprinter for text")?;
    let sketcher = settings.dedup.matching.sketcher(false)?;
    let analysis =
        analysis::analyse(fingerprinter, sketcher.as_ref(), &a.text, &b.text, settings.shingles);
    let decision = decide(settings, &a, &b)?;
    let report = render::Report { settings, a: &a, b: &b, analysis: &analysis, decision };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if settings.json {
        render::json(&report, &mut out)?;
    } else {
        render::text(&report, render::colored(settings.color), &mut out)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Runs dedup's reading, matching and clustering on the two records alone, written in
/// their input order (A first for texts) to a temporary JSONL file with their ids as the
/// input wrote them (a number stays a number, for `--keep lowest-id`).
pub fn decide(settings: &ExplainSettings, a: &Found, b: &Found) -> anyhow::Result<Decision> {
    let (first, second, a_first) =
        if a.position <= b.position { (a, b, true) } else { (b, a, false) };
    let dir = TempDir::new()?;
    let path = dir.0.join("pair.jsonl");
    let mut jsonl = Vec::new();
    for record in [first, second] {
        jsonl.extend_from_slice(b"{\"id\":");
        if record.id.number {
            jsonl.extend_from_slice(id_number(&record.id.text)?.as_bytes());
        } else {
            serde_json::to_writer(&mut jsonl, &record.id.text)?;
        }
        jsonl.extend_from_slice(b",\"text\":");
        serde_json::to_writer(&mut jsonl, &record.text)?;
        jsonl.extend_from_slice(b"}\n");
    }
    std::fs::write(&path, &jsonl).with_context(|| format!("{}: cannot write", path.display()))?;

    let dedup = &settings.dedup;
    let reading = Reading {
        parser: Parser::Json(Columns::new("text", "id")),
        fingerprinter: dedup.input.reading.fingerprinter.clone(),
        sketcher: dedup.input.reading.sketcher.clone(),
        eval: None,
    };
    let run = Run { threads: 1, quiet: true, stats: None, memory: dedup.run.memory };
    let mut session = crate::progress::session("explain", &run, true)?;
    let mut sources = vec![simhash_io::Source::new(&path)];
    let corpus = session.read(&mut sources, reading, None, false)?;
    anyhow::ensure!(corpus.len() == 2, "internal error: {} records read of 2", corpus.len());
    let Grouped { clusters, jaccard, relation } =
        clusters(&mut session, &corpus, &dedup.matching, &dedup.grouping)?;
    let removed = (0..2u32).find(|&d| !clusters.is_representative(d));
    let outcome = match removed {
        None => Outcome::KeepBoth,
        // Document 1 (the second in input order) removed.
        Some(1) if a_first => Outcome::RemoveB,
        Some(1) => Outcome::RemoveA,
        Some(_) if a_first => Outcome::RemoveA,
        Some(_) => Outcome::RemoveB,
    };
    // As `--removed` writes them: the walk's, or (`--mode components`, no walk) read from
    // the two records' sketches and tokens.
    let (verified_jaccard, relation) = match (&dedup.matching, removed) {
        (Matching::Minhash { .. }, Some(d)) => {
            let (d, rep) = (d as usize, clusters.representative(clusters.cluster_of(d)) as usize);
            let sketches = corpus.sketches.as_ref();
            let jaccard = match removal_score(&corpus, sketches, jaccard.as_deref(), d, rep)? {
                Score::Jaccard(j) => Some(j),
                Score::Distance(_) => None,
            };
            (jaccard, removal_relation(sketches, relation.as_deref(), d, rep)?)
        }
        _ => (None, None),
    };
    // The keep order: the rank of each record; the later one is the walk's candidate.
    let rank = simhash_jobs::matching::priority(&corpus, dedup.grouping.keep)?;
    let second_later = rank[1] >= rank[0];
    let b_later = second_later == a_first;
    Ok(Decision { outcome, verified_jaccard, relation, b_later })
}

/// A numeric id's text as the input wrote it (`-20000000000000000000`, `1.50`; integers
/// from Parquet), checked to be one JSON number: written as it is, so that the run reads,
/// orders (`--keep lowest-id`) and shows it as `dedup` did, where a [`serde_json::Number`]
/// would make an integer past 64 bits a float (`-2e19`) and drop a fraction's zeros.
fn id_number(text: &str) -> anyhow::Result<&str> {
    serde_json::from_str::<serde_json::Number>(text)
        .map(|_| text.trim())
        .with_context(|| format!("internal error: id {text:?} is not a number"))
}

/// A directory of this process's own under the system's temporary directory, removed
/// with what it holds when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> anyhow::Result<TempDir> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last = None;
        for attempt in 0..100u32 {
            let path =
                base.join(format!("simhash-explain-{}-{nanos}-{attempt}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e).context(temp_error(&base)),
            }
        }
        Err(anyhow::Error::from(last.unwrap_or_else(|| std::io::Error::other("no name")))
            .context(temp_error(&base)))
    }
}

fn temp_error(base: &Path) -> String {
    format!("cannot create a temporary directory in {}", base.display())
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
