//! Output files written whole or not at all: a temporary file beside the target, renamed
//! over it only when everything was written.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

pub struct Output {
    kind: Kind,
}

enum Kind {
    Stdout(BufWriter<io::Stdout>),
    File { writer: BufWriter<tempfile::NamedTempFile>, target: PathBuf },
}

impl Output {
    /// `-` is standard output; anything else is written to a temporary file in the same
    /// directory and renamed on [`Output::commit`]. Dropped without a commit, the temporary
    /// file is removed and the target is left as it was.
    pub fn create(path: &Path) -> anyhow::Result<Output> {
        if path == Path::new("-") {
            let stdout = io::stdout();
            // Line-buffered output to a terminal shows results as they come.
            let capacity = if stdout.is_terminal() { 1 << 10 } else { 1 << 16 };
            return Ok(Output { kind: Kind::Stdout(BufWriter::with_capacity(capacity, stdout)) });
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .with_context(|| format!("{}: cannot create output file", path.display()))?;
        Ok(Output {
            kind: Kind::File {
                writer: BufWriter::with_capacity(1 << 16, temp),
                target: path.to_path_buf(),
            },
        })
    }

    /// Flushes and, for a file, moves it into place.
    pub fn commit(self) -> anyhow::Result<()> {
        match self.kind {
            Kind::Stdout(mut w) => w.flush().context("cannot write to standard output"),
            Kind::File { writer, target } => {
                let temp = writer
                    .into_inner()
                    .map_err(io::IntoInnerError::into_error)
                    .with_context(|| format!("{}: cannot write", target.display()))?;
                temp.as_file()
                    .sync_all()
                    .with_context(|| format!("{}: cannot write", target.display()))?;
                temp.persist(&target).map_err(|e| e.error).with_context(|| {
                    format!("{}: cannot move the finished file into place", target.display())
                })?;
                Ok(())
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.kind {
            Kind::Stdout(w) => w.write(buf),
            Kind::File { writer, .. } => writer.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.kind {
            Kind::Stdout(w) => w.write_all(buf),
            Kind::File { writer, .. } => writer.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.kind {
            Kind::Stdout(w) => w.flush(),
            Kind::File { writer, .. } => writer.flush(),
        }
    }
}
