//! Output files written whole or not at all, never over an input.
//!
//! * A regular file (or a new one) is written to a temporary file in its directory and
//!   renamed over it only when everything was written ([`commit_all`]). A symlink is written
//!   through: the file it points to (at the end of a chain, even one that does not exist
//!   yet) is the one replaced, and the link stays.
//! * `-` is standard output. `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N`
//!   write to the descriptor this process already has open (a duplicate of it), so that
//!   `>> log` keeps appending: reopening the path would start at the beginning of `log`.
//! * Anything else that is not a regular file (`/dev/null`, a FIFO, a device) is written
//!   directly: renaming over it would replace a device or pipe with a file.
//!
//! No output may be an input or another output of the same run, nor be in an index:
//! [`crate::WritePlan`] (or [`crate::check_paths`]) decides for every output at once before
//! anything is read, and [`Output::create`] applies the same rule to every input given to
//! `run::register_inputs` (the `run` feature)
//! (and every input [`crate::Source`] opens) and every output created before.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, ErrorKind};
use crate::paths::{Location, locate, named_output, parent_of, register_output};

/// Temporary files not yet renamed into place, removed if the run is interrupted. (An
/// output dropped without a commit has already removed its own; removing it again is
/// harmless.)
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Held while outputs are moved into place: a signal waits for it, so that a group commit
/// is never cut in half (it takes milliseconds).
static COMMIT: Mutex<()> = Mutex::new(());

/// Held while a run commits its outputs together with something else (its additions to
/// an index): a signal waits for it (`hold_signals`).
static HOLD: Mutex<()> = Mutex::new(());

/// What the run has committed (none before its commit point): a signal that arrives after
/// it is reported and otherwise ignored, since the run's work is done.
static COMMITTED: Mutex<Option<String>> = Mutex::new(None);

/// Holds off the signal handler ([`install_signal_handler`]) until dropped: for a run whose
/// commit is more than one [`commit_all`] (its outputs, then an index's manifest), so that
/// a signal finds the run either before its commit point (nothing committed) or after it
/// (everything committed), never between. Hold it for milliseconds: the renames and the
/// manifest's write, not the work before them.
#[must_use = "signals are held only while this lives"]
#[derive(Debug)]
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub struct SignalHold {
    _guard: std::sync::MutexGuard<'static, ()>,
}

/// See [`SignalHold`].
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub fn hold_signals() -> SignalHold {
    SignalHold { _guard: HOLD.lock().unwrap_or_else(PoisonError::into_inner) }
}

/// Records that the run has committed `what` (e.g. "its outputs and the index"): from now
/// on a SIGINT, SIGTERM or SIGHUP is reported as arriving after the commit and the run
/// finishes as it would have (its exit status says how it went), instead of exiting with
/// 128 + the signal's number as if nothing had been written. [`commit_all`] records its
/// outputs itself.
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub fn note_committed(what: &str) {
    *COMMITTED.lock().unwrap_or_else(PoisonError::into_inner) = Some(what.to_string());
}

/// Forgets the inputs and outputs of earlier runs on this thread (a file freed since may
/// reappear under another name with the same inode), and what an earlier run of this
/// process committed.
///
/// A command line calls it once at the start of a run; tests that run several commands on
/// one thread call it before each.
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub fn begin_run() {
    *COMMITTED.lock().unwrap_or_else(PoisonError::into_inner) = None;
    crate::paths::forget_registered();
}

/// Removes the temporary files of outputs still being written, and keeps any other from
/// being created from then on (one that is being created is removed too): for signal and
/// failure handlers, which end the process next.
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub fn remove_pending() {
    let paths = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
    for path in paths.iter() {
        let _ = fs::remove_file(path);
    }
    // Held until the process ends: `Output::create` takes this lock before it creates a
    // temporary file, so none appears after the removal.
    std::mem::forget(paths);
}

fn forget_pending(path: &Path) {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner).retain(|p| p != path);
}

/// On SIGINT, SIGTERM and SIGHUP: waits for a group commit under way (and a
/// [`SignalHold`]); then, before the run's commit point, removes the temporary files of
/// unfinished outputs (no target is touched before it is complete) and exits with 128 +
/// the signal's number (130, 143, 129), nothing committed; after it ([`note_committed`],
/// [`commit_all`]), says that the signal came after the commit and lets the run finish.
/// A signal that was ignored when the process started (`nohup`, a background job of a
/// script) stays ignored.
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub fn install_signal_handler() {
    #[cfg(unix)]
    static ONCE: std::sync::Once = std::sync::Once::new();
    #[cfg(unix)]
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let wanted: Vec<i32> =
            [SIGINT, SIGTERM, SIGHUP].into_iter().filter(|&s| !signal_ignored(s)).collect();
        let Ok(mut signals) = signal_hook::iterator::Signals::new(wanted) else {
            return;
        };
        let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
            for signal in signals.forever() {
                let _hold = HOLD.lock().unwrap_or_else(PoisonError::into_inner);
                let _commit = COMMIT.lock().unwrap_or_else(PoisonError::into_inner);
                let committed = COMMITTED.lock().unwrap_or_else(PoisonError::into_inner).clone();
                if let Some(what) = committed {
                    let program = std::env::args_os()
                        .next()
                        .and_then(|a| Path::new(&a).file_name().map(std::ffi::OsStr::to_os_string))
                        .map_or_else(|| "simhash".into(), |n| n.to_string_lossy().into_owned());
                    let _ = writeln!(
                        io::stderr().lock(),
                        "{program}: {} after the run committed {what}: finishing the run",
                        signal_name(signal)
                    );
                    continue;
                }
                remove_pending();
                #[allow(clippy::exit)]
                std::process::exit(128 + signal);
            }
        });
    });
}

/// The name of one of the signals handled.
#[cfg(unix)]
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Whether `signal` is ignored (inherited from the parent: `nohup`, a shell's background
/// job): a handler for it must not be installed, so that the run stays as immune as asked.
#[cfg(unix)]
#[cfg_attr(not(feature = "run"), allow(dead_code, unreachable_pub))]
pub fn signal_ignored(signal: i32) -> bool {
    // SAFETY: a query (null new action) into a zeroed `sigaction` we own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &raw mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// An output file, written whole or not at all ([`commit_all`]): a regular file through a
/// temporary file renamed into place, standard output, a descriptor already open
/// (`/dev/stdout`, `/dev/fd/N`, written through its duplicate so that `>> log` appends), or
/// a device or pipe written directly. Write errors name the output (`out.tsv: No space left on device`) and
/// keep their kind (a closed pipe stays [`io::ErrorKind::BrokenPipe`]).
///
/// ```
/// use std::io::Write;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("out.txt");
/// let mut out = simhash_io::Output::create_for("--output", &path)?;
/// out.write_all(b"hello\n")?;
/// assert!(!path.exists(), "not before the commit");
/// out.commit()?;
/// assert_eq!(std::fs::read_to_string(&path)?, "hello\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Output {
    kind: Kind,
    /// Names the output in messages: its path, or `<stdout>`.
    name: String,
}

enum Kind {
    Stdout(BufWriter<io::Stdout>),
    /// A device, pipe or other non-regular file, or a descriptor already open.
    Direct(BufWriter<File>),
    Temp {
        writer: BufWriter<tempfile::NamedTempFile>,
        target: PathBuf,
    },
    /// A temporary file written, synced and closed ([`Output::close`]), waiting to be
    /// renamed.
    Closed {
        temp: tempfile::TempPath,
        target: PathBuf,
    },
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Output {
    /// [`Output::create_for`] without a flag name for messages.
    pub fn create(path: &Path) -> Result<Output, Error> {
        Output::create_for("", path)
    }

    /// Creates the output `flag` names (`--output`; shown in messages): `-` is standard
    /// output; a regular file (or a new one) is written to a temporary file in the same
    /// directory and renamed on [`commit_all`] (dropped without a commit, the temporary file
    /// is removed and the target is left as it was); anything else is written directly.
    /// Fails, creating nothing, when the output is an input registered so far or an output
    /// created before (see [`crate::check_paths`] for the rule).
    ///
    /// A file named as compressed (`.gz`, `.zst`) is refused: this output is written as it
    /// is, and a reader (`simhash` itself) would take it for compressed data
    /// ([`Output::create_encoded_for`] makes the files that [`crate::Encoded`] compresses).
    pub fn create_for(flag: &str, path: &Path) -> Result<Output, Error> {
        if let Some(compression) = crate::compression(path) {
            let ext = match compression {
                crate::Compression::Gzip => ".gz",
                crate::Compression::Zstd => ".zst",
            };
            let label = if flag.is_empty() { String::new() } else { format!("{flag} ") };
            return Err(Error::msg(
                ErrorKind::CompressedName,
                format!(
                    "{label}{}: named as compressed ({ext}), but written uncompressed: give it \
                     a name without {ext} (and compress it afterwards if you like)",
                    path.display()
                ),
            ));
        }
        Output::create_encoded_for(flag, path)
    }

    /// [`Output::create_for`] of a file that [`crate::Encoded`] compresses as its name says
    /// (`.gz`, `.zst`): an output directory's files, which mirror their inputs'.
    pub fn create_encoded_for(flag: &str, path: &Path) -> Result<Output, Error> {
        let shown = path.display();
        let location =
            locate(path).map_err(|e| Error::io(format!("{shown}: cannot resolve"), e))?;
        // Standard output closed when the process started is `/dev/null` now: refused, not
        // written with nothing to show for it.
        if matches!(location, Location::Dash | Location::Fd(1)) && crate::stdout_was_closed() {
            return Err(crate::closed_stdout_error(flag));
        }
        let named = named_output(flag, &location, path)?;
        register_output(named, || Output::open(path, location))
    }

    fn open(path: &Path, location: Location) -> Result<Output, Error> {
        let shown = path.display();
        let name = shown.to_string();
        let (target, existing) = match location {
            Location::Dash => {
                let stdout = io::stdout();
                // Line-buffered output to a terminal shows results as they come.
                let capacity = if stdout.is_terminal() { 1 << 10 } else { 1 << 16 };
                let writer = BufWriter::with_capacity(capacity, stdout);
                return Ok(Output { kind: Kind::Stdout(writer), name: "<stdout>".into() });
            }
            Location::Fd(fd) => {
                let file =
                    dup(fd).map_err(|e| Error::io(format!("{shown}: cannot write to it"), e))?;
                let writer = BufWriter::with_capacity(1 << 16, file);
                return Ok(Output { kind: Kind::Direct(writer), name });
            }
            Location::Path { path: target, meta: Some(meta) } if !meta.is_file() => {
                if meta.is_dir() {
                    return Err(Error::msg(
                        ErrorKind::IsDirectory,
                        format!("{shown}: is a directory"),
                    ));
                }
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| Error::io(format!("{shown}: cannot open for writing"), e))?;
                let writer = BufWriter::with_capacity(1 << 16, file);
                return Ok(Output { kind: Kind::Direct(writer), name });
            }
            Location::Path { path: target, meta } => {
                if let Some(meta) = &meta {
                    refuse_read_only(&shown.to_string(), &target, meta)?;
                }
                (target, meta.map(|m| m.permissions()))
            }
        };
        let dir = parent_of(&target);
        let file_name =
            target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let prefix = format!(".{file_name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // Keep an existing file's mode; a new file gets what the umask allows.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(existing.unwrap_or_else(|| fs::Permissions::from_mode(0o666)));
        }
        #[cfg(not(unix))]
        if let Some(permissions) = existing {
            builder.permissions(permissions);
        }
        // Registered for the signal handlers under the lock they take to remove the pending
        // files, held from before the file exists: a signal between its creation and its
        // registration would otherwise leave it behind.
        let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
        let temp = builder.tempfile_in(dir).map_err(|e| {
            Error::io(format!("{shown}: cannot create output file in {}", dir.display()), e)
        })?;
        pending.push(temp.path().to_path_buf());
        drop(pending);
        Ok(Output {
            kind: Kind::Temp { writer: BufWriter::with_capacity(1 << 16, temp), target },
            name,
        })
    }

    /// Flushes and, for a temporary file, moves it into place: [`commit_all`] of one.
    pub fn commit(self) -> Result<(), Error> {
        commit_all([self])
    }

    /// Ends the writing of a temporary-file output: flushes it, syncs it to disk and closes
    /// its descriptor, so that a run can hold thousands of outputs to commit together
    /// without as many open files. Writing to it afterwards is an error; other outputs
    /// are returned as they are.
    pub fn close(self) -> Result<Output, Error> {
        let Output { kind, name } = self;
        let kind = match kind {
            Kind::Temp { writer, target } => {
                let temp = writer.into_inner().map_err(|e| named_error(&name, &e.into_error()))?;
                temp.as_file().sync_all().map_err(|e| named_error(&name, &e))?;
                Kind::Closed { temp: temp.into_temp_path(), target }
            }
            other => other,
        };
        Ok(Output { kind, name })
    }

    /// An I/O error that names this output, of the same kind (a closed pipe stays
    /// [`io::ErrorKind::BrokenPipe`]).
    fn named(&self, e: &io::Error) -> io::Error {
        named_error(&self.name, e)
    }
}

/// Refuses to replace an existing file this user may not write, as the shell's `>` would
/// (renaming a new file over it needs only the directory's permission): for root, whom the
/// shell lets write anything, a file with no write permission for anyone is refused too.
fn refuse_read_only(shown: &str, target: &Path, meta: &fs::Metadata) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        // SAFETY: geteuid only reads the process's credentials.
        let root = unsafe { libc::geteuid() } == 0;
        let writable = if root {
            mode & 0o222 != 0
        } else {
            let Ok(c_path) = std::ffi::CString::new(target.as_os_str().as_bytes()) else {
                return Ok(());
            };
            // SAFETY: a NUL-terminated path; access only reads it.
            unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
        };
        if !writable {
            return Err(Error::msg(
                ErrorKind::ReadOnly,
                format!(
                    "{shown}: not writable (mode {:o}): refusing to replace it; remove it \
                     first or write elsewhere",
                    mode & 0o7777
                ),
            ));
        }
    }
    #[cfg(not(unix))]
    if meta.permissions().readonly() {
        return Err(Error::msg(
            ErrorKind::ReadOnly,
            format!(
                "{shown}: read-only: refusing to replace it; remove it first or write elsewhere"
            ),
        ));
    }
    let _ = target;
    Ok(())
}

fn named_error(name: &str, e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{name}: {}", describe(e)))
}

/// An I/O error's message without the "(os error 28)" that says nothing more.
fn describe(e: &io::Error) -> String {
    let mut text = e.to_string();
    if let Some(i) = text.rfind(" (os error ")
        && text.ends_with(')')
    {
        text.truncate(i);
    }
    text
}

/// A duplicate of descriptor `fd` (which stays open for the rest of the process).
#[cfg(unix)]
fn dup(fd: i32) -> io::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor that nothing else owns, or -1.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is open and owned by nothing else.
    Ok(unsafe { File::from_raw_fd(new) })
}

#[cfg(not(unix))]
fn dup(_fd: i32) -> io::Result<File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "descriptor paths are not supported on this system",
    ))
}

/// Writes out every output, or (as far as possible) none: the one failure rule.
///
/// 1. Every temporary file is flushed and synced to disk: a write error (a full disk) stops
///    here, and no output is put in place (every temporary file is removed).
/// 2. Outputs written directly (standard output, `/dev/stdout`, pipes, devices) are flushed.
///    What they already received cannot be taken back.
/// 3. The temporary files are renamed over their targets, in order. A target that existed
///    is first kept reachable under a backup name in its directory; if a rename fails, the
///    targets already replaced get their old file back (a target that did not exist is
///    removed), so no output of the group is left in place.
/// 4. The directories are synced and the backups removed.
///
/// A signal that arrives during a group commit waits for it to end.
pub fn commit_all(outputs: impl IntoIterator<Item = Output>) -> Result<(), Error> {
    let _commit = COMMIT.lock().unwrap_or_else(PoisonError::into_inner);
    let outputs: Vec<Output> = outputs.into_iter().collect();
    let mut temps = Vec::new();
    let mut direct = Vec::new();
    for output in outputs {
        let name = output.name;
        match output.kind {
            Kind::Temp { writer, target } => temps.push((Ok(writer), target, name)),
            Kind::Closed { temp, target } => temps.push((Err(temp), target, name)),
            kind => direct.push((kind, name)),
        }
    }
    let mut finished = Vec::with_capacity(temps.len());
    for (writer, target, name) in temps {
        let temp = match writer {
            Ok(writer) => {
                let temp = writer.into_inner().map_err(|e| named_error(&name, &e.into_error()))?;
                temp.as_file().sync_all().map_err(|e| named_error(&name, &e))?;
                temp.into_temp_path()
            }
            Err(closed) => closed,
        };
        finished.push((temp, target, name));
    }
    for (kind, name) in direct {
        match kind {
            Kind::Stdout(mut w) => w.flush().map_err(|e| named_error(&name, &e))?,
            Kind::Direct(mut w) => w.flush().map_err(|e| named_error(&name, &e))?,
            Kind::Temp { .. } | Kind::Closed { .. } => {}
        }
    }
    // Targets replaced so far, with the backup of the file each replaced.
    let mut done: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    for (temp, target, name) in finished {
        let backup = match fs::symlink_metadata(&target) {
            Ok(meta) if meta.is_file() => match backup(&target) {
                Ok(b) => Some(b),
                Err(e) => {
                    let undone = roll_back(&done);
                    return Err(Error::msg(
                        ErrorKind::Io,
                        format!("{name}: cannot keep a backup of it: {e}{undone}"),
                    ));
                }
            },
            _ => None,
        };
        let temp_path = temp.to_path_buf();
        if let Err(e) = temp.persist(&target) {
            drop(e.path);
            forget_pending(&temp_path);
            if let Some(b) = &backup {
                let _ = fs::remove_file(b);
            }
            let undone = roll_back(&done);
            return Err(Error::msg(
                ErrorKind::Io,
                format!(
                    "{name}: cannot move the finished file into place: {}{undone}",
                    describe(&e.error)
                ),
            ));
        }
        forget_pending(&temp_path);
        done.push((target, backup));
    }
    sync_dirs(&done);
    for (_, backup) in &done {
        if let Some(b) = backup {
            let _ = fs::remove_file(b);
        }
    }
    let mut committed = COMMITTED.lock().unwrap_or_else(PoisonError::into_inner);
    committed.get_or_insert_with(|| "its outputs".to_string());
    Ok(())
}

/// Hard-links (or, where links are not supported, copies) `target` to an unused name in
/// its directory.
fn backup(target: &Path) -> io::Result<PathBuf> {
    let dir = parent_of(target);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for n in 0..1000 {
        let path = dir.join(format!(".{name}.{}-{n}.bak", std::process::id()));
        match fs::hard_link(target, &path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(_) if !path.exists() => {
                fs::copy(target, &path)?;
                return Ok(path);
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "no unused backup name"))
}

/// Puts back what `done` replaced; returns a note for the error message if it could not.
fn roll_back(done: &[(PathBuf, Option<PathBuf>)]) -> String {
    let mut failed = Vec::new();
    for (target, backup) in done.iter().rev() {
        let result = match backup {
            Some(b) => fs::rename(b, target),
            None => fs::remove_file(target),
        };
        if let Err(e) = result {
            failed.push(format!("{}: {e}", target.display()));
        }
    }
    sync_dirs(done);
    if failed.is_empty() {
        if done.is_empty() {
            String::new()
        } else {
            " (the outputs already in place were put back as they were)".to_string()
        }
    } else {
        format!(" (and could not put back {})", failed.join(", "))
    }
}

fn sync_dirs(done: &[(PathBuf, Option<PathBuf>)]) {
    let mut dirs: Vec<&Path> = done.iter().map(|(t, _)| parent_of(t)).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        // Directories cannot be synced on every system and filesystem: best effort.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = match &mut self.kind {
            Kind::Stdout(w) => w.write(buf),
            Kind::Direct(w) => w.write(buf),
            Kind::Temp { writer, .. } => writer.write(buf),
            Kind::Closed { .. } => Err(closed()),
        };
        result.map_err(|e| self.named(&e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let result = match &mut self.kind {
            Kind::Stdout(w) => w.write_all(buf),
            Kind::Direct(w) => w.write_all(buf),
            Kind::Temp { writer, .. } => writer.write_all(buf),
            Kind::Closed { .. } => Err(closed()),
        };
        result.map_err(|e| self.named(&e))
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = match &mut self.kind {
            Kind::Stdout(w) => w.flush(),
            Kind::Direct(w) => w.flush(),
            Kind::Temp { writer, .. } => writer.flush(),
            Kind::Closed { .. } => Err(closed()),
        };
        result.map_err(|e| self.named(&e))
    }
}

fn closed() -> io::Error {
    io::Error::other("written to after it was closed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::{check_paths, register_inputs};

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn written(path: &Path, text: &str) -> Output {
        let mut out = Output::create(path).unwrap();
        out.write_all(text.as_bytes()).unwrap();
        out
    }

    #[test]
    fn a_group_commits_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, "old a").unwrap();
        commit_all([written(&a, "new a"), written(&b, "new b")]).unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(fs::read_to_string(&b).unwrap(), "new b");
        assert_eq!(names(dir.path()), ["a", "b"]);
    }

    #[test]
    fn closed_outputs_commit_with_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let closed = written(&a, "closed a").close().unwrap();
        commit_all([closed, written(&b, "open b")]).unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "closed a");
        assert_eq!(fs::read_to_string(&b).unwrap(), "open b");
        // Dropped without a commit, a closed output leaves nothing.
        let c = dir.path().join("c");
        drop(written(&c, "c").close().unwrap());
        assert_eq!(names(dir.path()), ["a", "b"]);
    }

    #[test]
    fn a_failed_rename_puts_back_the_outputs_already_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new, last) =
            (dir.path().join("old"), dir.path().join("new"), dir.path().join("last"));
        fs::write(&old, "old content").unwrap();
        let outputs = [written(&old, "replaced"), written(&new, "created"), written(&last, "x")];
        // The last target becomes a non-empty directory: renaming over it fails.
        fs::create_dir(&last).unwrap();
        fs::write(last.join("inside"), "").unwrap();
        let err = commit_all(outputs).unwrap_err();
        let message = format!("{err:#}");
        assert!(message.contains("cannot move the finished file into place"), "{message}");
        assert!(message.contains("put back as they were"), "{message}");
        assert_eq!(fs::read_to_string(&old).unwrap(), "old content");
        assert!(!new.exists(), "a target that did not exist is removed again");
        assert!(last.join("inside").exists());
        assert_eq!(names(dir.path()), ["last", "old"], "no temporary file or backup is left");
    }

    #[cfg(unix)]
    #[test]
    fn a_write_error_leaves_no_output_in_place() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, "old").unwrap();
        let full = written(Path::new("/dev/full"), "x");
        let err = commit_all([written(&a, "new"), full]).unwrap_err();
        assert!(format!("{err:#}").contains("/dev/full: No space left on device"), "{err:#}");
        assert_eq!(fs::read_to_string(&a).unwrap(), "old");
        assert_eq!(names(dir.path()), ["a"]);
    }

    #[test]
    fn same_file_rule() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.jsonl");
        fs::write(&input, "x\n").unwrap();
        let new = dir.path().join("new.tsv");
        let other = dir.path().join("other.tsv");
        check_paths(&[&input], &[("--output", &new), ("--removed", &other)]).unwrap();
        let err = check_paths(&[&input], &[("--removed", &input)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "--removed {} is the input {}: refusing to overwrite it",
                input.display(),
                input.display()
            )
        );
        // A file not created yet, spelled two ways.
        let spelled = dir.path().join(".").join("new.tsv");
        let err = check_paths(&[], &[("--output", &new), ("--stats", &spelled)]).unwrap_err();
        assert!(err.to_string().contains("refusing to write both"), "{err}");
        #[cfg(unix)]
        {
            // A dangling symlink is the file it will create.
            let link = dir.path().join("link");
            std::os::unix::fs::symlink("new.tsv", &link).unwrap();
            assert!(check_paths(&[], &[("-o", &new), ("--removed", &link)]).is_err());
            let hard = dir.path().join("hard");
            fs::hard_link(&input, &hard).unwrap();
            assert!(check_paths(&[&input], &[("-o", &hard)]).is_err());
            check_paths(
                &[],
                &[("-o", Path::new("/dev/null")), ("--removed", Path::new("/dev/null"))],
            )
            .unwrap();
        }
        // Output::create applies the rule to registered inputs and earlier outputs.
        register_inputs(&[&input]).unwrap();
        assert!(Output::create(&input).is_err());
        let _first = Output::create(&new).unwrap();
        assert!(Output::create(&spelled).is_err());
        assert_eq!(fs::read_to_string(&input).unwrap(), "x\n");
    }

    /// A file named as compressed is refused, creating nothing, unless it is made for the
    /// encoder that compresses it as its name says.
    #[test]
    fn a_compressed_name_is_refused_unless_encoded() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["kept.jsonl.gz", "kept.JSONL.GZ", "pairs.tsv.zst"] {
            let path = dir.path().join(name);
            let err = Output::create_for("--output", &path).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::CompressedName, "{name}");
            let message = err.to_string();
            assert!(
                message.starts_with(&format!("--output {}: named as", path.display())),
                "{message}"
            );
            assert!(names(dir.path()).is_empty(), "{name}: {:?}", names(dir.path()));
        }
        // Made for the encoder (its doctest compresses such a file).
        let path = dir.path().join("part.jsonl.gz");
        Output::create_encoded_for("--output-dir", &path).unwrap().commit().unwrap();
        assert_eq!(names(dir.path()), ["part.jsonl.gz"]);
        // Standard output and plain names are as before.
        Output::create_for("--output", &dir.path().join("kept.jsonl")).unwrap();
    }
}
