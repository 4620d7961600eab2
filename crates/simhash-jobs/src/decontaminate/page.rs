//! `--report`: a self-contained HTML page (no script, nothing loaded from the network) of
//! each eval set's contaminated items, with the passages of the documents that contain
//! them, read again from the corpus (only those).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::Range;

use simhash_index::contamination::{Hit, Report};
use simhash_io::{LineReader, LineStatus, ParquetRows, Parser, Source};

use crate::corpus::Corpus;
use crate::error::Result;
use crate::page::escape;
use crate::session::Session;

/// Items shown per eval set (those in most documents first).
const ITEMS_SHOWN: usize = 200;
/// Documents shown per item (the first ones).
const DOCS_SHOWN: usize = 3;
/// Passages shown per document.
const SPANS_SHOWN: usize = 3;
/// Characters shown around a passage, on each side.
const CONTEXT: usize = 80;
/// Characters of a passage shown; the rest is elided.
const PASSAGE: usize = 600;

/// A matched passage as shown: the text before, the match, the text after.
struct Passage {
    before: String,
    matched: String,
    /// Characters of the match not shown.
    elided: usize,
    after: String,
}

/// The page of `report` (passages read from `sources`).
pub(super) fn page(
    report: &Report<'_>,
    corpus: &Corpus,
    sources: &[Source],
    parser: &Parser,
    max: u64,
    session: &Session,
) -> String {
    // Each set's items with their hits, in document order.
    let mut items: Vec<BTreeMap<&str, Vec<&Hit<'_>>>> = vec![BTreeMap::new(); report.sets.len()];
    let set_of = |name: &str| report.sets.iter().position(|s| s.name == name).unwrap_or(0);
    for hit in &report.hits {
        items[set_of(hit.set)].entry(hit.item).or_default().push(hit);
    }
    let mut shown: Vec<Vec<(&str, Vec<&Hit<'_>>)>> = Vec::new();
    let mut wanted: BTreeMap<u32, Vec<Range<usize>>> = BTreeMap::new();
    for set in items {
        let mut list: Vec<(&str, Vec<&Hit<'_>>)> = set.into_iter().collect();
        list.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        list.truncate(ITEMS_SHOWN);
        for (_, hits) in &list {
            for hit in hits.iter().take(DOCS_SHOWN) {
                let spans = wanted.entry(hit.doc as u32).or_default();
                spans.extend(hit.spans.iter().take(SPANS_SHOWN).cloned());
            }
        }
        shown.push(list);
    }
    let (passages, note) = read_passages(corpus, sources, parser, max, &wanted);
    render(report, corpus, &shown, &passages, note.as_deref(), session)
}

/// The passages of `wanted` (document: spans), by (document, span start); and a note when
/// some could not be read again.
fn read_passages(
    corpus: &Corpus,
    sources: &[Source],
    parser: &Parser,
    max: u64,
    wanted: &BTreeMap<u32, Vec<Range<usize>>>,
) -> (HashMap<(u32, usize), Passage>, Option<String>) {
    let mut found = HashMap::new();
    let mut note = None;
    // The wanted documents by line, ascending (documents are in line order).
    let lines: Vec<(u64, u32)> = wanted.keys().map(|&d| (corpus.line(d as usize), d)).collect();
    let mut next = 0;
    let mut base = 0;
    for (source, &count) in sources.iter().zip(corpus.shard_lines()) {
        let mine_end = next + lines[next..].partition_point(|l| l.0 <= base + count);
        let mine = &lines[next..mine_end];
        next = mine_end;
        if !mine.is_empty() {
            let mut take = |doc: u32, raw: &[u8], text: &str| {
                let unchanged = corpus
                    .line_hash(doc as usize)
                    .is_none_or(|h| raw.is_empty() || h == simhash_io::line_hash(raw));
                if unchanged {
                    for span in &wanted[&doc] {
                        found.insert((doc, span.start), passage(text, span));
                    }
                }
            };
            let read = match source.path().filter(|p| simhash_io::is_parquet(p)) {
                Some(path) => parquet_texts(path, parser, base, mine, &mut take),
                None => line_texts(source, parser, max, base, mine, &mut take),
            };
            if let Err(e) = read {
                note.get_or_insert(format!("{}: not read again: {e:#}", source.name));
            }
        }
        base += count;
    }
    (found, note)
}

/// Calls `take` with each document of `mine` (line, document) in a JSONL file, its line
/// as read and its text.
fn line_texts(
    source: &Source,
    parser: &Parser,
    max: u64,
    base: u64,
    mine: &[(u64, u32)],
    take: &mut dyn FnMut(u32, &[u8], &str),
) -> Result<()> {
    let mut reader = LineReader::new(source.reopen()?, max);
    let mut buf = Vec::new();
    let mut rest = mine;
    while let Some(&(line, doc)) = rest.first() {
        if base + reader.line + 1 < line {
            if reader.skip_line()?.is_none() {
                break;
            }
            continue;
        }
        buf.clear();
        let Some(status) = reader.next_line(&mut buf, None)? else { break };
        rest = &rest[1..];
        if status == LineStatus::Ok
            && let Ok(simhash_io::Record { body: simhash_io::Body::Text(text), .. }) =
                parser.parse(&buf)
        {
            take(doc, &buf, &text);
        }
    }
    Ok(())
}

/// [`line_texts`] for a Parquet file: rows are lines (no line hash to check).
fn parquet_texts(
    path: &std::path::Path,
    parser: &Parser,
    base: u64,
    mine: &[(u64, u32)],
    take: &mut dyn FnMut(u32, &[u8], &str),
) -> Result<()> {
    let Parser::Json(columns) = parser else { return Ok(()) };
    let mut rows = ParquetRows::open(path, columns)?;
    let mut rest = mine;
    let mut row = 0u64;
    while let Some(batch) = rows.next_batch()? {
        for i in 0..batch.len() {
            row += 1;
            if rest.first().is_some_and(|w| w.0 == base + row) {
                if let Ok(text) = batch.text(i) {
                    take(rest[0].1, b"", text);
                }
                rest = &rest[1..];
            }
        }
        if rest.is_empty() {
            break;
        }
    }
    Ok(())
}

/// The byte offset of code point `at` of `text` (its length past the end).
fn byte_at(text: &str, at: usize) -> usize {
    text.char_indices().nth(at).map_or(text.len(), |(b, _)| b)
}

/// The passage `span` (code points) of `text`, with its context.
fn passage(text: &str, span: &Range<usize>) -> Passage {
    let shown_end = span.start + (span.end - span.start).min(PASSAGE);
    let at = |cp| byte_at(text, cp);
    let (before, start, end, stop, after) = (
        at(span.start.saturating_sub(CONTEXT)),
        at(span.start),
        at(shown_end),
        at(span.end),
        at(span.end + CONTEXT),
    );
    Passage {
        before: text[before..start].to_string(),
        matched: text[start..end].to_string(),
        elided: text[end..stop].chars().count(),
        after: text[stop..after].to_string(),
    }
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;\
padding:0 1em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;\
padding:.2em .6em;text-align:right}th:first-child,td:first-child{text-align:left}\
details{margin:.3em 0}summary{cursor:pointer}.doc{margin:.4em 0 .4em 1.5em}\
.p{white-space:pre-wrap;background:#f6f6f6;border-left:3px solid #bbb;padding:.3em .6em;\
margin:.2em 0}mark{background:#ffe08a}.note{color:#a00}.dim{color:#777}";

/// The page.
fn render(
    report: &Report<'_>,
    corpus: &Corpus,
    shown: &[Vec<(&str, Vec<&Hit<'_>>)>],
    passages: &HashMap<(u32, usize), Passage>,
    note: Option<&str>,
    session: &Session,
) -> String {
    let mut h = String::new();
    let summary = &session.summary;
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\"><title>simhash decontaminate: {}</title>\
         <style>{STYLE}</style></head><body><h1>Eval sets in {}</h1>",
        escape(&summary.input),
        escape(&summary.input),
    );
    if let Some(d) = &summary.decontamination {
        let _ = write!(
            h,
            "<p>{} documents; {}-word n-grams, minimum overlap {}, n-grams in more than {} \
             documents dropped ({} of {}). {} hits in {} documents.</p>",
            report.documents,
            d.ngram,
            d.min_overlap,
            escape(&d.max_df),
            d.ngrams_dropped,
            d.ngrams,
            d.hits,
            d.documents_hit,
        );
        h.push_str(
            "<table><tr><th>eval set</th><th>items</th><th>items found</th>\
             <th>documents hit</th><th>n-grams</th><th>dropped</th><th>unmatchable</th></tr>",
        );
        for e in &d.evals {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td></tr>",
                escape(&e.name),
                e.items,
                e.items_found,
                e.documents_hit,
                e.ngrams,
                e.ngrams_dropped,
                e.unmatchable
            );
        }
        h.push_str("</table>");
    }
    if let Some(note) = note {
        let _ = write!(h, "<p class=\"note\">{}</p>", escape(note));
    }
    for (set, items) in report.sets.iter().zip(shown) {
        let _ = write!(h, "<h2>{}</h2>", escape(set.name));
        if items.is_empty() {
            h.push_str("<p class=\"dim\">No item found.</p>");
            continue;
        }
        if items.len() == ITEMS_SHOWN {
            let _ = write!(h, "<p class=\"dim\">The {ITEMS_SHOWN} items in most documents.</p>");
        }
        for (item, hits) in items {
            let _ = write!(
                h,
                "<details><summary><b>{}</b>: {} document{}</summary>",
                escape(item),
                hits.len(),
                if hits.len() == 1 { "" } else { "s" }
            );
            for hit in hits.iter().take(DOCS_SHOWN) {
                let doc = hit.doc as u32;
                let _ = write!(
                    h,
                    "<div class=\"doc\">document <b>{}</b> (line {}): overlap {:.3}, longest \
                     run {} words, {} span{}",
                    escape(&corpus.id(hit.doc as usize)),
                    corpus.line(hit.doc as usize),
                    hit.overlap,
                    hit.longest,
                    hit.spans.len(),
                    if hit.spans.len() == 1 { "" } else { "s" }
                );
                for span in hit.spans.iter().take(SPANS_SHOWN) {
                    match passages.get(&(doc, span.start)) {
                        Some(p) => {
                            let _ = write!(
                                h,
                                "<div class=\"p\">{}<mark>{}</mark>{}{}</div>",
                                escape(&p.before),
                                escape(&p.matched),
                                if p.elided > 0 {
                                    format!(
                                        "<span class=\"dim\"> [… {} more characters]</span>",
                                        p.elided
                                    )
                                } else {
                                    String::new()
                                },
                                escape(&p.after)
                            );
                        }
                        None => {
                            let _ = write!(
                                h,
                                "<div class=\"p dim\">characters {} to {} (not read again)</div>",
                                span.start, span.end
                            );
                        }
                    }
                }
                h.push_str("</div>");
            }
            if hits.len() > DOCS_SHOWN {
                let _ = write!(
                    h,
                    "<div class=\"doc dim\">and {} more (see --hits)</div>",
                    hits.len() - DOCS_SHOWN
                );
            }
            h.push_str("</details>");
        }
    }
    h.push_str("</body></html>\n");
    h
}
