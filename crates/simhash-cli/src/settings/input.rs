//! Where records come from and how they are read: the input files and their format, the
//! fingerprinter and the MinHash sketcher.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use simhash_core::{Fingerprinter, Preset};
use simhash_index::lsh::Sketcher;
use simhash_io::Inputs;

use crate::corpus::Reading;
use crate::flags::{FingerprintOpts, Format, InputArgs};
use crate::summary::Summary;

use super::{Matching, Run, SettingsError};

/// Where records come from and how they are read.
#[derive(Debug)]
pub struct Input {
    /// The input files, directories expanded.
    pub inputs: Inputs,
    /// The input arguments as given (files and directories).
    pub named: Vec<PathBuf>,
    /// `--strict`: the first bad record fails the run.
    pub strict: bool,
    /// `--max-record-bytes`: a longer line is a bad record.
    pub max_record_bytes: u64,
    /// `--sample N` and `--seed`.
    pub sample: Option<(u64, u64)>,
    /// The record parser, fingerprinter and sketcher.
    pub reading: Reading,
}

impl Input {
    /// The input of `args`, its records fingerprinted as `opts` says (`default` preset
    /// unless given) and sketched for MinHash when `matching` is.
    pub(super) fn new(
        args: &InputArgs,
        inputs: Inputs,
        format: Format,
        opts: &FingerprintOpts,
        default: Preset,
        matching: Option<&Matching>,
        fingerprints: bool,
    ) -> Result<Input, SettingsError> {
        let fingerprinter = Fingerprinter::with_settings(
            opts.preset.unwrap_or(default),
            opts.window.map(usize::from),
        );
        let sketcher = sketcher(matching, fingerprints)?;
        Ok(Input::reading(args, inputs, format, fingerprinter, sketcher))
    }

    /// The input of `args`, read in `format`: JSON records fingerprinted by `fingerprinter`
    /// (and sketched by `sketcher`, if any), or hash TSV.
    pub(super) fn reading(
        args: &InputArgs,
        inputs: Inputs,
        format: Format,
        fingerprinter: Fingerprinter,
        sketcher: Option<Arc<Sketcher>>,
    ) -> Input {
        let reading = match format {
            Format::Hash => Reading::hashes(simhash_io::Parser::Hash),
            Format::Json => Reading {
                parser: simhash_io::Parser::Json(simhash_io::Columns::new(
                    &args.records.text_column,
                    &args.records.id_column,
                )),
                fingerprinter: Some(fingerprinter),
                sketcher,
            },
        };
        let named = if args.paths.is_empty() { &args.input } else { &args.paths };
        Input {
            inputs,
            named: named.clone(),
            strict: args.records.strict,
            max_record_bytes: args.records.max_record_bytes,
            sample: args.sample.map(|n| (n, args.seed)),
            reading,
        }
    }

    /// The plan of what the run writes ([`simhash_io::WritePlan`]), with the inputs (the
    /// files and the arguments that named them) and `run`'s `--stats`: the command adds
    /// its outputs, and checks it before anything is read.
    pub fn write_plan(&self, run: &Run) -> simhash_io::WritePlan {
        let mut plan = simhash_io::WritePlan::new();
        plan.inputs(self.inputs.paths()).inputs(&self.named);
        if let Some(stats) = &run.stats {
            plan.output("--stats", stats);
        }
        plan
    }

    /// Notes the fingerprinter and the LSH bands in the summary.
    pub fn note(&self, summary: &mut Summary) {
        if let Some(fingerprinter) = &self.reading.fingerprinter {
            summary.preset =
                Some(format!("{} (window {})", fingerprinter.preset(), fingerprinter.window()));
            if let Some(s) = &self.reading.sketcher {
                summary.lsh_bands = Some(format!("{} x {}", s.banding().bands, s.banding().rows));
            }
        }
    }
}

/// The input files (standard input when none is given) and their format, inferred from
/// the file names when not given.
pub(super) fn inputs_and_format(args: &InputArgs) -> Result<(Inputs, Format), SettingsError> {
    let paths = if args.paths.is_empty() { &args.input } else { &args.paths };
    let inputs = Inputs::expand(paths).map_err(SettingsError::Inputs)?;
    let format = match args.records.format {
        Some(format) => format,
        None => inferred_format(&inputs)?,
    };
    Ok((inputs, format))
}

/// The format the input files' names imply: they must agree
/// ([`simhash_io::Format::of_files`]).
fn inferred_format(inputs: &Inputs) -> Result<Format, SettingsError> {
    let paths: Vec<&Path> = inputs.files().iter().map(|f| f.path.as_path()).collect();
    Format::of_files(&paths).map_err(SettingsError::MixedFormats)
}

/// The MinHash sketcher of the minhash method (with fingerprints too when `fingerprints`).
fn sketcher(
    matching: Option<&Matching>,
    fingerprints: bool,
) -> Result<Option<Arc<Sketcher>>, SettingsError> {
    let Some(matching) = matching else {
        return Ok(None);
    };
    Ok(matching.sketcher(fingerprints)?.map(Arc::new))
}
