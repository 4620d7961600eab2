//! `simhash decontaminate`'s settings: the corpus, the eval sets, the matching settings and
//! the outputs, checked before anything is read.

use simhash_io::Format;
use simhash_jobs::decontaminate::{EvalReading, EvalSource, Settings};
use simhash_jobs::{Input, Reading, Run};

use crate::flags::DecontaminateArgs;

use super::SettingsError;

/// `simhash decontaminate`.
#[derive(Debug)]
pub struct DecontaminateSettings {
    /// The job's settings.
    pub job: Settings,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl DecontaminateSettings {
    /// The settings of `args`: with no output asked for, the hits go to standard output.
    pub fn new(args: &DecontaminateArgs) -> anyhow::Result<DecontaminateSettings> {
        let flags = &args.decontaminate;
        let records = &args.records;
        let inputs =
            simhash_io::Inputs::expand(args.inputs.given()).map_err(SettingsError::Inputs)?;
        let format = if let Some(format) = records.format {
            format
        } else {
            let paths: Vec<&std::path::Path> =
                inputs.files().iter().map(|f| f.path.as_path()).collect();
            Format::of_files(&paths).map_err(SettingsError::MixedFormats)?
        };
        anyhow::ensure!(
            format == Format::Json,
            "decontaminate reads text records (JSONL or Parquet), not --format hash"
        );
        let columns = simhash_io::Columns::new(&records.text_column, &records.id_column);
        let input = Input {
            inputs,
            named: args.inputs.given().to_vec(),
            strict: records.strict,
            max_record_bytes: records.max_record_bytes,
            sample: None,
            reading: Reading {
                parser: simhash_io::Parser::Json(columns),
                fingerprinter: None,
                sketcher: None,
                eval: None,
            },
        };
        let evals = flags.evals.iter().map(|e| EvalSource::parse(e)).collect::<Result<_, _>>()?;
        let fields = if flags.eval_fields.is_empty() {
            vec![records.text_column.clone()]
        } else {
            flags.eval_fields.clone()
        };
        let nothing_asked = flags.hits.is_none()
            && flags.output.is_none()
            && flags.annotate.is_none()
            && flags.cut.is_none()
            && flags.report.is_none();
        let hits = if nothing_asked { Some("-".into()) } else { flags.hits.clone() };
        if args.parquet.parquet_compression.is_some()
            && !input.inputs.files().iter().any(|f| simhash_io::is_parquet(&f.path))
        {
            return Err(SettingsError::ParquetCompression(
                "no input is Parquet, and the output has the inputs' format",
            )
            .into());
        }
        let job = Settings {
            input,
            evals,
            eval_reading: EvalReading {
                fields,
                id_column: records.id_column.clone(),
                max_record_bytes: records.max_record_bytes,
            },
            ngram: flags.ngram,
            min_overlap: flags.min_overlap,
            max_df: flags.max_df,
            hits,
            output: flags.output.clone(),
            annotate: flags.annotate.clone(),
            cut: flags.cut.clone(),
            cut_window: flags.cut_window,
            report: flags.report.clone(),
            parquet_compression: args.parquet.parquet_compression.unwrap_or_default(),
        };
        Ok(DecontaminateSettings { job, run: super::run(&args.run) })
    }
}
