//! `RegExp.prototype.exec`, which hands the matcher a UTF-16 copy of a large Latin1 input made
//! once instead of on every call; and `test`, `[Symbol.replace]` (string replacement) and
//! `[Symbol.split]`, which on a plain RegExp match with our own compiled program (see
//! `matcher.rs`) instead of calling Boa's exec once per match (or, for split, once per code
//! unit). Whatever they cannot do exactly as the built-in would goes to the built-in.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use boa_engine::builtins::regexp::RegExp;
use boa_engine::gc::{Gc, GcRefCell};
use boa_engine::object::builtins::JsArray;
use boa_engine::property::PropertyKey;
use boa_engine::string::{JsStr, JsStrVariant};
use boa_engine::{
    Context, Finalize, JsArgs, JsObject, JsResult, JsString, JsSymbol, JsValue, NativeFunction,
    Trace, js_string,
};

use regress::Match;

use super::matcher::{Compiled, Template};
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
        // Explicitly UTF-16: `JsString::from(&[u16])` would make Latin1 units Latin1 again.
        let wide = JsString::from(JsStr::utf16(&text.to_vec()));
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

/// What the fast paths share: the pins that make skipping Boa's steps unobservable, the saved
/// `source` and `flags` getters, and the programs compiled so far.
#[derive(Trace, Finalize)]
struct Shared {
    regexp: JsObject,
    builtin_exec: JsObject,
    regexp_proto: JsObject,
    /// `exec` (our override): what `RegExpExec` looks up.
    exec_pin: Pin,
    /// `flags` and the flag getters it reads: what `Get(rx, "flags")` runs.
    flag_pins: Vec<Pin>,
    /// `constructor` and `RegExp[Symbol.species]`: what `SpeciesConstructor` reads.
    species_pins: Vec<Pin>,
    source_getter: JsObject,
    flags_getter: JsObject,
    /// The last RegExp objects seen and their programs (`None`: left to Boa). A RegExp's
    /// pattern and flags never change (no annex-b `compile` in this build), so the object
    /// identifies its program.
    recent: GcRefCell<Vec<Known>>,
    #[unsafe_ignore_trace]
    by_pattern: RefCell<HashMap<Pattern, Option<Rc<Compiled>>>>,
    /// The same programs by the objects' `[[OriginalSource]]` and `[[OriginalFlags]]`: a RegExp
    /// literal evaluated in a loop is a new object each time, and reading its slots costs far
    /// less than running the `source` and `flags` getters (which read nine more). While the
    /// flag getters are pinned, what those getters return depends on nothing else.
    #[unsafe_ignore_trace]
    by_original: RefCell<HashMap<Slots, Option<Rc<Compiled>>>>,
    #[unsafe_ignore_trace]
    widened: Widened,
}

/// A pattern as its `source` and `flags` read back.
type Pattern = (JsString, String);

/// A pattern as a RegExp object's `[[OriginalSource]]` and `[[OriginalFlags]]`.
type Slots = (JsString, JsString);

#[derive(Trace, Finalize)]
struct Known {
    object: JsObject,
    #[unsafe_ignore_trace]
    compiled: Option<Rc<Compiled>>,
}

/// How many RegExp objects `Shared::recent` remembers, and how many patterns `by_pattern`.
const RECENT: usize = 8;
const PATTERNS: usize = 256;

/// Which of Boa's observable look-ups the caller's algorithm would make.
#[derive(Clone, Copy, PartialEq)]
enum Reads {
    /// `RegExpExec` only (`test`).
    Exec,
    /// Also `Get(rx, "flags")` (`[Symbol.replace]`).
    Flags,
    /// Also `SpeciesConstructor` (`[Symbol.split]`).
    Species,
}

impl Shared {
    /// `this` and its program, when `this` is a RegExp that nothing observable distinguishes from
    /// a fresh one (own prototype %RegExp.prototype%, no own property but `lastIndex`, the
    /// methods and getters `reads` involves untouched); `None` otherwise, or when the pattern
    /// is left to Boa.
    fn plain(
        &self,
        this: &JsValue,
        reads: Reads,
        context: &mut Context,
    ) -> JsResult<Option<(JsObject, Rc<Compiled>)>> {
        let Some(rx) = this.as_object() else {
            return Ok(None);
        };
        if !rx.is::<RegExp>()
            || !rx
                .prototype()
                .is_some_and(|proto| JsObject::equals(&proto, &self.regexp_proto))
            || !no_own_shadowing(&rx, reads, context)?
            || !self.exec_pin.holds()
            || (reads != Reads::Exec && !self.flag_pins.iter().all(Pin::holds))
            || (reads == Reads::Species && !self.species_pins.iter().all(Pin::holds))
        {
            return Ok(None);
        }
        let known = self
            .recent
            .borrow()
            .iter()
            .find(|known| JsObject::equals(&known.object, &rx))
            .map(|known| known.compiled.clone());
        let compiled = match known {
            Some(compiled) => compiled,
            None => {
                // The flags getter reads the flag getters: trust it only while they are pinned.
                if !self.flag_pins.iter().all(Pin::holds) {
                    return Ok(None);
                }
                let compiled = self.compile_by_original(&rx, context)?;
                let mut recent = self.recent.borrow_mut();
                if recent.len() == RECENT {
                    recent.remove(0);
                }
                recent.push(Known {
                    object: rx.clone(),
                    compiled: compiled.clone(),
                });
                compiled
            }
        };
        Ok(compiled.map(|compiled| (rx, compiled)))
    }

    /// `rx`'s program, found by its internal slots, else compiled (see `by_original`).
    fn compile_by_original(
        &self,
        rx: &JsObject,
        context: &mut Context,
    ) -> JsResult<Option<Rc<Compiled>>> {
        // An object with an own property besides `lastIndex` is left to Boa: an own
        // `ignoreCase`, say, changes what the `flags` getter reads, while the built-in `exec`
        // matches by the object's own slots (tests/all/extension_everyday.rs, "own properties
        // on a literal").
        if !only_last_index(rx, context)? {
            return Ok(None);
        }
        let key = rx.downcast_ref::<RegExp>().map(|regexp| {
            (
                regexp.original_source().clone(),
                regexp.original_flags().clone(),
            )
        });
        if let Some(key) = &key
            && let Some(found) = self.by_original.borrow().get(key)
        {
            return Ok(found.clone());
        }
        let compiled = self.compile(rx, context)?;
        if let Some(key) = key {
            let mut by_original = self.by_original.borrow_mut();
            if by_original.len() == PATTERNS {
                by_original.clear();
            }
            by_original.insert(key, compiled.clone());
        }
        Ok(compiled)
    }

    /// `rx`'s program, compiled from its `source` and `flags` (or found compiled).
    fn compile(&self, rx: &JsObject, context: &mut Context) -> JsResult<Option<Rc<Compiled>>> {
        let this: JsValue = rx.clone().into();
        let source = self
            .source_getter
            .call(&this, &[], context)?
            .to_string(context)?;
        let flags = self
            .flags_getter
            .call(&this, &[], context)?
            .to_string(context)?
            .to_std_string_escaped();
        let key = (source, flags);
        if let Some(found) = self.by_pattern.borrow().get(&key) {
            return Ok(found.clone());
        }
        let compiled = Compiled::new(&key.0, &key.1).map(Rc::new);
        let mut by_pattern = self.by_pattern.borrow_mut();
        if by_pattern.len() == PATTERNS {
            by_pattern.clear();
        }
        by_pattern.insert(key, compiled.clone());
        Ok(compiled)
    }

    /// Runs `f` on `text`'s code units (a Latin1 text widened, once for a long one).
    fn with_units<R>(&self, text: &JsString, f: impl FnOnce(&[u16]) -> R) -> R {
        match text.as_str().variant() {
            JsStrVariant::Utf16(units) => f(units),
            JsStrVariant::Latin1(_) if text.len() >= WIDEN_FROM => {
                let wide = self.widened.of(text);
                match wide.as_str().variant() {
                    JsStrVariant::Utf16(units) => f(units),
                    JsStrVariant::Latin1(_) => f(&wide.to_vec()),
                }
            }
            JsStrVariant::Latin1(_) => f(&text.to_vec()),
        }
    }
}

/// A fast path's captures: the built-in it stands in for, and the shared state.
#[derive(Trace, Finalize)]
struct Override {
    builtin: JsObject,
    shared: Gc<Shared>,
}

/// Replaces `exec`, `test`, `[Symbol.replace]` and `[Symbol.split]` on `RegExp.prototype`.
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

    let getter = |key: &str| {
        current(&proto, &PropertyKey::from(js_string!(key)))
            .and_then(|getter| getter.as_callable())
            .ok_or_else(|| {
                boa_engine::JsError::from(
                    boa_engine::JsNativeError::typ()
                        .with_message(format!("RegExp.prototype.{key} has no getter")),
                )
            })
    };
    let pin = |key: &str| Pin::take(&proto, js_string!(key));
    let shared = Gc::new(Shared {
        regexp: regexp.clone(),
        builtin_exec,
        regexp_proto: proto.clone(),
        exec_pin: pin("exec").ok_or_else(|| {
            boa_engine::JsError::from(
                boa_engine::JsNativeError::typ().with_message("RegExp.prototype.exec is missing"),
            )
        })?,
        flag_pins: [
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
        .filter_map(pin)
        .collect(),
        species_pins: pin("constructor")
            .into_iter()
            .chain(Pin::take(&regexp, JsSymbol::species()))
            .collect(),
        source_getter: getter("source")?,
        flags_getter: getter("flags")?,
        recent: GcRefCell::new(Vec::new()),
        by_pattern: RefCell::default(),
        by_original: RefCell::default(),
        widened: Widened::default(),
    });
    let methods: [(PropertyKey, JsString, usize, Method); 3] = [
        (
            js_string!("test").into(),
            js_string!("test"),
            1,
            test_override,
        ),
        (
            JsSymbol::replace().into(),
            js_string!("[Symbol.replace]"),
            2,
            replace_override,
        ),
        (
            JsSymbol::split().into(),
            js_string!("[Symbol.split]"),
            2,
            split_override,
        ),
    ];
    for (key, name, length, method) in methods {
        let captures = Override {
            builtin: saved(&proto, key.clone(), context)?,
            shared: shared.clone(),
        };
        define(
            &proto,
            key,
            name,
            length,
            NativeFunction::from_copy_closure_with_captures(method, captures),
            context,
        )?;
    }
    Ok(())
}

type Method = fn(&JsValue, &[JsValue], &Override, &mut Context) -> JsResult<JsValue>;

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

/// `ToLength` of a number.
fn to_length(value: f64) -> usize {
    if value.is_nan() || value <= 0.0 {
        0
    } else {
        value.min(9_007_199_254_740_991.0).trunc() as usize
    }
}

/// `rx.lastIndex` when it is a number (reading it runs no script: it is an own data property).
fn last_index(rx: &JsObject) -> Option<f64> {
    rx.borrow()
        .properties()
        .get(&PropertyKey::from(js_string!("lastIndex")))?
        .value()?
        .as_number()
}

fn set_last_index(rx: &JsObject, value: usize, context: &mut Context) -> JsResult<()> {
    rx.set(js_string!("lastIndex"), number(value), true, context)?;
    Ok(())
}

/// `RegExpBuiltinExec(rx, text)` with `lastIndex` = `last_index`, through our program: the match,
/// with `lastIndex` written as the algorithm writes it (untouched without `g` or `y`).
fn builtin_exec(
    rx: &JsObject,
    compiled: &Compiled,
    text: &JsString,
    last_index: f64,
    shared: &Shared,
    context: &mut Context,
) -> JsResult<Option<Match>> {
    let tracks = compiled.global || compiled.sticky;
    let mut start = if tracks { to_length(last_index) } else { 0 };
    if start > text.len() {
        if tracks {
            set_last_index(rx, 0, context)?;
        }
        return Ok(None);
    }
    // In Unicode mode a lastIndex inside a surrogate pair names the pair (as `exec` does here).
    if tracks
        && compiled.unicode
        && start >= 1
        && text
            .code_unit_at(start)
            .is_some_and(|u| (0xDC00..=0xDFFF).contains(&u))
        && text
            .code_unit_at(start - 1)
            .is_some_and(|u| (0xD800..=0xDBFF).contains(&u))
    {
        start -= 1;
    }
    let found = match text.as_str().variant() {
        JsStrVariant::Latin1(bytes) => compiled.candidate(bytes, start).and_then(|from| {
            if bytes.len() < WIDEN_FROM {
                // A short line (a `test` per line): an ASCII one is matched on its bytes.
                compiled
                    .find_in_ascii(bytes, from)
                    .unwrap_or_else(|| compiled.find(&text.to_vec(), from))
            } else {
                shared.with_units(text, |units| compiled.find(units, from))
            }
        }),
        JsStrVariant::Utf16(units) => compiled.find(units, start),
    };
    match found {
        Some(found) if !compiled.sticky || found.start() == start => {
            if tracks {
                set_last_index(rx, found.end(), context)?;
            }
            Ok(Some(found))
        }
        _ => {
            if tracks {
                set_last_index(rx, 0, context)?;
            }
            Ok(None)
        }
    }
}

/// `RegExp.prototype.test` on a plain RegExp and a string.
fn test_override(
    this: &JsValue,
    args: &[JsValue],
    test: &Override,
    context: &mut Context,
) -> JsResult<JsValue> {
    let Some(text) = args.first().and_then(JsValue::as_string) else {
        return test.builtin.call(this, args, context);
    };
    let Some((rx, compiled)) = test.shared.plain(this, Reads::Exec, context)? else {
        return test.builtin.call(this, args, context);
    };
    let Some(index) = last_index(&rx) else {
        return test.builtin.call(this, args, context);
    };
    // Without `g` or `y` only whether a match exists is seen (lastIndex is read, not written).
    if !compiled.global
        && !compiled.sticky
        && let JsStrVariant::Latin1(bytes) = text.as_str().variant()
        && let Some(found) = compiled.exists_in_latin1(bytes)
    {
        return Ok(JsValue::new(found));
    }
    let found = builtin_exec(&rx, &compiled, &text, index, &test.shared, context)?;
    Ok(JsValue::new(found.is_some()))
}

/// `RegExp.prototype[Symbol.replace]` on a plain RegExp, a string and a string replacement.
fn replace_override(
    this: &JsValue,
    args: &[JsValue],
    replace: &Override,
    context: &mut Context,
) -> JsResult<JsValue> {
    let (text, template) = (args.get_or_undefined(0), args.get_or_undefined(1));
    let (Some(text), Some(template)) = (text.as_string(), template.as_string()) else {
        return replace.builtin.call(this, args, context);
    };
    let shared = &replace.shared;
    let Some((rx, compiled)) = shared.plain(this, Reads::Flags, context)? else {
        return replace.builtin.call(this, args, context);
    };
    let Some(index) = last_index(&rx) else {
        return replace.builtin.call(this, args, context);
    };
    let found = if compiled.global {
        // lastIndex is set to 0 first, and the loop ends on a failed exec, which sets it to 0.
        set_last_index(&rx, 0, context)?;
        let mut found = shared.with_units(&text, |units| compiled.find_all(units, 0));
        if compiled.sticky {
            // Each exec must match where the last one ended (one further after an empty match).
            let mut expected = 0;
            let anchored = found
                .iter()
                .take_while(|m| {
                    let at = m.start() == expected;
                    expected = if m.end() == m.start() {
                        advance(&text, m.end(), compiled.unicode)
                    } else {
                        m.end()
                    };
                    at
                })
                .count();
            found.truncate(anchored);
        }
        found
    } else {
        builtin_exec(&rx, &compiled, &text, index, shared, context)?
            .into_iter()
            .collect()
    };
    let Some(first) = found.first() else {
        return Ok(text.into());
    };
    let named = first.named_groups().next().is_some();
    let parsed = Template::parse(template.as_str(), first.captures.len(), named);
    let (s, t) = (text.as_str(), template.as_str());
    let mut parts = Vec::with_capacity(found.len() * 3 + 1);
    let mut next = 0;
    for m in &found {
        parts.push(s.get(next..m.start()).unwrap_or(s));
        parsed.expand(t, s, m, &mut parts);
        next = m.end();
    }
    if next < s.len() {
        parts.push(s.get(next..).unwrap_or(s));
    }
    Ok(JsString::concat_array(&parts).into())
}

/// `RegExp.prototype[Symbol.split]` on a plain RegExp with an untouched prototype, a string and a
/// numeric or absent limit; anything else goes to the built-in.
///
/// The algorithm tries a sticky match at every position q. A global match from q finds the same
/// match at the first position where that would succeed, so one search per separator does.
fn split_override(
    this: &JsValue,
    args: &[JsValue],
    split: &Override,
    context: &mut Context,
) -> JsResult<JsValue> {
    let (text, limit) = (args.get_or_undefined(0), args.get_or_undefined(1));
    let Some(text) = text.as_string() else {
        return split.builtin.call(this, args, context);
    };
    if !(limit.is_undefined() || limit.is_number()) {
        return split.builtin.call(this, args, context);
    }
    let shared = &split.shared;
    let compiled = match shared.plain(this, Reads::Species, context)? {
        Some((_, compiled)) => Some(compiled),
        None if plain_for_split(this, shared, context)? => None,
        None => return split.builtin.call(this, args, context),
    };
    let Some(rx) = this.as_object() else {
        return split.builtin.call(this, args, context);
    };
    let flags = rx.get(js_string!("flags"), context)?.to_string(context)?;
    let flags = flags.to_std_string_escaped();
    let unicode = flags.contains('u') || flags.contains('v');
    let limit = if limit.is_undefined() {
        u32::MAX
    } else {
        limit.to_u32(context)?
    } as usize;
    if limit == 0 {
        return Ok(JsArray::new(context)?.into());
    }
    let pieces = match compiled {
        Some(compiled) => shared.with_units(&text, |units| {
            split_matched(&text, units, limit, unicode, |at| compiled.find(units, at))
        }),
        None => split_by_exec(&rx, &text, &flags, limit, unicode, shared, context)?,
    };
    Ok(JsArray::from_iter(pieces, context).into())
}

/// Whether `this` is a RegExp whose split is unobservable but whose pattern is left to Boa.
fn plain_for_split(this: &JsValue, shared: &Shared, context: &mut Context) -> JsResult<bool> {
    let Some(rx) = this.as_object() else {
        return Ok(false);
    };
    Ok(rx.is::<RegExp>()
        && rx
            .prototype()
            .is_some_and(|proto| JsObject::equals(&proto, &shared.regexp_proto))
        && only_last_index(&rx, context)?
        && shared.exec_pin.holds()
        && shared.flag_pins.iter().all(Pin::holds)
        && shared.species_pins.iter().all(Pin::holds))
}

/// The split pieces of `text` (`units` its code units), `find(q)` giving the first match at or
/// after q as a global search does.
fn split_matched(
    text: &JsString,
    units: &[u16],
    limit: usize,
    unicode: bool,
    find: impl Fn(usize) -> Option<Match>,
) -> Vec<JsValue> {
    let size = units.len();
    if size == 0 {
        return match find(0) {
            Some(_) => Vec::new(),
            None => vec![JsValue::new(text.clone())],
        };
    }
    let mut pieces = Vec::new();
    let (mut p, mut q) = (0, 0);
    while q < size {
        let Some(found) = find(q) else {
            break;
        };
        let start = found.start();
        if start >= size {
            break;
        }
        let end = found.end().min(size);
        if end == p {
            q = advance(text, start, unicode);
            continue;
        }
        pieces.push(JsValue::new(text.slice(p, start)));
        if pieces.len() == limit {
            return pieces;
        }
        p = end;
        for group in 1..=found.captures.len() {
            pieces.push(found.group(group).map_or_else(JsValue::undefined, |range| {
                JsValue::new(text.slice(range.start, range.end))
            }));
            if pieces.len() == limit {
                return pieces;
            }
        }
        q = p;
    }
    pieces.push(JsValue::new(text.slice(p, size)));
    pieces
}

/// The split pieces through Boa's exec on a global copy of `rx` (which keeps its original
/// source), for a pattern we do not compile ourselves.
fn split_by_exec(
    rx: &JsObject,
    text: &JsString,
    flags: &str,
    limit: usize,
    unicode: bool,
    shared: &Shared,
    context: &mut Context,
) -> JsResult<Vec<JsValue>> {
    let global: String = flags
        .chars()
        .filter(|&c| c != 'g' && c != 'y')
        .chain(['g'])
        .collect();
    let splitter = shared.regexp.construct(
        &[rx.clone().into(), js_string!(global.as_str()).into()],
        None,
        context,
    )?;
    let input: JsValue = match text.as_str().variant() {
        JsStrVariant::Latin1(_) => shared.widened.of(text).into(),
        JsStrVariant::Utf16(_) => text.clone().into(),
    };
    let last_index = js_string!("lastIndex");
    let size = text.len();
    let exec = |at: usize, context: &mut Context| -> JsResult<Option<JsObject>> {
        splitter.set(last_index.clone(), number(at), true, context)?;
        Ok(shared
            .builtin_exec
            .call(
                &splitter.clone().into(),
                std::slice::from_ref(&input),
                context,
            )?
            .as_object())
    };
    if size == 0 {
        return Ok(match exec(0, context)? {
            Some(_) => Vec::new(),
            None => vec![JsValue::new(text.clone())],
        });
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
            q = advance(text, start, unicode);
            continue;
        }
        pieces.push(JsValue::new(text.slice(p, start)));
        if pieces.len() == limit {
            return Ok(pieces);
        }
        p = end;
        let captures = found
            .get(js_string!("length"), context)?
            .to_length(context)?
            .saturating_sub(1);
        for index in 1..=captures {
            pieces.push(found.get(index, context)?);
            if pieces.len() == limit {
                return Ok(pieces);
            }
        }
        q = p;
    }
    pieces.push(JsValue::new(text.slice(p, size)));
    Ok(pieces)
}

/// Whether no own property of `rx` shadows what `reads` looks up on the prototype. `test` looks
/// up only `exec` (a single own-key check, cheap enough for a per-line `test` loop); the others
/// also read `flags` and the flag getters, so for them `lastIndex` must be the only own property.
fn no_own_shadowing(rx: &JsObject, reads: Reads, context: &mut Context) -> JsResult<bool> {
    if reads == Reads::Exec {
        return Ok(!rx
            .borrow()
            .properties()
            .contains_key(&PropertyKey::from(js_string!("exec"))));
    }
    only_last_index(rx, context)
}

/// Whether `rx`'s only own property is `lastIndex` (nothing shadows the prototype's methods).
fn only_last_index(rx: &JsObject, context: &mut Context) -> JsResult<bool> {
    let keys = rx.own_property_keys(context)?;
    Ok(matches!(keys.as_slice(), [PropertyKey::String(key)] if key == &js_string!("lastIndex")))
}
