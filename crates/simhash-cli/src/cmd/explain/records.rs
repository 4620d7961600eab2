//! Finding the two records `explain --input` names, by id, in any input `dedup` reads.

use std::path::Path;

use anyhow::Context;
use simhash_io::{Columns, IdValue, Inputs, LineReader, LineStatus, Parser, Reason, Source};

/// One record: its id as the input wrote it, its text, and where it is.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its id, as the input wrote it.
    pub id: IdValue<'static>,
    /// Its text.
    pub text: String,
    /// Its line (or Parquet row) in the concatenation of the inputs, 0-based: input order.
    pub position: u64,
    /// `FILE:LINE`, for messages.
    pub place: String,
}

/// What the search has found so far.
struct Search<'a> {
    wanted: [&'a str; 2],
    found: [Option<Found>; 2],
    /// Lines (and Parquet rows) read before the current file.
    position: u64,
    /// Whether the first record had an id: a record that differs is a bad record, as in
    /// `dedup` ([`simhash_io::Problem::mixed_ids`]).
    ids: Option<bool>,
}

impl Search<'_> {
    /// Offers one record: kept when its id (or, without one, its line number) is wanted; a
    /// wanted id found twice is an error.
    fn offer(
        &mut self,
        id: Option<IdValue<'_>>,
        text: &str,
        place: impl Fn() -> String,
    ) -> anyhow::Result<()> {
        if *self.ids.get_or_insert(id.is_some()) != id.is_some() {
            let problem = simhash_io::Problem::mixed_ids(id.is_some());
            anyhow::bail!("{}: bad record: {}", place(), problem.message);
        }
        let id = id.map_or_else(
            || IdValue { text: self.position.to_string().into(), number: true },
            |id| IdValue { text: id.text.into_owned().into(), number: id.number },
        );
        for (slot, wanted) in self.found.iter_mut().zip(self.wanted) {
            if id.text != wanted {
                continue;
            }
            if let Some(first) = slot {
                anyhow::bail!("duplicate id {wanted:?}: at {} and at {}", first.place, place());
            }
            *slot = Some(Found {
                id: id.clone(),
                text: text.to_owned(),
                position: self.position,
                place: place(),
            });
        }
        Ok(())
    }
}

/// The records with ids `a` and `b` in `inputs` (read as `columns` say), in that order.
/// Every record is read: a bad one, a wanted id found twice or not at all is an error.
pub fn find(
    inputs: &Inputs,
    columns: &Columns,
    max_record_bytes: u64,
    a: &str,
    b: &str,
) -> anyhow::Result<[Found; 2]> {
    anyhow::ensure!(a != b, "A and B are the same id ({a:?}): give two records");
    let mut search = Search { wanted: [a, b], found: [None, None], position: 0, ids: None };
    for mut source in inputs.sources() {
        match source.path().filter(|p| simhash_io::is_parquet(p)).map(Path::to_path_buf) {
            Some(path) => parquet(&path, columns, &mut search)?,
            None => jsonl(&mut source, columns, max_record_bytes, &mut search)?,
        }
    }
    let [found_a, found_b] = search.found;
    let missing = |id: &str| anyhow::anyhow!("no record has the id {id:?} in the input");
    Ok([found_a.ok_or_else(|| missing(a))?, found_b.ok_or_else(|| missing(b))?])
}

fn jsonl(
    source: &mut Source,
    columns: &Columns,
    max_record_bytes: u64,
    search: &mut Search<'_>,
) -> anyhow::Result<()> {
    let parser = Parser::Json(columns.clone());
    let name = source.name.clone();
    let mut lines = LineReader::new(source.open(false)?, max_record_bytes);
    let mut line = Vec::new();
    loop {
        line.clear();
        let status =
            lines.next_line(&mut line, None).with_context(|| format!("{name}: read error"))?;
        let number = lines.line;
        let place = || format!("{name}:{number}");
        match status {
            None => break,
            Some(LineStatus::TooLong(len)) => anyhow::bail!(
                "{}: bad record: {len} bytes, over --max-record-bytes ({max_record_bytes})",
                place()
            ),
            Some(LineStatus::Ok) => match parser.parse(&line) {
                Ok(record) => {
                    let text = match &record.body {
                        simhash_io::Body::Text(text) => text.as_ref(),
                        simhash_io::Body::Hash(_) => anyhow::bail!("{}: no text", place()),
                    };
                    search.offer(record.id.clone(), text, place)?;
                }
                Err(problem) if problem.reason == Reason::BlankLine => {}
                Err(problem) => anyhow::bail!("{}: bad record: {}", place(), problem.message),
            },
        }
        search.position += 1;
    }
    Ok(())
}

fn parquet(path: &Path, columns: &Columns, search: &mut Search<'_>) -> anyhow::Result<()> {
    let mut rows = simhash_io::ParquetRows::open(path, columns)?;
    let name = path.display().to_string();
    let mut number = 0u64;
    while let Some(batch) = rows.next_batch()? {
        for row in 0..batch.len() {
            number += 1;
            let place = || format!("{name}: row {number}");
            let bad =
                |p: simhash_io::Problem| anyhow::anyhow!("{}: bad record: {}", place(), p.message);
            let text = batch.text(row).map_err(bad)?;
            let id = batch.id(row).map_err(bad)?;
            search.offer(id, text, place)?;
            search.position += 1;
        }
    }
    Ok(())
}
