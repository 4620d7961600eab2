//! The eval sets, read from their files: each record an item, its text the asked fields
//! joined by a line break, its id the id column (or its line number).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use simhash_index::contamination::{EvalSets, EvalSetsBuilder, SetId};
use simhash_io::{Columns, LineReader, LineStatus, ParquetRows, Problem, Reason, Source};

use crate::error::{Context, Result, bail};
use crate::reporter::Reporter;

/// An eval set as named on the command line: `--eval [NAME=]PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalSource {
    /// The set's name: given, or the file's (or directory's) name without its extensions.
    pub name: String,
    /// Its file or directory.
    pub path: PathBuf,
}

impl EvalSource {
    /// Reads `--eval`'s value: `NAME=PATH`, or a path (a value with `=` that is an existing
    /// path is a path).
    pub fn parse(arg: &str) -> Result<EvalSource> {
        if let Some((name, path)) = arg.split_once('=')
            && !Path::new(arg).exists()
        {
            if name.is_empty() || path.is_empty() {
                bail!(Settings, "--eval {arg:?}: give NAME=PATH or a path");
            }
            return Ok(EvalSource { name: name.to_string(), path: PathBuf::from(path) });
        }
        let path = PathBuf::from(arg);
        Ok(EvalSource { name: stem(&path), path })
    }
}

/// A file's name without the record and compression extensions (`mmlu.jsonl.gz`: `mmlu`).
fn stem(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    for ext in [".gz", ".zst"] {
        if let Some(rest) = name.strip_suffix(ext) {
            name = rest.to_string();
        }
    }
    for ext in [".jsonl", ".json", ".ndjson", ".parquet", ".tsv"] {
        if let Some(rest) = name.strip_suffix(ext) {
            name = rest.to_string();
            break;
        }
    }
    name
}

/// How eval records are read.
#[derive(Clone, Debug)]
pub struct EvalReading {
    /// The fields joined into an item's text (at least one).
    pub fields: Vec<String>,
    /// The id column.
    pub id_column: String,
    /// `--max-record-bytes`.
    pub max_record_bytes: u64,
}

/// Adds every set of `sources` to `builder`, reporting bad records through `reporter`
/// (`FILE:LINE: what`, counted with the corpus's), then builds the eval sets.
pub(super) fn load(
    mut builder: EvalSetsBuilder,
    sources: &[EvalSource],
    reading: &EvalReading,
    reporter: &mut Reporter,
) -> Result<EvalSets> {
    let mut names = HashSet::new();
    for source in sources {
        if !names.insert(source.name.as_str()) {
            bail!(
                Settings,
                "two eval sets are named {:?} (name one with --eval NAME=PATH)",
                source.name
            );
        }
        let set = builder.add_set(&source.name).map_err(engine)?;
        let inputs = simhash_io::Inputs::expand(std::slice::from_ref(&source.path))
            .with_context(|| format!("--eval {}", source.path.display()))?;
        let mut adding = Adding { builder: &mut builder, set, ids: HashSet::new(), items: 0 };
        let mut base = 0;
        for mut file in inputs.sources() {
            base += read_file(&mut file, reading, base, &mut adding, reporter)
                .with_context(|| format!("--eval {}", source.path.display()))?;
        }
        if adding.items == 0 {
            reporter.warning(&format!("eval set {:?} has no items", source.name));
        }
    }
    builder.build().map_err(engine)
}

fn engine(e: simhash_index::contamination::ContaminationError) -> crate::JobError {
    crate::JobError::wrap(crate::ErrorKind::Settings, e)
}

/// The set being read: its items' ids so far.
struct Adding<'b> {
    builder: &'b mut EvalSetsBuilder,
    set: SetId,
    ids: HashSet<String>,
    items: usize,
}

impl Adding<'_> {
    /// Adds one record (its line `line` of the file `name`): its id (or its line number in
    /// the set's files, `number`) and the texts of its fields, or reports why not.
    fn add(
        &mut self,
        (name, line, number): (&str, u64, u64),
        id: Option<String>,
        texts: Result<Vec<String>, Problem>,
        reporter: &mut Reporter,
    ) -> Result<()> {
        let texts = match texts {
            Ok(texts) => texts,
            Err(p) if p.reason == Reason::BlankLine => return Ok(()),
            Err(p) => return reporter.problem(name, line, &p),
        };
        let id = id.unwrap_or_else(|| number.to_string());
        if !self.ids.insert(id.clone()) {
            return reporter.problem(name, line, &Problem::duplicate_id(&id));
        }
        self.builder.add_item(self.set, &id, &texts.join("\n")).map_err(engine)?;
        self.items += 1;
        Ok(())
    }
}

/// Reads one file of a set (whose files before it had `base` lines); returns its lines.
fn read_file(
    file: &mut Source,
    reading: &EvalReading,
    base: u64,
    adding: &mut Adding<'_>,
    reporter: &mut Reporter,
) -> Result<u64> {
    let columns: Vec<Columns> =
        reading.fields.iter().map(|f| Columns::new(f, &reading.id_column)).collect();
    if let Some(path) = file.path().filter(|p| simhash_io::is_parquet(p)).map(Path::to_path_buf) {
        return read_parquet(&path, &file.name, &columns, base, adding, reporter);
    }
    let mut lines = LineReader::new(file.open(false)?, reading.max_record_bytes);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let status = match lines.next_line(&mut buf, None) {
            Ok(Some(status)) => status,
            Ok(None) => break,
            Err(e) => {
                return Err(crate::JobError::from(e).context(format!(
                    "{}:{}: read error",
                    file.name,
                    lines.line + 1
                )));
            }
        };
        let at = (file.name.as_str(), lines.line, base + lines.line - 1);
        let (id, texts) = match status {
            LineStatus::TooLong(n) => (None, Err(Problem::too_long(n, reading.max_record_bytes))),
            LineStatus::Ok => fields(&buf, &columns),
        };
        adding.add(at, id, texts, reporter)?;
    }
    Ok(lines.line)
}

/// The id and the texts of a JSONL record's fields.
fn fields(line: &[u8], columns: &[Columns]) -> (Option<String>, Result<Vec<String>, Problem>) {
    let mut id = None;
    let mut texts = Vec::with_capacity(columns.len());
    for c in columns {
        match simhash_io::parse_json(line, c) {
            Ok((i, text)) => {
                id = i.map(|i| i.text.into_owned());
                texts.push(text.into_owned());
            }
            Err(p) => return (None, Err(p)),
        }
    }
    (id, Ok(texts))
}

/// A Parquet row's id and one field's text.
type Row = (Option<String>, Result<String, Problem>);

/// Reads a Parquet file of a set: the columns of each field, row by row.
fn read_parquet(
    path: &Path,
    name: &str,
    columns: &[Columns],
    base: u64,
    adding: &mut Adding<'_>,
    reporter: &mut Reporter,
) -> Result<u64> {
    // Each field's column read whole (eval sets are small), then the rows in order.
    let mut by_field: Vec<Vec<Row>> = Vec::new();
    for c in columns {
        let mut rows = match ParquetRows::open(path, c) {
            Ok(rows) => rows,
            Err(e) if e.kind() == simhash_io::ErrorKind::BadParquet => {
                reporter.bad_file(&Problem::new(Reason::BadFile, e.to_string()))?;
                return Ok(0);
            }
            Err(e) => return Err(e.into()),
        };
        let mut values = Vec::new();
        while let Some(batch) = rows.next_batch()? {
            for i in 0..batch.len() {
                let id = match batch.id(i) {
                    Ok(id) => id.map(|id| id.text.into_owned()),
                    Err(p) => {
                        values.push((None, Err(p)));
                        continue;
                    }
                };
                values.push((id, batch.text(i).map(str::to_string)));
            }
        }
        by_field.push(values);
    }
    let rows = by_field.first().map_or(0, Vec::len);
    for row in 0..rows {
        let mut id = None;
        let mut texts = Ok(Vec::with_capacity(columns.len()));
        for field in &mut by_field {
            let (i, text) = std::mem::replace(&mut field[row], (None, Ok(String::new())));
            id = i;
            texts = texts.and_then(|mut t: Vec<String>| {
                t.push(text?);
                Ok(t)
            });
        }
        let line = row as u64 + 1;
        adding.add((name, line, base + line - 1), id, texts, reporter)?;
    }
    Ok(rows as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_file_or_the_argument() {
        let parse = |arg: &str| EvalSource::parse(arg).unwrap();
        assert_eq!(parse("data/mmlu.jsonl.gz").name, "mmlu");
        assert_eq!(parse("data/gsm8k.parquet").name, "gsm8k");
        assert_eq!(parse("dir/evals").name, "evals");
        let named = parse("quiz=data/x.jsonl");
        assert_eq!(
            (named.name.as_str(), named.path.as_path()),
            ("quiz", Path::new("data/x.jsonl"))
        );
        assert!(EvalSource::parse("=x.jsonl").is_err());
    }
}
