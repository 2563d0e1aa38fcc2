//! An abstract as the index stores it (title and sentences): what dense re-ranking embeds and
//! what an external scorer is given.

use serde::{Deserialize, Serialize};

/// The title and sentences of an abstract, stored in the index beside its doc id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    pub title: String,
    pub sentences: Vec<String>,
}

impl Passage {
    /// Title and abstract as one text, the way the index analyses them and the embedder reads
    /// them: the title, then the sentences, separated by spaces.
    pub fn full_text(&self) -> String {
        let mut text = self.title.clone();
        for sentence in &self.sentences {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(sentence);
        }
        text
    }
}

/// The stored form of a passage (JSON, so titles and sentences keep any character).
pub(crate) fn encode(title: &str, sentences: &[String]) -> String {
    #[derive(Serialize)]
    struct Borrowed<'a> {
        title: &'a str,
        sentences: &'a [String],
    }
    // Serialising strings into JSON cannot fail.
    serde_json::to_string(&Borrowed { title, sentences }).unwrap_or_default()
}

/// Reads a stored passage back.
pub(crate) fn decode(stored: &str) -> Result<Passage, serde_json::Error> {
    serde_json::from_str(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passage_round_trips_and_joins_title_and_sentences() {
        let sentences = vec!["A \"quoted\" line.".to_owned(), "Ünïcode ∑ 2.".to_owned()];
        let passage = decode(&encode("Title\twith tab", &sentences)).unwrap();
        assert_eq!(passage.title, "Title\twith tab");
        assert_eq!(passage.sentences, sentences);
        assert_eq!(
            passage.full_text(),
            "Title\twith tab A \"quoted\" line. Ünïcode ∑ 2."
        );
        let untitled = Passage {
            title: String::new(),
            sentences: vec!["Only.".into()],
        };
        assert_eq!(untitled.full_text(), "Only.");
    }
}
