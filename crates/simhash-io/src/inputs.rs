//! The inputs of a run: the paths given on the command line, directories expanded into
//! the record files under them, in a fixed order, each file once.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};
use crate::source::Source;

/// The extensions read from a directory (before an optional `.gz` or `.zst`), in any case.
pub const RECORD_EXTENSIONS: &[&str] = &["jsonl", "json", "ndjson", "tsv"];

/// One input file: where it is, and its path relative to the argument that named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// The path to open; `-` for standard input.
    pub path: PathBuf,
    /// The path below the directory argument it was found in, or the file name of a file
    /// argument (`-` for standard input): where a per-input output goes.
    pub relative: PathBuf,
}

/// A file in a directory that is not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedFile {
    /// Its path.
    pub path: PathBuf,
    /// Why it is not read (lowercase).
    pub why: &'static str,
}

/// The input files of a run, in reading order: the arguments in the order given, each
/// directory replaced by the record files below it.
///
/// * A directory is walked recursively; its files are read in the byte order of their
///   paths. Names starting with `.` (hidden files and directories) are passed over
///   silently. Only files whose name ends in one of [`RECORD_EXTENSIONS`], optionally
///   followed by `.gz` or `.zst`, or in `.parquet`, are read ([`is_record_file`]); the others are listed in
///   [`Inputs::skipped`]. Symbolic links are followed, except a link to a directory that
///   contains it (a loop), which is skipped.
/// * A file argument is read whatever its name; `-` is standard input.
/// * No arguments means standard input.
/// * Standard input that was closed when the process started ([`crate::stdin_was_closed`],
///   `simhash dedup - <&-`) is an error, not an empty input.
/// * The same file twice (by device and inode, whichever paths name it), or `-` twice, is
///   an error: every record would be a duplicate of itself.
/// * A directory with no record file under it is an error.
///
/// ```
/// use simhash_io::Inputs;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir_all(dir.path().join("b/.cache"))?;
/// for name in ["b/2.jsonl.zst", "a.jsonl", "b/.cache/x.jsonl", "notes.txt", ".hidden.jsonl"] {
///     std::fs::write(dir.path().join(name), "")?;
/// }
/// let inputs = Inputs::expand(&[dir.path()])?;
/// let found: Vec<_> = inputs.files().iter().map(|f| f.relative.to_str().unwrap()).collect();
/// assert_eq!(found, ["a.jsonl", "b/2.jsonl.zst"]);
/// assert_eq!(inputs.skipped().len(), 1); // notes.txt
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    files: Vec<InputFile>,
    skipped: Vec<SkippedFile>,
}

/// Whether a file found in a directory is read: its name ends in `.jsonl`, `.json`,
/// `.ndjson` or `.tsv`, optionally followed by `.gz` or `.zst`, or in `.parquet` (in any
/// case).
///
/// ```
/// use std::path::Path;
/// use simhash_io::is_record_file;
///
/// assert!(is_record_file(Path::new("shard-0001.jsonl.zst")));
/// assert!(is_record_file(Path::new("hashes.TSV")));
/// assert!(!is_record_file(Path::new("README.md")));
/// assert!(!is_record_file(Path::new("data.gz")));
/// assert!(is_record_file(Path::new("train-00000-of-00020.parquet")));
/// ```
pub fn is_record_file(path: &Path) -> bool {
    if crate::parquet::is_parquet(path) {
        return true;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase());
    let Some(name) = name else { return false };
    let name = name.strip_suffix(".gz").or_else(|| name.strip_suffix(".zst")).unwrap_or(&name);
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| RECORD_EXTENSIONS.contains(&e))
}

impl Inputs {
    /// The files named by `args` (files, directories, `-`); no arguments is standard input.
    pub fn expand<P: AsRef<Path>>(args: &[P]) -> Result<Inputs, Error> {
        let mut inputs = Inputs::default();
        if args.is_empty() {
            inputs.push_file(Path::new("-"), PathBuf::from("-"));
        }
        for arg in args {
            let arg = arg.as_ref();
            if arg != Path::new("-") && fs::metadata(arg).is_ok_and(|m| m.is_dir()) {
                inputs.push_dir(arg)?;
            } else {
                let name = arg.file_name().map_or_else(|| arg.to_path_buf(), PathBuf::from);
                inputs.push_file(arg, name);
            }
        }
        inputs.check_distinct()?;
        if inputs.has_stdin() && crate::source::stdin_was_closed() {
            return Err(crate::source::closed_stdin_error());
        }
        Ok(inputs)
    }

    /// The files, in reading order.
    pub fn files(&self) -> &[InputFile] {
        &self.files
    }

    /// Files in the directories that are not read (not a record file, a symlink loop, a
    /// broken link), in path order within each directory.
    pub fn skipped(&self) -> &[SkippedFile] {
        &self.skipped
    }

    /// The paths of the files (`-` for standard input), for `run::register_inputs`.
    pub fn paths(&self) -> Vec<&Path> {
        self.files.iter().map(|f| f.path.as_path()).collect()
    }

    /// A [`Source`] for each file, in reading order (nothing is opened).
    pub fn sources(&self) -> Vec<Source> {
        self.files.iter().map(|f| Source::new(&f.path)).collect()
    }

    /// Whether one of the files is standard input.
    pub fn has_stdin(&self) -> bool {
        self.files.iter().any(|f| f.path == Path::new("-"))
    }

    fn push_file(&mut self, path: &Path, relative: PathBuf) {
        self.files.push(InputFile { path: path.to_path_buf(), relative });
    }

    fn push_dir(&mut self, root: &Path) -> Result<(), Error> {
        let mut found = Vec::new();
        let mut ancestors = Vec::new();
        walk(root, Path::new(""), &mut ancestors, &mut found, &mut self.skipped)?;
        if found.is_empty() {
            return Err(Error::msg(
                ErrorKind::NoInputFiles,
                format!(
                    "{}: no input files in this directory (files ending in .jsonl, .json, \
                     .ndjson or .tsv, optionally .gz or .zst, or .parquet are read)",
                    root.display()
                ),
            ));
        }
        found
            .sort_by(|a, b| a.as_os_str().as_encoded_bytes().cmp(b.as_os_str().as_encoded_bytes()));
        for relative in found {
            let path = root.join(&relative);
            self.files.push(InputFile { path, relative });
        }
        Ok(())
    }

    /// Fails when a file (or standard input) is named twice.
    fn check_distinct(&self) -> Result<(), Error> {
        let mut seen: Vec<(FileKey, &Path)> = Vec::with_capacity(self.files.len());
        for file in &self.files {
            let Some(key) = file_key(&file.path) else { continue };
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                let name = |p: &Path| {
                    if p == Path::new("-") {
                        "<stdin>".to_string()
                    } else {
                        p.display().to_string()
                    }
                };
                return Err(Error::msg(
                    ErrorKind::DuplicateInput,
                    format!(
                        "{} is the same input as {}: each input may be given once",
                        name(&file.path),
                        name(first)
                    ),
                ));
            }
            seen.push((key, &file.path));
        }
        Ok(())
    }
}

/// What makes two input paths the same file.
#[derive(Debug, PartialEq, Eq)]
enum FileKey {
    Stdin,
    File(u64, u64),
    #[cfg_attr(unix, allow(dead_code))]
    Path(PathBuf),
}

/// The identity of an input path; `None` when it cannot be read (opening it reports that).
fn file_key(path: &Path) -> Option<FileKey> {
    if path == Path::new("-") {
        return Some(FileKey::Stdin);
    }
    let meta = fs::metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(FileKey::File(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        fs::canonicalize(path).ok().map(FileKey::Path)
    }
}

/// The identity of a directory, to find symlink loops.
fn dir_key(path: &Path) -> Option<FileKey> {
    file_key(path)
}

/// Collects the record files below `root/relative` into `found` (paths relative to
/// `root`). `ancestors` holds the directories being walked, to skip a link back to one.
fn walk(
    root: &Path,
    relative: &Path,
    ancestors: &mut Vec<FileKey>,
    found: &mut Vec<PathBuf>,
    skipped: &mut Vec<SkippedFile>,
) -> Result<(), Error> {
    let dir = root.join(relative);
    let key = dir_key(&dir);
    if let Some(key) = &key
        && ancestors.contains(key)
    {
        skipped.push(SkippedFile { path: dir, why: "a link to a directory that contains it" });
        return Ok(());
    }
    let entries = fs::read_dir(&dir)
        .map_err(|e| Error::io(format!("{}: cannot read directory", dir.display()), e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::io(format!("{}: cannot read directory", dir.display()), e))?;
        names.push(entry.file_name());
    }
    // Sorted here too, so that skipped files are listed in a fixed order.
    names.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    if let Some(key) = key {
        ancestors.push(key);
    }
    for name in names {
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let child = relative.join(&name);
        let path = root.join(&child);
        // Follows symbolic links; a broken one has no metadata.
        let Ok(meta) = fs::metadata(&path) else {
            skipped.push(SkippedFile { path, why: "a broken link or unreadable entry" });
            continue;
        };
        if meta.is_dir() {
            walk(root, &child, ancestors, found, skipped)?;
        } else if is_record_file(&child) {
            found.push(child);
        } else {
            skipped.push(SkippedFile { path, why: "not a record file by its name" });
        }
    }
    ancestors.pop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(inputs: &Inputs) -> Vec<String> {
        inputs.files().iter().map(|f| f.relative.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn directories_sorted_by_path_bytes_hidden_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for d in ["a", "a/b", ".git", "z"] {
            fs::create_dir_all(p.join(d)).unwrap();
        }
        for f in [
            "a.x.jsonl",
            "a/b/1.jsonl",
            "a/0.JSONL.GZ",
            "B.ndjson",
            ".git/x.jsonl",
            "z/.h.jsonl",
            "z/h.tsv.zst",
            "z/readme.md",
            "z/x.parquet.txt",
        ] {
            fs::write(p.join(f), "").unwrap();
        }
        let inputs = Inputs::expand(&[p]).unwrap();
        // By bytes: "B" < "a.x" < "a/" ('.' < '/').
        assert_eq!(
            names(&inputs),
            ["B.ndjson", "a.x.jsonl", "a/0.JSONL.GZ", "a/b/1.jsonl", "z/h.tsv.zst"]
        );
        let skipped: Vec<_> = inputs.skipped().iter().map(|s| s.path.clone()).collect();
        assert_eq!(skipped, [p.join("z/readme.md"), p.join("z/x.parquet.txt")]);
        assert_eq!(inputs.files()[3].path, p.join("a/b/1.jsonl"));
    }

    #[test]
    fn files_in_the_order_given_whatever_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let (b, a) = (dir.path().join("b.txt"), dir.path().join("a.jsonl"));
        fs::write(&a, "").unwrap();
        fs::write(&b, "").unwrap();
        let inputs = Inputs::expand(&[&b, &a]).unwrap();
        assert_eq!(names(&inputs), ["b.txt", "a.jsonl"]);
        assert_eq!(names(&Inputs::expand::<&Path>(&[]).unwrap()), ["-"]);
        // A file that does not exist is left for opening to report.
        assert_eq!(
            names(&Inputs::expand(&[dir.path().join("none.jsonl")]).unwrap()),
            ["none.jsonl"]
        );
    }

    #[test]
    fn the_same_file_twice_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.jsonl");
        fs::write(&a, "").unwrap();
        let err = Inputs::expand(&[&a, &dir.path().to_path_buf()]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::DuplicateInput);
        assert!(err.to_string().ends_with("each input may be given once"), "{err}");
        let err = Inputs::expand(&["-", "-"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<stdin> is the same input as <stdin>: each input may be given once"
        );
        assert!(Inputs::expand(&["-", a.to_str().unwrap()]).is_ok());
    }

    #[test]
    fn a_directory_without_record_files_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("x.txt"), "").unwrap();
        let err = Inputs::expand(&[dir.path()]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NoInputFiles);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_followed_without_loops() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs::create_dir_all(p.join("d/sub")).unwrap();
        fs::create_dir_all(p.join("other")).unwrap();
        fs::write(p.join("d/sub/a.jsonl"), "").unwrap();
        fs::write(p.join("other/o.jsonl"), "").unwrap();
        std::os::unix::fs::symlink(p.join("d"), p.join("d/sub/loop")).unwrap();
        std::os::unix::fs::symlink(p.join("other"), p.join("d/linked")).unwrap();
        std::os::unix::fs::symlink(p.join("nowhere"), p.join("d/broken.jsonl")).unwrap();
        let inputs = Inputs::expand(&[p.join("d")]).unwrap();
        assert_eq!(names(&inputs), ["linked/o.jsonl", "sub/a.jsonl"]);
        let why: Vec<_> = inputs.skipped().iter().map(|s| s.why).collect();
        assert_eq!(
            why,
            ["a broken link or unreadable entry", "a link to a directory that contains it"]
        );
        // The same file through a link and directly.
        let err = Inputs::expand(&[p.join("d"), p.join("other/o.jsonl")]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::DuplicateInput);
    }
}
