//! The segment container: a fixed header, 8-aligned sections, a checksum per 64 KiB block
//! and a footer that locates everything, so that opening a file reads two small pieces and
//! every byte handed out has been checked against its block's checksum first.
//!
//! ```text
//! header (64 bytes) | sections ... | block checksums (u64 each) | footer
//! ```
//! `docs/index-format.md` has the byte layout.

use std::fs::{self, File};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::Mmap;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

use super::DiskError;

/// The first bytes of a segment file.
pub(crate) const MAGIC: &[u8; 8] = b"SHIXSEG\0";
/// The last bytes of a segment file.
pub(crate) const MAGIC_END: &[u8; 8] = b"SHIXEND\0";
/// The segment format this library writes: version 2, whose header holds the index's id.
/// It also reads version 1 (no id), the segments of indexes written before.
pub(crate) const SEGMENT_VERSION: u32 = 2;
/// Bytes covered by one block checksum.
pub(crate) const BLOCK: usize = 64 << 10;
/// The header's length in version 1 (no index id); the checksum is at 56.
const HEADER_V1: usize = 64;
/// The header's length in version 2: the index id at 56, the checksum at 72.
const HEADER_V2: usize = 80;
/// Footer bytes after the section directory.
const FOOTER_TAIL: usize = 48;

/// What the header says: every count needed to check the sections' lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) kind: u32,
    pub(crate) docs: u64,
    pub(crate) columns: u32,
    pub(crate) key_bytes: u32,
    pub(crate) sections: u32,
    /// Documents with a payload: the length of each column.
    pub(crate) entries: u64,
    /// Payload values of all documents.
    pub(crate) values: u64,
    /// The id of the index the segment belongs to; none in a version 1 segment (which
    /// this library reads but never writes).
    pub(crate) index: Option<u128>,
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let (version, len) = match self.index {
            Some(_) => (SEGMENT_VERSION, HEADER_V2),
            None => (1, HEADER_V1),
        };
        let mut h = vec![0u8; len];
        h[0..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&version.to_le_bytes());
        h[12..16].copy_from_slice(&self.kind.to_le_bytes());
        h[16..24].copy_from_slice(&self.docs.to_le_bytes());
        h[24..28].copy_from_slice(&self.columns.to_le_bytes());
        h[28..32].copy_from_slice(&self.key_bytes.to_le_bytes());
        h[32..36].copy_from_slice(&(BLOCK as u32).to_le_bytes());
        h[36..40].copy_from_slice(&self.sections.to_le_bytes());
        h[40..48].copy_from_slice(&self.entries.to_le_bytes());
        h[48..56].copy_from_slice(&self.values.to_le_bytes());
        if let Some(id) = self.index {
            h[56..72].copy_from_slice(&id.to_le_bytes());
        }
        let sum = xxh3_64(&h[..len - 8]);
        h[len - 8..].copy_from_slice(&sum.to_le_bytes());
        h
    }

    /// The header's length in the file.
    fn len(&self) -> usize {
        if self.index.is_some() { HEADER_V2 } else { HEADER_V1 }
    }
}

/// What a finished segment file is: its size and the checksum of all its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) bytes: u64,
    pub(crate) checksum: u64,
}

/// Writes a segment to a temporary file, section by section, then renames it into place.
pub(crate) struct FileWriter {
    file: File,
    tmp: PathBuf,
    path: PathBuf,
    /// The block being filled (written to the file when full).
    block: Vec<u8>,
    pos: u64,
    block_sums: Vec<u64>,
    whole: Xxh3Default,
    sections: Vec<(u64, u64)>,
    open_section: Option<u64>,
    expected_sections: u32,
}

impl FileWriter {
    /// Starts `path` (written as `path.tmp` until [`finish`](FileWriter::finish)).
    pub(crate) fn create(path: &Path, header: &Header) -> Result<FileWriter, DiskError> {
        let tmp = tmp_path(path);
        let file = File::create(&tmp)
            .map_err(|e| DiskError::io(&tmp, "cannot create a segment file", e))?;
        let mut w = FileWriter {
            file,
            tmp,
            path: path.to_path_buf(),
            block: Vec::with_capacity(BLOCK),
            pos: 0,
            block_sums: Vec::new(),
            whole: Xxh3Default::new(),
            sections: Vec::new(),
            open_section: None,
            expected_sections: header.sections,
        };
        w.write(&header.encode())?;
        Ok(w)
    }

    /// Appends bytes to the open section.
    pub(crate) fn write(&mut self, mut bytes: &[u8]) -> Result<(), DiskError> {
        while !bytes.is_empty() {
            let take = bytes.len().min(BLOCK - self.block.len());
            self.block.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            self.pos += take as u64;
            if self.block.len() == BLOCK {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<(), DiskError> {
        if self.block.is_empty() {
            return Ok(());
        }
        self.block_sums.push(xxh3_64(&self.block));
        let mut block = std::mem::take(&mut self.block);
        self.raw(&block)?;
        block.clear();
        self.block = block;
        Ok(())
    }

    /// Writes bytes outside the checksummed blocks (the table and the footer).
    fn raw(&mut self, bytes: &[u8]) -> Result<(), DiskError> {
        self.whole.update(bytes);
        self.file
            .write_all(bytes)
            .map_err(|e| DiskError::io(&self.tmp, "cannot write a segment file", e))
    }

    fn pad(&mut self) -> Result<(), DiskError> {
        let pad = (8 - (self.pos % 8) as usize) % 8;
        self.write(&[0u8; 8][..pad])
    }

    /// Starts the next section (8-aligned).
    pub(crate) fn begin(&mut self) -> Result<(), DiskError> {
        assert!(self.open_section.is_none(), "a section is open");
        self.pad()?;
        self.open_section = Some(self.pos);
        Ok(())
    }

    /// Ends the open section.
    pub(crate) fn end(&mut self) {
        let start = self.open_section.take().expect("no section is open");
        self.sections.push((start, self.pos - start));
    }

    /// Writes the block checksums and the footer, syncs the file and renames it into
    /// place (the directory is synced by the commit that lists it).
    pub(crate) fn finish(mut self) -> Result<Written, DiskError> {
        assert!(self.open_section.is_none(), "a section is open");
        assert_eq!(self.sections.len(), self.expected_sections as usize, "section count");
        self.pad()?;
        let body_end = self.pos;
        self.flush_block()?;
        let table: Vec<u8> = self.block_sums.iter().flat_map(|s| s.to_le_bytes()).collect();
        self.raw(&table)?;
        let mut footer = Vec::with_capacity(self.sections.len() * 16 + FOOTER_TAIL);
        for &(start, len) in &self.sections {
            footer.extend_from_slice(&start.to_le_bytes());
            footer.extend_from_slice(&len.to_le_bytes());
        }
        let file_len =
            body_end + table.len() as u64 + (self.sections.len() * 16 + FOOTER_TAIL) as u64;
        footer.extend_from_slice(&body_end.to_le_bytes());
        footer.extend_from_slice(&(self.block_sums.len() as u64).to_le_bytes());
        footer.extend_from_slice(&xxh3_64(&table).to_le_bytes());
        footer.extend_from_slice(&file_len.to_le_bytes());
        let sum = xxh3_64(&footer);
        footer.extend_from_slice(&sum.to_le_bytes());
        footer.extend_from_slice(MAGIC_END);
        self.raw(&footer)?;
        let tmp = self.tmp.clone();
        self.file.sync_all().map_err(|e| DiskError::io(&tmp, "cannot sync a segment file", e))?;
        fs::rename(&tmp, &self.path)
            .map_err(|e| DiskError::io(&self.path, "cannot rename a segment file into place", e))?;
        Ok(Written { bytes: file_len, checksum: self.whole.digest() })
    }
}

impl Drop for FileWriter {
    /// A segment left unfinished (an error, a panic) is removed.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.tmp);
    }
}

/// `path` with `.tmp` appended: the name a file is written under until it is complete.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// An open segment file: mapped, its header and footer checked; blocks are checked the
/// first time they are read.
#[derive(Debug)]
pub(crate) struct FileReader {
    path: PathBuf,
    map: Mmap,
    pub(crate) header: Header,
    sections: Vec<Range<usize>>,
    body_end: usize,
    table: Range<usize>,
    table_ok: OnceLock<bool>,
    verified: Box<[AtomicU64]>,
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl FileReader {
    /// Opens and maps `path`, which the manifest says is `bytes` long, and checks its header
    /// and footer (not its blocks).
    pub(crate) fn open(path: &Path, bytes: u64) -> Result<FileReader, DiskError> {
        let file =
            File::open(path).map_err(|e| DiskError::io(path, "cannot open a segment file", e))?;
        let len = file
            .metadata()
            .map_err(|e| DiskError::io(path, "cannot read a segment file's size", e))?
            .len();
        if len != bytes {
            return Err(DiskError::corrupt(
                path,
                format!("the segment file is {len} bytes long, the manifest says {bytes}"),
            ));
        }
        if len < (HEADER_V1 + FOOTER_TAIL) as u64 {
            return Err(DiskError::corrupt(path, "the segment file is too short"));
        }
        // SAFETY: segment files are written once under a temporary name and renamed into
        // place; the index never opens them for writing again, so the mapped bytes do not
        // change while mapped (another program changing them is detected by the checksums
        // for the bytes read first, and is outside what the index promises).
        let map = unsafe { Mmap::map(&file) }
            .map_err(|e| DiskError::io(path, "cannot map a segment file", e))?;
        let header = parse_header(path, &map)?;
        let (sections, body_end, table) = parse_footer(path, &map, &header)?;
        let blocks = body_end.div_ceil(BLOCK);
        let verified = (0..blocks.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        Ok(FileReader {
            path: path.to_path_buf(),
            map,
            header,
            sections,
            body_end,
            table,
            table_ok: OnceLock::new(),
            verified,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The byte range of section `i`.
    pub(crate) fn section(&self, i: usize) -> Range<usize> {
        self.sections[i].clone()
    }

    /// The bytes at `range`, after checking every block they touch.
    pub(crate) fn bytes(&self, range: Range<usize>) -> Result<&[u8], DiskError> {
        if range.start > range.end || range.end > self.body_end {
            return Err(DiskError::corrupt(
                &self.path,
                format!("a read of bytes {range:?} past the data ({} bytes)", self.body_end),
            ));
        }
        if range.is_empty() {
            return Ok(&[]);
        }
        for b in range.start / BLOCK..=(range.end - 1) / BLOCK {
            let (word, bit) = (b / 64, 1u64 << (b % 64));
            if self.verified[word].load(Ordering::Relaxed) & bit == 0 {
                self.check_block(b)?;
                self.verified[word].fetch_or(bit, Ordering::Relaxed);
            }
        }
        Ok(&self.map[range])
    }

    fn check_block(&self, b: usize) -> Result<(), DiskError> {
        let table_ok = *self.table_ok.get_or_init(|| {
            xxh3_64(&self.map[self.table.clone()])
                == le64(&self.map, self.footer_at() + self.sections.len() * 16 + 16)
        });
        if !table_ok {
            return Err(DiskError::corrupt(
                &self.path,
                "the block checksum table does not match its checksum",
            ));
        }
        let range = b * BLOCK..((b + 1) * BLOCK).min(self.body_end);
        let want = le64(&self.map, self.table.start + 8 * b);
        if xxh3_64(&self.map[range.clone()]) != want {
            return Err(DiskError::corrupt(
                &self.path,
                format!("checksum mismatch in block {b} (bytes {}..{})", range.start, range.end),
            ));
        }
        Ok(())
    }

    fn footer_at(&self) -> usize {
        self.map.len() - (self.sections.len() * 16 + FOOTER_TAIL)
    }

    /// The checksum of the whole file, as the manifest records it.
    pub(crate) fn whole_checksum(&self) -> u64 {
        xxh3_64(&self.map)
    }

    /// Checks every block (`verify`).
    pub(crate) fn check_all_blocks(&self) -> Result<(), DiskError> {
        self.bytes(0..self.body_end).map(|_| ())
    }

    /// Reads the little-endian `u64` at `i` of section `s`.
    pub(crate) fn u64_at(&self, s: usize, i: usize) -> Result<u64, DiskError> {
        let at = self.sections[s].start + 8 * i;
        Ok(le64(self.bytes(at..at + 8)?, 0))
    }

    /// Reads record `i` of section `s`: `kb` (4 or 8) bytes of key, then a `u32`.
    pub(crate) fn entry(&self, s: usize, i: usize, kb: usize) -> Result<(u64, u32), DiskError> {
        let size = kb + 4;
        let at = self.sections[s].start + size * i;
        let b = self.bytes(at..at + size)?;
        let key = if kb == 4 { u64::from(le32(b, 0)) } else { le64(b, 0) };
        Ok((key, le32(b, kb)))
    }

    /// The key of record `i` of section `s` (records of `kb` bytes of key and a `u32`).
    pub(crate) fn key(&self, s: usize, i: usize, kb: usize) -> Result<u64, DiskError> {
        let at = self.sections[s].start + (kb + 4) * i;
        let b = self.bytes(at..at + kb)?;
        Ok(if kb == 4 { u64::from(le32(b, 0)) } else { le64(b, 0) })
    }
}

fn parse_header(path: &Path, map: &[u8]) -> Result<Header, DiskError> {
    if &map[0..8] != MAGIC {
        return Err(DiskError::corrupt(path, "not a segment file (bad magic bytes)"));
    }
    // The version says how long the header is; its checksum then covers the version.
    let version = le32(map, 8);
    let sum_ok = |len: usize| map.len() >= len && xxh3_64(&map[..len - 8]) == le64(map, len - 8);
    let len = match version {
        1 => HEADER_V1,
        SEGMENT_VERSION => HEADER_V2,
        _ if sum_ok(HEADER_V1) || sum_ok(HEADER_V2) => {
            return Err(DiskError::new(
                super::DiskErrorKind::Version,
                Some(path),
                format!(
                    "segment format version {version}; this library reads versions 1 to {SEGMENT_VERSION}"
                ),
            ));
        }
        _ => {
            return Err(DiskError::corrupt(path, "the segment header does not match its checksum"));
        }
    };
    if !sum_ok(len) {
        return Err(DiskError::corrupt(path, "the segment header does not match its checksum"));
    }
    let h = &map[..len];
    if le32(h, 32) as usize != BLOCK {
        return Err(DiskError::corrupt(path, "unsupported block size"));
    }
    let index =
        (len == HEADER_V2).then(|| u128::from_le_bytes(h[56..72].try_into().expect("16 bytes")));
    Ok(Header {
        kind: le32(h, 12),
        docs: le64(h, 16),
        columns: le32(h, 24),
        key_bytes: le32(h, 28),
        sections: le32(h, 36),
        entries: le64(h, 40),
        values: le64(h, 48),
        index,
    })
}

type Layout = (Vec<Range<usize>>, usize, Range<usize>);

fn parse_footer(path: &Path, map: &[u8], header: &Header) -> Result<Layout, DiskError> {
    let bad = |what: &str| Err(DiskError::corrupt(path, what.to_string()));
    let footer_len = (header.sections as usize).checked_mul(16).map(|n| n + FOOTER_TAIL);
    let header_len = header.len();
    let Some(footer_len) = footer_len.filter(|&n| n + header_len <= map.len()) else {
        return bad("the footer does not fit in the file");
    };
    let at = map.len() - footer_len;
    let footer = &map[at..];
    if &footer[footer_len - 8..] != MAGIC_END {
        return bad("the segment file is truncated (no end marker)");
    }
    if xxh3_64(&footer[..footer_len - 16]) != le64(footer, footer_len - 16) {
        return bad("the segment footer does not match its checksum");
    }
    let tail = header.sections as usize * 16;
    let body_end = le64(footer, tail) as usize;
    let blocks = le64(footer, tail + 8) as usize;
    let file_len = le64(footer, tail + 24) as usize;
    if file_len != map.len()
        || body_end < header_len
        || body_end.div_ceil(BLOCK) != blocks
        || body_end.checked_add(blocks * 8) != Some(at)
    {
        return bad("the segment footer's lengths do not match the file");
    }
    let mut sections = Vec::with_capacity(header.sections as usize);
    for i in 0..header.sections as usize {
        let (start, len) = (le64(footer, 16 * i) as usize, le64(footer, 16 * i + 8) as usize);
        if start < header_len
            || start % 8 != 0
            || start.checked_add(len).is_none_or(|end| end > body_end)
        {
            return bad("a section lies outside the file's data");
        }
        sections.push(start..start + len);
    }
    Ok((sections, body_end, body_end..at))
}
