//! Native replacements for the string and regular-expression built-ins whose Boa 0.22
//! implementation is quadratic in the input (`split`, `replaceAll`, `indexOf`, `includes`,
//! `lastIndexOf`, `RegExp.prototype.exec` and `RegExp.prototype[Symbol.split]`); see
//! docs/upstream/boa-quadratic-strings.md for the causes. `RegExp.prototype.test`,
//! `[Symbol.replace]` and `[Symbol.split]` also match with the host's own `regress` program, as
//! Boa's exec costs about 5 µs a match, and `test` without `g` or `y` on a Latin1 text asks a
//! finite automaton whether a match exists (`exists.rs`).
//!
//! Each override follows the ECMAScript algorithm and takes its fast path only when every step it
//! skips is unobservable (primitive arguments, untouched prototypes); otherwise it calls the saved
//! built-in with the same `this` and arguments, so the built-in's behaviour is kept exactly.

mod exists;
mod matcher;
mod regexps;
mod search;
mod strings;

use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::{PropertyDescriptor, PropertyKey};
use boa_engine::{Context, JsObject, JsResult, JsString, JsValue, NativeFunction};

/// Installs every override in `context`'s realm.
///
/// # Errors
/// When a built-in is missing or cannot be redefined (a bug, not an extension's fault).
pub fn install(context: &mut Context) -> JsResult<()> {
    strings::install(context)?;
    regexps::install(context)
}

/// The current value of `proto[key]` as a function object (the built-in about to be replaced).
pub(super) fn saved(
    proto: &JsObject,
    key: impl Into<PropertyKey>,
    context: &mut Context,
) -> JsResult<JsObject> {
    let key = key.into();
    proto
        .get(key.clone(), context)?
        .as_callable()
        .ok_or_else(|| {
            boa_engine::JsNativeError::typ()
                .with_message(format!("built-in {key} is not a function"))
                .into()
        })
}

/// Defines `proto[key]` as a native function with the built-in's name, length and attributes
/// (writable, configurable, not enumerable); returns the function object.
pub(super) fn define(
    proto: &JsObject,
    key: impl Into<PropertyKey>,
    name: JsString,
    length: usize,
    function: NativeFunction,
    context: &mut Context,
) -> JsResult<JsObject> {
    let realm = context.realm().clone();
    let object: JsObject = FunctionObjectBuilder::new(&realm, function)
        .name(name)
        .length(length)
        .build()
        .into();
    proto.define_property_or_throw(
        key,
        PropertyDescriptor::builder()
            .value(object.clone())
            .writable(true)
            .enumerable(false)
            .configurable(true),
        context,
    )?;
    Ok(object)
}

/// A code-unit index or count as a JavaScript number.
fn number(value: usize) -> JsValue {
    match i32::try_from(value) {
        Ok(small) => JsValue::new(small),
        Err(_) => JsValue::new(value as f64),
    }
}
