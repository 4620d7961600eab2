//! The settings of each command that reads records (`fingerprint`, `pairs`, `dedup`,
//! `cluster`, simhash-cpp's two) and of `eval`, with the checks of their output flags.

use std::path::{Path, PathBuf};

use simhash_core::Preset;
use simhash_io::{Inputs, ParquetCompression};

use crate::flags::{
    ClusterArgs, ClusterMode, CppArgs, DedupArgs, EvalArgs, FingerprintArgs, FingerprintOpts,
    InputArgs, MatchOpts, PairsArgs, ParquetOpts,
};

use super::Input;
use super::index::{IndexInput, StoredSettings, index_input};
use super::input::inputs_and_format;
use super::{Grouping, Matching, Run, SettingsError, matching, simhash};

/// `simhash fingerprint`.
#[derive(Debug)]
pub struct FingerprintSettings {
    /// The records to fingerprint.
    pub input: Input,
    /// `-o`: where the TSV goes (`-`: standard output).
    pub output: PathBuf,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl FingerprintSettings {
    /// The settings of `args`, checked.
    pub fn new(args: &FingerprintArgs) -> Result<FingerprintSettings, SettingsError> {
        let (inputs, format) = inputs_and_format(&args.input)?;
        let input = super::input::new(
            &args.input,
            inputs,
            format,
            &args.fingerprint,
            Preset::default(),
            None,
            false,
        )?;
        Ok(FingerprintSettings {
            input,
            output: args.output.output.clone(),
            run: super::run(&args.run),
        })
    }
}

/// The input and matching of a matching command (`fork_style`: the top-level command;
/// `fingerprints`: the output shows them).
fn matching_input(
    input: &InputArgs,
    fingerprint: &FingerprintOpts,
    opts: &MatchOpts,
    fork_style: bool,
    fingerprints: bool,
) -> Result<(Matching, Input), SettingsError> {
    let default = if fork_style { Preset::Fork } else { Preset::default() };
    let (inputs, format) = inputs_and_format(input)?;
    let matching = matching(opts, format, fingerprint.preset, fork_style)?;
    let input = super::input::new(
        input,
        inputs,
        format,
        fingerprint,
        default,
        Some(&matching),
        fingerprints,
    )?;
    Ok((matching, input))
}

/// `simhash pairs`.
#[derive(Debug)]
pub struct PairsSettings {
    /// The records to match.
    pub input: Input,
    /// The method and its settings.
    pub matching: Matching,
    /// `-o`: where the pairs go.
    pub output: PathBuf,
    /// `--report`, `--report-group`.
    pub report: simhash_jobs::page::ReportSettings,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl PairsSettings {
    /// The settings of `args`, checked.
    pub fn new(args: &PairsArgs) -> Result<PairsSettings, SettingsError> {
        let (matching, input) =
            matching_input(&args.input, &args.fingerprint, &args.matching, false, false)?;
        Ok(PairsSettings {
            input,
            matching,
            output: args.output.output.clone(),
            report: report(&args.report),
            run: Run { memory: args.matching.memory, ..super::run(&args.run) },
        })
    }
}

/// `simhash dedup`.
#[derive(Debug)]
pub struct DedupSettings {
    /// The records to deduplicate.
    pub input: Input,
    /// The method and its settings.
    pub matching: Matching,
    /// `--mode`, `--keep` and `--big-cluster`.
    pub grouping: Grouping,
    /// `-o`: where the kept records go.
    pub output: PathBuf,
    /// `--output-dir DIR`: one output per input file.
    pub output_dir: Option<PathBuf>,
    /// `--annotate`: every record written, with `duplicate_of` and `similarity`.
    pub annotate: bool,
    /// `--parquet-compression`: the codec of the Parquet outputs.
    pub parquet_compression: ParquetCompression,
    /// `--removed`: one JSON line per removed record.
    pub removed: Option<PathBuf>,
    /// `--against INDEX`: the index and the settings to open it with.
    pub against: Option<(PathBuf, StoredSettings)>,
    /// `--update`: add the kept records to the index.
    pub update: bool,
    /// `--report`, `--report-group`.
    pub report: simhash_jobs::page::ReportSettings,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl DedupSettings {
    /// The settings of `args`; with `--against`, `index` is the index's settings (none
    /// when it does not exist yet, which `--update` creates).
    pub fn new(
        args: &DedupArgs,
        index: Option<&StoredSettings>,
    ) -> Result<DedupSettings, SettingsError> {
        let grouping = super::grouping(&args.cluster, ClusterMode::Star);
        let (matching, input, against) = match &args.against {
            None => {
                let (matching, input) =
                    matching_input(&args.input, &args.fingerprint, &args.matching, false, false)?;
                (matching, input, None)
            }
            Some(path) => {
                if grouping.mode != ClusterMode::Star {
                    return Err(SettingsError::AgainstComponents);
                }
                let IndexInput { stored, matching, input } =
                    index_input(&args.input, &args.fingerprint, &args.matching, index)?;
                (matching, input, Some((path.clone(), stored)))
            }
        };
        if args.annotate.annotate {
            check_annotate(&input)?;
        }
        if let Some(dir) = &args.output_dir.output_dir {
            check_output_dir(dir, &args.input, &input.inputs)?;
        }
        check_output_format(&args.output.output, &input)?;
        let parquet_compression = parquet_compression(&args.parquet, &input, None)?;
        Ok(DedupSettings {
            input,
            matching,
            grouping,
            output: args.output.output.clone(),
            output_dir: args.output_dir.output_dir.clone(),
            annotate: args.annotate.annotate,
            parquet_compression,
            removed: args.removed.removed.clone(),
            against,
            update: args.update,
            report: report(&args.report),
            run: Run { memory: args.matching.memory, ..super::run(&args.run) },
        })
    }
}

/// `simhash cluster`, and the top-level fork-style command.
#[derive(Debug)]
pub struct ClusterSettings {
    /// The records to cluster.
    pub input: Input,
    /// The method and its settings.
    pub matching: Matching,
    /// `--mode`, `--keep` and `--big-cluster`.
    pub grouping: Grouping,
    /// `-o`: where the clusters go.
    pub output: PathBuf,
    /// `--singletons`: records in no cluster are written too.
    pub singletons: bool,
    /// `--annotate`: the records in the input's format, with a `cluster` field.
    pub annotate: bool,
    /// `--parquet-compression`: the codec of the `--annotate` output.
    pub parquet_compression: ParquetCompression,
    /// `--report`, `--report-group`.
    pub report: simhash_jobs::page::ReportSettings,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl ClusterSettings {
    /// `fork_style`: the top-level command (the fork's fingerprints, always simhash).
    pub fn new(args: &ClusterArgs, fork_style: bool) -> Result<ClusterSettings, SettingsError> {
        let (matching, input) =
            matching_input(&args.input, &args.fingerprint, &args.matching, fork_style, true)?;
        if args.annotate.annotate {
            check_annotate(&input)?;
        }
        let tsv = "cluster writes a TSV (records in the input's format only with --annotate)";
        let parquet_compression =
            parquet_compression(&args.parquet, &input, (!args.annotate.annotate).then_some(tsv))?;
        Ok(ClusterSettings {
            input,
            matching,
            grouping: super::grouping(&args.cluster, ClusterMode::Components),
            output: args.output.output.clone(),
            singletons: args.singletons.singletons,
            annotate: args.annotate.annotate,
            parquet_compression,
            report: report(&args.report),
            run: Run { memory: args.matching.memory, ..super::run(&args.run) },
        })
    }
}

/// `--annotate` needs records with fields: JSONL or Parquet.
fn check_annotate(input: &Input) -> Result<(), SettingsError> {
    match input.reading.parser {
        simhash_io::Parser::Json(_) => Ok(()),
        _ => Err(SettingsError::AnnotateHashes),
    }
}

/// `--parquet-compression` ([`ParquetCompression::Mirror`] when not given). Given, it is
/// refused when the command writes no records (`no_records`: what it writes instead) or
/// no input is a Parquet file (a mix of Parquet and other inputs is refused when the run
/// starts, naming two of them).
fn parquet_compression(
    opts: &ParquetOpts,
    input: &Input,
    no_records: Option<&'static str>,
) -> Result<ParquetCompression, SettingsError> {
    let Some(compression) = opts.parquet_compression else {
        return Ok(ParquetCompression::Mirror);
    };
    if let Some(why) = no_records {
        return Err(SettingsError::ParquetCompression(why));
    }
    if !input.inputs.files().iter().any(|f| simhash_io::is_parquet(&f.path)) {
        return Err(SettingsError::ParquetCompression(
            "no input is Parquet, and the output has the inputs' format",
        ));
    }
    Ok(compression)
}

/// dedup's `--output`: the kept records are written in the inputs' format (Parquet for
/// Parquet inputs, their lines for the others), so a name that says the other format is
/// refused (`x.parquet -o kept.jsonl` wrote Parquet under a `.jsonl` name).
fn check_output_format(output: &Path, input: &Input) -> Result<(), SettingsError> {
    let Some(ext) = output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase) else {
        return Ok(());
    };
    // A mix of Parquet and other inputs is refused when the run starts (it needs
    // --output-dir), with its own message.
    let files = input.inputs.files();
    let parquet = files.iter().filter(|f| simhash_io::is_parquet(&f.path)).count();
    let (parquet_in, lines_in) = (parquet > 0 && parquet == files.len(), parquet == 0);
    let lines = ["jsonl", "json", "ndjson", "tsv", "csv", "txt"];
    let shown = output.display();
    if parquet_in && lines.contains(&ext.as_str()) {
        return Err(SettingsError::OutputFormat(format!(
            "{shown}: the inputs are Parquet and the kept rows are written as Parquet (the \
             inputs' schema): name the output .parquet"
        )));
    }
    if lines_in && ext == "parquet" {
        return Err(SettingsError::OutputFormat(format!(
            "{shown}: the inputs are lines (JSONL, TSV) and the kept records are written as \
             their lines, byte for byte: name the output for that format, not .parquet"
        )));
    }
    Ok(())
}

/// `--output-dir DIR`: not standard input, no two inputs at the same relative path, and DIR
/// neither is, contains nor is inside an input (file or directory argument).
fn check_output_dir(dir: &Path, args: &InputArgs, inputs: &Inputs) -> Result<(), SettingsError> {
    let refuse = |why: String| Err(SettingsError::OutputDir(why));
    if inputs.has_stdin() {
        return refuse("standard input has no file name to write under DIR".into());
    }
    let mut seen = std::collections::HashSet::new();
    for file in inputs.files() {
        if !seen.insert(&file.relative) {
            return refuse(format!(
                "two inputs would be written to {}: give their directory instead of the files",
                dir.join(&file.relative).display()
            ));
        }
    }
    let out = simhash_io::resolve(dir);
    let paths = args.inputs.given();
    let named = paths.iter().map(PathBuf::as_path);
    for input in named.chain(inputs.files().iter().map(|f| f.path.as_path())) {
        let input = simhash_io::resolve(input);
        let is_dir = input.is_dir();
        if out == input || input.starts_with(&out) || (is_dir && out.starts_with(&input)) {
            return refuse(format!(
                "{} {} the input {}: refusing to write there",
                dir.display(),
                if out == input {
                    "is"
                } else if input.starts_with(&out) {
                    "contains"
                } else {
                    "is inside"
                },
                input.display()
            ));
        }
    }
    Ok(())
}

/// simhash-cpp's `find-all` and `find-clusters`.
#[derive(Debug)]
pub struct CppSettings {
    /// The input files (decimal hashes).
    pub inputs: Inputs,
    /// simhash, with `-d` and `-b`.
    pub matching: Matching,
    /// `--strict`: the first bad line fails the run.
    pub strict: bool,
    /// `-o`: the output file.
    pub output: PathBuf,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl CppSettings {
    /// The settings of `args`, checked.
    pub fn new(args: &CppArgs) -> Result<CppSettings, SettingsError> {
        let paths = args.inputs.given();
        Ok(CppSettings {
            inputs: Inputs::expand(paths).map_err(SettingsError::Inputs)?,
            matching: simhash(args.hamming.distance, args.hamming.blocks)?,
            strict: args.strict.strict,
            output: args.output.output.clone(),
            run: Run { memory: args.memory, ..super::run(&args.run) },
        })
    }
}

/// `simhash eval`.
#[derive(Debug)]
pub struct EvalSettings {
    /// The predicted pairs or clusters.
    pub prediction: PathBuf,
    /// The ground truth.
    pub truth: PathBuf,
    /// `--tiers`: labelled pairs with a tier, for recall per tier.
    pub tiers: Option<PathBuf>,
    /// `--json`: the scores as JSON.
    pub json: bool,
    /// `-o`: where the scores go.
    pub output: PathBuf,
}

impl EvalSettings {
    /// The settings of `args`.
    pub fn new(args: &EvalArgs) -> EvalSettings {
        EvalSettings {
            prediction: args.prediction.clone(),
            truth: args.truth.clone(),
            tiers: args.tiers.clone(),
            json: args.json,
            output: args.output.output.clone(),
        }
    }
}

/// `--report` and `--report-group`.
fn report(opts: &crate::flags::ReportOpts) -> simhash_jobs::page::ReportSettings {
    simhash_jobs::page::ReportSettings {
        report: opts.page.report.clone(),
        report_group: opts.report_group.clone(),
        pairs_per_bucket: opts.report_sample,
    }
}
