//! A JSON object keyed by system name, in the snapshot's system order.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// Values by system name, kept in order; serialized as a JSON object `{NAME: value}`.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct ByName<T>(pub Vec<(String, T)>);

impl<T> ByName<T> {
    /// The value of system `name`.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Names and values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> + '_ {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// Number of systems.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no system.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T> FromIterator<(String, T)> for ByName<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(items: I) -> Self {
        ByName(items.into_iter().collect())
    }
}

impl<T: Serialize> Serialize for ByName<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ByName<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
            type Value = ByName<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object keyed by system name")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ByName<T>, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(entry) = map.next_entry::<String, T>()? {
                    entries.push(entry);
                }
                Ok(ByName(entries))
            }
        }

        deserializer.deserialize_map(Entries(PhantomData))
    }
}
