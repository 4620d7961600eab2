//! Round `stream`: worker 0 writes, in input order, bytes that each worker holds for its
//! own pieces of the input (`dedup`'s kept lines spooled to a temporary file, or the
//! `--removed` lines), a bounded window at a time, so that worker 0 never holds more than
//! one window of them ([`WINDOW`]) and no worker holds its share of the output in memory.
//!
//! The output is the concatenation of every piece's bytes in piece order
//! ([`crate::share::PieceOrder`]). After one round that tells every worker the size of
//! every piece (16 bytes a piece), each worker knows where its pieces start in the output;
//! then the output is cut into windows of [`WINDOW`] bytes, one exchange round each, and
//! in each round every worker sends worker 0 the slices of its pieces that fall in the
//! window, which worker 0 writes in order. Every worker runs the same number of rounds, so
//! an error (reading a spool on one worker, writing on worker 0) does not stop the rounds:
//! the worker sends nothing more, the rounds run to their end, and the errors are told to
//! all afterwards.
//!
//! Crosses the network: the piece sizes to every worker, then the output once (to worker
//! 0), in slices of at most one window, each with its 8-byte offset.

use std::io::{Read, Seek, SeekFrom, Write};

use timely::worker::Worker;

use super::{all_gather, exchange};

/// The bytes worker 0 receives in one round, at most: the memory the output costs it.
pub(crate) const WINDOW: u64 = 64 << 20;

/// One worker's output bytes: a readable source holding its pieces' bytes one after the
/// other, in piece order, and each piece's number and length.
#[derive(Debug)]
pub(crate) struct Spool<R> {
    source: R,
    pieces: Vec<(usize, u64)>,
    /// The piece being appended to ([`Spool::push`]), and its bytes so far.
    open: Option<(usize, u64)>,
}

impl<R> Spool<R> {
    /// A spool over `source`, empty.
    pub(crate) fn new(source: R) -> Spool<R> {
        Spool { source, pieces: Vec::new(), open: None }
    }

    /// Counts `bytes` more of piece `piece`, whose bytes the caller appended to the source
    /// (pieces in increasing order: a piece is never resumed after the next has begun).
    fn count(&mut self, piece: usize, bytes: u64) {
        match &mut self.open {
            Some((p, n)) if *p == piece => *n += bytes,
            open => {
                if let Some(done) = open.take() {
                    debug_assert!(done.0 < piece, "pieces out of order");
                    self.pieces.push(done);
                }
                *open = Some((piece, bytes));
            }
        }
    }

    /// The pieces and their lengths, the last one closed.
    fn sizes(&mut self) -> Vec<(usize, u64)> {
        if let Some(done) = self.open.take() {
            self.pieces.push(done);
        }
        self.pieces.clone()
    }
}

impl<R> Spool<R> {
    /// The same spool over what `f` makes of its source (a writer flushed into a reader).
    pub(crate) fn map_source<S>(
        self,
        f: impl FnOnce(R) -> std::io::Result<S>,
    ) -> std::io::Result<Spool<S>> {
        Ok(Spool { source: f(self.source)?, pieces: self.pieces, open: self.open })
    }
}

impl<R: Write> Spool<R> {
    /// Appends `bytes` to piece `piece`.
    pub(crate) fn push(&mut self, piece: usize, bytes: &[u8]) -> std::io::Result<()> {
        self.source.write_all(bytes)?;
        self.count(piece, bytes.len() as u64);
        Ok(())
    }
}

impl Spool<std::io::Cursor<Vec<u8>>> {
    /// An in-memory spool.
    pub(crate) fn in_memory() -> Self {
        Spool::new(std::io::Cursor::new(Vec::new()))
    }
}

/// Why a worker's part of [`to_worker_zero`] failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// This worker could not read its spool back.
    Read(std::io::Error),
    /// Worker 0 could not write the output, or did not get all of it (a worker that failed
    /// to read sends nothing more, and says why itself).
    Write(std::io::Error),
}

/// Worker 0 writes every worker's spool to `out`, in piece order, [`WINDOW`] bytes a round
/// (`window`, for tests). Every worker must call it at the same point; `out` is worker 0's
/// (the others, and a worker 0 with no output to write, pass `None`). Returns this worker's
/// failure; the bytes already written stay in `out`, which the caller then discards.
pub(crate) fn to_worker_zero<R: Read + Seek, W: Write>(
    worker: &mut Worker,
    mut spool: Spool<R>,
    mut out: Option<&mut W>,
    window: u64,
) -> Result<(), Failure> {
    let window = window.max(1);
    let mine = spool.sizes();
    let mut all: Vec<(usize, u64)> = all_gather(worker, &mine).into_iter().flatten().collect();
    all.sort_unstable();
    // Where each of this worker's pieces starts in the output.
    let mut starts = Vec::with_capacity(mine.len());
    let mut offset = 0u64;
    for &(piece, len) in &all {
        if mine.binary_search_by_key(&piece, |p| p.0).is_ok() {
            starts.push((offset, len));
        }
        offset += len;
    }
    let total = offset;
    let rounds = total.div_ceil(window);
    let mut error: Option<Failure> = spool.source.seek(SeekFrom::Start(0)).err().map(Failure::Read);
    let mut next = 0usize; // this worker's first piece not wholly sent
    let mut sent_of_next = 0u64; // bytes of that piece already sent
    let mut written = 0u64; // worker 0: bytes written so far
    for round in 0..rounds {
        let (lo, hi) = (round * window, ((round + 1) * window).min(total));
        let mut slices: Vec<(u64, Vec<u8>)> = Vec::new();
        while error.is_none() && next < starts.len() {
            let (start, len) = starts[next];
            if len == 0 {
                // Nothing to send (an empty slice would sort before its offset's bytes).
                next += 1;
                continue;
            }
            let from = start + sent_of_next;
            if from >= hi {
                break;
            }
            debug_assert!(from >= lo, "a slice before its window");
            let take = (start + len).min(hi) - from;
            let mut bytes = vec![0u8; take as usize];
            if let Err(e) = spool.source.read_exact(&mut bytes) {
                error = Some(Failure::Read(e));
                break;
            }
            slices.push((from, bytes));
            sent_of_next += take;
            if sent_of_next == len {
                next += 1;
                sent_of_next = 0;
            }
        }
        let mut got = exchange(worker, slices.into_iter().map(|s| (0, s)));
        let Some(out) = out.as_deref_mut() else { continue };
        got.sort_unstable_by_key(|s| s.0);
        for (from, bytes) in got {
            if error.is_some() {
                break;
            }
            if from != written {
                // A worker that failed to read its spool sent nothing more (its own error
                // says why).
                error = Some(Failure::Write(incomplete(written, total)));
                break;
            }
            written += bytes.len() as u64;
            if let Err(e) = out.write_all(&bytes) {
                error = Some(Failure::Write(e));
            }
        }
    }
    if out.is_some() && error.is_none() && written != total {
        error = Some(Failure::Write(incomplete(written, total)));
    }
    match error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn incomplete(written: u64, total: u64) -> std::io::Error {
    std::io::Error::other(format!(
        "the output is incomplete: {written} of its {total} bytes came from the workers"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of piece `piece`: some pieces empty, some longer than the windows tried.
    fn piece_bytes(piece: usize) -> Vec<u8> {
        let len = [0, 5, 1, 0, 23, 2, 9, 0, 0, 17, 3, 1][piece % 12] * (1 + piece / 12);
        (0..len).map(|i| (piece * 31 + i) as u8).collect()
    }

    /// A source whose reads fail.
    struct Broken;

    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }

    impl Seek for Broken {
        fn seek(&mut self, _: SeekFrom) -> std::io::Result<u64> {
            Ok(0)
        }
    }

    /// Runs [`to_worker_zero`] on `workers` workers, piece `p` held by worker `p % workers`
    /// (worker `broken`'s spool failing to read); returns worker 0's output and every
    /// worker's result.
    fn run(
        workers: usize,
        pieces: usize,
        window: u64,
        broken: Option<usize>,
    ) -> (Vec<u8>, Vec<String>) {
        let guards = timely::execute(timely::Config::process(workers), move |worker| {
            let me = worker.index();
            let mut spool = Spool::in_memory();
            for piece in (0..pieces).filter(|p| p % workers == me) {
                spool.push(piece, &piece_bytes(piece)).expect("memory");
            }
            let mut out = Vec::new();
            let target = (me == 0).then_some(&mut out);
            let result = if broken == Some(me) {
                let spool = spool.map_source(|_| Ok(Broken)).expect("broken");
                to_worker_zero(worker, spool, target, window)
            } else {
                to_worker_zero(worker, spool, target, window)
            };
            let result = match result {
                Ok(()) => "ok".to_string(),
                Err(Failure::Read(e)) => format!("read: {e}"),
                Err(Failure::Write(e)) => format!("write: {e}"),
            };
            (out, result)
        })
        .expect("timely");
        let mut results = guards.join().into_iter().map(|r| r.expect("worker"));
        let (out, first) = results.next().expect("worker 0");
        (out, std::iter::once(first).chain(results.map(|r| r.1)).collect())
    }

    #[test]
    fn worker_zero_writes_every_piece_in_order_at_any_window() {
        for workers in [1, 2, 3] {
            for pieces in [0, 1, 4, 12, 30] {
                let want: Vec<u8> = (0..pieces).flat_map(piece_bytes).collect();
                for window in [1, 2, 3, 7, 16, 64, 1 << 20] {
                    let (got, results) = run(workers, pieces, window, None);
                    assert_eq!(got, want, "{workers} workers, {pieces} pieces, window {window}");
                    assert!(results.iter().all(|r| r == "ok"), "{results:?}");
                }
            }
        }
    }

    #[test]
    fn a_worker_that_cannot_read_fails_and_the_output_is_incomplete() {
        for window in [1, 5, 1 << 20] {
            let (_, results) = run(3, 12, window, Some(1));
            assert!(results[1].starts_with("read: disk on fire"), "{results:?}");
            assert!(results[0].starts_with("write: the output is incomplete"), "{results:?}");
            assert_eq!(results[2], "ok");
            // Worker 0's own spool failing: it says so, and writes no further.
            let (_, results) = run(2, 12, window, Some(0));
            assert!(results[0].starts_with("read: disk on fire"), "{results:?}");
        }
    }
}
