//! The settings of the index commands (`index add`, `index query`) and of `dedup --against`:
//! an index's stored settings, with the flags given laid over them.

use std::path::PathBuf;
use std::sync::Arc;

use simhash_core::{Fingerprinter, Preset};
use simhash_index::lsh::{Sketcher, Templates};

use crate::flags::{FingerprintOpts, Format, IndexAddArgs, IndexQueryArgs, InputArgs, MatchOpts};

use super::Input;
use super::input::inputs_and_format;
use super::{Matching, Run, SettingsError, asked, matching, simhash};

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
    /// The method and its settings, the index's.
    pub matching: Matching,
    /// The records, read as the index's documents were.
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
    // Which relations are acted on is the run's choice, not the index's.
    let templates = opts.flags.templates.unwrap_or_default();
    let (matching, fingerprinter, sketcher) = reading_of(reading, templates)?;
    let input = super::input::reading(args, inputs, format, fingerprinter, sketcher);
    Ok(IndexInput { stored, matching, input })
}

/// The settings of a new index made with these flags (the library's constructors, which
/// the Python package calls too).
fn new_index_settings(
    fingerprint: &FingerprintOpts,
    opts: &MatchOpts,
    format: Format,
) -> Result<StoredSettings, SettingsError> {
    let matching = matching(opts, format, fingerprint.preset, false)?;
    let fingerprinter = Fingerprinter::with_settings(
        fingerprint.preset.unwrap_or_default(),
        fingerprint.window.map(usize::from),
    );
    let index_error = |e: simhash_index::disk::DiskError| SettingsError::IndexSettings(e.into());
    // The flags were checked; blocks that make no tables for the documents a new index
    // plans for are named as the others are (--blocks or -k).
    matching.to_stored(&fingerprinter, INDEX_PLAN_DOCUMENTS as usize)?.map_err(index_error)
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
    let (preset, window) = stored.preset_window_mut();
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

/// What stored settings mean to the reader: the matching (acting on the relations
/// `templates` names), the fingerprinter and (MinHash) the sketcher that make new
/// documents' sketches as the index's were made.
fn reading_of(
    stored: &StoredSettings,
    templates: Templates,
) -> Result<(Matching, Fingerprinter, Option<Arc<Sketcher>>), SettingsError> {
    let index_error = |e: simhash_index::disk::DiskError| SettingsError::IndexSettings(e.into());
    let matching = Matching::of_stored(stored, templates);
    if let Matching::Simhash { distance, blocks } = matching {
        // A stored distance and blocks are checked as the flags are.
        simhash(Some(distance), Some(blocks))?;
    }
    preset_named(stored.preset())?;
    let fingerprinter = stored.fingerprinter().map_err(index_error)?;
    let sketcher = stored.sketcher().map_err(index_error)?.map(Arc::new);
    Ok((matching, fingerprinter, sketcher))
}

/// `simhash index add`: the index, its input, and the flags to lay over its settings.
#[derive(Debug)]
pub struct IndexAddSettings<'a> {
    /// The index directory.
    pub index: PathBuf,
    /// The flags, to lay over the index's settings once it is opened.
    pub args: &'a IndexAddArgs,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl IndexAddSettings<'_> {
    /// The settings of `args`.
    pub fn new(args: &IndexAddArgs) -> IndexAddSettings<'_> {
        IndexAddSettings { index: args.index.clone(), args, run: super::run(&args.run) }
    }

    /// The input, read as the index's documents are (`index`: its settings, none for a
    /// new index). `--templates` is refused: adding decides nothing and the index stores
    /// no policy (it would otherwise be accepted and do nothing).
    pub fn input(&self, index: Option<&StoredSettings>) -> Result<IndexInput, SettingsError> {
        if self.args.matching.flags.templates.is_some() {
            return Err(SettingsError::AddTemplates);
        }
        index_input(&self.args.input, &self.args.fingerprint, &self.args.matching, index)
    }
}

/// `simhash index query`.
#[derive(Debug)]
pub struct IndexQuerySettings<'a> {
    /// The index directory.
    pub index: PathBuf,
    /// The flags, to lay over the index's settings once it is opened.
    pub args: &'a IndexQueryArgs,
    /// `-o`: where the matches go.
    pub output: PathBuf,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl IndexQuerySettings<'_> {
    /// The settings of `args`.
    pub fn new(args: &IndexQueryArgs) -> IndexQuerySettings<'_> {
        IndexQuerySettings {
            index: args.index.clone(),
            args,
            output: args.output.output.clone(),
            run: super::run(&args.run),
        }
    }

    /// The input, read as the index's documents are. `--templates` is refused: a query
    /// lists every match (it would otherwise be accepted and do nothing).
    pub fn input(&self, index: &StoredSettings) -> Result<IndexInput, SettingsError> {
        if self.args.matching.flags.templates.is_some() {
            return Err(SettingsError::QueryTemplates);
        }
        index_input(&self.args.input, &self.args.fingerprint, &self.args.matching, Some(index))
    }
}
