//! The flags of each command converted once into validated settings (rg's low-level args
//! → high-level args): defaults applied, the matching method chosen and checked, the
//! fingerprinter and MinHash sketcher built, all before any input is read.
//!
//! One concept a file: this one holds the error, the matching contract (what the flags ask
//! of [`simhash_index::settings`]) and the run and grouping options every command shares;
//! `input` the records' input and how it is read, `commands` each command's settings, `index`
//! the settings of the index commands and of `dedup --against`, `explain` those of `explain`.

use std::fmt;
use std::num::NonZeroUsize;

use simhash_core::Preset;
use simhash_index::Blocks;

use crate::flags::{ClusterMode, ClusterOpts, Format, MatchOpts, RunOpts};
pub use simhash_jobs::{Grouping, Input, Run};

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
    /// `--output`'s name says one format and the records are written in another (the
    /// inputs').
    OutputFormat(String),
    /// `--parquet-compression` without a Parquet output: why.
    ParquetCompression(&'static str),
    /// `index query --templates`: a query lists every match, whatever its relation.
    QueryTemplates,
    /// `index add --templates`: adding decides nothing, and the index stores no policy.
    AddTemplates,
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
            SettingsError::OutputFormat(why) => write!(f, "--output {why}"),
            SettingsError::ParquetCompression(why) => {
                write!(f, "--parquet-compression applies to Parquet output only: {why}")
            }
            SettingsError::MixedFormats(e) => e.fmt(f),
            SettingsError::AddTemplates => f.write_str(
                "index add stores every document, whatever its relations, and the index keeps \
                 no --templates policy: give --templates to dedup --against",
            ),
            SettingsError::QueryTemplates => f.write_str(
                "index query lists every indexed document within the threshold, whatever the \
                 pair's relation: --templates applies to dedup --against (and dedup, pairs, \
                 cluster)",
            ),
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
mod commands;
mod decontaminate;
mod explain;
mod index;
mod input;

pub use commands::{
    ClusterSettings, CppSettings, DedupSettings, EvalSettings, FingerprintSettings, PairsSettings,
};
pub use decontaminate::DecontaminateSettings;
pub use explain::ExplainSettings;
pub use index::{IndexAddSettings, IndexInput, IndexQuerySettings, StoredSettings};
pub use simhash_index::settings::Matching;

impl From<simhash_index::settings::SettingsError> for SettingsError {
    fn from(e: simhash_index::settings::SettingsError) -> SettingsError {
        SettingsError::Matching(e)
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
    opts.flags.asked(preset, format == Format::Hash, fork_style, opts.memory.is_some())
}

/// The simhash settings of a command that has no method to choose (the fork's, an
/// index's), checked by the contract (its defaults for what is not given).
fn simhash(distance: Option<u32>, blocks: Option<Blocks>) -> Result<Matching, SettingsError> {
    use simhash_index::settings::{Asked, Method as Asked_};
    let asked = Asked { method: Asked_::Simhash, distance, blocks, ..Asked::default() };
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
/// The run's settings of `run`'s flags (threads: all the cores when not given).
fn run(run: &RunOpts) -> Run {
    let threads = run
        .threads
        .threads
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    Run { threads, quiet: run.quiet.quiet, stats: run.stats.stats.clone(), memory: None }
}

/// The clusters' settings of `opts`, in `default` mode unless given.
fn grouping(opts: &ClusterOpts, default: ClusterMode) -> Grouping {
    Grouping {
        mode: opts.mode.unwrap_or(default),
        keep: opts.keep.keep,
        big_cluster: opts.big_cluster,
    }
}
