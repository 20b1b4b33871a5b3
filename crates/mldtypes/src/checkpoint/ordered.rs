//! JSON values whose objects keep their keys in document order, so the
//! index, `config.json` and `__metadata__` are written back in the input's
//! order (serde_json's `Value` sorts them). Parsing and printing are
//! serde_json's; this is only the tree.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value; objects are key–value lists in document order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    /// null, a boolean, a number or a string.
    Scalar(serde_json::Value),
}

impl Json {
    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` of an object: in place when present, else at the end.
    /// Does nothing to other values.
    pub fn set(&mut self, key: &str, v: Json) {
        if let Json::Object(m) = self {
            match m.iter_mut().find(|(k, _)| k == key) {
                Some(e) => e.1 = v,
                None => m.push((key.to_string(), v)),
            }
        }
    }

    /// Removes `key` from an object.
    pub fn remove(&mut self, key: &str) {
        if let Json::Object(m) = self {
            m.retain(|(k, _)| k != key);
        }
    }

    /// The value of `key` of an object, made an empty object first when it is
    /// missing or not an object.
    pub fn object_at(&mut self, key: &str) -> &mut Json {
        if !matches!(self.get(key), Some(Json::Object(_))) {
            self.set(key, Json::Object(Vec::new()));
        }
        match self {
            Json::Object(m) => &mut m.iter_mut().find(|(k, _)| k == key).expect("set above").1,
            _ => unreachable!("only objects get keys"),
        }
    }

    /// A serde_json value (objects with sorted keys), for reading.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Json::Object(m) => serde_json::Value::Object(
                m.iter().map(|(k, v)| (k.clone(), v.to_value())).collect(),
            ),
            Json::Array(a) => serde_json::Value::Array(a.iter().map(Json::to_value).collect()),
            Json::Scalar(v) => v.clone(),
        }
    }

    /// From a serde_json value (objects in its key order).
    pub fn from_value(v: serde_json::Value) -> Json {
        match v {
            serde_json::Value::Object(m) => Json::Object(
                m.into_iter()
                    .map(|(k, v)| (k, Json::from_value(v)))
                    .collect(),
            ),
            serde_json::Value::Array(a) => {
                Json::Array(a.into_iter().map(Json::from_value).collect())
            }
            v => Json::Scalar(v),
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Json::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Json::Scalar(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Scalar(b.into()))
            }
            fn visit_i64<E>(self, x: i64) -> Result<Json, E> {
                Ok(Json::Scalar(x.into()))
            }
            fn visit_u64<E>(self, x: u64) -> Result<Json, E> {
                Ok(Json::Scalar(x.into()))
            }
            fn visit_f64<E>(self, x: f64) -> Result<Json, E> {
                Ok(Json::Scalar(x.into()))
            }
            fn visit_str<E>(self, x: &str) -> Result<Json, E> {
                Ok(Json::Scalar(x.into()))
            }
            fn visit_string<E>(self, x: String) -> Result<Json, E> {
                Ok(Json::Scalar(x.into()))
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Scalar(serde_json::Value::Null))
            }
            fn visit_none<E>(self) -> Result<Json, E> {
                Ok(Json::Scalar(serde_json::Value::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
                Json::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Json::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut m: Vec<(String, Json)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Json>()? {
                    // A repeated key: the last value wins, at the first place
                    // (as serde_json's Value keeps it).
                    match m.iter_mut().find(|(x, _)| *x == k) {
                        Some(e) => e.1 = v,
                        None => m.push((k, v)),
                    }
                }
                Ok(Json::Object(m))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn keys_keep_document_order_through_a_round_trip() {
        let text = r#"{"z":1,"a":{"y":[{"q":1,"b":2}],"c":null},"m":"s","z2":1.5,"t":true}"#;
        let mut j: Json = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&j).unwrap(), text);
        j.set("a", Json::Scalar(3.into()));
        j.set("new", Json::Scalar("x".into()));
        j.remove("m");
        j.object_at("o").set("k", Json::Scalar(1.into()));
        assert_eq!(
            serde_json::to_string(&j).unwrap(),
            r#"{"z":1,"a":3,"z2":1.5,"t":true,"new":"x","o":{"k":1}}"#
        );
        assert_eq!(j.get("z2"), Some(&Json::Scalar(1.5.into())));
        assert_eq!(j.to_value()["o"]["k"], 1);
    }
}
