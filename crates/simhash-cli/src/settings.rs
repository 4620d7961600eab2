//! The flags of each command converted once into validated settings (rg's low-level args
//! → high-level args): defaults applied, the matching method chosen and checked, the
//! fingerprinter and MinHash sketcher built, all before any input is read.

use std::fmt;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use simhash_io::{Inputs, ParquetCompression};
use std::sync::Arc;

use simhash_core::{Fingerprinter, Preset};
use simhash_index::Blocks;
use simhash_index::lsh::{BandKeyWidth, Sketcher};

use crate::corpus::Reading;
use crate::flags::{
    ClusterArgs, ClusterMode, ClusterOpts, CppArgs, DedupArgs, EvalArgs, FingerprintArgs,
    FingerprintOpts, Format, IndexAddArgs, IndexQueryArgs, InputArgs, KeepPolicy, MatchOpts,
    Method, PairsArgs, ParquetOpts, RunOpts,
};
use crate::report::Summary;

/// A flag, or a combination of flags, that cannot run. Displayed as the message the user
/// sees (after `simhash: `); the index's reason, when there is one, is the source.
#[derive(Debug)]
pub enum SettingsError {
    /// The matching settings, refused by the one contract every front end maps onto
    /// ([`simhash_index::settings`]).
    Matching(simhash_index::settings::SettingsError),
    /// The index names a preset this version does not know.
    IndexPreset(String),
    /// The index's stored settings cannot make a sketcher.
    IndexSettings(Box<dyn std::error::Error + Send + Sync>),
    /// `--against` with `--mode components`.
    AgainstComponents,
    /// The inputs cannot be listed (a directory cannot be read, a file is given twice).
    Inputs(simhash_io::Error),
    /// Inputs whose names imply different formats, without --format.
    MixedFormats(simhash_io::MixedFormats),
    /// `--annotate` on hash TSV input.
    AnnotateHashes,
    /// `--output-dir` refused: why.
    OutputDir(String),
    /// `--parquet-compression` without a Parquet output: why.
    ParquetCompression(&'static str),
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingsError::Matching(e) => e.fmt(f),
            SettingsError::IndexPreset(name) => write!(
                f,
                "the index was made with preset {name:?}, which this version does not know"
            ),
            SettingsError::IndexSettings(_) => f.write_str("the index's settings are unusable"),
            SettingsError::AgainstComponents => f.write_str(
                "--against removes records in --keep order (--mode star), not by components",
            ),
            SettingsError::Inputs(e) => e.fmt(f),
            SettingsError::AnnotateHashes => f.write_str(
                "--annotate adds JSON fields or Parquet columns: --format hash input has neither",
            ),
            SettingsError::OutputDir(why) => write!(f, "--output-dir: {why}"),
            SettingsError::ParquetCompression(why) => {
                write!(f, "--parquet-compression applies to Parquet output only: {why}")
            }
            SettingsError::MixedFormats(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SettingsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // The contract's error is this one: its source is the reason.
            SettingsError::Matching(e) => std::error::Error::source(e),
            SettingsError::IndexSettings(source) => Some(source.as_ref()),
            SettingsError::Inputs(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

pub use simhash_index::settings::Matching;

mod explain;
pub use explain::ExplainSettings;

impl From<simhash_index::settings::SettingsError> for SettingsError {
    fn from(e: simhash_index::settings::SettingsError) -> SettingsError {
        SettingsError::Matching(e)
    }
}

/// The tables for `n` fingerprints (the planner's choice for `--blocks auto`).
pub fn tables(
    distance: u32,
    blocks: Blocks,
    n: usize,
) -> Result<simhash_index::Tables, SettingsError> {
    Ok(simhash_index::settings::tables(distance, blocks, n)?)
}

/// Notes the method (and the Jaccard threshold) in the summary.
pub fn note_matching(matching: &Matching, summary: &mut Summary) {
    summary.method = Some(matching.method());
    if let Matching::Minhash { jaccard, .. } = *matching {
        summary.jaccard = Some(jaccard);
    }
}

/// What the flags ask of the one settings contract ([`simhash_index::settings::Asked`]).
/// `fork_style` is the top-level command, which always runs simhash; `format` and
/// `preset` are the input's.
fn asked(
    opts: &MatchOpts,
    format: Format,
    preset: Option<Preset>,
    fork_style: bool,
) -> simhash_index::settings::Asked {
    use simhash_index::settings::{Asked, Method as Asked_};
    Asked {
        method: match opts.method {
            Method::Auto => Asked_::Auto,
            Method::Minhash => Asked_::Minhash,
            Method::Simhash => Asked_::Simhash,
        },
        preset,
        hashes: format == Format::Hash,
        simhash_only: fork_style,
        memory: opts.memory.is_some(),
        distance: opts.distance,
        blocks: opts.blocks,
        jaccard: opts.jaccard,
        lsh_threshold: opts.lsh_threshold,
        num_perm: opts.num_perm,
        band_keys: opts.band_key_bits,
    }
}

/// The simhash settings of a command that has no method to choose (the fork's, an
/// index's), checked by the contract.
fn simhash(distance: u32, blocks: Blocks) -> Result<Matching, SettingsError> {
    use simhash_index::settings::{Asked, Method as Asked_};
    let asked = Asked {
        method: Asked_::Simhash,
        distance: Some(distance),
        blocks: Some(blocks),
        ..Asked::default()
    };
    Ok(asked.resolve()?)
}

/// The method and its settings ([`simhash_index::settings::Asked::resolve`]).
fn matching(
    opts: &MatchOpts,
    format: Format,
    preset: Option<Preset>,
    fork_style: bool,
) -> Result<Matching, SettingsError> {
    Ok(asked(opts, format, preset, fork_style).resolve()?)
}

/// Where records come from and how they are read.
#[derive(Debug)]
pub struct Input {
    /// The input files, directories expanded.
    pub inputs: Inputs,
    /// The input arguments as given (files and directories).
    pub named: Vec<PathBuf>,
    pub strict: bool,
    pub max_record_bytes: u64,
    /// `--sample N` and `--seed`.
    pub sample: Option<(u64, u64)>,
    /// The record parser, fingerprinter and sketcher.
    pub reading: Reading,
}

impl Input {
    /// The input of `args`, its records fingerprinted as `opts` says (`default` preset
    /// unless given) and sketched for MinHash when `matching` is.
    fn new(
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
    fn reading(
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
                    &args.text_column,
                    &args.id_column,
                )),
                fingerprinter: Some(fingerprinter),
                sketcher,
            },
        };
        let named = if args.paths.is_empty() { &args.input } else { &args.paths };
        Input {
            inputs,
            named: named.clone(),
            strict: args.strict,
            max_record_bytes: args.max_record_bytes,
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
fn inputs_and_format(args: &InputArgs) -> Result<(Inputs, Format), SettingsError> {
    let paths = if args.paths.is_empty() { &args.input } else { &args.paths };
    let inputs = Inputs::expand(paths).map_err(SettingsError::Inputs)?;
    let format = match args.format {
        Some(format) => format,
        None => inferred_format(&inputs)?,
    };
    Ok((inputs, format))
}

/// The format the input files' names imply: they must agree
/// ([`simhash_io::Format::of_files`]).
fn inferred_format(inputs: &Inputs) -> Result<Format, SettingsError> {
    let paths: Vec<&Path> = inputs.files().iter().map(|f| f.path.as_path()).collect();
    match simhash_io::Format::of_files(&paths).map_err(SettingsError::MixedFormats)? {
        simhash_io::Format::Hash => Ok(Format::Hash),
        _ => Ok(Format::Json),
    }
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

/// Threads, progress and the summary.
#[derive(Debug)]
pub struct Run {
    pub threads: usize,
    pub quiet: bool,
    pub stats: Option<PathBuf>,
    /// `--memory`: the budget of all pairs within k bits (none: one pass).
    pub memory: Option<u64>,
}

impl Run {
    fn new(run: &RunOpts) -> Run {
        let threads = run
            .threads
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get);
        Run { threads, quiet: run.quiet, stats: run.stats.clone(), memory: None }
    }

    /// With the `--memory` budget of the simhash method.
    fn with_memory(mut self, memory: Option<u64>) -> Run {
        self.memory = memory;
        self
    }
}

/// How clusters are formed and which record of each is kept.
#[derive(Clone, Copy, Debug)]
pub struct Grouping {
    pub mode: ClusterMode,
    pub keep: KeepPolicy,
    pub big_cluster: usize,
}

impl Grouping {
    fn new(opts: &ClusterOpts, default: ClusterMode) -> Grouping {
        Grouping {
            mode: opts.mode.unwrap_or(default),
            keep: opts.keep,
            big_cluster: opts.big_cluster,
        }
    }
}

/// `simhash fingerprint`.
#[derive(Debug)]
pub struct FingerprintSettings {
    pub input: Input,
    pub output: PathBuf,
    pub run: Run,
}

impl FingerprintSettings {
    pub fn new(args: &FingerprintArgs) -> Result<FingerprintSettings, SettingsError> {
        let (inputs, format) = inputs_and_format(&args.input)?;
        let input = Input::new(
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
            run: Run::new(&args.run),
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
    let input =
        Input::new(input, inputs, format, fingerprint, default, Some(&matching), fingerprints)?;
    Ok((matching, input))
}

/// `simhash pairs`.
#[derive(Debug)]
pub struct PairsSettings {
    pub input: Input,
    pub matching: Matching,
    pub output: PathBuf,
    /// `--report`, `--report-group`.
    pub report: crate::page::ReportOpts,
    pub run: Run,
}

impl PairsSettings {
    pub fn new(args: &PairsArgs) -> Result<PairsSettings, SettingsError> {
        let (matching, input) =
            matching_input(&args.input, &args.fingerprint, &args.matching, false, false)?;
        Ok(PairsSettings {
            input,
            matching,
            output: args.output.output.clone(),
            report: args.report.clone(),
            run: Run::new(&args.run).with_memory(args.matching.memory),
        })
    }
}

/// `simhash dedup`.
#[derive(Debug)]
pub struct DedupSettings {
    pub input: Input,
    pub matching: Matching,
    pub grouping: Grouping,
    pub output: PathBuf,
    /// `--output-dir DIR`: one output per input file.
    pub output_dir: Option<PathBuf>,
    pub annotate: bool,
    /// `--parquet-compression`: the codec of the Parquet outputs.
    pub parquet_compression: ParquetCompression,
    pub removed: Option<PathBuf>,
    /// `--against INDEX`: the index and the settings to open it with.
    pub against: Option<(PathBuf, StoredSettings)>,
    /// `--update`: add the kept records to the index.
    pub update: bool,
    /// `--report`, `--report-group`.
    pub report: crate::page::ReportOpts,
    pub run: Run,
}

impl DedupSettings {
    /// The settings of `args`; with `--against`, `index` is the index's settings (none
    /// when it does not exist yet, which `--update` creates).
    pub fn new(
        args: &DedupArgs,
        index: Option<&StoredSettings>,
    ) -> Result<DedupSettings, SettingsError> {
        let grouping = Grouping::new(&args.cluster, ClusterMode::Star);
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
        if args.annotate {
            check_annotate(&input)?;
        }
        if let Some(dir) = &args.output_dir {
            check_output_dir(dir, &args.input, &input.inputs)?;
        }
        let parquet_compression = parquet_compression(&args.parquet, &input, None)?;
        Ok(DedupSettings {
            input,
            matching,
            grouping,
            output: args.output.output.clone(),
            output_dir: args.output_dir.clone(),
            annotate: args.annotate,
            parquet_compression,
            removed: args.removed.clone(),
            against,
            update: args.update,
            report: args.report.clone(),
            run: Run::new(&args.run).with_memory(args.matching.memory),
        })
    }
}

/// `simhash cluster`, and the top-level fork-style command.
#[derive(Debug)]
pub struct ClusterSettings {
    pub input: Input,
    pub matching: Matching,
    pub grouping: Grouping,
    pub output: PathBuf,
    pub singletons: bool,
    pub annotate: bool,
    /// `--parquet-compression`: the codec of the `--annotate` output.
    pub parquet_compression: ParquetCompression,
    /// `--report`, `--report-group`.
    pub report: crate::page::ReportOpts,
    pub run: Run,
}

impl ClusterSettings {
    /// `fork_style`: the top-level command (the fork's fingerprints, always simhash).
    pub fn new(args: &ClusterArgs, fork_style: bool) -> Result<ClusterSettings, SettingsError> {
        let (matching, input) =
            matching_input(&args.input, &args.fingerprint, &args.matching, fork_style, true)?;
        if args.annotate {
            check_annotate(&input)?;
        }
        let tsv = "cluster writes a TSV (records in the input's format only with --annotate)";
        let parquet_compression =
            parquet_compression(&args.parquet, &input, (!args.annotate).then_some(tsv))?;
        Ok(ClusterSettings {
            input,
            matching,
            grouping: Grouping::new(&args.cluster, ClusterMode::Components),
            output: args.output.output.clone(),
            singletons: args.singletons,
            annotate: args.annotate,
            parquet_compression,
            report: args.report.clone(),
            run: Run::new(&args.run).with_memory(args.matching.memory),
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
    let paths = if args.paths.is_empty() { &args.input } else { &args.paths };
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
    pub inputs: Inputs,
    pub matching: Matching,
    pub strict: bool,
    pub output: PathBuf,
    pub run: Run,
}

impl CppSettings {
    pub fn new(args: &CppArgs) -> Result<CppSettings, SettingsError> {
        let paths = if args.paths.is_empty() { &args.input } else { &args.paths };
        Ok(CppSettings {
            inputs: Inputs::expand(paths).map_err(SettingsError::Inputs)?,
            matching: simhash(args.distance, args.blocks)?,
            strict: args.strict,
            output: args.output.output.clone(),
            run: Run::new(&args.run).with_memory(args.memory),
        })
    }
}

/// `simhash eval`.
#[derive(Debug)]
pub struct EvalSettings {
    pub prediction: PathBuf,
    pub truth: PathBuf,
    pub tiers: Option<PathBuf>,
    pub json: bool,
    pub output: PathBuf,
}

impl EvalSettings {
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

/// The settings stored in an on-disk index.
pub type StoredSettings = simhash_index::disk::Settings;

/// A new simhash index with `--blocks auto` gets the planner's blocks for this many
/// documents (the library's choice).
const INDEX_PLAN_DOCUMENTS: u64 = simhash_index::disk::PLAN_DOCUMENTS;

/// An index command's input, read as the index's documents were.
#[derive(Debug)]
pub struct IndexInput {
    /// The settings to open or create the index with: the index's, or the flags' for a new
    /// one. Opening checks them against the index's (a flag that differs is an error
    /// naming it).
    pub stored: StoredSettings,
    pub matching: Matching,
    pub input: Input,
}

/// The input of an index command: for an existing index (`index` is its settings), the
/// index's settings with the flags given laid over them; for a new one, the flags' (with the
/// defaults of `simhash pairs`).
pub fn index_input(
    args: &InputArgs,
    fingerprint: &FingerprintOpts,
    opts: &MatchOpts,
    index: Option<&StoredSettings>,
) -> Result<IndexInput, SettingsError> {
    let (inputs, format) = inputs_and_format(args)?;
    let stored = match index {
        None => new_index_settings(fingerprint, opts, format)?,
        Some(index) => laid_over(index, fingerprint, opts, format)?,
    };
    // Flags that differ from an index's settings are refused when it is opened (a
    // settings mismatch naming each); the input is read as the index's documents were.
    let reading = index.filter(|&index| *index != stored).unwrap_or(&stored);
    let (matching, fingerprinter, sketcher) = reading_of(reading)?;
    let input = Input::reading(args, inputs, format, fingerprinter, sketcher);
    Ok(IndexInput { stored, matching, input })
}

/// The settings of a new index made with these flags (the library's constructors, which
/// the Python package calls too).
fn new_index_settings(
    fingerprint: &FingerprintOpts,
    opts: &MatchOpts,
    format: Format,
) -> Result<StoredSettings, SettingsError> {
    use simhash_index::disk::{MinHashSettings, SimhashSettings};
    let matching = matching(opts, format, fingerprint.preset, false)?;
    let fingerprinter = Fingerprinter::with_settings(
        fingerprint.preset.unwrap_or_default(),
        fingerprint.window.map(usize::from),
    );
    let index_error = |e: simhash_index::disk::DiskError| SettingsError::IndexSettings(e.into());
    Ok(match matching {
        Matching::Minhash { jaccard, lsh_threshold, num_perm, .. } => StoredSettings::MinHash(
            MinHashSettings::new(&fingerprinter, jaccard, lsh_threshold, num_perm)
                .map_err(index_error)?,
        ),
        Matching::Simhash { distance, blocks } => {
            // The flags were checked; this names --blocks or -k as the others do.
            tables(distance, blocks, INDEX_PLAN_DOCUMENTS as usize)?;
            StoredSettings::Simhash(
                SimhashSettings::new(&fingerprinter, distance, blocks).map_err(index_error)?,
            )
        }
    })
}

/// The index's settings with the flags given laid over them (opening then reports each
/// that differs).
fn laid_over(
    index: &StoredSettings,
    fingerprint: &FingerprintOpts,
    opts: &MatchOpts,
    format: Format,
) -> Result<StoredSettings, SettingsError> {
    // The matching settings by the contract; the preset and window here.
    let mut stored = asked(opts, format, None, false).lay_over(index)?;
    let (preset, window) = match &mut stored {
        StoredSettings::MinHash(s) => (&mut s.preset, &mut s.window),
        StoredSettings::Simhash(s) => (&mut s.preset, &mut s.window),
    };
    if fingerprint.preset.is_some() || fingerprint.window.is_some() {
        let base = fingerprint.preset.map_or_else(|| preset_named(preset), Ok)?;
        let window_asked = fingerprint.window.map(usize::from);
        // A new preset without --window takes the preset's own window.
        let window_now = if fingerprint.preset.is_some() { None } else { Some(*window) };
        let fingerprinter = Fingerprinter::with_settings(base, window_asked.or(window_now));
        fingerprinter.preset().name().clone_into(preset);
        *window = fingerprinter.window();
    }
    Ok(stored)
}

fn preset_named(name: &str) -> Result<Preset, SettingsError> {
    name.parse().map_err(|_| SettingsError::IndexPreset(name.to_owned()))
}

/// What stored settings mean to the reader: the matching, the fingerprinter and (MinHash)
/// the sketcher that make new documents' sketches as the index's were made.
fn reading_of(
    stored: &StoredSettings,
) -> Result<(Matching, Fingerprinter, Option<Arc<Sketcher>>), SettingsError> {
    let index_error = |e: simhash_index::disk::DiskError| SettingsError::IndexSettings(e.into());
    let (preset, matching) = match stored {
        StoredSettings::MinHash(s) => (
            &s.preset,
            Matching::Minhash {
                jaccard: s.jaccard,
                lsh_threshold: s.lsh_threshold,
                num_perm: s.num_perm,
                band_keys: BandKeyWidth::from_bits(s.band_key_bits).unwrap_or_default(),
            },
        ),
        StoredSettings::Simhash(s) => {
            (&s.preset, simhash(s.max_distance, Blocks::Fixed(s.blocks))?)
        }
    };
    preset_named(preset)?;
    let fingerprinter = stored.fingerprinter().map_err(index_error)?;
    let sketcher = stored.sketcher().map_err(index_error)?.map(Arc::new);
    Ok((matching, fingerprinter, sketcher))
}

/// `simhash index add`: the index, its input, and the flags to lay over its settings.
#[derive(Debug)]
pub struct IndexAddSettings<'a> {
    pub index: PathBuf,
    pub args: &'a IndexAddArgs,
    pub run: Run,
}

impl IndexAddSettings<'_> {
    pub fn new(args: &IndexAddArgs) -> IndexAddSettings<'_> {
        IndexAddSettings { index: args.index.clone(), args, run: Run::new(&args.run) }
    }

    /// The input, read as the index's documents are (`index`: its settings, none for a
    /// new index).
    pub fn input(&self, index: Option<&StoredSettings>) -> Result<IndexInput, SettingsError> {
        index_input(&self.args.input, &self.args.fingerprint, &self.args.matching, index)
    }
}

/// `simhash index query`.
#[derive(Debug)]
pub struct IndexQuerySettings<'a> {
    pub index: PathBuf,
    pub args: &'a IndexQueryArgs,
    pub output: PathBuf,
    pub run: Run,
}

impl IndexQuerySettings<'_> {
    pub fn new(args: &IndexQueryArgs) -> IndexQuerySettings<'_> {
        IndexQuerySettings {
            index: args.index.clone(),
            args,
            output: args.output.output.clone(),
            run: Run::new(&args.run),
        }
    }

    /// The input, read as the index's documents are.
    pub fn input(&self, index: &StoredSettings) -> Result<IndexInput, SettingsError> {
        index_input(&self.args.input, &self.args.fingerprint, &self.args.matching, Some(index))
    }
}
