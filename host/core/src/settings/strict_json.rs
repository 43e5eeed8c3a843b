//! JSON for files that carry rules or trust, read by serde_json but refusing a key that appears
//! twice in one object, at any depth.
//!
//! serde_json keeps the last of two equal keys, so a second `"permissions"` block or a second
//! `"deny"` list would silently drop the first one's deny rules. Here a duplicate is an error
//! with its line, column and the dotted path of the key (`permissions.deny`), exactly like a
//! syntax error. Everything else (numbers, strings, escapes, nesting limit) is serde_json's own:
//! without a duplicate the result equals `serde_json::from_str::<Value>`.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a text is not strict JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StrictJsonError {
    /// A key appears twice in one object.
    #[error("{line}:{column}: the key \"{key}\" appears twice")]
    DuplicateKey {
        /// 1-based line of the second occurrence.
        line: usize,
        /// 1-based column just past the second occurrence.
        column: usize,
        /// The key's dotted path from the top (`permissions.deny`, `mcpServers.gh.env.TOKEN`,
        /// `list[2].name`), made safe to show: control characters dropped, at most 200
        /// characters.
        key: String,
    },
    /// Not JSON at all.
    #[error("{line}:{column}: {reason}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde_json said, without its trailing position.
        reason: String,
    },
}

/// Parses `text` as JSON as serde_json does, refusing any object that holds a key twice.
///
/// # Errors
/// [`StrictJsonError::DuplicateKey`] for the first repeated key found (in reading order), or
/// [`StrictJsonError::Syntax`] for anything serde_json refuses.
pub fn from_str_refusing_duplicates(text: &str) -> Result<Value, StrictJsonError> {
    let duplicate = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = Node {
        path: &Path::Root,
        duplicate: &duplicate,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    match parsed {
        Ok(value) => Ok(value),
        Err(error) => match duplicate.into_inner() {
            Some(key) => Err(StrictJsonError::DuplicateKey {
                line: error.line(),
                column: error.column(),
                key,
            }),
            None => Err(StrictJsonError::Syntax {
                line: error.line(),
                column: error.column(),
                reason: strip_position(&error.to_string()),
            }),
        },
    }
}

/// serde_json appends " at line L column C"; the report puts the position first instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// Where a value sits, for the report: a linked list from the value up to the root.
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Key(Path::Root, key) => f.write_str(key),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// Seeds one value: carries its path and the slot where a duplicate is recorded (serde_json's
/// error type is opaque, so the kind of failure travels beside it).
#[derive(Clone, Copy)]
struct Node<'a> {
    path: &'a Path<'a>,
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // serde_json never hands over a NaN or an infinity; `Null` is what its own Value does.
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            let path = Path::Index(self.path, items.len());
            let seed = Node {
                path: &path,
                duplicate: self.duplicate,
            };
            match seq.next_element_seed(seed)? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = Path::Key(self.path, &key);
            if object.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(shown(&path.to_string()));
                return Err(A::Error::custom(format_args!(
                    "the key \"{path}\" appears twice"
                )));
            }
            let value = map.next_value_seed(Node {
                path: &path,
                duplicate: self.duplicate,
            })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// A key path made safe to print: no control characters (a key can hold an escape sequence),
/// at most 200 characters.
fn shown(path: &str) -> String {
    path.chars().filter(|c| !c.is_control()).take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_is_refused_with_its_path_and_line() {
        let text =
            "{\n  \"permissions\": {\n    \"deny\": [\"Mcp(gh__*)\"],\n    \"deny\": []\n  }\n}";
        match from_str_refusing_duplicates(text) {
            Err(StrictJsonError::DuplicateKey { line, key, .. }) => {
                assert_eq!((line, key.as_str()), (4, "permissions.deny"));
            }
            other => panic!("{other:?}"),
        }
        let text = r#"{"a": [1, {"b": {"c": 1, "c": 2}}]}"#;
        assert!(matches!(
            from_str_refusing_duplicates(text),
            Err(StrictJsonError::DuplicateKey { key, .. }) if key == "a[1].b.c"
        ));
        // Escapes are compared after decoding, as serde_json would have merged them.
        let text = r#"{"deny": 1, "d\u0065ny": 2}"#;
        assert!(matches!(
            from_str_refusing_duplicates(text),
            Err(StrictJsonError::DuplicateKey { key, .. }) if key == "deny"
        ));
    }

    #[test]
    fn without_a_duplicate_it_is_serde_json() {
        let text = r#"{"z": 1, "a": [1.5, -2, 18446744073709551615, null, true, "x\n"], "m": {}}"#;
        assert_eq!(
            from_str_refusing_duplicates(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert!(matches!(
            from_str_refusing_duplicates("{\"a\": 1,}"),
            Err(StrictJsonError::Syntax { line: 1, .. })
        ));
        assert!(matches!(
            from_str_refusing_duplicates("{} {}"),
            Err(StrictJsonError::Syntax { .. })
        ));
    }
}
