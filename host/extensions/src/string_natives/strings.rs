//! `String.prototype.split`, `indexOf`, `includes`, `lastIndexOf` and `replaceAll` with a string
//! pattern, searching from where the algorithm says instead of from index 0 every time.

use boa_engine::object::builtins::JsArray;
use boa_engine::property::PropertyKey;
use boa_engine::{
    Context, Finalize, JsArgs, JsObject, JsResult, JsString, JsSymbol, JsValue, NativeFunction,
    Trace, js_string,
};

use super::search::{Needle, positions};
use super::{define, number, saved};

/// What an override needs: the built-in it replaces, and the prototypes a string primitive's
/// method look-up walks.
#[derive(Trace, Finalize)]
struct Saved {
    builtin: JsObject,
    string_proto: JsObject,
    object_proto: JsObject,
}

impl Saved {
    fn delegate(
        &self,
        this: &JsValue,
        args: &[JsValue],
        context: &mut Context,
    ) -> JsResult<JsValue> {
        self.builtin.call(this, args, context)
    }

    /// Whether `GetMethod(stringPrimitive, key)` finds nothing, decided without running any
    /// script: `String.prototype` then `Object.prototype`, neither with an own `key`.
    fn strings_lack(&self, key: JsSymbol) -> bool {
        let key = PropertyKey::from(key);
        let lacks = |object: &JsObject| object.borrow().properties().get(&key).is_none();
        lacks(&self.string_proto)
            && self
                .string_proto
                .prototype()
                .is_some_and(|proto| JsObject::equals(&proto, &self.object_proto))
            && lacks(&self.object_proto)
    }
}

type Method = fn(&JsValue, &[JsValue], &Saved, &mut Context) -> JsResult<JsValue>;

/// Replaces the five methods on `String.prototype`.
pub(super) fn install(context: &mut Context) -> JsResult<()> {
    let string_proto = context.intrinsics().constructors().string().prototype();
    let object_proto = context.intrinsics().constructors().object().prototype();
    let methods: [(JsString, usize, Method); 5] = [
        (js_string!("split"), 2, split),
        (js_string!("indexOf"), 1, index_of),
        (js_string!("includes"), 1, includes),
        (js_string!("lastIndexOf"), 1, last_index_of),
        (js_string!("replaceAll"), 2, replace_all),
    ];
    for (name, length, method) in methods {
        let captures = Saved {
            builtin: saved(&string_proto, name.clone(), context)?,
            string_proto: string_proto.clone(),
            object_proto: object_proto.clone(),
        };
        let function = NativeFunction::from_copy_closure_with_captures(method, captures);
        define(&string_proto, name.clone(), name, length, function, context)?;
    }
    Ok(())
}

/// `ToIntegerOrInfinity(position)` clamped to `0..=len`, for a number or undefined (NaN is 0).
fn clamp_position(position: &JsValue, len: usize) -> usize {
    let value = position.as_number().unwrap_or(0.0);
    if value.is_nan() || value <= 0.0 {
        0
    } else if value >= len as f64 {
        len
    } else {
        value.trunc() as usize
    }
}

/// `this` and the search string, when both are string primitives and `position` is a number or
/// undefined: then no coercion the algorithm performs can run script.
fn plain_search(this: &JsValue, args: &[JsValue]) -> Option<(JsString, JsString)> {
    let position = args.get_or_undefined(1);
    if !(position.is_undefined() || position.is_number()) {
        return None;
    }
    Some((this.as_string()?, args.get_or_undefined(0).as_string()?))
}

fn index_of(
    this: &JsValue,
    args: &[JsValue],
    saved: &Saved,
    context: &mut Context,
) -> JsResult<JsValue> {
    let Some((text, search)) = plain_search(this, args) else {
        return saved.delegate(this, args, context);
    };
    let start = clamp_position(args.get_or_undefined(1), text.len());
    Ok(Needle::new(search.as_str())
        .find(text.as_str(), start)
        .map_or(JsValue::new(-1), number))
}

fn includes(
    this: &JsValue,
    args: &[JsValue],
    saved: &Saved,
    context: &mut Context,
) -> JsResult<JsValue> {
    let Some((text, search)) = plain_search(this, args) else {
        return saved.delegate(this, args, context);
    };
    let start = clamp_position(args.get_or_undefined(1), text.len());
    Ok(JsValue::new(
        Needle::new(search.as_str())
            .find(text.as_str(), start)
            .is_some(),
    ))
}

fn last_index_of(
    this: &JsValue,
    args: &[JsValue],
    saved: &Saved,
    context: &mut Context,
) -> JsResult<JsValue> {
    let Some((text, search)) = plain_search(this, args) else {
        return saved.delegate(this, args, context);
    };
    // A NaN (or absent) position means +∞ here, unlike indexOf.
    let start = match args.get_or_undefined(1).as_number() {
        Some(value) if !value.is_nan() => clamp_position(&JsValue::new(value), text.len()),
        _ => text.len(),
    };
    Ok(Needle::new(search.as_str())
        .rfind(text.as_str(), start)
        .map_or(JsValue::new(-1), number))
}

/// `String.prototype.split`: the fast path covers a string `this`, a non-empty string separator
/// and a numeric or absent limit; everything else (RegExp separators through `@@split` included)
/// is the built-in's.
fn split(
    this: &JsValue,
    args: &[JsValue],
    saved: &Saved,
    context: &mut Context,
) -> JsResult<JsValue> {
    let (separator, limit) = (args.get_or_undefined(0), args.get_or_undefined(1));
    let (Some(text), Some(separator)) = (this.as_string(), separator.as_string()) else {
        return saved.delegate(this, args, context);
    };
    if !(limit.is_undefined() || limit.is_number())
        || separator.is_empty()
        || text.is_empty()
        || !saved.strings_lack(JsSymbol::split())
    {
        return saved.delegate(this, args, context);
    }
    let limit = if limit.is_undefined() {
        u32::MAX
    } else {
        limit.to_u32(context)?
    } as usize;
    if limit == 0 {
        return saved.delegate(this, args, context);
    }
    let needle = Needle::new(separator.as_str());
    let mut pieces = Vec::new();
    let mut start = 0;
    while let Some(found) = needle.find(text.as_str(), start) {
        pieces.push(JsValue::new(text.slice(start, found)));
        if pieces.len() == limit {
            return Ok(JsArray::from_iter(pieces, context).into());
        }
        start = found + needle.len();
    }
    pieces.push(JsValue::new(text.slice(start, text.len())));
    Ok(JsArray::from_iter(pieces, context).into())
}

/// `String.prototype.replaceAll` with a string pattern and a string (or primitive) or function
/// replacement; a RegExp or other object pattern, or an object replacement that is not callable,
/// goes to the built-in.
fn replace_all(
    this: &JsValue,
    args: &[JsValue],
    saved: &Saved,
    context: &mut Context,
) -> JsResult<JsValue> {
    let (search, replace) = (args.get_or_undefined(0), args.get_or_undefined(1));
    let (Some(text), Some(search)) = (this.as_string(), search.as_string()) else {
        return saved.delegate(this, args, context);
    };
    let function = replace.as_callable();
    if (function.is_none() && (replace.is_object() || replace.is_symbol()))
        || !saved.strings_lack(JsSymbol::replace())
    {
        return saved.delegate(this, args, context);
    }
    let template = match function {
        Some(_) => None,
        None => Some(replace.to_string(context)?),
    };
    let needle = Needle::new(search.as_str());
    let found = positions(text.as_str(), &needle, needle.len().max(1));
    let mut parts: Vec<JsString> = Vec::with_capacity(found.len() * 2 + 1);
    let mut end = 0;
    for position in found {
        parts.push(text.slice(end, position));
        match (&function, &template) {
            (Some(function), _) => {
                let replacement = function.call(
                    &JsValue::undefined(),
                    &[search.clone().into(), number(position), text.clone().into()],
                    context,
                )?;
                parts.push(replacement.to_string(context)?);
            }
            (None, Some(template)) => {
                substitute(template, &text, position, search.len(), &mut parts)
            }
            (None, None) => unreachable!("a template when there is no function"),
        }
        end = position + search.len();
    }
    if end < text.len() {
        parts.push(text.slice(end, text.len()));
    }
    let strs: Vec<_> = parts.iter().map(JsString::as_str).collect();
    Ok(JsString::concat_array(&strs).into())
}

/// GetSubstitution with no captures: `$$`, `$&`, `` $` `` and `$'` are replaced, every other `$`
/// sequence (`$1`, `$<name>`) stays as written. Pushes the pieces onto `parts`.
fn substitute(
    template: &JsString,
    text: &JsString,
    position: usize,
    matched: usize,
    parts: &mut Vec<JsString>,
) {
    let dollar = u16::from(b'$');
    if !template.iter().any(|unit| unit == dollar) {
        parts.push(template.clone());
        return;
    }
    let units: Vec<u16> = template.iter().collect();
    let mut literal = 0;
    let mut at = 0;
    while at + 1 < units.len() {
        if units[at] != dollar {
            at += 1;
            continue;
        }
        let piece = match u8::try_from(units[at + 1]).unwrap_or(0) {
            b'$' => Some(js_string!("$")),
            b'&' => Some(text.slice(position, position + matched)),
            b'`' => Some(text.slice(0, position)),
            b'\'' => Some(text.slice((position + matched).min(text.len()), text.len())),
            _ => None,
        };
        match piece {
            Some(piece) => {
                parts.push(template.slice(literal, at));
                parts.push(piece);
                at += 2;
                literal = at;
            }
            None => at += 1,
        }
    }
    parts.push(template.slice(literal, units.len()));
}
