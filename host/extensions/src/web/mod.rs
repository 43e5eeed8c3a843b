//! The web platform an extension was written for: the WinterTC Minimum Common API on Boa.
//!
//! Boa and boa_runtime give the engine, `Intl`, console, timers, `queueMicrotask`,
//! `structuredClone`, `atob`/`btoa`, TextEncoder/TextDecoder and `URL`; the rest (events and
//! abort signals, `URLSearchParams`, Blob/File/FormData, streams, compression, crypto, fetch,
//! `performance`, `navigator`, `reportError`) is defined by the scripts in `js/` over the
//! natives in `natives.rs`. A context pays only for what its extension touches: a global is not
//! defined until it is first read (the global object's prototype, a proxy, answers for it), and
//! reading it evaluates the script of its group once (a fresh context would otherwise parse every
//! script, tens of milliseconds on Boa).

mod natives;
mod subtle;
/// The pool that runs long crypto work: its per-extension share and cancellation.
pub(crate) use subtle::blocking as crypto_jobs;
mod text_decoder;
mod url_search_params;

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use boa_engine::job::GenericJob;
use boa_engine::object::builtins::JsProxy;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{
    Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction, js_string,
};

/// One script and the globals it defines.
struct Group {
    /// The name other scripts load it by (`internal.load(name)`).
    name: &'static str,
    /// A function expression `(function (internal) { ...; return exports; })`.
    source: &'static str,
    /// The globals it defines, each defined on first read.
    globals: &'static [&'static str],
}

const STREAMS_SOURCE: &str = concat!(
    include_str!("js/streams_head.js"),
    include_str!("vendor/web-streams-polyfill.js"),
    include_str!("js/streams_tail.js")
);

const GROUPS: &[Group] = &[
    Group {
        name: "events",
        source: include_str!("js/events.js"),
        globals: &[
            "DOMException",
            "Event",
            "EventTarget",
            "CustomEvent",
            "ErrorEvent",
            "PromiseRejectionEvent",
            "AbortController",
            "AbortSignal",
        ],
    },
    Group {
        name: "url",
        source: include_str!("js/url_search_params.js"),
        globals: &["URLSearchParams"],
    },
    Group {
        name: "blob",
        source: include_str!("js/blob.js"),
        globals: &["Blob", "File", "FormData"],
    },
    Group {
        name: "streams",
        source: STREAMS_SOURCE,
        globals: &[
            "ReadableStream",
            "ReadableStreamDefaultReader",
            "ReadableStreamBYOBReader",
            "ReadableStreamBYOBRequest",
            "ReadableStreamDefaultController",
            "ReadableByteStreamController",
            "WritableStream",
            "WritableStreamDefaultWriter",
            "WritableStreamDefaultController",
            "TransformStream",
            "TransformStreamDefaultController",
            "ByteLengthQueuingStrategy",
            "CountQueuingStrategy",
            "TextEncoderStream",
            "TextDecoderStream",
            "CompressionStream",
            "DecompressionStream",
        ],
    },
    Group {
        name: "crypto",
        source: include_str!("js/crypto.js"),
        globals: &["crypto", "Crypto", "CryptoKey", "SubtleCrypto"],
    },
    Group {
        name: "subtle",
        source: include_str!("js/subtle.js"),
        globals: &[],
    },
    Group {
        name: "fetch",
        source: include_str!("js/fetch.js"),
        globals: &["fetch", "Headers", "Request", "Response"],
    },
    Group {
        name: "globals",
        source: include_str!("js/globals.js"),
        globals: &["performance", "navigator", "reportError"],
    },
];

/// The globals WebIDL makes enumerable (operations and attributes of the global scope); the
/// interface objects (classes) are not.
const ENUMERABLE: &[&str] = &["fetch", "reportError", "crypto", "performance", "navigator"];

/// Set only by `benches/extensions.rs`, to time contexts without the web platform (what they
/// cost before it) against contexts with it, in the same run.
static SKIPPED_FOR_BENCH: AtomicBool = AtomicBool::new(false);

/// For the extension bench only: `true` makes new contexts leave the web platform out.
#[doc(hidden)]
pub fn set_skipped_for_bench(skipped: bool) {
    SKIPPED_FOR_BENCH.store(skipped, Ordering::Relaxed);
}

/// Every global this module adds (for the presence test and README).
pub fn lazy_globals() -> impl Iterator<Item = &'static str> {
    GROUPS
        .iter()
        .flat_map(|group| group.globals.iter().copied())
}

/// Per-context state: what the scripts need, and each group's exports once loaded.
struct WebState {
    /// The built-in URL class, as boa_runtime registered it.
    url: JsValue,
    /// `console.error` as the runtime made it, for `reportError`.
    console_error: JsValue,
    /// boa_runtime's `TextDecoder.prototype.decode`, which [`text_decoder`]'s wrapper calls.
    text_decode: JsValue,
    /// The built-in URL accessors `searchParams` and the `search`/`href` setters wrap.
    url_accessors: url_search_params::UrlAccessors,
    /// The `internal` object, made on the first load.
    internal: RefCell<Option<JsObject>>,
    /// Each group's exports, by index in [`GROUPS`]; `Some(None)` while it is being evaluated.
    exports: RefCell<Vec<Option<Option<JsObject>>>>,
    /// Each lazy global's value once read, by index in [`lazy_globals`].
    values: RefCell<Vec<Option<JsValue>>>,
    /// Each lazy global that is now (or was) an own property of the global object: the proxy no
    /// longer answers for it, so deleting it deletes it.
    settled: RefCell<Vec<bool>>,
}

/// Installs every global of the web platform, lazily, `self`, and `URL.prototype.searchParams`. Call
/// after boa_runtime's extensions (its console and URL are captured here); do not register its
/// AbortController, which the lazy one (an EventTarget) replaces.
///
/// No property is defined per global: the global object's prototype becomes a proxy (of a
/// plain object inheriting `Object.prototype`) that answers for the lazy names (its `has` and `get` traps), so a fresh
/// context costs one proxy instead of a getter and a setter for each of ~50 names (measured: the
/// accessors cost 0.05 ms a context and a quarter more on a 20-extension load). Once read, a
/// global becomes a plain data property of the global object; assigning one before that defines
/// it there directly (the proxy has no `set` trap).
///
/// # Errors
/// When the global object cannot be set up (a bug, not an extension's fault).
pub fn install(context: &mut Context) -> JsResult<()> {
    if SKIPPED_FOR_BENCH.load(Ordering::Relaxed) {
        return Ok(());
    }
    let global = context.global_object();
    let url = global.get(js_string!("URL"), context)?;
    let console = global.get(js_string!("console"), context)?;
    let console_error = match console.as_object() {
        Some(console) => console.get(js_string!("error"), context)?,
        None => JsValue::undefined(),
    };
    let text_decode = text_decoder::install(context)?;
    let url_accessors = url_search_params::install(&url, context)?;
    context.insert_data(WebState {
        url,
        console_error,
        internal: RefCell::new(None),
        exports: RefCell::new(vec![None; GROUPS.len()]),
        values: RefCell::new(vec![None; lazy_globals().count()]),
        settled: RefCell::new(vec![false; lazy_globals().count()]),
        url_accessors,
        text_decode,
    });
    // The proxy's target is a plain object inheriting from Object.prototype, so the global
    // object still is `instanceof Object` and inherits every Object.prototype method.
    let target = JsObject::with_object_proto(context.intrinsics());
    let proxy = JsProxy::builder(target)
        .has(lazy_has)
        .get(lazy_get)
        .build(context)?;
    let proxy: JsObject = proxy.into();
    if !global.set_prototype(Some(proxy)) {
        return Err(JsNativeError::error()
            .with_message("the global object's prototype cannot be set")
            .into());
    }
    // `self`: the global object itself, as in workers, Deno and Bun.
    global.define_property_or_throw(
        js_string!("self"),
        PropertyDescriptor::builder()
            .value(global.clone())
            .writable(true)
            .enumerable(false)
            .configurable(true),
        context,
    )?;
    Ok(())
}

/// The index of a lazy global's name, while the proxy still answers for it.
fn answered(key: &JsValue, context: &Context) -> JsResult<Option<u32>> {
    let Some(index) = index_of(key) else {
        return Ok(None);
    };
    let settled = state(context)?.settled.borrow()[index as usize];
    Ok((!settled).then_some(index))
}

/// The index of a lazy global's name in [`lazy_globals`].
fn index_of(key: &JsValue) -> Option<u32> {
    let key = key.as_string()?.to_std_string().ok()?;
    lazy_globals()
        .position(|name| name == key)
        .map(|index| index as u32)
}

/// The (group, global name) of a lazy global's index.
fn lookup(index: u32) -> (usize, &'static str) {
    let mut index = index as usize;
    for (group_index, group) in GROUPS.iter().enumerate() {
        if index < group.globals.len() {
            return (group_index, group.globals[index]);
        }
        index -= group.globals.len();
    }
    unreachable!("a lazy global's index out of the table")
}

/// Defines global `index` as a plain data property of the global object holding its value (as
/// WebIDL defines globals: writable, configurable, enumerable only for operations and
/// attributes), unless the extension has defined it meanwhile.
///
/// This runs as a job, after the access that read the global: changing the global object's
/// layout in the middle of an access to it leaves Boa 0.22's property cache of that access
/// pointing at the old layout, and a later `new X(...)` in the same callback then reads the
/// wrong slot.
fn settle_later(index: u32, context: &mut Context) {
    let realm = context.realm().clone();
    let job = GenericJob::new(
        move |context: &mut Context| {
            let (_, name) = lookup(index);
            let Some(value) = state(context)?.values.borrow()[index as usize].clone() else {
                return Ok(JsValue::undefined());
            };
            state(context)?.settled.borrow_mut()[index as usize] = true;
            let global = context.global_object();
            if !global.has_own_property(JsString::from(name), context)? {
                global.define_property_or_throw(
                    JsString::from(name),
                    PropertyDescriptor::builder()
                        .value(value)
                        .writable(true)
                        .enumerable(ENUMERABLE.contains(&name))
                        .configurable(true),
                    context,
                )?;
            }
            Ok(JsValue::undefined())
        },
        realm,
    );
    context.enqueue_job(job.into());
}

/// The proxy's `has` trap: a lazy name is there; anything else is the target's (so
/// `Object.prototype`'s).
fn lazy_has(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let key = args.get(1).cloned().unwrap_or_default();
    if answered(&key, context)?.is_some() {
        return Ok(true.into());
    }
    let target = target_of(args)?;
    let key = key.to_property_key(context)?;
    Ok(target.has_property(key, context)?.into())
}

/// The proxy's `get` trap: a lazy name's value (its group evaluated on first use); anything else
/// is `Reflect.get(target, key, receiver)`.
fn lazy_get(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let key = args.get(1).cloned().unwrap_or_default();
    let Some(index) = answered(&key, context)? else {
        let target = target_of(args)?;
        let receiver = args.get(2).cloned().unwrap_or_default();
        let reflect = context.intrinsics().objects().reflect();
        let get = reflect.get(js_string!("get"), context)?;
        let get = get
            .as_callable()
            .ok_or_else(|| JsNativeError::typ().with_message("Reflect.get is not a function"))?;
        return get.call(&reflect.into(), &[target.into(), key, receiver], context);
    };
    if let Some(value) = state(context)?.values.borrow()[index as usize].clone() {
        return Ok(value);
    }
    let (group, name) = lookup(index);
    let exports = load(group, context)?;
    let value = exports.get(JsString::from(name), context)?;
    state(context)?.values.borrow_mut()[index as usize] = Some(value.clone());
    settle_later(index, context);
    Ok(value)
}

fn target_of(args: &[JsValue]) -> JsResult<JsObject> {
    args.first()
        .and_then(JsValue::as_object)
        .ok_or_else(|| JsNativeError::typ().with_message("no proxy target").into())
}

fn state(context: &Context) -> JsResult<&WebState> {
    context.get_data::<WebState>().ok_or_else(|| {
        JsNativeError::error()
            .with_message("the web platform is not installed in this context")
            .into()
    })
}

/// The exports of group `index`, evaluating its script the first time.
fn load(index: usize, context: &mut Context) -> JsResult<JsObject> {
    let loaded = state(context)?.exports.borrow()[index].clone();
    match loaded {
        Some(Some(exports)) => return Ok(exports),
        Some(None) => {
            return Err(JsNativeError::error()
                .with_message(format!("web group {} loads itself", GROUPS[index].name))
                .into());
        }
        None => {}
    }
    state(context)?.exports.borrow_mut()[index] = Some(None);
    let result = evaluate(index, context);
    state(context)?.exports.borrow_mut()[index] = result.as_ref().ok().cloned().map(Some);
    result
}

/// Evaluates group `index`'s script and returns its exports.
///
/// The script becomes the body of a function made by the `Function` constructor and is then
/// called: a getter can run in the middle of any expression (`new Blob(...)` inside a callback),
/// and evaluating a Script there clobbers the caller's operand stack on Boa 0.22, while a
/// function call is an ordinary nested frame.
fn evaluate(index: usize, context: &mut Context) -> JsResult<JsObject> {
    let group = &GROUPS[index];
    let internal = internal(context)?;
    let body = JsString::from(format!("return (\n{}\n)(internal);", group.source));
    let function_constructor = context.intrinsics().constructors().function().constructor();
    let factory = function_constructor.construct(
        &[js_string!("internal").into(), body.into()],
        None,
        context,
    )?;
    let exports = factory.call(&JsValue::undefined(), &[internal.into()], context)?;
    exports.as_object().ok_or_else(|| {
        JsNativeError::error()
            .with_message(format!("web group {} exported nothing", group.name))
            .into()
    })
}

fn internal(context: &mut Context) -> JsResult<JsObject> {
    if let Some(internal) = state(context)?.internal.borrow().clone() {
        return Ok(internal);
    }
    let url = state(context)?.url.clone();
    let accessors = state(context)?.url_accessors.clone();
    let load = NativeFunction::from_fn_ptr(load_by_name);
    let report = NativeFunction::from_fn_ptr(report_error);
    let internal = natives::internal_object(url, &accessors, report, load, context);
    *state(context)?.internal.borrow_mut() = Some(internal.clone());
    Ok(internal)
}

/// The exports of the group called `name`, evaluating it the first time.
fn load_named(name: &str, context: &mut Context) -> JsResult<JsObject> {
    let index = GROUPS
        .iter()
        .position(|group| group.name == name)
        .ok_or_else(|| JsNativeError::error().with_message(format!("no web group {name}")))?;
    load(index, context)
}

/// Whether the group called `name` has been evaluated in this context.
fn loaded(name: &str, context: &Context) -> JsResult<bool> {
    let index = GROUPS.iter().position(|group| group.name == name);
    let exports = state(context)?.exports.borrow();
    Ok(index.is_some_and(|index| matches!(exports[index], Some(Some(_)))))
}

fn load_by_name(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let name = args
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(context)?
        .to_std_string_lossy();
    Ok(load_named(&name, context)?.into())
}

/// `reportError(error)`: the error goes where an uncaught one would, the extension's console.
fn report_error(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let console_error = state(context)?.console_error.clone();
    if let Some(console_error) = console_error.as_callable() {
        let error = args.first().cloned().unwrap_or_default();
        console_error.call(
            &JsValue::undefined(),
            &[js_string!("Uncaught").into(), error],
            context,
        )?;
    }
    Ok(JsValue::undefined())
}
