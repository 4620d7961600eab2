//! The manifest: the one file that says what the index is (its settings, its generation and
//! its segments with their sizes and checksums). It is replaced atomically: written under
//! a temporary name, synced, renamed over the old one, and the directory synced.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{ErrorKind, Write};
use std::path::Path;

use xxhash_rust::xxh3::xxh3_64;

use super::{DiskError, DiskErrorKind, Settings};

/// The lock file's name in the index directory.
pub(crate) const LOCK: &str = "LOCK";

/// The manifest's file name in the index directory.
pub(crate) const MANIFEST: &str = "MANIFEST";
/// The first line of a manifest, before its version number.
const FIRST_LINE: &str = "simhash-index manifest";
/// The manifest format this library writes (and the newest it reads): version 2, which
/// holds the index's id. Version 1 (no id) is read as it is.
pub(crate) const MANIFEST_VERSION: u32 = 2;

/// A committed state of the index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Manifest {
    pub(crate) generation: u64,
    pub(crate) settings: Settings,
    /// The index's id, in every segment's header (but those of format 1); none in a
    /// version 1 manifest, which the writer never writes.
    pub(crate) index: Option<u128>,
    pub(crate) segments: Vec<SegmentEntry>,
}

/// A segment as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SegmentEntry {
    /// The file name, in the index directory.
    pub(crate) name: String,
    pub(crate) docs: u64,
    pub(crate) bytes: u64,
    /// xxh3 of the whole file.
    pub(crate) checksum: u64,
    /// A segment of format 1 (no index id in its header), written before the index had an
    /// id; every segment of a version 1 manifest is one.
    pub(crate) legacy: bool,
}

impl SegmentEntry {
    /// The index id the segment's header must hold (none: a format 1 segment).
    pub(crate) fn expected_id(&self, manifest: &Manifest) -> Option<u128> {
        if self.legacy { None } else { manifest.index }
    }
}

impl Manifest {
    pub(crate) fn documents(&self) -> u64 {
        self.segments.iter().map(|s| s.docs).sum()
    }

    /// The manifest's text: version 2 (version 1 for a manifest read from a version 1
    /// file, which has no id, so that its size is known).
    pub(crate) fn encode(&self) -> String {
        let mut s = String::new();
        let version = if self.index.is_some() { MANIFEST_VERSION } else { 1 };
        let _ = writeln!(s, "{FIRST_LINE} {version}");
        if let Some(id) = self.index {
            let _ = writeln!(s, "index {id:032x}");
        }
        let _ = writeln!(s, "generation {}", self.generation);
        for (k, v) in self.settings.to_pairs() {
            let _ = writeln!(s, "setting {k} {}", escape(&v));
        }
        let _ = writeln!(s, "documents {}", self.documents());
        for seg in &self.segments {
            let _ = writeln!(
                s,
                "segment {} docs {} bytes {} xxh3 {:016x}",
                seg.name, seg.docs, seg.bytes, seg.checksum
            );
            if seg.legacy && self.index.is_some() {
                s.insert_str(s.len() - 1, " format 1");
            }
        }
        let sum = xxh3_64(s.as_bytes());
        let _ = writeln!(s, "checksum {sum:016x}");
        s
    }

    pub(crate) fn decode(path: &Path, text: &str) -> Result<Manifest, DiskError> {
        let bad = |what: String| DiskError::corrupt(path, what);
        let body_end = text
            .trim_end_matches('\n')
            .rfind('\n')
            .map(|i| i + 1)
            .ok_or_else(|| bad("the manifest is truncated".into()))?;
        let (body, last) = text.split_at(body_end);
        let sum = last
            .strip_prefix("checksum ")
            .and_then(|s| s.strip_suffix('\n'))
            .and_then(parse_hex)
            .ok_or_else(|| bad("the manifest is truncated (no checksum line)".into()))?;
        if xxh3_64(body.as_bytes()) != sum {
            return Err(bad("the manifest does not match its checksum".into()));
        }
        let mut lines = body.lines();
        let version = lines
            .next()
            .and_then(|l| l.strip_prefix(FIRST_LINE))
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| bad("not an index manifest".into()))?;
        if version > MANIFEST_VERSION {
            return Err(DiskError::new(
                DiskErrorKind::Version,
                Some(path),
                format!(
                    "the index is in format version {version}; this library reads versions up to {MANIFEST_VERSION}"
                ),
            ));
        }
        let (mut generation, mut documents, mut index) = (None, None, None);
        // In a version 1 manifest, every segment is of format 1 (no index id).
        let v1 = version < 2;
        let mut pairs = Vec::new();
        let mut segments = Vec::new();
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["generation", g] => generation = g.parse::<u64>().ok(),
                ["index", id] if !v1 => {
                    index =
                        Some(parse_id(id).ok_or_else(|| bad(format!("bad index line {line:?}")))?);
                }
                ["setting", k, v] => pairs.push((
                    (*k).to_string(),
                    unescape(v).ok_or_else(|| bad(format!("bad setting line {line:?}")))?,
                )),
                ["documents", n] => documents = n.parse::<u64>().ok(),
                ["segment", name, "docs", docs, "bytes", bytes, "xxh3", sum, format @ ..]
                    if (v1 && format.is_empty())
                        || (!v1 && matches!(format, [] | ["format", "1"])) =>
                {
                    let entry = (|| {
                        Some(SegmentEntry {
                            name: valid_name(name)?.to_string(),
                            docs: docs.parse().ok()?,
                            bytes: bytes.parse().ok()?,
                            checksum: parse_hex(sum)?,
                            legacy: v1 || !format.is_empty(),
                        })
                    })();
                    segments.push(entry.ok_or_else(|| bad(format!("bad segment line {line:?}")))?);
                }
                ["segment", ..] if !v1 => return Err(bad(format!("bad segment line {line:?}"))),
                // Lines of later minor versions that this version does not need.
                _ => {}
            }
        }
        let generation = generation.ok_or_else(|| bad("the manifest has no generation".into()))?;
        if !v1 && index.is_none() {
            return Err(bad("the manifest has no index id".into()));
        }
        let settings = Settings::from_pairs(&pairs)
            .map_err(|e| bad(format!("the manifest's settings: {e}")))?;
        settings.validate().map_err(|e| bad(format!("the manifest's settings: {e}")))?;
        let manifest = Manifest { generation, settings, index, segments };
        if documents != Some(manifest.documents()) {
            return Err(bad("the manifest's document count does not match its segments".into()));
        }
        Ok(manifest)
    }

    /// The manifest of `dir`, or `None` when there is none.
    pub(crate) fn read(dir: &Path) -> Result<Option<Manifest>, DiskError> {
        let path = dir.join(MANIFEST);
        match fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| DiskError::corrupt(&path, "the manifest is not UTF-8"))?;
                Manifest::decode(&path, &text).map(Some)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DiskError::io(&path, "cannot read the manifest", e)),
        }
    }

    /// Commits this manifest: written new, synced, renamed over the old one, directory
    /// synced. Segment files it lists must already be durable.
    pub(crate) fn write(&self, dir: &Path) -> Result<(), DiskError> {
        let path = dir.join(MANIFEST);
        let tmp = super::file::tmp_path(&path);
        let io = |what: &'static str| {
            let tmp = &tmp;
            move |e| DiskError::io(tmp, what, e)
        };
        let mut file = File::create(&tmp).map_err(io("cannot create the new manifest"))?;
        file.write_all(self.encode().as_bytes()).map_err(io("cannot write the new manifest"))?;
        file.sync_all().map_err(io("cannot sync the new manifest"))?;
        drop(file);
        fs::rename(&tmp, &path)
            .map_err(|e| DiskError::io(&path, "cannot replace the manifest", e))?;
        sync_dir(dir)
    }
}

/// 16 lowercase hex digits, as written (no other spelling of the same number is read).
fn parse_hex(s: &str) -> Option<u64> {
    let canonical =
        s.len() == 16 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    canonical.then(|| u64::from_str_radix(s, 16).ok()).flatten()
}

/// 32 lowercase hex digits, as written.
fn parse_id(s: &str) -> Option<u128> {
    let canonical =
        s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    canonical.then(|| u128::from_str_radix(s, 16).ok()).flatten()
}

/// A new index's id: 128 random bits (the standard library's randomly keyed hasher, over
/// the time, the process id and a counter). It tells the index's segments from another's.
pub(crate) fn new_index_id() -> u128 {
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = (time, std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let state = std::collections::hash_map::RandomState::new;
    let (hi, lo) = (state().hash_one(seed), state().hash_one((seed, 1u8)));
    (u128::from(hi) << 64) | u128::from(lo)
}

/// What a directory without a manifest holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Contents {
    /// It does not exist.
    Missing,
    /// It is empty, or holds only what a creation interrupted before its first manifest
    /// leaves (an empty `LOCK`, a `MANIFEST.tmp`): no data. An index may be made there.
    Nothing,
    /// It holds this file (the first found, by name), or is not a directory: not an index,
    /// or one whose manifest is lost. It is never written into.
    Other(String),
}

/// What `dir` holds, for a directory without a manifest.
pub(crate) fn contents(dir: &Path) -> Result<Contents, DiskError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Contents::Missing),
        Err(e) if e.kind() == ErrorKind::NotADirectory => {
            return Ok(Contents::Other(String::new()));
        }
        Err(e) => return Err(DiskError::io(dir, "cannot list the index directory", e)),
    };
    let mut other = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| DiskError::io(dir, "cannot list the index directory", e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let empty_file = || entry.metadata().is_ok_and(|m| m.is_file() && m.len() == 0);
        let harmless = (name == LOCK && empty_file())
            || (name == format!("{MANIFEST}.tmp") && entry.file_type().is_ok_and(|t| t.is_file()));
        if !harmless {
            other.push(name);
        }
    }
    other.sort();
    Ok(other.into_iter().next().map_or(Contents::Nothing, Contents::Other))
}

/// The error for a directory that holds files and no manifest (`file`: one of them, or
/// empty when `dir` is not a directory).
pub(crate) fn not_an_index(dir: &Path, file: &str) -> DiskError {
    let what = if file.is_empty() {
        "not an index: not a directory".to_string()
    } else {
        format!(
            "not an index, or one whose MANIFEST is lost: the directory holds files ({file} ...) and no MANIFEST; nothing is written to it"
        )
    };
    DiskError::corrupt(dir, what)
}

/// Makes the directory's entries (renames, removals) durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), DiskError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| DiskError::io(dir, "cannot sync the index directory", e))
}

/// A segment name as the writer makes them: `g<generation>-<n>.seg`, nothing that could
/// leave the directory.
fn valid_name(name: &str) -> Option<&str> {
    let ok = name.starts_with('g')
        && name.rsplit_once('.').is_some_and(|(_, ext)| ext == "seg")
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && !name.contains("..");
    ok.then_some(name)
}

/// Whether `name` is a file the writer makes (a segment or a temporary file), so that a
/// writer may remove it when no manifest lists it.
pub(crate) fn is_index_file(name: &str) -> bool {
    let base = name.strip_suffix(".tmp").unwrap_or(name);
    valid_name(base).is_some() || name == format!("{MANIFEST}.tmp")
}

/// Setting values are written with `%`, whitespace and control characters as `%XX`.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if c == '%' || c.is_whitespace() || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    if out.is_empty() { "%".to_string() } else { out }
}

fn unescape(v: &str) -> Option<String> {
    if v == "%" {
        return Some(String::new());
    }
    let mut bytes = Vec::with_capacity(v.len());
    let mut it = v.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hex = [it.next()?, it.next()?];
            bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            bytes.push(b);
        }
    }
    String::from_utf8(bytes).ok()
}
