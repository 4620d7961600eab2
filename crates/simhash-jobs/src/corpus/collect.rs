//! The parsed batches gathered in input order into the [`Corpus`].

use super::batch::{Meta, Parsed, ParsedBatch, ParsedDoc};
use super::sample::Sampler;
#[allow(clippy::wildcard_imports)]
use super::*;
use crate::error::Result;

/// Puts batches back in order and builds the corpus.
pub(super) fn collect(
    rx: &Receiver<ParsedBatch>,
    spent: &[Sender<Vec<DocSketch>>],
    sketches: Option<SpillStore>,
    options: &ReadOptions,
    reporter: &mut Reporter,
    names: &[String],
) -> Result<Corpus> {
    let mut corpus = Corpus {
        keep_line_hashes: options.hash_lines(),
        compact: options.compact.then(Vec::new),
        sketches,
        tally: options.reading.eval.as_deref().map(Tally::new),
        ..Corpus::default()
    };
    let mut ids = SeenIds { keys: IdKeys::default(), own: sampler_ids(options) };
    let mut sampler = options.sample.map(|(n, seed)| Sampler::new(n, seed));
    let mut pending: BTreeMap<u64, ParsedBatch> = BTreeMap::new();
    let mut next = 0;
    let mut ids_given: Option<bool> = None;
    // The sketches pushed from the current batch, for its worker to free.
    let mut done = Vec::new();
    // The lines of each input file so far, and of the files before the current batch's.
    let mut shard_lines = vec![0; names.len()];
    let (mut base, mut files_before) = (0, 0);
    for batch in rx {
        pending.insert(batch.seq, batch);
        while let Some(batch) = pending.remove(&next) {
            next += 1;
            corpus.bytes += batch.bytes;
            let name = names[batch.shard].as_str();
            // Batches come file after file: a line's number in the concatenation is `base`
            // plus its number in its file, which is `offset` plus its number in the batch
            // when the batch is `relative`.
            while files_before < batch.shard {
                base += shard_lines[files_before];
                files_before += 1;
            }
            let offset = shard_lines[batch.shard];
            shard_lines[batch.shard] += batch.file_lines;
            if let Some((line, e)) = batch.read_error {
                let line = offset + line;
                return Err(JobError::from(e).context(format!("{name}:{line}: read error")));
            }
            if let Some(e) = batch.failed_write {
                return Err(e.into());
            }
            let in_file = |line: u64| if batch.relative { offset + line } else { line };
            if let Some(problem) = &batch.failed {
                corpus.records += 1;
                reporter.bad_file(problem)?;
            }
            if let Some((first_line, hashes)) = batch.hashes {
                let at = Place { name, base, first_line };
                let state = &mut Collecting { ids: &mut ids, ids_given: &mut ids_given };
                collect_hashes(&mut corpus, hashes, at, state, sampler.as_mut(), reporter)?;
                reporter.progress(corpus.bytes, corpus.records);
                continue;
            }
            let state = &mut Collecting { ids: &mut ids, ids_given: &mut ids_given };
            let records = Records { items: batch.items, ids: &batch.ids, name, base, in_file };
            collect_records(&mut corpus, records, state, sampler.as_mut(), &mut done, reporter)?;
            if !done.is_empty() {
                // A worker gone (after an error) frees nothing more: this thread does.
                let _ = spent[batch.worker].send(std::mem::take(&mut done));
            }
            reporter.progress(corpus.bytes, corpus.records);
        }
    }
    if let Some(sampler) = sampler {
        corpus.not_sampled = sampler.offered - sampler.heap.len() as u64;
        for doc in sampler.into_sorted() {
            corpus.push(&doc.id, doc.meta, doc.sketch.as_ref(), None)?;
        }
    }
    if let Some(sketches) = &mut corpus.sketches {
        sketches.finish()?;
    }
    corpus.shard_lines = shard_lines;
    Ok(corpus)
}

/// One batch's parsed lines (not hash blocks): the items with their line numbers, the
/// batch's ids (each item's id ends at its `id_end`), its file's name, the lines of the
/// files before it, and how an item's line number becomes its line in the file.
struct Records<'a, F> {
    items: Vec<(u64, Parsed)>,
    ids: &'a str,
    name: &'a str,
    base: u64,
    in_file: F,
}

/// The records of one batch, in order: each counted, reported as `FILE:LINE` when bad (a
/// blank line only counted), and pushed under its id (offered to the `sampler` with
/// `--sample`); the sketches pushed go to `done`, for the batch's worker to free.
fn collect_records(
    corpus: &mut Corpus,
    records: Records<'_, impl Fn(u64) -> u64>,
    state: &mut Collecting<'_>,
    mut sampler: Option<&mut Sampler>,
    done: &mut Vec<DocSketch>,
    reporter: &mut Reporter,
) -> Result<()> {
    let Records { items, ids: batch_ids, name, base, in_file } = records;
    let mut id_start = 0;
    for (line, item) in items {
        let line = in_file(line);
        let doc = match item {
            Ok(doc) => doc,
            Err(problem) if problem.reason == Reason::BlankLine => {
                corpus.blank_lines += 1;
                continue;
            }
            Err(problem) => {
                corpus.records += 1;
                reporter.problem(name, line, &problem)?;
                continue;
            }
        };
        corpus.records += 1;
        let ParsedDoc { id_end, number, fp, len, sketch, place, line_hash, offset, hits } = doc;
        // The first record decides whether records have ids: a generated id (the line
        // number) must never equal an explicit one.
        let has_id = id_end.is_some();
        if *state.ids_given.get_or_insert(has_id) != has_id {
            if let Some(end) = id_end {
                id_start = end;
            }
            reporter.problem(name, line, &Problem::mixed_ids(has_id))?;
            continue;
        }
        let (id, numeric, generated) = if let Some(end) = id_end {
            let id = &batch_ids[id_start..end];
            id_start = end;
            (id, number, false)
        } else {
            // The id is the line number, made when asked for.
            ("", true, true)
        };
        // Generated ids are line numbers, distinct by construction (and never equal to an
        // explicit id): only explicit ids need the set.
        if !generated && !state.ids.insert(IdKey::new(id), id, &corpus.ids) {
            reporter.problem(name, line, &Problem::duplicate_id(id))?;
            continue;
        }
        let meta = Meta { numeric, generated, fp, line: base + line, len, line_hash, offset };
        if let Some(s) = sampler.as_deref_mut() {
            s.offer(id, meta, sketch);
        } else {
            let doc = corpus.len() as u64;
            corpus.push(id, meta, sketch.as_ref(), place)?;
            done.extend(sketch);
            if let Some(tally) = &mut corpus.tally {
                tally.add(doc, hits);
            }
        }
    }
    Ok(())
}

/// Where a block of hash input is: its file's name, the lines of the files before it, and
/// its first line's number in its file.
#[derive(Clone, Copy)]
pub(super) struct Place<'a> {
    /// The file's name, for messages.
    pub(super) name: &'a str,
    /// The lines of the files before it.
    pub(super) base: u64,
    /// The number in its file of the block's first line.
    pub(super) first_line: u64,
}

/// What collecting carries from record to record: the ids seen, and whether records have
/// ids (the first record decides).
pub(super) struct Collecting<'a> {
    /// The ids seen so far.
    pub(super) ids: &'a mut SeenIds,
    /// Whether records have ids: unknown until the first record.
    pub(super) ids_given: &'a mut Option<bool>,
}

/// The ids seen so far, to find repeats: their keys, and their text in the corpus's id
/// table, which holds exactly the ids that went in, or, when sampling (the corpus keeps
/// only the sample's ids), in a table of their own.
pub(super) struct SeenIds {
    /// The keys of the ids seen.
    pub(super) keys: IdKeys,
    /// Their texts when sampling (otherwise the corpus's id table holds them).
    pub(super) own: Option<IdTable>,
}

/// The table of their own that [`SeenIds`] needs: when sampling.
pub(super) fn sampler_ids(options: &ReadOptions) -> Option<IdTable> {
    options.sample.map(|_| IdTable::default())
}

impl SeenIds {
    /// Returns false when `id` (whose key is `key`) was seen before. Without a table of
    /// their own, the caller pushes a new id to the corpus (`corpus_ids`).
    fn insert(&mut self, key: IdKey, id: &str, corpus_ids: &IdTable) -> bool {
        match &mut self.own {
            Some(own) => {
                let new = self.keys.insert(key, id, own);
                if new {
                    own.push(id);
                }
                new
            }
            None => self.keys.insert(key, id, corpus_ids),
        }
    }
}

/// Adds a block of hash input to the corpus as [`collect`](fn@collect) adds its records one by one:
/// the same records, problems and counts, in line order. Without ids (simhash-cpp's
/// input) and without a sample, the records between two problems go in at once.
pub(super) fn collect_hashes(
    corpus: &mut Corpus,
    hashes: HashLines,
    at: Place<'_>,
    state: &mut Collecting<'_>,
    mut sampler: Option<&mut Sampler>,
    reporter: &mut Reporter,
) -> Result<()> {
    let HashLines { lines, hashes, ids: block_ids, keys, problems, count: _ } = hashes;
    // A line's number in its file, and in the concatenation of the files.
    let in_file = |line: u64| at.first_line - 1 + line;
    let has_ids = !block_ids.is_empty();
    let mut next = 0;
    let mut problems = problems.into_iter().peekable();
    loop {
        // The records before the next problem.
        let end = match problems.peek() {
            Some(&(line, _)) => next + lines[next..].partition_point(|&l| l < line),
            None => lines.len(),
        };
        if !has_ids && sampler.is_none() && end > next {
            if *state.ids_given.get_or_insert(false) {
                // Records with ids came first: every one of these is a mixed-ids problem.
                for &line in &lines[next..end] {
                    corpus.records += 1;
                    reporter.problem(at.name, in_file(line), &Problem::mixed_ids(false))?;
                }
            } else {
                let offset = at.base + at.first_line - 1;
                corpus.extend_line_numbered(&lines[next..end], &hashes[next..end], offset);
                corpus.records += (end - next) as u64;
            }
        } else {
            for doc in next..end {
                let line = in_file(lines[doc]);
                corpus.records += 1;
                if *state.ids_given.get_or_insert(has_ids) != has_ids {
                    reporter.problem(at.name, line, &Problem::mixed_ids(has_ids))?;
                    continue;
                }
                let id = if has_ids { block_ids.get(doc) } else { "" };
                if has_ids && !state.ids.insert(keys[doc], id, &corpus.ids) {
                    reporter.problem(at.name, line, &Problem::duplicate_id(id))?;
                    continue;
                }
                let meta = Meta {
                    numeric: !has_ids,
                    generated: !has_ids,
                    fp: hashes[doc],
                    line: at.base + line,
                    len: 0,
                    line_hash: 0,
                    offset: 0,
                };
                match sampler.as_deref_mut() {
                    Some(s) => s.offer(id, meta, None),
                    None => corpus.push(id, meta, None, None)?,
                }
            }
        }
        next = end;
        let Some((line, problem)) = problems.next() else { break };
        if problem.reason == Reason::BlankLine {
            corpus.blank_lines += 1;
        } else {
            corpus.records += 1;
            reporter.problem(at.name, in_file(line), &problem)?;
        }
    }
    Ok(())
}
