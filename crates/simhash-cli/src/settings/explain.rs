//! `simhash explain`'s settings: resolved by `dedup`'s own conversion
//! ([`DedupSettings::new`]), so that the method, the fingerprinter, the LSH bands and the
//! keep policy are the ones `dedup` would use with the same flags.

use clap::Parser;

use crate::flags::{ColorChoice, DedupArgs, ExplainArgs};

use super::DedupSettings;

/// `simhash explain`.
#[derive(Debug)]
pub struct ExplainSettings {
    /// What `dedup` would run with these flags (its input: `--input`, or none for texts).
    pub dedup: DedupSettings,
    /// `--input` given: A and B are ids.
    pub by_id: bool,
    /// Record A: its text, or its id with `--input`.
    pub a: String,
    /// Record B: its text, or its id with `--input`.
    pub b: String,
    /// `--json`: the report as JSON.
    pub json: bool,
    /// `--shingles`: the shingles listed of each group.
    pub shingles: usize,
    /// `--color`.
    pub color: ColorChoice,
}

impl ExplainSettings {
    /// The settings of `args`: dedup's, resolved from the same flags.
    pub fn new(args: &ExplainArgs) -> anyhow::Result<ExplainSettings> {
        let dedup = DedupSettings::new(&dedup_args(args)?, None)?;
        Ok(ExplainSettings {
            dedup,
            by_id: !args.input.input.is_empty(),
            a: args.a.clone(),
            b: args.b.clone(),
            json: args.json,
            shingles: args.shingles,
            color: args.color,
        })
    }
}

/// The `dedup` command line that `explain`'s flags stand for: the same input columns and
/// matching flags, writing nowhere (nothing is written from it). Every other flag has
/// dedup's default, as clap gives it (so a flag added to dedup is covered too).
fn dedup_args(args: &ExplainArgs) -> anyhow::Result<DedupArgs> {
    /// `dedup`'s flags alone, to parse their defaults.
    #[derive(Parser)]
    struct Dedup {
        #[command(flatten)]
        args: DedupArgs,
    }
    let mut dedup = Dedup::try_parse_from(["dedup", "--quiet", "--strict"])
        .map_err(|e| anyhow::anyhow!("internal error: dedup's defaults: {e}"))?
        .args;
    dedup.input.inputs.paths.clone_from(&args.input.input);
    dedup.input.records.columns = args.columns.clone();
    dedup.input.records.limit = args.limit.clone();
    dedup.fingerprint = args.fingerprint.clone();
    dedup.matching = args.matching.clone();
    dedup.cluster = args.cluster.clone();
    Ok(dedup)
}
