//! What the searches report: matches to a [`MatchSink`], counts in [`MatchStats`].

/// Receives what [`find_matches`](super::find_matches) finds, on the calling thread, in an
/// order that does not depend on the thread count.
pub trait MatchSink: Send {
    /// `doc` has exactly the shingle set of `of`, an earlier document (`of < doc`), which
    /// stands for it in the search: every match of `of` is a match of `doc`.
    fn duplicate(&mut self, doc: u32, of: u32);
    /// `a < b` have a Jaccard similarity of at least the threshold.
    fn pair(&mut self, a: u32, b: u32, jaccard: f64);
}

/// What a search did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MatchStats {
    /// Documents whose shingle set and tokens equal an earlier (or higher-priority) one's.
    pub duplicates: u64,
    /// Candidate pairs considered (sharing a band hash, not already decided).
    pub candidates: u64,
    /// Candidate pairs whose exact Jaccard similarity was computed.
    pub verified: u64,
    /// Verified pairs at or above the threshold.
    pub pairs: u64,
    /// Documents in the largest candidate component (walk and components only).
    pub largest_component: u64,
    /// Verified pairs not acted on for their [`Relation`](super::Relation) (walk and
    /// components only): the document has content of its own (or, when template siblings
    /// are kept, is one).
    pub spared: u64,
    /// Records the dedup walk stopped comparing with kept records after a pair it does not
    /// act on (or did not compare with them at all: [`unlisted`](MatchStats::unlisted)),
    /// because they have content of their own that no kept record of their candidate
    /// component shares (so no comparison could act; the decisions are those of comparing
    /// them all).
    pub known_kept: u64,
    /// Candidate pairs the dedup walk did not compare after a record's first pair it does
    /// not act on, because the kept record cannot hold enough of the content the record
    /// had of its own there (its relation would be [`Relation::Overlap`](super::Relation)
    /// too; the decisions are those of comparing them all); for
    /// [`components`](super::components), the pairs not compared because both records have
    /// content of their own that no other record of their candidate component has.
    pub own_skipped: u64,
    /// Of [`known_kept`](MatchStats::known_kept), the records known to be kept before
    /// their candidates were listed: they shared bands with many kept records and had
    /// content of their own that none of those has.
    pub unlisted: u64,
}

impl MatchStats {
    pub(crate) fn add(&mut self, other: &MatchStats) {
        self.candidates += other.candidates;
        self.verified += other.verified;
        self.pairs += other.pairs;
        self.spared += other.spared;
        self.known_kept += other.known_kept;
        self.own_skipped += other.own_skipped;
        self.unlisted += other.unlisted;
        self.largest_component = self.largest_component.max(other.largest_component);
    }
}
