//! What a corpus line tells of its paper besides the abstract: venue, year, authors and the
//! identifiers a reader follows out (DOI, PubMed, PubMed Central, arXiv, Semantic Scholar, a web
//! address). Read from the fields a corpus import keeps (`documents.extra`), at the top level or
//! under `metadata` (S2ORC, SciFact-Open, BEIR, CORD-19); a value that is not what its name says
//! (a DOI without `10.`, a `javascript:` address) is left out, so that every link a page shows
//! goes where its label says.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Authors a byline names before "et al.".
pub const BYLINE_AUTHORS: usize = 3;

/// The paper behind an abstract, as far as its corpus line says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PaperMeta {
    /// The journal, else the venue.
    pub venue: Option<String>,
    pub year: Option<u16>,
    /// In the file's order.
    pub authors: Vec<String>,
    /// In [`LinkKind`]'s order, one per kind.
    pub links: Vec<PaperLink>,
}

/// Where a paper's identifier leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LinkKind {
    Doi,
    PubMed,
    Pmc,
    Arxiv,
    SemanticScholar,
    Web,
}

impl LinkKind {
    pub const ALL: [LinkKind; 6] = [
        LinkKind::Doi,
        LinkKind::PubMed,
        LinkKind::Pmc,
        LinkKind::Arxiv,
        LinkKind::SemanticScholar,
        LinkKind::Web,
    ];

    /// The link's text before the identifier.
    pub fn label(self) -> &'static str {
        match self {
            LinkKind::Doi => "DOI",
            LinkKind::PubMed => "PubMed",
            LinkKind::Pmc => "PMC",
            LinkKind::Arxiv => "arXiv",
            LinkKind::SemanticScholar => "Semantic Scholar",
            LinkKind::Web => "Web",
        }
    }

    /// The corpus fields that hold it, in the order they are tried.
    fn keys(self) -> &'static [&'static str] {
        match self {
            LinkKind::Doi => &["doi"],
            LinkKind::PubMed => &["pmid", "pubmed_id"],
            LinkKind::Pmc => &["pmcid", "pmc_id"],
            LinkKind::Arxiv => &["arxiv_id"],
            LinkKind::SemanticScholar => &["paper_id", "corpus_id"],
            LinkKind::Web => &["url"],
        }
    }

    /// The identifier as written in a corpus, normalised, if it is one of this kind.
    fn normalise(self, raw: &str) -> Option<String> {
        let raw = raw.trim();
        let id = match self {
            LinkKind::Doi => {
                let lower = raw.to_ascii_lowercase();
                let cut = [
                    "https://doi.org/",
                    "http://doi.org/",
                    "https://dx.doi.org/",
                    "http://dx.doi.org/",
                    "doi:",
                ]
                .iter()
                .find(|p| lower.starts_with(*p))
                .map_or(0, |p| p.len());
                let doi = &raw[cut..];
                let (prefix, suffix) = doi.split_once('/')?;
                let registrant = prefix.strip_prefix("10.")?;
                (!registrant.is_empty()
                    && registrant.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && !suffix.is_empty()
                    && doi
                        .chars()
                        .all(|c| c.is_ascii_graphic() && !"\"<>#?\\%^`{|}".contains(c)))
                .then(|| doi.to_owned())?
            }
            LinkKind::PubMed | LinkKind::SemanticScholar => {
                (digits(raw) && raw.len() <= 12 && !raw.trim_start_matches('0').is_empty())
                    .then(|| raw.to_owned())?
            }
            LinkKind::Pmc => {
                let n = raw
                    .strip_prefix("PMC")
                    .or_else(|| raw.strip_prefix("pmc"))
                    .unwrap_or(raw);
                (digits(n) && n.len() <= 12).then(|| format!("PMC{n}"))?
            }
            LinkKind::Arxiv => (raw.len() <= 40
                && raw.contains(|c: char| c.is_ascii_digit())
                && raw
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-/".contains(c))
                && !raw.starts_with(['.', '/', '-'])
                && !raw.contains(".."))
            .then(|| raw.to_owned())?,
            LinkKind::Web => {
                let lower = raw.to_ascii_lowercase();
                let rest = lower
                    .strip_prefix("https://")
                    .or_else(|| lower.strip_prefix("http://"))?;
                (!rest.is_empty()
                    && !rest.starts_with('/')
                    && raw.len() <= 2000
                    && raw
                        .chars()
                        .all(|c| c.is_ascii_graphic() && !"\"<>\\^`{|}".contains(c)))
                .then(|| raw.to_owned())?
            }
        };
        Some(id)
    }
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// One identifier of a paper and the address it leads to; made only from an identifier that is
/// one of its kind (reading one back checks it again).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawLink", into = "RawLink")]
pub struct PaperLink {
    kind: LinkKind,
    id: String,
}

#[derive(Serialize, Deserialize)]
struct RawLink {
    kind: LinkKind,
    id: String,
}

impl TryFrom<RawLink> for PaperLink {
    type Error = String;

    fn try_from(raw: RawLink) -> Result<PaperLink, String> {
        PaperLink::parse(raw.kind, &raw.id)
            .ok_or_else(|| format!("not a {} identifier: {:?}", raw.kind.label(), raw.id))
    }
}

impl From<PaperLink> for RawLink {
    fn from(link: PaperLink) -> RawLink {
        RawLink {
            kind: link.kind,
            id: link.id,
        }
    }
}

impl PaperLink {
    /// The link for `raw`, if it is an identifier of `kind`.
    pub fn parse(kind: LinkKind, raw: &str) -> Option<PaperLink> {
        kind.normalise(raw).map(|id| PaperLink { kind, id })
    }

    pub fn kind(&self) -> LinkKind {
        self.kind
    }

    /// The identifier, normalised (a DOI without its resolver, a PMC id with `PMC`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where the link leads.
    pub fn href(&self) -> String {
        let id = &self.id;
        match self.kind {
            LinkKind::Doi => format!("https://doi.org/{id}"),
            LinkKind::PubMed => format!("https://pubmed.ncbi.nlm.nih.gov/{id}/"),
            LinkKind::Pmc => format!("https://pmc.ncbi.nlm.nih.gov/articles/{id}/"),
            LinkKind::Arxiv => format!("https://arxiv.org/abs/{id}"),
            LinkKind::SemanticScholar => format!("https://api.semanticscholar.org/CorpusID:{id}"),
            LinkKind::Web => id.clone(),
        }
    }

    /// The link's text: "DOI 10.1/x", "PubMed 123", "Web" (an address is not repeated).
    pub fn text(&self) -> String {
        match self.kind {
            LinkKind::Web => self.kind.label().to_owned(),
            kind => format!("{} {}", kind.label(), self.id),
        }
    }
}

impl PaperMeta {
    /// What the corpus line's other fields (`extra`) tell of the paper.
    pub fn from_extra(extra: &Map<String, Value>) -> PaperMeta {
        let nested = extra.get("metadata").and_then(Value::as_object);
        // A field of the line itself first, then of its `metadata` object.
        let field = |key: &str| {
            [Some(extra), nested]
                .into_iter()
                .flatten()
                .filter_map(|object| object.get(key))
                .find(|value| !value.is_null())
        };
        let text = |key: &str| field(key).and_then(scalar_text);
        let venue = text("journal")
            .or_else(|| text("venue"))
            .map(|v| collapse_spaces(&v))
            .filter(|v| !v.is_empty());
        let year = field("year").and_then(|v| match v {
            Value::Number(n) => n.as_u64().and_then(|y| u16::try_from(y).ok()),
            Value::String(s) => s.trim().parse::<u16>().ok(),
            _ => None,
        });
        let year = year.filter(|y| (1000..=2999).contains(y));
        let authors = field("authors").map(authors).unwrap_or_default();
        let links = LinkKind::ALL
            .into_iter()
            .filter_map(|kind| {
                kind.keys()
                    .iter()
                    .filter_map(|key| text(key))
                    .find_map(|raw| PaperLink::parse(kind, &raw))
            })
            .collect();
        PaperMeta {
            venue,
            year,
            authors,
            links,
        }
    }

    /// Nothing to show.
    pub fn is_empty(&self) -> bool {
        self.venue.is_none()
            && self.year.is_none()
            && self.authors.is_empty()
            && self.links.is_empty()
    }

    /// "Smith J, Lee K, Ortiz A et al. · Nature · 2011", or None when there is none of the three.
    pub fn byline(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.authors.is_empty() {
            let named = self
                .authors
                .iter()
                .take(BYLINE_AUTHORS)
                .cloned()
                .collect::<Vec<_>>();
            let more = if self.authors.len() > BYLINE_AUTHORS {
                " et al."
            } else {
                ""
            };
            parts.push(format!("{}{more}", named.join(", ")));
        }
        parts.extend(self.venue.clone());
        parts.extend(self.year.map(|y| y.to_string()));
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

/// A string, or a number written as one (PubMed ids are often numbers).
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) if n.is_u64() => Some(n.to_string()),
        _ => None,
    }
    .filter(|s| !s.is_empty())
}

fn collapse_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Authors as S2ORC (`{"first", "middle": [...], "last"}`), as names (`["A. Smith"]`, `{"name"}`),
/// or as CORD-19's one string (`"Smith, A.; Lee, K."`).
fn authors(value: &Value) -> Vec<String> {
    let names: Vec<String> = match value {
        Value::String(s) => s.split(';').map(collapse_spaces).collect(),
        Value::Array(list) => list
            .iter()
            .filter_map(|author| match author {
                Value::String(s) => Some(collapse_spaces(s)),
                Value::Object(o) => o
                    .get("name")
                    .and_then(Value::as_str)
                    .map(collapse_spaces)
                    .or_else(|| {
                        let part = |key: &str| match o.get(key) {
                            Some(Value::String(s)) => vec![s.clone()],
                            Some(Value::Array(a)) => a
                                .iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect(),
                            _ => Vec::new(),
                        };
                        let whole = [part("first"), part("middle"), part("last"), part("suffix")]
                            .concat()
                            .join(" ");
                        Some(collapse_spaces(&whole))
                    }),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: Value) -> PaperMeta {
        PaperMeta::from_extra(value.as_object().expect("an object"))
    }

    #[test]
    fn reads_s2orc_metadata_under_metadata() {
        let m = meta(json!({
            "structured": false,
            "metadata": {
                "paper_id": "4983", "title": "T", "year": 2002, "venue": "Radiology",
                "journal": "Radiology ", "doi": "10.1148/radiol.2213010287", "pubmed_id": "11687684",
                "pmc_id": null, "arxiv_id": null,
                "authors": [{"first": "Jeffrey", "middle": ["J", "K"], "last": "Neil", "suffix": ""},
                            {"first": "Hugo", "middle": [], "last": "Lee"}]
            }
        }));
        assert_eq!(m.venue.as_deref(), Some("Radiology"));
        assert_eq!(m.year, Some(2002));
        assert_eq!(m.authors, vec!["Jeffrey J K Neil", "Hugo Lee"]);
        let links: Vec<(LinkKind, String)> = m.links.iter().map(|l| (l.kind(), l.href())).collect();
        assert_eq!(
            links,
            vec![
                (
                    LinkKind::Doi,
                    "https://doi.org/10.1148/radiol.2213010287".to_owned()
                ),
                (
                    LinkKind::PubMed,
                    "https://pubmed.ncbi.nlm.nih.gov/11687684/".to_owned()
                ),
                (
                    LinkKind::SemanticScholar,
                    "https://api.semanticscholar.org/CorpusID:4983".to_owned()
                ),
            ]
        );
        assert_eq!(
            m.byline().as_deref(),
            Some("Jeffrey J K Neil, Hugo Lee · Radiology · 2002")
        );
    }

    #[test]
    fn reads_beir_and_cord19_fields() {
        // TREC-COVID (BEIR): metadata {url, pubmed_id}; CORD-19: authors as one string.
        let m = meta(json!({
            "metadata": {"url": "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC35282/", "pubmed_id": 11472636},
            "authors": "Madani, Tariq A; Al-Ghamdi, Aisha A; Ortiz, Ana; Wu, B",
            "journal": "BMC Infect Dis", "year": "2001", "pmcid": "PMC35282"
        }));
        assert_eq!(m.authors.len(), 4);
        assert_eq!(
            m.byline().as_deref(),
            Some("Madani, Tariq A, Al-Ghamdi, Aisha A, Ortiz, Ana et al. · BMC Infect Dis · 2001")
        );
        let texts: Vec<String> = m.links.iter().map(PaperLink::text).collect();
        assert_eq!(texts, vec!["PubMed 11472636", "PMC PMC35282", "Web"]);
        assert_eq!(
            m.links[2].href(),
            "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC35282/"
        );
    }

    #[test]
    fn a_value_that_is_not_what_its_name_says_is_left_out() {
        let m = meta(json!({
            "doi": "not a doi", "pmid": "12a", "url": "javascript:alert(1)", "year": 20011,
            "arxiv_id": "../../etc", "journal": "  ", "authors": [1, {"x": 2}, ""]
        }));
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(m.byline(), None);
        for (kind, raw) in [
            (LinkKind::Doi, "10.1/x\"><script>"),
            (LinkKind::Doi, "10./x"),
            (LinkKind::Web, "http://"),
            (LinkKind::Web, "https:///x"),
            (LinkKind::Web, "data:text/html,x"),
            (LinkKind::Web, "https://a.org/x y"),
            (LinkKind::PubMed, "000"),
            (LinkKind::Pmc, "PMCx1"),
        ] {
            assert_eq!(PaperLink::parse(kind, raw), None, "{raw}");
        }
        assert_eq!(
            PaperLink::parse(LinkKind::Doi, "https://doi.org/10.1000/ABC.5").map(|l| l.href()),
            Some("https://doi.org/10.1000/ABC.5".to_owned())
        );
        assert_eq!(
            PaperLink::parse(LinkKind::Arxiv, "2210.13777v2").map(|l| l.href()),
            Some("https://arxiv.org/abs/2210.13777v2".to_owned())
        );
    }

    #[test]
    fn a_link_read_back_is_checked_again() {
        let good = PaperLink::parse(LinkKind::PubMed, "123").unwrap();
        let text = serde_json::to_string(&good).unwrap();
        assert_eq!(serde_json::from_str::<PaperLink>(&text).unwrap(), good);
        let forged = r#"{"kind":"Web","id":"javascript:alert(1)"}"#;
        assert!(serde_json::from_str::<PaperLink>(forged).is_err());
    }

    #[test]
    fn a_line_without_metadata_has_none() {
        let m = meta(json!({"structured": true}));
        assert!(m.is_empty());
        assert_eq!(PaperMeta::default(), m);
    }
}
