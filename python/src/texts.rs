//! A chunk of texts copied out of Python objects, so that the work on them can run with the
//! GIL released: from a sequence of `str`, or from the buffers of an Arrow string array.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use rayon::prelude::*;

/// Texts in one buffer: text `i` is `data[ends[i - 1]..ends[i]]`.
#[derive(Debug, Default)]
pub(crate) struct Texts {
    data: String,
    ends: Vec<usize>,
}

impl Texts {
    /// The number of texts.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Text `i`.
    pub(crate) fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    /// The texts in parallel, in order.
    pub(crate) fn par_iter(&self) -> impl IndexedParallelIterator<Item = &str> + '_ {
        (0..self.len()).into_par_iter().map(move |i| self.get(i))
    }

    /// A chunk from Python: a list (or any iterable) of `str`, or the Arrow parts
    /// `(offsets: bytes, data: bytes | None, offset: int, length: int, large: bool)` of a
    /// string array (`large`: 64-bit offsets). `start` is the chunk's first position in
    /// the whole input, for messages.
    pub(crate) fn from_py(chunk: &Bound<'_, PyAny>, start: usize) -> PyResult<Texts> {
        if let Ok(parts) = chunk.cast::<PyTuple>()
            && parts.len() == 5
        {
            return Texts::from_arrow(parts, start);
        }
        let mut texts = Texts::default();
        if let Ok(list) = chunk.cast::<PyList>() {
            texts.ends.reserve(list.len());
            for (i, item) in list.iter().enumerate() {
                texts.push(&item, start + i)?;
            }
        } else {
            for (i, item) in chunk.try_iter()?.enumerate() {
                texts.push(&item?, start + i)?;
            }
        }
        Ok(texts)
    }

    fn push(&mut self, item: &Bound<'_, PyAny>, position: usize) -> PyResult<()> {
        let Ok(text) = item.cast::<PyString>() else {
            let kind = item.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
            return Err(PyTypeError::new_err(format!("texts[{position}] is {kind}, not str")));
        };
        self.data.push_str(&text.to_cow()?);
        self.ends.push(self.data.len());
        Ok(())
    }

    /// Texts `offset..offset + length` of an Arrow string array, checked: the offsets
    /// within the data and ascending, and each text valid UTF-8.
    fn from_arrow(parts: &Bound<'_, PyTuple>, start: usize) -> PyResult<Texts> {
        let offsets = parts.get_item(0)?;
        let offsets = offsets.cast::<PyBytes>()?.as_bytes();
        let data_item = parts.get_item(1)?;
        let data: &[u8] =
            if data_item.is_none() { &[] } else { data_item.cast::<PyBytes>()?.as_bytes() };
        let offset: usize = parts.get_item(2)?.extract()?;
        let length: usize = parts.get_item(3)?.extract()?;
        let large: bool = parts.get_item(4)?.extract()?;
        let width = if large { 8 } else { 4 };
        let bad =
            |what: String| PyValueError::new_err(format!("invalid Arrow string array: {what}"));
        let need = offset
            .checked_add(length)
            .and_then(|n| n.checked_add(1))
            .and_then(|n| n.checked_mul(width))
            .ok_or_else(|| bad("offset and length overflow".into()))?;
        if offsets.len() < need {
            return Err(bad(format!(
                "{} bytes of offsets for {length} texts from {offset}",
                offsets.len()
            )));
        }
        let at = |i: usize| -> PyResult<usize> {
            let b = &offsets[(offset + i) * width..(offset + i + 1) * width];
            let value = if large {
                i64::from_le_bytes(b.try_into().unwrap_or_default())
            } else {
                i64::from(i32::from_le_bytes(b.try_into().unwrap_or_default()))
            };
            usize::try_from(value).map_err(|_| bad(format!("negative offset {value}")))
        };
        let first = at(0)?;
        let mut ends = Vec::with_capacity(length);
        let mut previous = first;
        for i in 1..=length {
            let end = at(i)?;
            if end < previous || end > data.len() {
                return Err(bad(format!(
                    "text {} ends at {end}, outside {previous}..={}",
                    start + i - 1,
                    data.len()
                )));
            }
            ends.push(end - first);
            previous = end;
        }
        let bytes = &data[first..previous];
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let at = first + e.valid_up_to();
            let text = ends.partition_point(|&end| end + first <= at);
            PyValueError::new_err(format!("texts[{}] is not valid UTF-8", start + text))
        })?;
        if let Some(i) = ends.iter().position(|&end| !text.is_char_boundary(end)) {
            return Err(PyValueError::new_err(format!(
                "texts[{}] does not end on a character boundary",
                start + i
            )));
        }
        Ok(Texts { data: text.to_owned(), ends })
    }
}
