//! `RegExp.prototype.exec`, which hands the matcher a UTF-16 copy of a large Latin1 input made
//! once instead of on every call, and `RegExp.prototype[Symbol.split]`, which runs one exec per
//! separator found instead of one per code unit.

use std::cell::RefCell;

use boa_engine::builtins::regexp::RegExp;
use boa_engine::object::builtins::JsArray;
use boa_engine::property::PropertyKey;
use boa_engine::string::JsStrVariant;
use boa_engine::{
    Context, Finalize, JsArgs, JsObject, JsResult, JsString, JsSymbol, JsValue, NativeFunction,
    Trace, js_string,
};

use super::{define, number, saved};

/// Inputs shorter than this are widened on each call, as the engine does; the copy costs less
/// than the cache look-up.
const WIDEN_FROM: usize = 256;

/// The last Latin1 input widened, and its UTF-16 copy (equal as strings, so nothing a script can
/// see tells them apart). Holding the original keeps its buffer, hence the key, alive.
#[derive(Default)]
struct Widened(RefCell<Option<(JsString, JsString)>>);

impl Widened {
    /// `text` as UTF-16, reusing the last copy when `text` is the same buffer.
    fn of(&self, text: &JsString) -> JsString {
        let key = |s: &JsString| match s.as_str().variant() {
            JsStrVariant::Latin1(bytes) => Some((bytes.as_ptr(), bytes.len())),
            JsStrVariant::Utf16(_) => None,
        };
        let mut cache = self.0.borrow_mut();
        if let Some((original, wide)) = cache.as_ref()
            && key(original) == key(text)
        {
            return wide.clone();
        }
        let wide = JsString::from(&text.to_vec()[..]);
        *cache = Some((text.clone(), wide.clone()));
        wide
    }
}

#[derive(Trace, Finalize)]
struct Exec {
    builtin: JsObject,
    /// The original getters of `global`, `sticky`, `unicode` and `unicodeSets`: called directly
    /// they read the internal flags, which is unobservable.
    flag_getters: Vec<JsObject>,
    #[unsafe_ignore_trace]
    widened: Widened,
}

impl Exec {
    /// Whether each of the saved flag getters answers true for `rx`, in order.
    fn flags(&self, rx: &JsValue, context: &mut Context) -> JsResult<Vec<bool>> {
        self.flag_getters
            .iter()
            .map(|getter| Ok(getter.call(rx, &[], context)?.to_boolean()))
            .collect()
    }
}

/// A property that must still hold what it held at install for the split fast path to be
/// unobservable: a data value or an accessor's getter.
#[derive(Trace, Finalize)]
struct Pin {
    holder: JsObject,
    #[unsafe_ignore_trace]
    key: PropertyKey,
    expected: JsValue,
}

impl Pin {
    fn take(holder: &JsObject, key: impl Into<PropertyKey>) -> Option<Pin> {
        let key = key.into();
        let current = current(holder, &key)?;
        Some(Pin {
            holder: holder.clone(),
            key,
            expected: current,
        })
    }

    fn holds(&self) -> bool {
        current(&self.holder, &self.key).is_some_and(|now| now == self.expected)
    }
}

/// An own property's value, or its getter for an accessor; read without running script.
fn current(holder: &JsObject, key: &PropertyKey) -> Option<JsValue> {
    let descriptor = holder.borrow().properties().get(key)?;
    descriptor.value().or(descriptor.get()).cloned()
}

#[derive(Trace, Finalize)]
struct Split {
    builtin: JsObject,
    exec: JsObject,
    regexp: JsObject,
    regexp_proto: JsObject,
    pins: Vec<Pin>,
}

/// Replaces `exec` and `[Symbol.split]` on `RegExp.prototype`.
pub(super) fn install(context: &mut Context) -> JsResult<()> {
    let regexp = context.intrinsics().constructors().regexp().constructor();
    let proto = context.intrinsics().constructors().regexp().prototype();
    let builtin_exec = saved(&proto, js_string!("exec"), context)?;
    let flag_getters = ["global", "sticky", "unicode", "unicodeSets"]
        .into_iter()
        .filter_map(|key| current(&proto, &PropertyKey::from(js_string!(key)))?.as_callable())
        .collect();
    let exec = Exec {
        builtin: builtin_exec.clone(),
        flag_getters,
        widened: Widened::default(),
    };
    define(
        &proto,
        js_string!("exec"),
        js_string!("exec"),
        1,
        NativeFunction::from_copy_closure_with_captures(exec_override, exec),
        context,
    )?;

    let mut pins: Vec<Pin> = [
        "constructor",
        "exec",
        "flags",
        "hasIndices",
        "global",
        "ignoreCase",
        "multiline",
        "dotAll",
        "unicode",
        "unicodeSets",
        "sticky",
    ]
    .into_iter()
    .filter_map(|key| Pin::take(&proto, js_string!(key)))
    .collect();
    pins.extend(Pin::take(&regexp, JsSymbol::species()));
    let split = Split {
        builtin: saved(&proto, JsSymbol::split(), context)?,
        exec: builtin_exec,
        regexp,
        regexp_proto: proto.clone(),
        pins,
    };
    define(
        &proto,
        JsSymbol::split(),
        js_string!("[Symbol.split]"),
        2,
        NativeFunction::from_copy_closure_with_captures(split_override, split),
        context,
    )?;
    Ok(())
}

fn exec_override(
    this: &JsValue,
    args: &[JsValue],
    exec: &Exec,
    context: &mut Context,
) -> JsResult<JsValue> {
    if let Some(rx) = this.as_object()
        && rx.is::<RegExp>()
        && let Some(text) = args.first().and_then(JsValue::as_string)
    {
        step_back_into_pair(&rx, &text, exec, context)?;
    }
    if let Some(text) = args.first().and_then(JsValue::as_string)
        && text.len() >= WIDEN_FROM
        && matches!(text.as_str().variant(), JsStrVariant::Latin1(_))
        && this.as_object().is_some_and(|object| object.is::<RegExp>())
    {
        let wide = exec.widened.of(&text);
        return exec.builtin.call(this, &[wide.into()], context);
    }
    exec.builtin.call(this, args, context)
}

/// In Unicode mode a `lastIndex` between the two halves of a surrogate pair names the pair, so
/// matching starts at its first half (test262 `RegExp/prototype/exec/u-lastindex-value`; Boa 0.22
/// starts at the second half). Moves such a `lastIndex` back by one before the built-in reads it;
/// the built-in then writes `lastIndex` itself, so the move cannot be seen.
fn step_back_into_pair(
    rx: &JsObject,
    text: &JsString,
    exec: &Exec,
    context: &mut Context,
) -> JsResult<()> {
    let key = PropertyKey::from(js_string!("lastIndex"));
    let Some(descriptor) = rx.borrow().properties().get(&key) else {
        return Ok(());
    };
    let Some(index) = descriptor.value().and_then(JsValue::as_number) else {
        return Ok(());
    };
    let movable = descriptor.writable().unwrap_or(false);
    if !(movable && index >= 1.0 && index < text.len() as f64 && index.fract() == 0.0) {
        return Ok(());
    }
    let index = index as usize;
    let low = text
        .code_unit_at(index)
        .is_some_and(|u| (0xDC00..=0xDFFF).contains(&u));
    let high = text
        .code_unit_at(index - 1)
        .is_some_and(|u| (0xD800..=0xDBFF).contains(&u));
    if !(low && high) {
        return Ok(());
    }
    if let [global, sticky, unicode, sets] = exec.flags(&rx.clone().into(), context)?[..]
        && (global || sticky)
        && (unicode || sets)
    {
        rx.set(key, number(index - 1), true, context)?;
    }
    Ok(())
}

/// The index after the code point at `index` (after the code unit, without `unicode`).
fn advance(text: &JsString, index: usize, unicode: bool) -> usize {
    if !unicode || index + 1 >= text.len() {
        return index + 1;
    }
    match text.code_point_at(index) {
        boa_engine::string::CodePoint::Unicode(c) if c.len_utf16() == 2 => index + 2,
        _ => index + 1,
    }
}

/// `RegExp.prototype[Symbol.split]` on a plain RegExp with an untouched prototype, a string and a
/// numeric or absent limit; anything else goes to the built-in.
///
/// The algorithm tries a sticky match at every position q. A global match from q finds the same
/// match at the first position where that would succeed, so one exec per separator does.
fn split_override(
    this: &JsValue,
    args: &[JsValue],
    split: &Split,
    context: &mut Context,
) -> JsResult<JsValue> {
    let (text, limit) = (args.get_or_undefined(0), args.get_or_undefined(1));
    let Some(rx) = this.as_object() else {
        return split.builtin.call(this, args, context);
    };
    let Some(text) = text.as_string() else {
        return split.builtin.call(this, args, context);
    };
    if !(limit.is_undefined() || limit.is_number())
        || !rx.is::<RegExp>()
        || !rx
            .prototype()
            .is_some_and(|proto| JsObject::equals(&proto, &split.regexp_proto))
        || !only_last_index(&rx, context)?
        || !split.pins.iter().all(Pin::holds)
    {
        return split.builtin.call(this, args, context);
    }
    let flags = rx.get(js_string!("flags"), context)?.to_string(context)?;
    let flags = flags.to_std_string_escaped();
    let unicode = flags.contains('u') || flags.contains('v');
    let global: String = flags
        .chars()
        .filter(|&c| c != 'g' && c != 'y')
        .chain(['g'])
        .collect();
    let splitter = split.regexp.construct(
        &[rx.into(), js_string!(global.as_str()).into()],
        None,
        context,
    )?;
    let limit = if limit.is_undefined() {
        u32::MAX
    } else {
        limit.to_u32(context)?
    } as usize;
    if limit == 0 {
        return Ok(JsArray::new(context)?.into());
    }
    let input: JsValue = match text.as_str().variant() {
        JsStrVariant::Latin1(_) => JsString::from(&text.to_vec()[..]).into(),
        JsStrVariant::Utf16(_) => text.clone().into(),
    };
    let last_index = js_string!("lastIndex");
    let size = text.len();
    let exec = |at: usize, context: &mut Context| -> JsResult<Option<JsObject>> {
        splitter.set(last_index.clone(), number(at), true, context)?;
        Ok(split
            .exec
            .call(
                &splitter.clone().into(),
                std::slice::from_ref(&input),
                context,
            )?
            .as_object())
    };
    if size == 0 {
        let pieces = match exec(0, context)? {
            Some(_) => Vec::new(),
            None => vec![JsValue::new(text)],
        };
        return Ok(JsArray::from_iter(pieces, context).into());
    }
    let mut pieces = Vec::new();
    let (mut p, mut q) = (0, 0);
    while q < size {
        let Some(found) = exec(q, context)? else {
            break;
        };
        let start = found
            .get(js_string!("index"), context)?
            .to_length(context)? as usize;
        if start >= size {
            break;
        }
        let end = (splitter
            .get(last_index.clone(), context)?
            .to_length(context)? as usize)
            .min(size);
        if end == p {
            q = advance(&text, start, unicode);
            continue;
        }
        pieces.push(JsValue::new(text.slice(p, start)));
        if pieces.len() == limit {
            return Ok(JsArray::from_iter(pieces, context).into());
        }
        p = end;
        let captures = found
            .get(js_string!("length"), context)?
            .to_length(context)?
            .saturating_sub(1);
        for index in 1..=captures {
            pieces.push(found.get(index, context)?);
            if pieces.len() == limit {
                return Ok(JsArray::from_iter(pieces, context).into());
            }
        }
        q = p;
    }
    pieces.push(JsValue::new(text.slice(p, size)));
    Ok(JsArray::from_iter(pieces, context).into())
}

/// Whether `rx`'s only own property is `lastIndex` (nothing shadows the prototype's methods).
fn only_last_index(rx: &JsObject, context: &mut Context) -> JsResult<bool> {
    let keys = rx.own_property_keys(context)?;
    Ok(matches!(keys.as_slice(), [PropertyKey::String(key)] if key == &js_string!("lastIndex")))
}
