//! `simhash eval`'s job: scores predicted pairs or clusters against ground truth.
//!
//! Both sides are read into one partition of a shared set of ids (pairs are closed
//! transitively), then compared: pairwise precision, recall and F1 over the pairs of
//! documents that share a cluster, B-cubed precision and recall, and, when the truth lists
//! labelled pairs with a tier, recall per tier.
//!
//! Accepted files, told apart line by line:
//! - JSONL with an id and a cluster label (`{"id":..,"cluster":..}`; also `cluster_id`,
//!   `group`, `group_id`): records sharing a label form a cluster;
//! - JSONL with an id and the id of the record it duplicates (`duplicate_of`, `dup_of`,
//!   `canonical`, `representative`): `simhash dedup --removed` output as it is;
//! - JSONL with a list of ids (`{"ids": [..]}` or `{"members": [..]}`), or a bare JSON array
//!   (`find-clusters` output): one cluster per line;
//! - TSV: a header naming `id_a` and `id_b` means pairs (with an optional `label` column,
//!   where 0 marks a negative pair, and an optional `tier` column); a header naming `id` and
//!   `cluster` means one record per line (`simhash cluster` output); without a header the
//!   first two columns are a pair (`simhash pairs` output has a header).
//!
//! The truth must hold at least one record, and may not put an id in two clusters.
//!
//! Lines are read as every command reads them ([`simhash_io::LineReader`]): LF or CRLF ends
//! a line, a line over [`simhash_io::DEFAULT_MAX_RECORD_BYTES`] is an error, a byte-order
//! mark at the start of a line is dropped, and every id follows [`simhash_io::check_id`].

mod read;
mod score;
#[cfg(test)]
mod tests;

use std::io::Read;
use std::path::Path;

use simhash_io::Source;

use crate::error::{Context, ErrorKind, JobError, Result, bail};

use read::{Ids, read_side};
use score::score;
pub use score::{Scores, render};

/// Reads the prediction, the truth and the optional tiers file, and scores them.
pub fn evaluate(prediction: &Path, truth: &Path, tiers: Option<&Path>) -> Result<Scores> {
    evaluate_with(prediction, truth, tiers, |path, what| {
        let mut source = Source::new(path);
        let reader = source.open(false).with_context(|| format!("cannot open the {what}"))?;
        Ok((source.name, reader))
    })
}

/// [`evaluate`] with inputs in memory: `(name, contents)` for each (for fuzzing).
pub fn evaluate_bytes(
    prediction: (&str, &[u8]),
    truth: (&str, &[u8]),
    tiers: Option<(&str, &[u8])>,
) -> Result<Scores> {
    let inputs = [Some(prediction), Some(truth), tiers];
    evaluate_with(
        Path::new(prediction.0),
        Path::new(truth.0),
        tiers.map(|(name, _)| Path::new(name)),
        |path, what| {
            inputs
                .iter()
                .flatten()
                .find(|(name, _)| Path::new(name) == path)
                .map(|&(name, bytes)| (name.to_owned(), bytes))
                .ok_or_else(|| JobError::new(ErrorKind::Input, format!("cannot open the {what}")))
        },
    )
}

/// [`evaluate`], with `open` giving an input's name and lines (in the order truth, tiers
/// file, prediction).
fn evaluate_with<R: Read>(
    prediction: &Path,
    truth: &Path,
    tiers: Option<&Path>,
    mut open: impl FnMut(&Path, &str) -> Result<(String, R)>,
) -> Result<Scores> {
    let mut ids = Ids::default();
    let (name, lines) = open(truth, "truth")?;
    let mut truth_side = read_side(&name, lines, &mut ids, "truth", true)?;
    if truth_side.mentioned.is_empty() {
        bail!(Input, "{name}: no labelled records");
    }
    if let Some(path) = tiers {
        let (name, lines) = open(path, "tiers file")?;
        let extra = read_side(&name, lines, &mut ids, "tiers file", false)?;
        if extra.labelled.is_empty() {
            bail!(
                Input,
                "{name}: no labelled pairs: expected a TSV header naming id_a, id_b and tier"
            );
        }
        truth_side.mentioned.extend(extra.mentioned);
        truth_side.labelled.extend(extra.labelled);
    }
    let mut known = vec![false; ids.names.len()];
    for &d in &truth_side.mentioned {
        known[d as usize] = true;
    }
    let (name, lines) = open(prediction, "prediction")?;
    let pred = read_side(&name, lines, &mut ids, "prediction", false)?;
    known.resize(ids.names.len(), false);
    score(&ids, &truth_side, &pred, &known)
}
