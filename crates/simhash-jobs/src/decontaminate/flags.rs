//! [`Settings`] from the flags every front end flattens (the `clap` feature): the corpus,
//! the eval sets, the matching settings and the outputs, checked before anything is read.

use simhash_io::{Format, RecordFlags};

use super::{EvalReading, EvalSource, Settings};
use crate::error::{ErrorKind, JobError, Result};
use crate::flags::{Decontaminate, InputPaths};
use crate::{Input, Reading};

impl Settings {
    /// The settings of these flags: with no output asked for, the hits go to standard
    /// output. Refused: `--format hash` (no text to scan), inputs whose names mix formats,
    /// `--parquet-compression` with no Parquet input, an eval set that is not a path.
    pub fn from_flags(
        inputs: &InputPaths,
        records: &RecordFlags,
        flags: &Decontaminate,
        parquet_compression: Option<simhash_io::ParquetCompression>,
    ) -> Result<Settings> {
        let given = inputs.given();
        let expanded = simhash_io::Inputs::expand(given)?;
        let format = if let Some(format) = records.format {
            format
        } else {
            let paths: Vec<&std::path::Path> =
                expanded.files().iter().map(|f| f.path.as_path()).collect();
            Format::of_files(&paths)?
        };
        if format != Format::Json {
            return Err(JobError::new(
                ErrorKind::Settings,
                "decontaminate reads text records (JSONL or Parquet), not --format hash",
            ));
        }
        let columns =
            simhash_io::Columns::new(&records.columns.text_column, &records.columns.id_column);
        let input = Input {
            inputs: expanded,
            named: given.to_vec(),
            strict: records.strict.strict,
            max_record_bytes: records.limit.max_record_bytes,
            sample: None,
            reading: Reading {
                parser: simhash_io::Parser::Json(columns),
                fingerprinter: None,
                sketcher: None,
                eval: None,
            },
        };
        let evals: Vec<EvalSource> =
            flags.evals.iter().map(|e| EvalSource::parse(e)).collect::<Result<_>>()?;
        // Standard input can be read once: by the corpus or by one eval set.
        let stdin = |p: &std::path::Path| p == std::path::Path::new("-");
        let corpus_stdin = given.is_empty() || given.iter().any(|p| stdin(p));
        let eval_stdin = evals.iter().filter(|e| stdin(&e.path)).count();
        if eval_stdin > usize::from(!corpus_stdin) {
            return Err(JobError::new(
                ErrorKind::Settings,
                "standard input (-) can be read once: give the corpus or one eval set as a file",
            ));
        }
        if parquet_compression.is_some()
            && !input.inputs.files().iter().any(|f| simhash_io::is_parquet(&f.path))
        {
            return Err(JobError::new(
                ErrorKind::Settings,
                "--parquet-compression applies to Parquet output only: no input is Parquet, \
                 and the output has the inputs' format",
            ));
        }
        let fields = if flags.eval_fields.is_empty() {
            vec![records.columns.text_column.clone()]
        } else {
            flags.eval_fields.clone()
        };
        let nothing_asked = flags.hits.is_none()
            && flags.output.is_none()
            && flags.cut.is_none()
            && flags.page.report.is_none();
        Ok(Settings {
            input,
            evals,
            eval_reading: EvalReading {
                fields,
                id_column: records.columns.id_column.clone(),
                max_record_bytes: records.limit.max_record_bytes,
            },
            ngram: flags.ngram,
            min_overlap: flags.min_overlap,
            max_df: flags.max_df,
            hits: if nothing_asked { Some("-".into()) } else { flags.hits.clone() },
            output: flags.output.clone(),
            annotate: flags.annotate.annotate,
            cut: flags.cut.clone(),
            cut_window: flags.cut_window,
            report: flags.page.report.clone(),
            parquet_compression: parquet_compression.unwrap_or_default(),
        })
    }
}
