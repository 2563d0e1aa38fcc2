//! Building a BM25 index of a corpus's titles and abstracts.

use super::analyzer::{english_analyzer, ANALYZER_NAME};
use super::error::PipelineError;
use super::schema::{fields_of, new_schema, IndexFields};
use domain::ids::DocId;
use std::collections::HashSet;
use std::path::Path;
use tantivy::indexer::NoMergePolicy;
use tantivy::{Index, IndexWriter, TantivyDocument, TantivyError};

/// One abstract to index: its id, title and sentences (the text is their concatenation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexDoc {
    pub doc_id: DocId,
    pub title: String,
    pub sentences: Vec<String>,
}

/// How much memory and how many threads the index writer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexOptions {
    /// Total writer heap in bytes, shared by the threads (tantivy wants at least 15 MB each).
    /// A segment is flushed when its thread's share fills, so more heap means fewer segments.
    pub heap_bytes: usize,
    /// Indexing threads; the caller's thread reads the corpus besides them.
    pub threads: usize,
}

impl Default for IndexOptions {
    /// 512 MB and two threads. Indexing takes the same CPU time with one or two threads
    /// (tokenising and stemming dominate), so two threads use both cores of a two-core machine
    /// when it is otherwise idle; 256 MB per thread keeps the segments to merge at the end few.
    fn default() -> Self {
        IndexOptions {
            heap_bytes: 512 << 20,
            threads: 2,
        }
    }
}

/// What a build produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexSummary {
    /// Documents indexed.
    pub documents: u64,
    /// Segments in the committed index: 1, unless the corpus was empty (0).
    pub segments: usize,
}

/// `progress` is called after every this many documents, and once at the end.
pub const PROGRESS_EVERY: u64 = 1_000;

/// Builds an index of `docs` in `dir` with [`IndexOptions::default`]; see [`build_index_with`].
pub fn build_index<E>(
    dir: &Path,
    docs: impl Iterator<Item = Result<IndexDoc, E>>,
    progress: &dyn Fn(u64),
) -> Result<IndexSummary, PipelineError>
where
    E: std::error::Error + Send + Sync + 'static,
{
    build_index_with(dir, docs, progress, IndexOptions::default())
}

/// Builds an index of `docs` in `dir`, which must be missing or empty, calling `progress` with
/// the number of documents added so far. Doc ids must be unique. On error, whatever the build
/// wrote in `dir` is removed again, so the same directory can be used for a retry.
pub fn build_index_with<E>(
    dir: &Path,
    docs: impl Iterator<Item = Result<IndexDoc, E>>,
    progress: &dyn Fn(u64),
    options: IndexOptions,
) -> Result<IndexSummary, PipelineError>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let not_empty = std::fs::read_dir(dir)
        .ok()
        .is_some_and(|mut entries| entries.next().is_some());
    if not_empty {
        return Err(PipelineError::IndexExists {
            dir: dir.to_path_buf(),
        });
    }
    std::fs::create_dir_all(dir).map_err(|source| PipelineError::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let (schema, fields) = new_schema();
    let index = Index::create_in_dir(dir, schema).map_err(|source| match source {
        TantivyError::IndexAlreadyExists => PipelineError::IndexExists {
            dir: dir.to_path_buf(),
        },
        source => PipelineError::tantivy("creating the index", dir)(source),
    })?;
    index
        .tokenizers()
        .register(ANALYZER_NAME, english_analyzer());
    let result = index
        .writer_with_num_threads(options.threads, options.heap_bytes)
        .map_err(PipelineError::tantivy("starting the index writer", dir))
        .and_then(|writer| {
            // Segments are merged once, at the end.
            writer.set_merge_policy(Box::new(NoMergePolicy));
            write_all(writer, fields, docs, progress, dir)
        });
    let result = result.and_then(|documents| {
        let segments = index
            .searchable_segment_ids()
            .map_err(PipelineError::tantivy("listing segments", dir))?
            .len();
        Ok(IndexSummary {
            documents,
            segments,
        })
    });
    if result.is_err() {
        remove_contents(dir);
    }
    result
}

/// Adds every document, commits, and merges the segments into one; returns the number of
/// documents.
fn write_all<E>(
    mut writer: IndexWriter,
    fields: IndexFields,
    docs: impl Iterator<Item = Result<IndexDoc, E>>,
    progress: &dyn Fn(u64),
    dir: &Path,
) -> Result<u64, PipelineError>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut seen: HashSet<DocId> = HashSet::new();
    let mut count = 0u64;
    for item in docs {
        let position = count + 1;
        let doc = item.map_err(|source| PipelineError::Source {
            position,
            source: Box::new(source),
        })?;
        if seen.contains(&doc.doc_id) {
            return Err(PipelineError::DuplicateDocId {
                position,
                doc_id: doc.doc_id,
            });
        }
        let mut tantivy_doc = TantivyDocument::new();
        tantivy_doc.add_text(fields.doc_id, doc.doc_id.as_str());
        tantivy_doc.add_text(fields.text, &doc.title);
        for sentence in &doc.sentences {
            tantivy_doc.add_text(fields.text, sentence);
        }
        if let Some(passage) = fields.passage {
            tantivy_doc.add_text(passage, super::passage::encode(&doc.title, &doc.sentences));
        }
        seen.insert(doc.doc_id);
        writer
            .add_document(tantivy_doc)
            .map_err(PipelineError::tantivy("adding a document", dir))?;
        count = position;
        if count.is_multiple_of(PROGRESS_EVERY) {
            progress(count);
        }
    }
    writer
        .commit()
        .map_err(PipelineError::tantivy("committing", dir))?;
    // One segment per indexing thread is left; one merged segment searches about 20% faster
    // (500,000 abstracts: 8.0 against 9.8 ms of CPU per top-50 query).
    let segments = writer
        .index()
        .searchable_segment_ids()
        .map_err(PipelineError::tantivy("listing segments", dir))?;
    if segments.len() > 1 {
        writer
            .merge(&segments)
            .wait()
            .map_err(PipelineError::tantivy("merging segments", dir))?;
    }
    writer
        .wait_merging_threads()
        .map_err(PipelineError::tantivy("finishing merges", dir))?;
    progress(count);
    Ok(count)
}

/// Removes what a failed build wrote into `dir` (which was empty or missing before). Best
/// effort: the build's own error is what the caller needs to see.
fn remove_contents(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

/// Opens an index built by [`build_index`], with its analyser registered.
pub(crate) fn open_index(dir: &Path) -> Result<(Index, IndexFields), PipelineError> {
    let index =
        Index::open_in_dir(dir).map_err(PipelineError::tantivy("opening the index", dir))?;
    let fields = fields_of(&index.schema(), dir)?;
    index
        .tokenizers()
        .register(ANALYZER_NAME, english_analyzer());
    Ok((index, fields))
}
