//! earshot patch: `JSON.parse` without a reviver builds its values straight from the text.
//!
//! Boa 0.22 answers every `JSON.parse` by checking the text with `serde_json`, wrapping it in
//! `(` `);`, parsing that as a script, compiling it to bytecode and running it: a 1 MB array of
//! strings took about 60 ms, 8× its `JSON.stringify`. Without a reviver nothing needs the source
//! spans the script path keeps, so this deserialises the (already checked) text once with
//! `serde_json` into objects and arrays, in the text's order.
//!
//! What a script can see is what the script path gives: objects get `%Object.prototype%` and
//! their members by `CreateDataProperty` in the text's order (a repeated key keeps its first
//! place and takes the last value; `"__proto__"` is an own property), arrays come from
//! `CreateArrayFromList`, and numbers are parsed correctly rounded (serde_json's
//! `float_roundtrip`). This is also the syntax check now, with the same deserializer the old
//! check used, so the same texts are refused with the same messages (among them nesting past
//! 128, a lone surrogate escape and a number past `f64`, which Node accepts).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::{
    Context, JsResult, JsString, JsValue, builtins::Array, error::JsNativeError,
    object::JsObject, property::PropertyKey,
};

/// Parses `text`, a JSON text, into the value `JSON.parse(text)` returns without a reviver.
pub(crate) fn parse(text: &str, context: &mut Context) -> JsResult<JsValue> {
    let mut failure = None;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let seed = ValueSeed {
        context,
        failure: &mut failure,
    };
    let parsed = seed.deserialize(&mut deserializer).and_then(|value| {
        deserializer.end()?;
        Ok(value)
    });
    if let Some(error) = failure {
        return Err(error);
    }
    parsed.map_err(|e| JsNativeError::syntax().with_message(e.to_string()).into())
}

/// Deserialises one JSON value into a `JsValue`; an engine error (which creating a data property
/// on a fresh ordinary object never gives, but the API can) is kept in `failure`.
struct ValueSeed<'a, 'c> {
    context: &'c mut Context,
    failure: &'a mut Option<crate::JsError>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = JsValue;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<JsValue, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_> {
    type Value = JsValue;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::null())
    }

    fn visit_bool<E>(self, v: bool) -> Result<JsValue, E> {
        Ok(JsValue::new(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<JsValue, E> {
        Ok(i32::try_from(v).map_or_else(|_| JsValue::new(v as f64), JsValue::new))
    }

    fn visit_u64<E>(self, v: u64) -> Result<JsValue, E> {
        Ok(i32::try_from(v).map_or_else(|_| JsValue::new(v as f64), JsValue::new))
    }

    fn visit_f64<E>(self, v: f64) -> Result<JsValue, E> {
        Ok(JsValue::new(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<JsValue, E> {
        Ok(JsValue::new(JsString::from(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        loop {
            let seed = ValueSeed {
                context: &mut *self.context,
                failure: &mut *self.failure,
            };
            match seq.next_element_seed(seed)? {
                Some(element) => elements.push(element),
                None => break,
            }
        }
        Ok(Array::create_array_from_list(elements, self.context).into())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        let object = JsObject::with_object_proto(self.context.intrinsics());
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let seed = ValueSeed {
                context: &mut *self.context,
                failure: &mut *self.failure,
            };
            let value = map.next_value_seed(seed)?;
            if let Err(error) = object.create_data_property_or_throw(key, value, self.context) {
                *self.failure = Some(error);
                return Err(serde::de::Error::custom("JSON.parse could not create a property"));
            }
        }
        Ok(object.into())
    }
}

/// Deserialises an object member's name into the property key `CreateDataProperty` takes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = PropertyKey;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<PropertyKey, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = PropertyKey;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object member's name")
    }

    fn visit_str<E>(self, v: &str) -> Result<PropertyKey, E> {
        Ok(PropertyKey::from(JsString::from(v)))
    }
}
