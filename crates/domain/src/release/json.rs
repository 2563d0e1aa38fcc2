//! Small pieces for writing JSON lines deterministically.

use super::error::ReleaseError;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// An external id written as SciFact writes it: a JSON integer when the text is one in canonical
/// form (digits, no leading zero, fits in 64 bits), a string otherwise. Readers accept both, and
/// reading the integer back gives the same text.
pub(crate) struct JsonId<'a>(pub &'a str);

impl Serialize for JsonId<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match canonical_integer(self.0) {
            Some(n) => s.serialize_u64(n),
            None => s.serialize_str(self.0),
        }
    }
}

/// The integer `text` spells, if it spells one the way `u64::to_string` would.
fn canonical_integer(text: &str) -> Option<u64> {
    let n: u64 = text.parse().ok()?;
    (n.to_string() == text).then_some(n)
}

/// A JSON object whose entries are written in the order given (callers give them sorted).
pub(crate) struct OrderedMap<K, V>(pub Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for OrderedMap<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Appends `value` as one line of JSON to `out`.
pub(crate) fn push_line<T: Serialize>(
    out: &mut Vec<u8>,
    file: &'static str,
    value: &T,
) -> Result<(), ReleaseError> {
    serde_json::to_writer(&mut *out, value)
        .map_err(|source| ReleaseError::Serialize { file, source })?;
    out.push(b'\n');
    Ok(())
}

/// `value` as pretty JSON with a final newline.
pub(crate) fn pretty<T: Serialize>(file: &'static str, value: &T) -> Result<Vec<u8>, ReleaseError> {
    let mut out = serde_json::to_vec_pretty(value)
        .map_err(|source| ReleaseError::Serialize { file, source })?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_integers_only_in_canonical_form() {
        let json = |s| serde_json::to_string(&JsonId(s)).unwrap();
        assert_eq!(json("4983"), "4983");
        assert_eq!(json("0"), "0");
        assert_eq!(json("007"), "\"007\"");
        assert_eq!(json("MED-10"), "\"MED-10\"");
        assert_eq!(json("+5"), "\"+5\"");
        assert_eq!(json("18446744073709551616"), "\"18446744073709551616\"");
    }

    #[test]
    fn ordered_maps_keep_the_given_order() {
        let map = OrderedMap(vec![("b", 1), ("a", 2)]);
        assert_eq!(serde_json::to_string(&map).unwrap(), r#"{"b":1,"a":2}"#);
    }
}
