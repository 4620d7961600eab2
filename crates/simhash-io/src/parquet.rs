//! Parquet inputs: the text and id columns of each row, a batch of rows at a time, and the
//! rows a run keeps, copied to a Parquet output with the input's schema and compression (or
//! another codec: [`ParquetCompression`]).

use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Fields, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};

use crate::error::{Error, ErrorKind};
use crate::parquet_compression::ParquetCompression;
use crate::problem::{Problem, Reason};
use crate::record::{Columns, Id, IdValue, check_id};

/// Rows read at a time.
const BATCH_ROWS: usize = 4096;

/// Whether `path` names a Parquet file (`.parquet`, in any case).
///
/// ```
/// use std::path::Path;
/// assert!(simhash_io::is_parquet(Path::new("shard-00001.PARQUET")));
/// assert!(!simhash_io::is_parquet(Path::new("shard.jsonl")));
/// ```
pub fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

fn bad(name: &str, message: impl std::fmt::Display) -> Error {
    Error::msg(ErrorKind::BadParquet, format!("{name}: {message}"))
}

/// The rows of a Parquet file: only its text and id columns (dotted paths into structs,
/// as [`Columns`] names them), read a batch of rows at a time, so that memory holds one
/// batch, whatever the file's size.
///
/// The text column must hold strings (Arrow `Utf8`, `LargeUtf8` or `Utf8View`, or a
/// dictionary of them); the id column strings or integers (an integer id is numeric, like
/// a JSON number), or a dictionary of them. A file
/// without the id column has no ids (each row gets its 0-based row number in the run's
/// inputs, like a JSONL record without one). A file without the text column, or with
/// columns of other types, is an [`ErrorKind::BadParquet`] error naming it, as is a file
/// that is not Parquet (or is truncated).
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
/// use simhash_io::{Columns, ParquetRows};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("part.parquet");
/// let batch = RecordBatch::try_from_iter([
///     ("id", Arc::new(Int64Array::from(vec![7, 8])) as ArrayRef),
///     ("text", Arc::new(StringArray::from(vec![Some("hello"), None])) as ArrayRef),
/// ])?;
/// let mut writer = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path)?, batch.schema(), None)?;
/// writer.write(&batch)?;
/// writer.close()?;
///
/// let mut rows = ParquetRows::open(&path, &Columns::new("text", "id"))?;
/// let batch = rows.next_batch()?.unwrap();
/// assert_eq!(batch.len(), 2);
/// assert_eq!(batch.text(0)?, "hello");
/// assert_eq!(batch.id(0)?.unwrap().text, "7");
/// assert_eq!(batch.text(1).unwrap_err().message, "text column \"text\" is null, not a string");
/// assert!(rows.next_batch()?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ParquetRows {
    name: String,
    reader: ParquetRecordBatchReader,
    text: Vec<String>,
    text_name: String,
    /// `None` when the file has no id column.
    id: Option<Vec<String>>,
    id_name: String,
    /// Rows returned so far.
    rows: u64,
    /// Rows in the file (its footer says).
    total: u64,
}

impl std::fmt::Debug for ParquetRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetRows")
            .field("name", &self.name)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

/// Opens a Parquet file and reads its footer.
fn builder(path: &Path) -> Result<(String, ParquetRecordBatchReaderBuilder<File>), Error> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| Error::io(format!("{name}: cannot open"), e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| bad(&name, format_args!("not a readable Parquet file: {e}")))?;
    Ok((name, builder))
}

/// `fields` with each string field (`Utf8`, `LargeUtf8`, also inside structs) read as
/// `Utf8View`: the reader then points into the decompressed pages instead of copying each
/// value.
fn view_fields(fields: &Fields) -> Fields {
    fields
        .iter()
        .map(|f| {
            let t = match f.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
                DataType::Struct(children) => DataType::Struct(view_fields(children)),
                t => t.clone(),
            };
            std::sync::Arc::new(f.as_ref().clone().with_data_type(t))
        })
        .collect()
}

/// Opens a Parquet file to read its strings as views (see [`view_fields`]); also returns
/// the file's own Arrow schema.
fn view_builder(
    path: &Path,
) -> Result<(String, ParquetRecordBatchReaderBuilder<File>, SchemaRef), Error> {
    use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| Error::io(format!("{name}: cannot open"), e))?;
    let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
        .map_err(|e| bad(&name, format_args!("not a readable Parquet file: {e}")))?;
    let schema = meta.schema().clone();
    let view = std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
        view_fields(schema.fields()),
        schema.metadata().clone(),
    ));
    let meta = ArrowReaderMetadata::try_new(
        meta.metadata().clone(),
        ArrowReaderOptions::new().with_schema(view),
    )
    .map_err(|e| bad(&name, format_args!("cannot read its strings: {e}")))?;
    Ok((name, ParquetRecordBatchReaderBuilder::new_with_metadata(file, meta), schema))
}

impl ParquetRows {
    /// Opens `path` to read the text and id columns of `columns`.
    pub fn open(path: &Path, columns: &Columns) -> Result<ParquetRows, Error> {
        let (name, builder, schema) = view_builder(path)?;
        // Two columns of one name: which one is the text (or the id) is anyone's guess, and
        // reading the first silently decided for the user.
        for (path, shown) in [(&columns.text, &columns.text_name), (&columns.id, &columns.id_name)]
        {
            if let Some(count) = repeated(schema.fields(), path) {
                return Err(bad(
                    &name,
                    format_args!(
                        "column {shown:?} appears {count} times: refusing to guess which one \
                         to read (rename the others)"
                    ),
                ));
            }
        }
        let text_type = field_type(schema.fields(), &columns.text).ok_or_else(|| {
            bad(
                &name,
                format_args!(
                    "no column {:?} (columns: {})",
                    columns.text_name,
                    leaf_names(&builder)
                ),
            )
        })?;
        if !is_string(values_type(&text_type)) {
            return Err(bad(
                &name,
                format_args!("column {:?} is {text_type}, not a string", columns.text_name),
            ));
        }
        let id_type = field_type(schema.fields(), &columns.id);
        if let Some(t) = &id_type
            && !is_string(values_type(t))
            && !values_type(t).is_integer()
        {
            return Err(bad(
                &name,
                format_args!("column {:?} is {t}, not a string or integer", columns.id_name),
            ));
        }
        let wanted = [Some(&columns.text), id_type.as_ref().map(|_| &columns.id)];
        let total = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
        let descr = builder.parquet_schema();
        let leaves = descr.columns().iter().enumerate().filter(|(_, c)| {
            let parts = c.path().parts();
            wanted.iter().flatten().any(|w| parts.starts_with(w))
        });
        let mask = ProjectionMask::leaves(descr, leaves.map(|(i, _)| i).collect::<Vec<_>>());
        let reader = builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| bad(&name, format_args!("cannot read: {e}")))?;
        Ok(ParquetRows {
            name,
            reader,
            text: columns.text.clone(),
            text_name: columns.text_name.clone(),
            id: id_type.map(|_| columns.id.clone()),
            id_name: columns.id_name.clone(),
            rows: 0,
            total,
        })
    }

    /// Rows in the file, as its footer says.
    pub fn total_rows(&self) -> u64 {
        self.total
    }

    /// Rows returned so far.
    pub fn rows_read(&self) -> u64 {
        self.rows
    }

    /// The next batch of rows; `None` at the end of the file.
    pub fn next_batch(&mut self) -> Result<Option<RowBatch>, Error> {
        let Some(batch) = self.reader.next() else { return Ok(None) };
        let batch = batch
            .map_err(|e| bad(&self.name, format_args!("row {}: read error: {e}", self.rows + 1)))?;
        self.rows += batch.num_rows() as u64;
        let text = Column::at(&batch, &self.text)
            .ok_or_else(|| bad(&self.name, "text column missing from a batch"))?;
        let id = self.id.as_ref().and_then(|path| Column::at(&batch, path));
        Ok(Some(RowBatch {
            len: batch.num_rows(),
            text,
            text_name: self.text_name.clone(),
            id,
            id_name: self.id_name.clone(),
        }))
    }
}

/// The names of a file's leaf columns, for a message.
fn leaf_names<T>(builder: &parquet::arrow::arrow_reader::ArrowReaderBuilder<T>) -> String {
    let names: Vec<String> =
        builder.parquet_schema().columns().iter().map(|c| c.path().string()).collect();
    names.join(", ")
}

/// How many fields the last step of `path` (through structs) names, when more than one: at
/// any step, the fields of that name at that level.
fn repeated(fields: &Fields, path: &[String]) -> Option<usize> {
    let (first, rest) = path.split_first()?;
    let mut named = fields.iter().filter(|f| f.name() == first);
    let field = named.next()?;
    let count = 1 + named.count();
    if count > 1 {
        return Some(count);
    }
    match field.data_type() {
        DataType::Struct(children) if !rest.is_empty() => repeated(children, rest),
        _ => None,
    }
}

/// The type of the field at `path` (through structs).
fn field_type(fields: &Fields, path: &[String]) -> Option<DataType> {
    let (first, rest) = path.split_first()?;
    let field = fields.iter().find(|f| f.name() == first)?;
    match (rest.is_empty(), field.data_type()) {
        (true, t) => Some(t.clone()),
        (false, DataType::Struct(children)) => field_type(children, rest),
        _ => None,
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The type of a column's values: a dictionary's value type, or the type itself.
fn values_type(t: &DataType) -> &DataType {
    match t {
        DataType::Dictionary(_, values) => values,
        t => t,
    }
}

/// A column of a batch at a dotted path, with the structs above it (whose nulls are its).
/// A dictionary-encoded column is read through its keys.
struct Column {
    /// The array at the path (for a dictionary, its keys and their nulls).
    leaf: ArrayRef,
    /// The strings or integers: `leaf` itself, or a dictionary's values.
    values: ArrayRef,
    /// A dictionary's keys as indexes into `values` (none when `values` is empty: every
    /// row is null).
    keys: Option<Vec<usize>>,
    parents: Vec<ArrayRef>,
}

impl Column {
    fn at(batch: &RecordBatch, path: &[String]) -> Option<Column> {
        let (first, rest) = path.split_first()?;
        let mut array = batch.column_by_name(first)?.clone();
        let mut parents = Vec::new();
        for part in rest {
            let child = array.as_any().downcast_ref::<StructArray>()?.column_by_name(part)?.clone();
            parents.push(std::mem::replace(&mut array, child));
        }
        let (values, keys) = match array.as_any_dictionary_opt() {
            Some(d) if d.values().is_empty() => (d.values().clone(), Some(Vec::new())),
            Some(d) => (d.values().clone(), Some(d.normalized_keys())),
            None => (array.clone(), None),
        };
        Some(Column { leaf: array, values, keys, parents })
    }

    /// Where row `row`'s value is in `values` (`None`: nowhere, it is null).
    fn index(&self, row: usize) -> Option<usize> {
        match &self.keys {
            None => Some(row),
            Some(keys) => keys.get(row).copied(),
        }
    }

    fn is_null(&self, row: usize) -> bool {
        self.leaf.is_null(row)
            || self.index(row).is_none_or(|i| self.values.is_null(i))
            || self.parents.iter().any(|p| p.is_null(row))
    }

    fn str(&self, row: usize) -> Option<&str> {
        let (a, i) = (&self.values, self.index(row)?);
        match a.data_type() {
            DataType::Utf8 => Some(a.as_string::<i32>().value(i)),
            DataType::LargeUtf8 => Some(a.as_string::<i64>().value(i)),
            DataType::Utf8View => Some(a.as_string_view().value(i)),
            _ => None,
        }
    }

    fn integer(&self, row: usize) -> Option<String> {
        let (a, i) = (&self.values, self.index(row)?);
        Some(match a.data_type() {
            DataType::Int8 => a.as_primitive::<Int8Type>().value(i).to_string(),
            DataType::Int16 => a.as_primitive::<Int16Type>().value(i).to_string(),
            DataType::Int32 => a.as_primitive::<Int32Type>().value(i).to_string(),
            DataType::Int64 => a.as_primitive::<Int64Type>().value(i).to_string(),
            DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i).to_string(),
            DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i).to_string(),
            DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i).to_string(),
            DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i).to_string(),
            _ => return None,
        })
    }
}

/// A batch of rows: the text and id of each.
pub struct RowBatch {
    len: usize,
    text: Column,
    text_name: String,
    id: Option<Column>,
    id_name: String,
}

impl std::fmt::Debug for RowBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowBatch").field("len", &self.len).finish_non_exhaustive()
    }
}

impl RowBatch {
    /// Rows in the batch.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The text of row `row` (0-based in the batch); a null text is a problem
    /// ([`Reason::TextNotString`]).
    pub fn text(&self, row: usize) -> Result<&str, Problem> {
        match self.text.str(row) {
            Some(text) if !self.text.is_null(row) => Ok(text),
            _ => Err(Problem::new(
                Reason::TextNotString,
                format!("text column {:?} is null, not a string", self.text_name),
            )),
        }
    }

    /// The id of row `row`: `None` when the file has no id column or the id is null; a bad
    /// string id (empty, a TAB, ...) is a problem ([`check_id`]).
    pub fn id(&self, row: usize) -> Result<Id<'_>, Problem> {
        let Some(column) = &self.id else { return Ok(None) };
        if column.is_null(row) {
            return Ok(None);
        }
        if let Some(text) = column.str(row) {
            check_id(text).map_err(|p| {
                Problem::new(p.reason, format!("id column {:?}: {}", self.id_name, p.message))
            })?;
            return Ok(Some(IdValue { text: text.into(), number: false }));
        }
        Ok(column.integer(row).map(|text| IdValue { text: text.into(), number: true }))
    }
}

/// A column [`ParquetCopy`] appends to every row it writes (nullable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtraColumn {
    /// The column's name: no column of the input may have it.
    pub name: String,
    /// What it holds.
    pub kind: ExtraKind,
}

/// The type of an [`ExtraColumn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExtraKind {
    /// Strings (Arrow `Utf8`).
    Text,
    /// 64-bit floats.
    Float,
    /// Unsigned 64-bit integers.
    Unsigned,
}

/// One value of an [`ExtraColumn`] for one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExtraValue<'a> {
    /// Null.
    Null,
    /// A string ([`ExtraKind::Text`]).
    Text(&'a str),
    /// A float ([`ExtraKind::Float`]).
    Float(f64),
    /// An unsigned integer ([`ExtraKind::Unsigned`]).
    Unsigned(u64),
}

/// The values of the extra columns for the rows of a batch that are kept: each kept row
/// pushes one value per column, in column order.
pub struct ExtraRows {
    builders: Vec<Builder>,
    /// The column the next pushed value goes to.
    next: usize,
}

impl std::fmt::Debug for ExtraRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtraRows").field("columns", &self.builders.len()).finish_non_exhaustive()
    }
}

enum Builder {
    Text(arrow_array::builder::StringBuilder),
    Float(arrow_array::builder::Float64Builder),
    Unsigned(arrow_array::builder::UInt64Builder),
}

impl ExtraRows {
    fn new(columns: &[ExtraColumn]) -> ExtraRows {
        let builders = columns
            .iter()
            .map(|c| match c.kind {
                ExtraKind::Text => Builder::Text(arrow_array::builder::StringBuilder::new()),
                ExtraKind::Float => Builder::Float(arrow_array::builder::Float64Builder::new()),
                ExtraKind::Unsigned => {
                    Builder::Unsigned(arrow_array::builder::UInt64Builder::new())
                }
            })
            .collect();
        ExtraRows { builders, next: 0 }
    }

    /// The next column's value for the row being kept. A value of another type than the
    /// column's is written as null.
    pub fn push(&mut self, value: ExtraValue<'_>) {
        let count = self.builders.len();
        let Some(builder) = self.builders.get_mut(self.next) else { return };
        self.next = (self.next + 1) % count;
        match (builder, value) {
            (Builder::Text(b), ExtraValue::Text(t)) => b.append_value(t),
            (Builder::Float(b), ExtraValue::Float(v)) => b.append_value(v),
            (Builder::Unsigned(b), ExtraValue::Unsigned(v)) => b.append_value(v),
            (Builder::Text(b), _) => b.append_null(),
            (Builder::Float(b), _) => b.append_null(),
            (Builder::Unsigned(b), _) => b.append_null(),
        }
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        self.next = 0;
        self.builders
            .iter_mut()
            .map(|b| -> ArrayRef {
                match b {
                    Builder::Text(b) => std::sync::Arc::new(b.finish()),
                    Builder::Float(b) => std::sync::Arc::new(b.finish()),
                    Builder::Unsigned(b) => std::sync::Arc::new(b.finish()),
                }
            })
            .collect()
    }
}

/// Copies the rows of Parquet files that a run keeps into one Parquet output, with the
/// schema of the first file (every file must have the same schema) and its compression
/// codec or another ([`ParquetCompression`]), and optionally extra columns appended to
/// each row.
pub struct ParquetCopy<W: std::io::Write + Send> {
    writer: ArrowWriter<W>,
    /// The input's schema.
    schema: SchemaRef,
    /// The batches written: `out_schema` with the input's strings as views.
    view_schema: SchemaRef,
    extra: ExtraRows,
}

impl<W: std::io::Write + Send> std::fmt::Debug for ParquetCopy<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetCopy").finish_non_exhaustive()
    }
}

impl<W: std::io::Write + Send> ParquetCopy<W> {
    /// A copy into `out` with the schema of the Parquet file `like`, compressed with
    /// `compression` ([`ParquetCompression::Mirror`]: `like`'s codec).
    pub fn new(
        out: W,
        like: &Path,
        compression: ParquetCompression,
    ) -> Result<ParquetCopy<W>, Error> {
        ParquetCopy::with_extra(out, like, &[], compression)
    }

    /// A copy into `out` with the schema of the Parquet file `like`, compressed with
    /// `compression` ([`ParquetCompression::Mirror`]: `like`'s codec), and the nullable
    /// `extra` columns after its own. An extra column named as a column of `like` is an
    /// [`ErrorKind::BadParquet`] error naming it.
    pub fn with_extra(
        out: W,
        like: &Path,
        extra: &[ExtraColumn],
        compression: ParquetCompression,
    ) -> Result<ParquetCopy<W>, Error> {
        let (name, builder) = builder(like)?;
        let schema = builder.schema().clone();
        let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
        for column in extra {
            if schema.fields().iter().any(|f| f.name() == &column.name) {
                return Err(bad(
                    &name,
                    format_args!(
                        "already has a column {:?}: refusing to write a second one",
                        column.name
                    ),
                ));
            }
            let data_type = match column.kind {
                ExtraKind::Text => DataType::Utf8,
                ExtraKind::Float => DataType::Float64,
                ExtraKind::Unsigned => DataType::UInt64,
            };
            fields.push(std::sync::Arc::new(arrow_schema::Field::new(
                &column.name,
                data_type,
                true,
            )));
        }
        // The batches written hold the input's strings as views (as `copy` reads them); the
        // file's schema is `out_schema`, the input's types.
        let mut view_fields: Vec<arrow_schema::FieldRef> =
            view_fields(schema.fields()).iter().cloned().collect();
        view_fields.extend(fields[schema.fields().len()..].iter().cloned());
        let out_schema = std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            schema.metadata().clone(),
        ));
        let view_schema = std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
            view_fields,
            schema.metadata().clone(),
        ));
        let mut props = mirrored(builder.metadata());
        if let Some(codec) = compression.codec() {
            props = props.set_compression(codec);
        }
        let mut props = props.build();
        parquet::arrow::add_encoded_arrow_schema_to_metadata(&out_schema, &mut props);
        let options = parquet::arrow::arrow_writer::ArrowWriterOptions::new()
            .with_properties(props)
            .with_skip_arrow_metadata(true);
        let writer = ArrowWriter::try_new_with_options(out, view_schema.clone(), options)
            .map_err(|e| bad(&name, format_args!("cannot write its schema: {e}")))?;
        Ok(ParquetCopy { writer, schema, view_schema, extra: ExtraRows::new(extra) })
    }

    /// Copies the rows of `path` for which `keep(row, text, extra)` is true (`row` 0-based
    /// in the file; `text` its text column, `None` when null), in order. A kept row pushes
    /// one value per extra column to `extra`. `keep` may fail (the input changed since it
    /// was first read).
    pub fn copy(
        &mut self,
        path: &Path,
        columns: &Columns,
        mut keep: impl FnMut(u64, Option<&str>, &mut ExtraRows) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let (name, builder, schema) = view_builder(path)?;
        if schema.fields() != self.schema.fields() {
            return Err(bad(
                &name,
                "has another schema than the first Parquet input: cannot write both to one file",
            ));
        }
        let reader = builder
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| bad(&name, format_args!("cannot read: {e}")))?;
        let mut row = 0u64;
        for batch in reader {
            let batch =
                batch.map_err(|e| bad(&name, format_args!("row {}: read error: {e}", row + 1)))?;
            let text = Column::at(&batch, &columns.text);
            let mut mask = Vec::with_capacity(batch.num_rows());
            for i in 0..batch.num_rows() {
                let t = text.as_ref().filter(|c| !c.is_null(i)).and_then(|c| c.str(i));
                mask.push(keep(row + i as u64, t, &mut self.extra)?);
            }
            row += batch.num_rows() as u64;
            let kept = arrow_select::filter::filter_record_batch(&batch, &BooleanArray::from(mask))
                .map_err(|e| bad(&name, format_args!("cannot select rows: {e}")))?;
            let mut columns = kept.columns().to_vec();
            columns.extend(self.extra.finish());
            let kept = RecordBatch::try_new(self.view_schema.clone(), columns)
                .map_err(|e| bad(&name, format_args!("cannot add the columns: {e}")))?;
            if kept.num_rows() > 0 {
                self.writer.write(&kept).map_err(|e| write_error(&e))?;
            }
        }
        Ok(())
    }

    /// Writes the footer and gives the output back.
    pub fn finish(self) -> Result<W, Error> {
        self.writer.into_inner().map_err(|e| write_error(&e))
    }
}

/// The writer's properties for a copy of the file `meta` describes, as that file was
/// written rather than the crate's defaults:
///
/// - its compression codec (of its first column chunk);
/// - row groups of as many rows as its largest (so that the writer holds one such group in
///   memory, not a million rows);
/// - per column: dictionary encoding only where every chunk of the column is dictionary
///   encoded throughout (a writer that fell back to plain pages found too many distinct
///   values: trying again hashes each value for nothing); statistics per page (a column
///   index) where every chunk has a column index, per chunk where every chunk has
///   statistics, otherwise none; a bloom filter where every chunk has one; an offset index
///   unless no chunk has one.
///
/// A file without row groups gets the crate's defaults, with the codec unknown (none).
fn mirrored(meta: &ParquetMetaData) -> WriterPropertiesBuilder {
    use parquet::basic::Encoding;
    use parquet::file::properties::EnabledStatistics;
    let mut props = WriterProperties::builder();
    let groups = meta.row_groups();
    let Some(first) = groups.first() else { return props };
    if let Some(column) = first.columns().first() {
        props = props.set_compression(column.compression());
    }
    let largest = groups.iter().map(RowGroupMetaData::num_rows).max().unwrap_or(0);
    if let Ok(rows) = usize::try_from(largest)
        && rows > 0
    {
        props = props.set_max_row_group_row_count(Some(rows));
    }
    let mut offset_index = false;
    for (i, column) in meta.file_metadata().schema_descr().columns().iter().enumerate() {
        let chunks = || groups.iter().filter_map(move |g| g.columns().get(i));
        let path = column.path().clone();
        let dictionary = chunks().all(|c| {
            c.dictionary_page_offset().is_some()
                && c.page_encoding_stats_mask().is_none_or(|m| {
                    m.is_only(Encoding::RLE_DICTIONARY) || m.is_only(Encoding::PLAIN_DICTIONARY)
                })
        });
        let statistics = if chunks().all(|c| c.column_index_offset().is_some()) {
            EnabledStatistics::Page
        } else if chunks().all(|c| c.statistics().is_some()) {
            EnabledStatistics::Chunk
        } else {
            EnabledStatistics::None
        };
        let bloom = chunks().all(|c| c.bloom_filter_offset().is_some());
        offset_index |= chunks().any(|c| c.offset_index_offset().is_some());
        props = props
            .set_column_dictionary_enabled(path.clone(), dictionary)
            .set_column_statistics_enabled(path.clone(), statistics)
            .set_column_bloom_filter_enabled(path, bloom);
    }
    props.set_offset_index_disabled(!offset_index)
}

fn write_error(e: &parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => {
            // Keep the io error's kind: a closed pipe is success for the binaries.
            let kind = inner
                .downcast_ref::<std::io::Error>()
                .map_or(std::io::ErrorKind::Other, std::io::Error::kind);
            Error::from(std::io::Error::new(kind, inner.to_string()))
        }
        other => Error::from(std::io::Error::other(format!("cannot write Parquet: {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::StringArray;
    use parquet::basic::Encoding;
    use parquet::schema::types::ColumnPath;

    use super::*;

    /// A column whose writer fell back from a dictionary to plain pages (too many distinct
    /// values for its dictionary page) gets no dictionary in the copy; a column that is
    /// dictionary encoded throughout keeps one.
    #[test]
    fn a_dictionary_that_fell_back_is_not_tried_again() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("in.parquet");
        let texts: Vec<String> = (0..100).map(|i| format!("text number {i} and words")).collect();
        let ids: Vec<String> = (0..100).map(|i| format!("{}", i % 3)).collect();
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(StringArray::from(ids)) as ArrayRef),
            ("text", Arc::new(StringArray::from(texts)) as ArrayRef),
        ])?;
        let props = WriterProperties::builder()
            .set_dictionary_page_size_limit(256)
            .set_write_batch_size(8)
            .build();
        let mut writer = ArrowWriter::try_new(File::create(&path)?, batch.schema(), Some(props))?;
        writer.write(&batch)?;
        writer.close()?;

        let (_, builder) = builder(&path)?;
        let meta = builder.metadata();
        let (id, text) = (meta.row_group(0).column(0), meta.row_group(0).column(1));
        assert!(text.dictionary_page_offset().is_some());
        assert!(text.page_encoding_stats_mask().is_some_and(|m| m.is_set(Encoding::PLAIN)));
        assert!(id.page_encoding_stats_mask().is_some_and(|m| !m.is_set(Encoding::PLAIN)));
        let props = mirrored(meta).build();
        assert!(!props.dictionary_enabled(&ColumnPath::from("text")));
        assert!(props.dictionary_enabled(&ColumnPath::from("id")));
        assert_eq!(props.compression(&ColumnPath::from("text")), text.compression());
        assert_eq!(props.max_row_group_row_count(), Some(100));
        assert!(!props.offset_index_disabled());
        Ok(())
    }

    /// Each codec asked for is every column chunk's, the extra columns' too, and the rows
    /// read back are the same whatever the codec; mirror keeps the input's.
    #[test]
    fn the_copy_is_written_with_the_codec_asked_for() -> Result<(), Box<dyn std::error::Error>> {
        use parquet::basic::Compression;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("in.parquet");
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(StringArray::from(vec!["a", "b", "c"])) as ArrayRef),
            ("text", Arc::new(StringArray::from(vec!["one", "two", "three"])) as ArrayRef),
        ])?;
        let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
        let mut writer = ArrowWriter::try_new(File::create(&path)?, batch.schema(), Some(props))?;
        writer.write(&batch)?;
        writer.close()?;

        let extra = [ExtraColumn { name: "note".into(), kind: ExtraKind::Unsigned }];
        let columns = Columns::new("text", "id");
        let mut rows = Vec::new();
        for (compression, codec) in [
            (ParquetCompression::Mirror, Compression::SNAPPY),
            (ParquetCompression::Zstd, Compression::ZSTD(parquet::basic::ZstdLevel::default())),
            (ParquetCompression::Snappy, Compression::SNAPPY),
            (ParquetCompression::Lz4, Compression::LZ4_RAW),
            (ParquetCompression::Uncompressed, Compression::UNCOMPRESSED),
        ] {
            let out = dir.path().join(format!("{compression}.parquet"));
            let mut copy =
                ParquetCopy::with_extra(File::create(&out)?, &path, &extra, compression)?;
            copy.copy(&path, &columns, |row, _, extra| {
                if row == 1 {
                    return Ok(false);
                }
                extra.push(ExtraValue::Unsigned(row));
                Ok(true)
            })?;
            copy.finish()?.sync_all()?;
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&out)?)?;
            for group in reader.metadata().row_groups() {
                for chunk in group.columns() {
                    assert_eq!(chunk.compression(), codec, "{compression}");
                }
            }
            let batches = reader.build()?.collect::<Result<Vec<_>, _>>()?;
            rows.push(arrow_select::concat::concat_batches(&batches[0].schema(), &batches)?);
        }
        assert_eq!(rows[0].num_rows(), 2);
        assert_eq!(rows[0].num_columns(), 3);
        assert!(rows.iter().all(|r| *r == rows[0]));
        Ok(())
    }
}
