//! TREC runs read in one go (`claimpool eval`): the file's text whole in memory, its lines
//! parsed on every core straight into what the caller keeps of a pair (typically a gold claim
//! index, the doc id borrowed from the text and the score), without the owned ids and tag of a
//! [`RunRecord`](super::RunRecord) per line.
//!
//! It takes the files [`RunReader`](super::RunReader) reads in [`RunFormat::Trec`](super::RunFormat)
//! and gives up (`None`) on anything else: a gzip file, a file over the size bound, a line the
//! TREC parser refuses, or a second run tag. The caller then reads the file with `RunReader`,
//! which gives the records, or the error naming file, line and field. A line is read as
//! `RunReader` reads it: blank lines are skipped, a byte-order mark opens the file, columns are
//! separated by white space (`str::split_whitespace`), ids are at most
//! [`MAX_ID_LEN`](crate::ids::MAX_ID_LEN) bytes, the rank is a `u32` and the score a
//! finite `f64` as `str::parse` reads them.

use super::RunReadOptions;
use crate::formats::input::is_gzip;
use crate::ids::MAX_ID_LEN;
use std::path::Path;

/// A TREC run file's text, read whole.
#[derive(Debug)]
pub struct TrecText {
    text: String,
    max_line: usize,
}

/// What [`TrecText::parse`] gives: the caller's pairs in file order, and the run tag (`None`
/// when the file has no pairs).
#[derive(Debug)]
pub struct TrecPairs<'a, T> {
    pub pairs: Vec<T>,
    pub tag: Option<&'a str>,
}

/// Below this many bytes a file is parsed on one core.
const PARALLEL_FROM: usize = 1 << 20;

impl TrecText {
    /// Reads the file at `path` whole when the bulk reader can take it: `None` for a file that
    /// cannot be read, a gzip file, one over `options`' size bound, or one that is not UTF-8.
    pub fn read(path: &Path, options: &RunReadOptions) -> Option<TrecText> {
        TrecText::from_bytes(std::fs::read(path).ok()?, options)
    }

    /// A file's bytes, read already; `None` as for [`TrecText::read`].
    pub fn from_bytes(bytes: Vec<u8>, options: &RunReadOptions) -> Option<TrecText> {
        if is_gzip(&mut bytes.as_slice()).ok()?
            || options
                .max_decompressed_bytes
                .is_some_and(|limit| bytes.len() as u64 > limit)
        {
            return None;
        }
        Some(TrecText {
            text: String::from_utf8(bytes).ok()?,
            max_line: options.max_line_bytes,
        })
    }

    /// A run's text, as if read from a file with `options`.
    pub fn new(text: String, options: &RunReadOptions) -> TrecText {
        TrecText {
            text,
            max_line: options.max_line_bytes,
        }
    }

    /// Parses every line, on every core for a large file: `claim` is asked for the claim of
    /// each qid that differs from the previous line's, and `pair` makes the caller's pair of a
    /// line from that claim, the docno and the score (or gives up with `None`). `None` when a
    /// line is not one the TREC reader takes, or when two lines give different run tags.
    pub fn parse<'a, T, C, P>(&'a self, claim: C, pair: P) -> Option<TrecPairs<'a, T>>
    where
        T: Send,
        C: Fn(&'a str) -> u32 + Sync,
        P: Fn(u32, &'a str, f64) -> Option<T> + Sync,
    {
        let chunks = chunks(&self.text, parts_for(self.text.len()));
        let parsed: Vec<Option<(Vec<T>, Option<&'a str>)>> = if chunks.len() == 1 {
            vec![parse_chunk(&self.text, true, self.max_line, &claim, &pair)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunks
                    .iter()
                    .enumerate()
                    .map(|(i, &chunk)| {
                        let (claim, pair, max_line) = (&claim, &pair, self.max_line);
                        scope.spawn(move || parse_chunk(chunk, i == 0, max_line, claim, pair))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let mut pairs: Vec<T> = Vec::new();
        let mut tag: Option<&'a str> = None;
        for part in parsed {
            let (part_pairs, part_tag) = part?;
            match (tag, part_tag) {
                (Some(a), Some(b)) if a != b => return None,
                (None, Some(b)) => tag = Some(b),
                _ => {}
            }
            if pairs.is_empty() {
                pairs = part_pairs;
            } else {
                pairs.extend(part_pairs);
            }
        }
        Some(TrecPairs { pairs, tag })
    }
}

/// How many parts to parse a text of `len` bytes in.
fn parts_for(len: usize) -> usize {
    if len < PARALLEL_FROM {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 8)
}

/// `text` cut into at most `parts` pieces of about equal size, each ending after a line end.
fn chunks(text: &str, parts: usize) -> Vec<&str> {
    let mut chunks = Vec::with_capacity(parts);
    let mut start = 0;
    for i in 1..parts {
        let target = (text.len() * i / parts).max(start);
        let end = match text.as_bytes()[target..].iter().position(|&b| b == b'\n') {
            Some(offset) => target + offset + 1,
            None => text.len(),
        };
        if end > start {
            chunks.push(&text[start..end]);
            start = end;
        }
    }
    chunks.push(&text[start..]);
    chunks
}

/// White space as `char::is_whitespace` has it, among ASCII bytes: tab, line feed, vertical
/// tab, form feed, carriage return and space.
const SPACE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x09;
    while b <= 0x0D {
        table[b] = true;
        b += 1;
    }
    table[0x20] = true;
    table
};

fn is_space(b: u8) -> bool {
    SPACE[b as usize]
}

/// `a == b`, byte by byte: no `memcmp` call for the short tags and qids compared on every line.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

/// The six columns of a line, or `None` when it has another number of them.
fn columns(line: &str) -> Option<[&str; 6]> {
    let mut columns = [""; 6];
    let mut n = 0;
    if !line.is_ascii() {
        for column in line.split_whitespace() {
            *columns.get_mut(n)? = column;
            n += 1;
        }
        return (n == 6).then_some(columns);
    }
    let bytes = line.as_bytes();
    let mut i = 0;
    loop {
        while i < bytes.len() && is_space(bytes[i]) {
            i += 1;
        }
        if i == bytes.len() {
            break;
        }
        let start = i;
        while i < bytes.len() && !is_space(bytes[i]) {
            i += 1;
        }
        // ASCII bytes: every index is a char boundary.
        *columns.get_mut(n)? = &line[start..i];
        n += 1;
    }
    (n == 6).then_some(columns)
}

/// Parses the lines of one piece of the text (`first`: the piece that opens the file).
fn parse_chunk<'a, T, C, P>(
    chunk: &'a str,
    first: bool,
    max_line: usize,
    claim: &C,
    pair: &P,
) -> Option<(Vec<T>, Option<&'a str>)>
where
    C: Fn(&'a str) -> u32,
    P: Fn(u32, &'a str, f64) -> Option<T>,
{
    // About 33 bytes a line in a typical run.
    let mut pairs = Vec::with_capacity(chunk.len() / 32);
    let mut tag: Option<&'a str> = None;
    let mut last: Option<(&'a str, u32)> = None;
    let mut lines = chunk.split('\n');
    if chunk.ends_with('\n') {
        // `split` yields an empty piece after the last line end.
        lines.next_back();
    }
    for (n, line) in lines.enumerate() {
        if line.len() > max_line {
            return None;
        }
        let line = match (first && n == 0, line.strip_prefix('\u{FEFF}')) {
            (true, Some(rest)) => rest,
            _ => line,
        };
        if line.bytes().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let [qid, _q0, docno, rank, score, line_tag] = columns(line)?;
        if qid.len() > MAX_ID_LEN || docno.len() > MAX_ID_LEN {
            return None;
        }
        rank.parse::<u32>().ok()?;
        let score = score.parse::<f64>().ok().filter(|s| s.is_finite())?;
        match tag {
            Some(t) if !same(t, line_tag) => return None,
            Some(_) => {}
            None => tag = Some(line_tag),
        }
        let claim = match last {
            Some((q, c)) if same(q, qid) => c,
            _ => {
                let c = claim(qid);
                last = Some((qid, c));
                c
            }
        };
        pairs.push(pair(claim, docno, score)?);
    }
    Some((pairs, tag))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::input::Input;
    use crate::formats::run::{RunFormat, RunReader};

    type Row = (String, String, f64, String);

    fn options() -> RunReadOptions {
        RunReadOptions {
            max_line_bytes: 80,
            ..RunReadOptions::default()
        }
    }

    /// (qid, docno, score, tag) of every record, as RunReader reads `text`.
    fn reader(text: &str) -> Result<Vec<Row>, String> {
        let input: Input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        RunReader::from_input(input, "t", RunFormat::Trec, &options())
            .map_err(|e| e.to_string())?
            .map(|r| {
                let r = r.map_err(|e| e.to_string())?.record;
                Ok((
                    r.claim_id.to_string(),
                    r.doc_id.to_string(),
                    r.score.unwrap_or(f64::NAN),
                    r.system.unwrap_or_default(),
                ))
            })
            .collect()
    }

    /// The same from the bulk reader, the text cut in `parts` pieces (qids are numbers here).
    fn bulk(text: &str, parts: usize) -> Option<Vec<Row>> {
        let text = TrecText::new(text.to_owned(), &options());
        let claim = |q: &str| q.parse::<u32>().unwrap_or(u32::MAX);
        let pair = |c: u32, d: &str, s: f64| Some((c, d.to_owned(), s));
        let mut all = Vec::new();
        let mut tag = None;
        for (i, chunk) in chunks(&text.text, parts).into_iter().enumerate() {
            let (pairs, t) = parse_chunk(chunk, i == 0, text.max_line, &claim, &pair)?;
            if tag.is_some() && t.is_some() && tag != t {
                return None;
            }
            tag = tag.or(t);
            all.extend(pairs);
        }
        let whole = text.parse(claim, pair)?;
        assert_eq!(whole.pairs, all);
        assert_eq!(whole.tag, tag);
        let tag = tag.unwrap_or_default();
        Some(
            all.into_iter()
                .map(|(c, d, s)| (c.to_string(), d, s, tag.to_owned()))
                .collect(),
        )
    }

    #[test]
    fn reads_what_the_run_reader_reads_and_gives_up_where_it_fails() {
        let long = "x".repeat(90);
        let taken = [
            "1 Q0 10 1 2.5 sys\n1 Q0 11 2 1.5 sys\n2 Q0 10 1 -3 sys\n".to_owned(),
            "\u{FEFF}1 Q0 10 1 2.5 s\r\n\r\n  \n\t1\tQ0\t11 2  1e2 s \n2 Q0 10 +1 -0 s".to_owned(),
            "1\u{a0}Q0 10 1 2 sys\n".to_owned(),
            "1 Q0 d\u{e9}j\u{e0} 1 2 sys\n".to_owned(),
            "1 Q0 \u{FEFF}10 1 2 sys\n".to_owned(),
            "\n\n".to_owned(),
            String::new(),
            format!("1 Q0 10 1 2 {}\n", &long[..68]),
            format!("1 Q0 10 1 2 {}\r\n", &long[..67]),
            format!("\u{FEFF}1 Q0 10 1 2 {}\n", &long[..65]),
        ];
        let refused = [
            "1 Q0 10 1 2.5 sys extra\n".to_owned(),
            "1 Q0 10 x 2.5 sys\n".to_owned(),
            "1 Q0 10 -1 2.5 sys\n".to_owned(),
            "1 Q0 10 1 NaN sys\n".to_owned(),
            "1 Q0 10 1 inf sys\n".to_owned(),
            "1\u{a0}Q0 10 1 2 sys x\n".to_owned(),
            "\u{b}\n1 Q0 10 1 2 sys\n".to_owned(),
            "1 Q0 10 1 2 sys\n\u{FEFF}\n".to_owned(),
            format!("1 Q0 10 1 2 {long}\n"),
            format!("1 Q0 10 1 2 {}\n", &long[..69]),
            format!("1 Q0 10 1 2 {}\r\n", &long[..68]),
            format!("\u{FEFF}1 Q0 10 1 2 {}\n", &long[..66]),
            format!("1 Q0 {} 1 2 s\n", "7".repeat(257)),
        ];
        for text in &taken {
            let want = reader(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            for parts in [1, 2, 3, 7] {
                assert_eq!(
                    bulk(text, parts).as_ref(),
                    Some(&want),
                    "{text:?} in {parts}"
                );
            }
        }
        for text in &refused {
            assert!(reader(text).is_err(), "{text:?}");
            for parts in [1, 2, 3, 7] {
                assert_eq!(bulk(text, parts), None, "{text:?} in {parts}");
            }
        }
        // Two tags: the reader takes them (a choice of system follows); the bulk reader gives up.
        let two = "1 Q0 10 1 2.5 a\n1 Q0 11 2 1.5 b\n";
        assert_eq!(reader(two).map(|rows| rows.len()), Ok(2));
        for parts in [1, 2] {
            assert_eq!(bulk(two, parts), None);
        }
    }

    #[test]
    fn chunks_end_after_line_ends_and_cover_the_text() {
        let text = "a b\nc d e\n\nf\n";
        for parts in 1..8 {
            let pieces = chunks(text, parts);
            assert_eq!(pieces.concat(), text);
            assert!(pieces[..pieces.len() - 1].iter().all(|p| p.ends_with('\n')));
        }
    }
}
