//! Where records come from and how they are read: the input files and their format, the
//! fingerprinter and the MinHash sketcher.

use std::path::Path;
use std::sync::Arc;

use simhash_core::{Fingerprinter, Preset};
use simhash_index::lsh::Sketcher;
use simhash_io::Inputs;
use simhash_jobs::{Input, Reading};

use crate::flags::{FingerprintOpts, Format, InputArgs};

use super::{Matching, SettingsError};

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
    let fingerprinter =
        Fingerprinter::with_settings(opts.preset.unwrap_or(default), opts.window.map(usize::from));
    let sketcher = sketcher(matching, fingerprints)?;
    Ok(reading(args, inputs, format, fingerprinter, sketcher))
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
                &args.records.columns.text_column,
                &args.records.columns.id_column,
            )),
            fingerprinter: Some(fingerprinter),
            sketcher,
            eval: None,
        },
    };
    let named = args.inputs.given();
    Input {
        inputs,
        named: named.to_vec(),
        strict: args.records.strict.strict,
        max_record_bytes: args.records.limit.max_record_bytes,
        sample: args.sample.map(|n| (n, args.seed)),
        reading,
    }
}

/// The input files (standard input when none is given) and their format, inferred from
/// the file names when not given.
pub(super) fn inputs_and_format(args: &InputArgs) -> Result<(Inputs, Format), SettingsError> {
    let paths = args.inputs.given();
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
