//! Records alone in their candidate component: content of their own that no other record
//! of the component has, so that two of them never pair (`cluster`, `pairs`).

use super::own::KeptWindows;
use super::relation::Prepared;
use super::{EngineError, OWN_WORDS, SketchStore};

/// Records of a candidate component past which [`alone`] reads its records' windows.
/// Small in tests, so that they cover both.
const ALONE_MIN: usize = if cfg!(test) { 2 } else { 64 };

/// The most bytes each of [`alone`]'s two filters takes (past it, they fill, and fewer
/// records are found alone).
const ALONE_BYTES: usize = 4 << 20;

/// For each record of a candidate component (of [`ALONE_MIN`] records or more; none
/// otherwise), whether it has content of its own in windows no other record of the
/// component has, enough for the relation to read it as content of its own
/// ([`Prepared::own_beyond`]): then its relation, as the removed side, to every other
/// record of the component is [`Overlap`](super::Relation::Overlap), and two such records
/// never join (nor are they listed as a pair). Two filters over the records' distinct
/// windows: those seen, and those seen again (in a second record, or a false "seen"); a
/// window in the second may be in two records, one not in it is in one only. Both err
/// towards "held", so a record found alone is alone.
pub(super) fn alone<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
) -> Result<Vec<bool>, EngineError> {
    if docs.len() < ALONE_MIN {
        return Ok(Vec::new());
    }
    let mut windows = 0usize;
    for &doc in docs {
        windows = windows.saturating_add(sketches.set_len(doc as usize)?.max(1));
    }
    // A byte a window, within ALONE_BYTES.
    let windows = windows.min(ALONE_BYTES);
    let (mut seen, mut again) = (KeptWindows::sized(windows, 8), KeptWindows::sized(windows, 8));
    let mut tokens = Vec::new();
    let mut prepared = |doc: u32| -> Result<Prepared, EngineError> {
        sketches.read_tokens(doc as usize, &mut tokens)?;
        Ok(Prepared::new(std::mem::take(&mut tokens)))
    };
    for &doc in docs {
        for &h in prepared(doc)?.window_hashes() {
            if seen.may_hold(h) {
                again.insert(h);
            } else {
                seen.insert(h);
            }
        }
    }
    let mut alone = Vec::with_capacity(docs.len());
    for &doc in docs {
        // Two such records overlap both ways: each has tokens the other lacks, so neither
        // lies wholly within the other, and OWN_WORDS make content of its own.
        alone.push(prepared(doc)?.own_beyond_by(|h| again.may_hold(h)) >= OWN_WORDS);
    }
    Ok(alone)
}
