//! What an extension hands the host (a tool's `structuredContent` and `content`, its
//! `inputSchema`) turned into JSON without recursion and within bounds.
//!
//! Boa's own `JsValue::to_json` recurses in Rust once per level and past every stack check:
//! `structuredContent` 30,000 levels deep came out as a `serde_json::Value` just as deep, whose
//! serialising and (recursive) dropping on a runtime thread with a small stack aborted
//! `earshot mcp serve` and `earshot acp`. [`to_json`] walks the value with a stack of its own,
//! refuses nesting deeper than [`MAX_DEPTH`] (what an MCP server's result may nest, read by
//! serde_json: nothing deeper than that is ever built) and values larger than their
//! [`JsonBudget`] (16 MiB as JSON, an MCP server's limit), and names a cycle. It reads the value
//! as `JSON.stringify` does: own enumerable string keys in order, `toJSON` methods, wrapped
//! primitives unwrapped, `undefined`, functions and symbols left out of objects (`null` in
//! arrays), non-finite numbers as `null`, a BigInt refused.

use std::collections::HashSet;

use boa_engine::builtins::object::OrdinaryObject;
use boa_engine::value::JsVariant;
use boa_engine::{Context, JsBigInt, JsError, JsObject, JsString, JsValue, js_string};
use serde_json::{Map, Number, Value};

/// The deepest nesting of arrays and objects taken from an extension in one field of a result
/// (the field's outermost array or object counts as one level): the most an MCP server's
/// `structuredContent` or `content` can nest, since rmcp reads the whole JSON-RPC message with
/// serde_json, which refuses a 128th level, and a result's fields start at the third. So a
/// result served on by `earshot mcp serve` is readable by the same reader.
pub const MAX_DEPTH: usize = 125;

/// The most bytes (as JSON text) of one tool result an extension returns: 16 MiB, the most an
/// MCP server's result may be.
pub const MAX_RESULT_BYTES: usize = 16 << 20;

/// Why a value could not be turned into JSON.
#[derive(Debug, thiserror::Error)]
pub enum ToJsonError {
    /// Arrays and objects nest deeper than the limit.
    #[error("nests deeper than {limit} levels of arrays and objects")]
    TooDeep {
        /// The limit ([`MAX_DEPTH`]).
        limit: usize,
    },
    /// The value, as JSON text, is over its budget.
    #[error("is larger than {} as JSON", show_bytes(*limit))]
    TooLarge {
        /// The budget it started with.
        limit: usize,
    },
    /// An object holds itself.
    #[error("holds itself (a cycle), which JSON cannot")]
    Cyclic,
    /// A BigInt, which `JSON.stringify` refuses too.
    #[error("holds a BigInt, which JSON cannot")]
    BigInt,
    /// A getter, proxy trap or `toJSON` threw.
    #[error("threw while being read: {0}")]
    Threw(String),
}

impl ToJsonError {
    /// Whether it is one of the host's limits (depth, size), not a value JSON cannot hold.
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            ToJsonError::TooDeep { .. } | ToJsonError::TooLarge { .. }
        )
    }
}

fn show_bytes(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

impl From<JsError> for ToJsonError {
    fn from(error: JsError) -> ToJsonError {
        let text = error.to_string();
        let line = text.lines().next().unwrap_or_default();
        ToJsonError::Threw(line.chars().take(300).collect())
    }
}

/// What is left of the bytes several values may take together (one tool result's `output`,
/// `content` and `structuredContent`).
#[derive(Debug, Clone, Copy)]
pub struct JsonBudget {
    limit: usize,
    left: usize,
}

impl JsonBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> JsonBudget {
        JsonBudget { limit, left: limit }
    }

    /// Takes `bytes` from what is left.
    ///
    /// # Errors
    /// [`ToJsonError::TooLarge`] when fewer are left.
    pub fn take(&mut self, bytes: usize) -> Result<(), ToJsonError> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(ToJsonError::TooLarge { limit: self.limit }),
        }
    }
}

/// One array or object being read: what it holds so far, and where the reading is.
enum Frame {
    Array {
        object: JsObject,
        items: Vec<Value>,
        next: u64,
        length: u64,
    },
    Object {
        object: JsObject,
        map: Map<String, Value>,
        keys: Vec<JsString>,
        next: usize,
        key: Option<String>,
    },
}

impl Frame {
    fn object(&self) -> &JsObject {
        match self {
            Frame::Array { object, .. } | Frame::Object { object, .. } => object,
        }
    }
}

/// A value after `toJSON` and unwrapping: a JSON leaf (`None`: left out), or an array or object
/// to read.
enum Step {
    Leaf(Option<Value>),
    Array(JsObject),
    Object(JsObject),
}

/// `value` as JSON, read as `JSON.stringify(value)` would (`None` when it would give
/// `undefined`), nesting at most [`MAX_DEPTH`] levels and taking its size from `budget`.
///
/// # Errors
/// Too deep, too large, a cycle, a BigInt, or an exception from the extension's own code (a
/// getter, a proxy trap, `toJSON`).
pub fn to_json(
    value: &JsValue,
    budget: &mut JsonBudget,
    context: &mut Context,
) -> Result<Option<Value>, ToJsonError> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut open: HashSet<JsObject> = HashSet::new();
    let first = prepare(value.clone(), &js_string!(), context)?;
    if let Some(leaf) = enter(first, &mut stack, &mut open, budget, context)? {
        return Ok(leaf);
    }
    loop {
        let Some(top) = stack.last_mut() else {
            return Ok(None);
        };
        // The next member of the innermost array or object, or that array or object, complete.
        let member = match top {
            Frame::Array {
                object,
                next,
                length,
                ..
            } => {
                if *next < *length {
                    let index = *next;
                    *next += 1;
                    let object = object.clone();
                    let value = object.get(index, context)?;
                    let key = if value.is_object() {
                        JsString::from(index.to_string())
                    } else {
                        js_string!()
                    };
                    Some(prepare(value, &key, context)?)
                } else {
                    None
                }
            }
            Frame::Object {
                object,
                keys,
                next,
                key,
                ..
            } => {
                if *next < keys.len() {
                    let name = keys[*next].clone();
                    *next += 1;
                    let object = object.clone();
                    let value = object.get(name.clone(), context)?;
                    *key = Some(name.to_std_string_escaped());
                    Some(prepare(value, &name, context)?)
                } else {
                    None
                }
            }
        };
        let done = match member {
            Some(step) => match enter(step, &mut stack, &mut open, budget, context)? {
                Some(leaf) => leaf,
                None => continue,
            },
            None => {
                let frame = stack.pop().expect("a frame was on the stack");
                open.remove(frame.object());
                Some(match frame {
                    Frame::Array { items, .. } => Value::Array(items),
                    Frame::Object { map, .. } => Value::Object(map),
                })
            }
        };
        let Some(parent) = stack.last_mut() else {
            return Ok(done);
        };
        match parent {
            Frame::Array { items, .. } => {
                budget.take(1)?;
                items.push(done.unwrap_or(Value::Null));
            }
            Frame::Object { map, key, .. } => {
                let key = key.take().unwrap_or_default();
                if let Some(done) = done {
                    budget.take(key.len() + 4)?;
                    map.insert(key, done);
                }
            }
        }
    }
}

/// Starts reading `step`: a leaf is returned at once (`Some`); an array or object is pushed
/// (`None`), once its depth, its place among the open ones and its keys have been checked.
fn enter(
    step: Step,
    stack: &mut Vec<Frame>,
    open: &mut HashSet<JsObject>,
    budget: &mut JsonBudget,
    context: &mut Context,
) -> Result<Option<Option<Value>>, ToJsonError> {
    let object = match step {
        Step::Leaf(leaf) => {
            budget.take(leaf.as_ref().map_or(0, leaf_bytes))?;
            return Ok(Some(leaf));
        }
        Step::Array(object) | Step::Object(object) => object,
    };
    if stack.len() >= MAX_DEPTH {
        return Err(ToJsonError::TooDeep { limit: MAX_DEPTH });
    }
    if open.contains(&object) {
        return Err(ToJsonError::Cyclic);
    }
    budget.take(2)?;
    let frame = if object.is_array() {
        let length = object
            .get(js_string!("length"), context)?
            .to_length(context)?;
        Frame::Array {
            object: object.clone(),
            items: Vec::new(),
            next: 0,
            length,
        }
    } else {
        let names = OrdinaryObject::keys(&JsValue::undefined(), &[object.clone().into()], context)?;
        let names = names.as_object().unwrap_or_else(|| object.clone());
        let count = names
            .get(js_string!("length"), context)?
            .to_length(context)?;
        let mut keys = Vec::new();
        for index in 0..count {
            // Each key takes at least its quotes and colon: a budget over keys alone stops here.
            budget.take(3)?;
            let name = names.get(index, context)?;
            if let Some(name) = name.as_string() {
                keys.push(name.clone());
            }
        }
        // Given back as the members are written (a member left out costs nothing).
        budget.left += keys.len() * 3;
        Frame::Object {
            object: object.clone(),
            map: Map::new(),
            keys,
            next: 0,
            key: None,
        }
    };
    open.insert(object);
    stack.push(frame);
    Ok(None)
}

/// SerializeJSONProperty's first steps: `toJSON`, then unwrapping `Number`, `String`, `Boolean`
/// and `BigInt` objects; what is left is a leaf, an array or an object.
fn prepare(value: JsValue, key: &JsString, context: &mut Context) -> Result<Step, ToJsonError> {
    let mut value = value;
    if let Some(object) = value.as_object() {
        let method = object.get(js_string!("toJSON"), context)?;
        if let Some(function) = method.as_callable() {
            value = function.call(&value, &[key.clone().into()], context)?;
        }
    }
    if let Some(object) = value.as_object() {
        if let Some(number) = object.downcast_ref::<f64>() {
            return Ok(Step::Leaf(Some(number_value(*number))));
        }
        if let Some(string) = object.downcast_ref::<JsString>() {
            return Ok(Step::Leaf(Some(Value::String(
                string.to_std_string_escaped(),
            ))));
        }
        if let Some(flag) = object.downcast_ref::<bool>() {
            return Ok(Step::Leaf(Some(Value::Bool(*flag))));
        }
        if object.is::<JsBigInt>() {
            return Err(ToJsonError::BigInt);
        }
    }
    Ok(match value.variant() {
        JsVariant::Null => Step::Leaf(Some(Value::Null)),
        JsVariant::Undefined | JsVariant::Symbol(_) => Step::Leaf(None),
        JsVariant::Boolean(flag) => Step::Leaf(Some(Value::Bool(flag))),
        JsVariant::String(string) => {
            Step::Leaf(Some(Value::String(string.to_std_string_escaped())))
        }
        JsVariant::Float64(number) => Step::Leaf(Some(number_value(number))),
        JsVariant::Integer32(number) => Step::Leaf(Some(Value::from(number))),
        JsVariant::BigInt(_) => return Err(ToJsonError::BigInt),
        JsVariant::Object(object) => {
            if object.is_callable() {
                Step::Leaf(None)
            } else if object.is_array() {
                Step::Array(object)
            } else {
                Step::Object(object)
            }
        }
    })
}

/// A number as `JSON.stringify` writes it: integers without a fraction, non-finite as `null`.
fn number_value(number: f64) -> Value {
    if !number.is_finite() {
        return Value::Null;
    }
    // 2^53: every integer below it is exact in both f64 and i64.
    if number.fract() == 0.0 && number.abs() < 9_007_199_254_740_992.0 {
        return Value::Number(Number::from(number as i64));
    }
    Number::from_f64(number).map_or(Value::Null, Value::Number)
}

/// About the bytes a leaf takes as JSON text (strings without their escapes' growth).
fn leaf_bytes(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => number.to_string().len(),
        Value::String(text) => text.len() + 2,
        Value::Array(_) | Value::Object(_) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boa_engine::Source;

    fn read(source: &str) -> Result<Option<Value>, ToJsonError> {
        let mut context = Context::default();
        let value = context
            .eval(Source::from_bytes(source.as_bytes()))
            .expect("the test's script runs");
        to_json(&value, &mut JsonBudget::new(MAX_RESULT_BYTES), &mut context)
    }

    /// A script that builds `levels` of arrays or objects in a loop (Boa's parser would recurse
    /// on a literal that deep).
    fn nested(levels: usize, array: bool) -> String {
        let wrap = if array { "[v]" } else { "({a: v})" };
        format!("let v = 1; for (let i = 0; i < {levels}; i++) v = {wrap}; v")
    }

    #[test]
    fn it_reads_as_json_stringify_does() {
        let value = read(
            "({ b: 1, a: [1, undefined, () => 1, Symbol('s')], u: undefined, f() {}, \
              n: NaN, i: -Infinity, big: 2 ** 40, frac: 0.5, neg: -0, \
              d: new Date(0), w: [new Number(3), new String('s'), new Boolean(false)], \
              get g() { return 'got'; }, 2: 'two', 1: 'one', \
              [Symbol('k')]: 1, t: { toJSON(key) { return 'key ' + key; } } })",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            value.to_string(),
            r#"{"1":"one","2":"two","b":1,"a":[1,null,null,null],"n":null,"i":null,"big":1099511627776,"frac":0.5,"neg":0,"d":"1970-01-01T00:00:00.000Z","w":[3,"s",false],"g":"got","t":"key t"}"#
        );
        assert_eq!(read("undefined").unwrap(), None);
        assert_eq!(read("(() => 1)").unwrap(), None);
        assert_eq!(read("'x'").unwrap(), Some(Value::from("x")));
        // Non-enumerable properties are left out, as JSON.stringify leaves them.
        assert_eq!(
            read("Object.defineProperty({a: 1}, 'hidden', {value: 2})")
                .unwrap()
                .unwrap()
                .to_string(),
            r#"{"a":1}"#
        );
    }

    #[test]
    fn nesting_up_to_the_limit_is_read_and_deeper_is_refused() {
        for array in [true, false] {
            let deepest = read(&nested(MAX_DEPTH, array)).unwrap().unwrap();
            // What the host builds, serde_json (and so the MCP reader) reads back.
            let text = deepest.to_string();
            let back: Value = serde_json::from_str(&text).expect("serde_json reads it back");
            assert_eq!(back, deepest);
            for levels in [MAX_DEPTH + 1, MAX_DEPTH + 2, 30_000] {
                let error = read(&nested(levels, array)).unwrap_err();
                assert!(
                    matches!(error, ToJsonError::TooDeep { limit: MAX_DEPTH }),
                    "{levels}: {error}"
                );
            }
        }
    }

    #[test]
    fn cycles_bigints_and_throws_are_named() {
        assert!(matches!(
            read("const o = {a: [1]}; o.a.push(o); o").unwrap_err(),
            ToJsonError::Cyclic
        ));
        // The same object twice, side by side, is no cycle.
        assert_eq!(
            read("const s = {x: 1}; [s, s]")
                .unwrap()
                .unwrap()
                .to_string(),
            r#"[{"x":1},{"x":1}]"#
        );
        assert!(matches!(
            read("({a: 1n})").unwrap_err(),
            ToJsonError::BigInt
        ));
        let threw = read("({ get a() { throw new Error('no\\nmore'); } })").unwrap_err();
        let line = threw.to_string();
        assert!(
            line.starts_with("threw while being read: ") && line.contains("no"),
            "{line}"
        );
        assert!(!line.contains('\n') && !line.contains("more"), "{line}");
    }

    #[test]
    fn width_is_bounded_by_the_budget() {
        let mut context = Context::default();
        for source in [
            "new Array(2 ** 32 - 1)",
            "Array.from({length: 4e5}, (_, i) => i)",
            "const o = {}; for (let i = 0; i < 1.2e5; i++) o['k' + i] = 1; o",
            "['x'.repeat(5 << 20), 'y'.repeat(5 << 20)]",
        ] {
            let value = context.eval(Source::from_bytes(source.as_bytes())).unwrap();
            let error = to_json(&value, &mut JsonBudget::new(1 << 20), &mut context).unwrap_err();
            assert!(
                matches!(error, ToJsonError::TooLarge { limit: 1_048_576 }),
                "{source}: {error}"
            );
            assert_eq!(error.to_string(), "is larger than 1 MiB as JSON");
        }
    }
}
