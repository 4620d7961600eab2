//! Output files written whole or not at all: a temporary file beside the target, renamed
//! over it only when everything was written.
//!
//! Targets that are not regular files (`/dev/null`, `/dev/stdout`, a FIFO, `/dev/fd/N`) are
//! written directly: renaming over them would replace a device or pipe with a file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

/// Temporary files not yet renamed into place, removed if the run is interrupted. (An
/// output dropped without a commit has already removed its own; removing it again is
/// harmless.)
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the temporary files of outputs still being written: for the Ctrl-C handler.
pub fn remove_pending() {
    if let Ok(paths) = PENDING.lock() {
        for path in paths.iter() {
            let _ = fs::remove_file(path);
        }
    }
}

fn forget_pending(path: &Path) {
    if let Ok(mut paths) = PENDING.lock() {
        paths.retain(|p| p != path);
    }
}

pub struct Output {
    kind: Kind,
}

enum Kind {
    Stdout(BufWriter<io::Stdout>),
    /// A device, pipe or other non-regular file.
    Direct {
        writer: BufWriter<File>,
        target: PathBuf,
    },
    Temp {
        writer: BufWriter<tempfile::NamedTempFile>,
        target: PathBuf,
    },
}

impl Output {
    /// `-` is standard output; a regular file (or a new one) is written to a temporary file
    /// in the same directory and renamed on [`Output::commit`] (dropped without a commit, the
    /// temporary file is removed and the target is left as it was); anything else is
    /// written directly.
    pub fn create(path: &Path) -> anyhow::Result<Output> {
        if path == Path::new("-") {
            let stdout = io::stdout();
            // Line-buffered output to a terminal shows results as they come.
            let capacity = if stdout.is_terminal() { 1 << 10 } else { 1 << 16 };
            return Ok(Output { kind: Kind::Stdout(BufWriter::with_capacity(capacity, stdout)) });
        }
        let shown = path.display();
        // Follow symlinks: the file they point to is the one to replace.
        let (target, existing) = match fs::metadata(path) {
            Ok(meta) if !meta.is_file() => {
                if meta.is_dir() {
                    anyhow::bail!("{shown}: is a directory");
                }
                let file = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(|| format!("{shown}: cannot open for writing"))?;
                return Ok(Output {
                    kind: Kind::Direct {
                        writer: BufWriter::with_capacity(1 << 16, file),
                        target: path.to_path_buf(),
                    },
                });
            }
            Ok(meta) => (
                fs::canonicalize(path).with_context(|| format!("{shown}: cannot resolve"))?,
                Some(meta.permissions()),
            ),
            Err(_) => (path.to_path_buf(), None),
        };
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let prefix = format!(".{name}.");
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
        let temp = builder
            .tempfile_in(dir)
            .with_context(|| format!("{shown}: cannot create output file"))?;
        if let Ok(mut paths) = PENDING.lock() {
            paths.push(temp.path().to_path_buf());
        }
        Ok(Output { kind: Kind::Temp { writer: BufWriter::with_capacity(1 << 16, temp), target } })
    }

    /// Flushes and, for a temporary file, moves it into place.
    pub fn commit(self) -> anyhow::Result<()> {
        match self.kind {
            Kind::Stdout(mut w) => w.flush().context("cannot write to standard output"),
            Kind::Direct { mut writer, target } => {
                writer.flush().with_context(|| format!("{}: cannot write", target.display()))
            }
            Kind::Temp { writer, target } => {
                let shown = target.display();
                let temp = writer
                    .into_inner()
                    .map_err(io::IntoInnerError::into_error)
                    .with_context(|| format!("{shown}: cannot write"))?;
                temp.as_file().sync_all().with_context(|| format!("{shown}: cannot write"))?;
                let temp_path = temp.path().to_path_buf();
                temp.persist(&target).map_err(|e| e.error).with_context(|| {
                    format!("{shown}: cannot move the finished file into place")
                })?;
                forget_pending(&temp_path);
                Ok(())
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.kind {
            Kind::Stdout(w) => w.write(buf),
            Kind::Direct { writer, .. } => writer.write(buf),
            Kind::Temp { writer, .. } => writer.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.kind {
            Kind::Stdout(w) => w.write_all(buf),
            Kind::Direct { writer, .. } => writer.write_all(buf),
            Kind::Temp { writer, .. } => writer.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.kind {
            Kind::Stdout(w) => w.flush(),
            Kind::Direct { writer, .. } => writer.flush(),
            Kind::Temp { writer, .. } => writer.flush(),
        }
    }
}
