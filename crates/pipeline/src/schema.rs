//! The fields of a claimpool index: the stored doc id, the analysed title + abstract, and the
//! stored title and sentences (what dense re-ranking and external scorers read).

use super::analyzer::ANALYZER_NAME;
use super::error::PipelineError;
use std::path::Path;
use tantivy::schema::{
    Field, FieldType, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED,
};

/// Name of the stored (not indexed) doc id field.
const DOC_ID: &str = "doc_id";
/// Name of the indexed (not stored) title + abstract field.
const TEXT: &str = "text";
/// Name of the stored (not indexed) title and sentences, as JSON (see [`super::Passage`]).
const PASSAGE: &str = "passage";

/// The fields, as handles into an index's schema.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexFields {
    pub(crate) doc_id: Field,
    pub(crate) text: Field,
    /// None in indexes built before claimpool stored the text: they search, but cannot give
    /// abstracts to re-rankers or external scorers.
    pub(crate) passage: Option<Field>,
}

/// The schema of a new index. Term frequencies are all BM25 needs, so positions are not kept.
pub(crate) fn new_schema() -> (Schema, IndexFields) {
    let mut builder = Schema::builder();
    let doc_id = builder.add_text_field(DOC_ID, STORED);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(ANALYZER_NAME)
        .set_index_option(IndexRecordOption::WithFreqs);
    let text = builder.add_text_field(TEXT, TextOptions::default().set_indexing_options(indexing));
    let passage = builder.add_text_field(PASSAGE, STORED);
    (
        builder.build(),
        IndexFields {
            doc_id,
            text,
            passage: Some(passage),
        },
    )
}

/// The fields of an opened index, checked against what [`new_schema`] makes.
pub(crate) fn fields_of(schema: &Schema, dir: &Path) -> Result<IndexFields, PipelineError> {
    let problem = |problem: String| PipelineError::NotOurIndex {
        dir: dir.to_path_buf(),
        problem,
    };
    let field = |name: &str| {
        schema
            .get_field(name)
            .map_err(|_| problem(format!("no field {name:?}")))
    };
    let doc_id = field(DOC_ID)?;
    let text = field(TEXT)?;
    match schema.get_field_entry(doc_id).field_type() {
        FieldType::Str(options) if options.is_stored() => {}
        _ => {
            return Err(problem(format!(
                "field {DOC_ID:?} is not a stored text field"
            )))
        }
    }
    match schema.get_field_entry(text).field_type() {
        FieldType::Str(options)
            if options
                .get_indexing_options()
                .is_some_and(|indexing| indexing.tokenizer() == ANALYZER_NAME) => {}
        _ => {
            return Err(problem(format!(
                "field {TEXT:?} is not indexed with the {ANALYZER_NAME:?} analyser"
            )))
        }
    }
    let passage = match schema.get_field(PASSAGE) {
        Err(_) => None,
        Ok(passage) => match schema.get_field_entry(passage).field_type() {
            FieldType::Str(options) if options.is_stored() => Some(passage),
            _ => {
                return Err(problem(format!(
                    "field {PASSAGE:?} is not a stored text field"
                )))
            }
        },
    };
    Ok(IndexFields {
        doc_id,
        text,
        passage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_its_own_schema_and_rejects_others() {
        let dir = Path::new("/nowhere");
        let (schema, made) = new_schema();
        let found = fields_of(&schema, dir).unwrap();
        assert_eq!(
            (found.doc_id, found.text, found.passage),
            (made.doc_id, made.text, made.passage)
        );
        assert!(made.passage.is_some());

        // An index of an older build, without the stored passage, still opens.
        let mut older = Schema::builder();
        older.add_text_field(DOC_ID, STORED);
        let indexing = TextFieldIndexing::default().set_tokenizer(ANALYZER_NAME);
        older.add_text_field(TEXT, TextOptions::default().set_indexing_options(indexing));
        assert_eq!(fields_of(&older.build(), dir).unwrap().passage, None);

        let mut other = Schema::builder();
        other.add_text_field(DOC_ID, STORED);
        other.add_text_field(TEXT, tantivy::schema::TEXT);
        let err = fields_of(&other.build(), dir).unwrap_err();
        assert!(err.to_string().contains("analyser"), "{err}");

        let mut missing = Schema::builder();
        missing.add_text_field(TEXT, tantivy::schema::TEXT);
        let err = fields_of(&missing.build(), dir).unwrap_err();
        assert!(err.to_string().contains("no field \"doc_id\""), "{err}");
    }
}
