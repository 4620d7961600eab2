//! Which file a path names, and the rule that no output of a run may be one of its
//! inputs, another of its outputs, or in a directory it must not write (an index):
//! [`WritePlan`] checks every output of a run at once, before anything is read; the
//! registry below applies the same rule again as each output is created.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

thread_local! {
    /// The inputs and outputs of this run, for [`crate::Output::create`]'s check. Per thread:
    /// a command registers its inputs and creates its main outputs on one thread, and tests
    /// run many commands at once in one process. Outputs created on worker threads
    /// (`--output-dir` entries) do not see it: [`WritePlan`] has checked them, with every
    /// other output, before anything was read. `run::begin` empties it.
    static REGISTRY: std::cell::RefCell<Registry> =
        const { std::cell::RefCell::new(Registry { inputs: Vec::new(), outputs: Vec::new() }) };
}

fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    REGISTRY.with(|r| f(&mut r.borrow_mut()))
}

/// Forgets the inputs and outputs registered on this thread (`run::begin`).
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub(crate) fn forget_registered() {
    with_registry(|r| {
        r.inputs.clear();
        r.outputs.clear();
    });
}

/// What a path names, to tell whether two paths are the same file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Identity {
    /// An existing file: device and inode.
    File { dev: u64, ino: u64 },
    /// A file that does not exist yet: its path, symlinks resolved.
    New(PathBuf),
}

/// A named input or output, as the check sees it.
#[derive(Debug)]
pub(crate) struct Named {
    /// `--removed out.jsonl`, or the input's path.
    label: String,
    identity: Identity,
    /// `/dev/null` or a terminal: several outputs may write to it, and reading it does not
    /// conflict with writing it.
    shareable: bool,
}

#[derive(Debug)]
struct Registry {
    inputs: Vec<Named>,
    outputs: Vec<Named>,
}

/// Where a path leads, symlinks followed.
#[derive(Debug)]
pub(crate) enum Location {
    /// `-`: standard output (of an output) or standard input (of an input).
    Dash,
    /// `/dev/stdout`, `/dev/fd/N` and the like: a descriptor already open.
    Fd(i32),
    /// A path that is not a symlink, with its metadata when it exists.
    Path { path: PathBuf, meta: Option<fs::Metadata> },
}

/// The descriptor a special path names: `/dev/stdin`, `/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N`, `/proc/self/fd/N`.
fn special_fd(path: &Path) -> Option<i32> {
    if !cfg!(unix) {
        return None;
    }
    let s = path.to_str()?;
    match s {
        "/dev/stdin" => Some(0),
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => s.strip_prefix("/dev/fd/").or_else(|| s.strip_prefix("/proc/self/fd/"))?.parse().ok(),
    }
}

/// The directory a path is in (`.` for a bare name).
pub(crate) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Follows `path` through symlinks (a chain, relative links, a link to a file that does
/// not exist yet) to the file it names.
pub(crate) fn locate(path: &Path) -> io::Result<Location> {
    if path == Path::new("-") {
        return Ok(Location::Dash);
    }
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if let Some(fd) = special_fd(&p) {
            return Ok(Location::Fd(fd));
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p)?;
                p = if link.is_absolute() {
                    link
                } else {
                    fs::canonicalize(parent_of(&p))?.join(link)
                };
            }
            Ok(_) => {
                let meta = fs::metadata(&p)?;
                return Ok(Location::Path { path: p, meta: Some(meta) });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Location::Path { path: p, meta: None });
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, "too many levels of symbolic links"))
}

/// Device and inode of an open descriptor, and whether it is shareable; `None` when it is
/// not open.
#[cfg(unix)]
fn fd_identity(fd: i32) -> Option<(Identity, bool)> {
    // SAFETY: fstat into a zeroed `stat` we own; an fd that is not open gives EBADF.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &raw mut st) != 0 {
            return None;
        }
        st
    };
    let identity = Identity::File { dev: st.st_dev as u64, ino: st.st_ino as u64 };
    let char_device = st.st_mode & libc::S_IFMT == libc::S_IFCHR;
    // SAFETY: isatty only inspects the descriptor.
    let tty = unsafe { libc::isatty(fd) } == 1;
    let shareable = char_device && (tty || is_null(&identity));
    Some((identity, shareable))
}

#[cfg(not(unix))]
fn fd_identity(_fd: i32) -> Option<(Identity, bool)> {
    None
}

fn meta_identity(path: &Path, meta: &fs::Metadata) -> Identity {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        Identity::File { dev: meta.dev(), ino: meta.ino() }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        Identity::New(fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
    }
}

fn is_null(identity: &Identity) -> bool {
    fs::metadata("/dev/null").is_ok_and(|m| meta_identity(Path::new("/dev/null"), &m) == *identity)
}

/// Whether an existing non-regular file is `/dev/null` or a terminal.
fn shareable_path(path: &Path, meta: &fs::Metadata, identity: &Identity) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_char_device() {
            return false;
        }
        is_null(identity)
            || OpenOptions::new().write(true).open(path).is_ok_and(|f| f.is_terminal())
    }
    #[cfg(not(unix))]
    {
        let _ = (path, meta, identity);
        false
    }
}

/// The identity of a located path: `None` for an input that does not exist (opening it
/// reports that) or a descriptor that is not open.
fn identify(location: &Location, dash_fd: i32) -> io::Result<Option<(Identity, bool)>> {
    Ok(match location {
        Location::Dash => fd_identity(dash_fd),
        Location::Fd(fd) => fd_identity(*fd),
        Location::Path { path, meta: Some(meta) } => {
            let identity = meta_identity(path, meta);
            let shareable = !meta.is_file() && shareable_path(path, meta, &identity);
            Some((identity, shareable))
        }
        Location::Path { path, meta: None } => {
            let dir = fs::canonicalize(parent_of(path))?;
            let name = path
                .file_name()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
            Some((Identity::New(dir.join(name)), false))
        }
    })
}

fn input_label(path: &Path) -> String {
    if path == Path::new("-") { "<stdin>".to_string() } else { path.display().to_string() }
}

fn output_label(flag: &str, path: &Path) -> String {
    match (flag, path == Path::new("-")) {
        ("", true) => "standard output".to_string(),
        (_, true) => format!("{flag} - (standard output)"),
        ("", false) => format!("output {}", path.display()),
        _ => format!("{flag} {}", path.display()),
    }
}

fn named_input(path: &Path) -> Option<Named> {
    let location = locate(path).ok()?;
    let (identity, shareable) = identify(&location, 0).ok()??;
    if matches!(identity, Identity::New(_)) {
        return None;
    }
    Some(Named { label: input_label(path), identity, shareable })
}

pub(crate) fn named_output(
    flag: &str,
    location: &Location,
    path: &Path,
) -> Result<Option<Named>, Error> {
    let identity = identify(location, 1)
        .map_err(|e| Error::io(format!("{}: cannot create output file", path.display()), e))?;
    Ok(identity.map(|(identity, shareable)| Named {
        label: output_label(flag, path),
        identity,
        shareable,
    }))
}

/// The rule: an output may not be an input, nor another output, unless it is `/dev/null`
/// or a terminal.
fn check_output(out: &Named, inputs: &[Named], outputs: &[Named]) -> Result<(), Error> {
    if out.shareable {
        return Ok(());
    }
    if let Some(input) = inputs.iter().find(|i| i.identity == out.identity) {
        return Err(overwrites_input(out, input));
    }
    if let Some(other) = outputs.iter().find(|o| o.identity == out.identity) {
        return Err(Error::msg(
            ErrorKind::SameFile,
            format!("{} is also {}: refusing to write both to one file", out.label, other.label),
        ));
    }
    Ok(())
}

fn overwrites_input(out: &Named, input: &Named) -> Error {
    Error::msg(
        ErrorKind::SameFile,
        format!("{} is the input {}: refusing to overwrite it", out.label, input.label),
    )
}

/// Checks a new output against the registered inputs and the outputs created before, calls
/// `create`, and registers the output if that succeeds.
pub(crate) fn register_output<T>(
    named: Option<Named>,
    create: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    with_registry(|registry| {
        if let Some(named) = &named {
            check_output(named, &registry.inputs, &registry.outputs)?;
        }
        let created = create()?;
        if let Some(named) = named {
            registry.outputs.push(named);
        }
        Ok(created)
    })
}

/// Fails when an output is the same file as an input or as another output: the same
/// device and inode when both exist, or the same path (symlinks resolved) for a file not
/// created yet. `-` and `/dev/stdout` are standard output as it is redirected (`>> log`
/// makes them `log`); `-` as an input is standard input. `/dev/null` and terminals may be
/// named any number of times. Each output is `(flag, path)`; the flag names it in messages.
///
/// ```
/// use std::path::Path;
///
/// let input = Path::new("Cargo.toml");
/// let err = simhash_io::check_paths(&[input], &[("--output", input)]).unwrap_err();
/// assert_eq!(err.to_string(), "--output Cargo.toml is the input Cargo.toml: refusing to overwrite it");
/// assert_eq!(err.kind(), simhash_io::ErrorKind::SameFile);
/// ```
pub fn check_paths(inputs: &[&Path], outputs: &[(&str, &Path)]) -> Result<(), Error> {
    let mut plan = WritePlan::new();
    plan.inputs(inputs);
    for &(flag, path) in outputs {
        plan.output(flag, path);
    }
    plan.check()
}

/// Records the run's inputs, so that no output of this process may replace one: fails if
/// an output already created is one of them. Call it before creating outputs.
#[cfg_attr(not(feature = "run"), allow(unreachable_pub))]
pub fn register_inputs(paths: &[&Path]) -> Result<(), Error> {
    with_registry(|registry| {
        for path in paths {
            let Some(input) = named_input(path) else { continue };
            if let Some(out) =
                registry.outputs.iter().find(|o| !o.shareable && o.identity == input.identity)
            {
                return Err(overwrites_input(out, &input));
            }
            registry.inputs.push(input);
        }
        Ok(())
    })
}

/// `path` made absolute, with its longest existing part resolved (symlinks followed): the
/// place a file not created yet will be, below directories that may not exist yet either.
pub fn resolve(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(real) = fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return absolute,
        }
    }
}

/// An output of a [`WritePlan`].
#[derive(Debug)]
struct Planned {
    label: String,
    path: PathBuf,
    /// An `--output-dir` entry: it may not land inside an input directory either.
    entry: bool,
}

/// A directory no output may be in, nor be (an index).
#[derive(Debug)]
struct Forbidden {
    /// `the index`.
    what: String,
    dir: PathBuf,
    /// Whether the run writes the directory: no input may be inside it either.
    written: bool,
}

/// Every file a run will write, checked at once against everything it may not be, before
/// anything is read: the one rule of the command line, `simhash-dist` and the Python
/// package.
///
/// [`WritePlan::check`] refuses (with [`ErrorKind::SameFile`], a message that names both
/// paths) an output that
///
/// * is an input: the same device and inode, however the path is spelled (`..`, a
///   symlink to it, a hard link, a symlinked directory on the way);
/// * is another output of the run: the same file, or the same path (symlinks resolved)
///   for a file not created yet;
/// * is, or is inside, a forbidden directory (an index: [`WritePlan::forbid_dir`]), or is
///   one of its files under another name (a hard link);
/// * for an `--output-dir` entry ([`WritePlan::output_dir_entry`]): lands inside an input
///   directory (through a symlinked entry or subdirectory of the output directory).
///
/// `/dev/null` and terminals may be named any number of times; `-` is standard output as
/// redirected.
///
/// ```
/// use std::path::Path;
///
/// let dir = tempfile::tempdir()?;
/// let input = dir.path().join("in.jsonl");
/// std::fs::write(&input, "{}\n")?;
/// let index = dir.path().join("idx");
/// let mut plan = simhash_io::WritePlan::new();
/// plan.input(&input).forbid_dir("the index", &index);
/// plan.output("--output", &dir.path().join("out.jsonl"));
/// plan.check()?;
/// plan.output("--removed", &index.join("MANIFEST"));
/// let err = plan.check().unwrap_err();
/// assert!(err.to_string().contains("is inside the index"), "{err}");
/// assert_eq!(err.kind(), simhash_io::ErrorKind::SameFile);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct WritePlan {
    inputs: Vec<PathBuf>,
    outputs: Vec<Planned>,
    forbidden: Vec<Forbidden>,
}

impl WritePlan {
    /// An empty plan.
    pub fn new() -> WritePlan {
        WritePlan::default()
    }

    /// An input: a file (`-` is standard input) or a directory argument, whose files are
    /// given too. An input that does not exist is passed over (opening it reports that).
    pub fn input(&mut self, path: &Path) -> &mut WritePlan {
        self.inputs.push(path.to_path_buf());
        self
    }

    /// [`WritePlan::input`] of each path.
    pub fn inputs<P: AsRef<Path>>(&mut self, paths: impl IntoIterator<Item = P>) -> &mut WritePlan {
        for path in paths {
            self.input(path.as_ref());
        }
        self
    }

    /// An output the run writes; `flag` names it in messages (`--removed out.tsv`; an
    /// empty flag: `output out.tsv`).
    pub fn output(&mut self, flag: &str, path: &Path) -> &mut WritePlan {
        let label = output_label(flag, path);
        self.outputs.push(Planned { label, path: path.to_path_buf(), entry: false });
        self
    }

    /// The `--output-dir` entry `path` that the input `input` is written to.
    pub fn output_dir_entry(&mut self, path: &Path, input: &Path) -> &mut WritePlan {
        let label = format!("the --output-dir entry {} (for {})", path.display(), input.display());
        self.outputs.push(Planned { label, path: path.to_path_buf(), entry: true });
        self
    }

    /// A directory that no output may be or be inside, nor be one of its files by another
    /// name: `what` names it in messages (`the index`). It need not exist yet.
    pub fn forbid_dir(&mut self, what: &str, dir: &Path) -> &mut WritePlan {
        let dir = dir.to_path_buf();
        self.forbidden.push(Forbidden { what: what.to_owned(), dir, written: false });
        self
    }

    /// [`WritePlan::forbid_dir`] of a directory that the run writes (an index it adds
    /// to): no input may be inside it either, or be one of its files by another name.
    pub fn forbid_written_dir(&mut self, what: &str, dir: &Path) -> &mut WritePlan {
        let dir = dir.to_path_buf();
        self.forbidden.push(Forbidden { what: what.to_owned(), dir, written: true });
        self
    }

    /// No input is inside a forbidden directory that the run writes (each with its resolved
    /// path and its files), or one of its files by another name.
    fn check_inputs_outside(
        &self,
        forbidden: &[(&Forbidden, PathBuf, Vec<Named>)],
    ) -> Result<(), Error> {
        for (f, dir, files) in forbidden.iter().filter(|(f, ..)| f.written) {
            for input in self.inputs.iter().filter(|p| p.as_path() != Path::new("-")) {
                let named = named_input(input);
                let by_name = named
                    .as_ref()
                    .and_then(|n| files.iter().find(|file| file.identity == n.identity));
                let resolved = resolve(input);
                if by_name.is_some() || resolved.starts_with(dir) {
                    return Err(refuse(format!(
                        "{} is inside {} {}, which this run writes: refusing to read it",
                        input_label(input),
                        f.what,
                        f.dir.display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Applies the rule (see [`WritePlan`]) to every output in turn: the first that breaks
    /// it is the error. Reads only metadata (and the forbidden directories' listings).
    pub fn check(&self) -> Result<(), Error> {
        // By identity (the first of each), so that thousands of entries check in linear time.
        let mut inputs: HashMap<Identity, Named> = HashMap::new();
        for input in self.inputs.iter().filter_map(|p| named_input(p)) {
            inputs.entry(input.identity.clone()).or_insert(input);
        }
        let input_dirs: Vec<(&Path, PathBuf)> = self
            .inputs
            .iter()
            .filter(|p| p.as_path() != Path::new("-") && fs::metadata(p).is_ok_and(|m| m.is_dir()))
            .map(|p| (p.as_path(), resolve(p)))
            .collect();
        let forbidden: Vec<(&Forbidden, PathBuf, Vec<Named>)> =
            self.forbidden.iter().map(|f| (f, resolve(&f.dir), files_of(&f.dir))).collect();
        self.check_inputs_outside(&forbidden)?;
        let mut seen: HashMap<Identity, Named> = HashMap::new();
        for planned in &self.outputs {
            let path = &planned.path;
            let location = locate(path)
                .map_err(|e| Error::io(format!("{}: cannot resolve", path.display()), e))?;
            let (identity, shareable) = match &location {
                Location::Path { path: target, meta: None } => {
                    (Identity::New(resolve(target)), false)
                }
                _ => match identify(&location, 1).map_err(|e| {
                    Error::io(format!("{}: cannot create output file", path.display()), e)
                })? {
                    Some(found) => found,
                    None => continue,
                },
            };
            let out = Named { label: planned.label.clone(), identity, shareable };
            if out.shareable {
                continue;
            }
            let resolved = match &location {
                Location::Path { path: target, .. } => Some(resolve(target)),
                Location::Dash | Location::Fd(_) => None,
            };
            if let Some(input) = inputs.get(&out.identity) {
                return Err(overwrites_input(&out, input));
            }
            if let Some(other) = seen.get(&out.identity) {
                return Err(refuse(format!(
                    "{} is also {}: refusing to write both to one file",
                    out.label, other.label
                )));
            }
            for (f, dir, files) in &forbidden {
                let shown = f.dir.display();
                if let Some(file) = files.iter().find(|n| n.identity == out.identity) {
                    return Err(refuse(format!(
                        "{} is {}'s file {}: refusing to overwrite it",
                        out.label, f.what, file.label
                    )));
                }
                match &resolved {
                    Some(r) if r == dir => {
                        return Err(refuse(format!(
                            "{} is {} {shown}: refusing to write there",
                            out.label, f.what
                        )));
                    }
                    Some(r) if r.starts_with(dir) => {
                        return Err(refuse(format!(
                            "{} is inside {} {shown}: refusing to write there",
                            out.label, f.what
                        )));
                    }
                    _ => {}
                }
            }
            if planned.entry
                && let Some(r) = &resolved
                && let Some((dir, _)) = input_dirs.iter().find(|(_, d)| r.starts_with(d))
            {
                return Err(refuse(format!(
                    "{} is inside the input directory {}: refusing to write there",
                    out.label,
                    dir.display()
                )));
            }
            seen.insert(out.identity.clone(), out);
        }
        Ok(())
    }
}

fn refuse(message: String) -> Error {
    Error::msg(ErrorKind::SameFile, message)
}

/// The files in `dir` (symlinks followed), named by their paths; none if it cannot be read.
fn files_of(dir: &Path) -> Vec<Named> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if let Ok(meta) = fs::metadata(&path) {
            let identity = meta_identity(&path, &meta);
            files.push(Named { label: path.display().to_string(), identity, shareable: false });
        }
    }
    files
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn plan_error(plan: &WritePlan) -> String {
        let err = plan.check().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::SameFile);
        err.to_string()
    }

    #[test]
    fn write_plan_rule() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        fs::create_dir_all(at("in/sub")).unwrap();
        fs::create_dir_all(at("od")).unwrap();
        fs::write(at("in/a.jsonl"), "a\n").unwrap();
        fs::write(at("in/sub/b.jsonl"), "b\n").unwrap();
        let inputs = [at("in"), at("in/a.jsonl"), at("in/sub/b.jsonl")];
        let base = || {
            let mut plan = WritePlan::new();
            plan.inputs(&inputs).forbid_dir("the index", &at("idx"));
            plan
        };
        // Entries in directories not created yet, /dev/null twice: fine.
        let mut plan = base();
        plan.output_dir_entry(&at("od/sub/b.jsonl"), &at("in/sub/b.jsonl"))
            .output("--stats", Path::new("/dev/null"))
            .output("--removed", Path::new("/dev/null"));
        plan.check().unwrap();
        // A symlinked directory on the way to an entry: the entry is the input.
        symlink(at("in/sub"), at("od/sub")).unwrap();
        let message = plan_error(&plan);
        assert!(message.contains("is the input"), "{message}");
        fs::remove_file(at("od/sub")).unwrap();
        // An entry that would be a new file inside an input directory.
        symlink(at("in"), at("od/sub")).unwrap();
        let message = plan_error(&plan);
        assert!(message.contains("inside the input directory"), "{message}");
        fs::remove_file(at("od/sub")).unwrap();
        // Two outputs, one spelled through a symlink to a directory not created yet.
        symlink(at("od"), at("link")).unwrap();
        let mut plan = base();
        plan.output_dir_entry(&at("od/new/x.jsonl"), &at("in/x.jsonl"))
            .output("--removed", &at("link/new/x.jsonl"));
        let message = plan_error(&plan);
        assert!(message.contains("is also the --output-dir entry"), "{message}");
        // The index, before and after it exists, and its files under other names.
        let mut plan = base();
        plan.output("-o", &at("idx/MANIFEST"));
        assert!(plan_error(&plan).contains("is inside the index"));
        fs::create_dir(at("idx")).unwrap();
        fs::write(at("idx/MANIFEST"), "m").unwrap();
        fs::hard_link(at("idx/MANIFEST"), at("hard")).unwrap();
        let mut plan = base();
        plan.output("-o", &at("hard"));
        assert!(plan_error(&plan).contains("is the index's file"));
        let mut plan = base();
        plan.output("-o", &at("link/../idx"));
        assert!(plan_error(&plan).contains("is the index"));
    }
}
