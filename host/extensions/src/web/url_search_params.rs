//! `URL.prototype.searchParams` on boa_runtime's URL class (whose own getter throws "not
//! implemented"): a native getter that hands out the URL's URLSearchParams from the `url` group
//! (js/url_search_params.js), and `search`/`href` setters that call the built-in ones and then
//! let those params re-read the query. Installed in every context (three functions), while the
//! group's script runs only when `searchParams` is first read.

use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsValue, NativeFunction, js_string};

use super::{load_named, loaded, state};

/// The built-in URL accessors the wrappers call (and the `url` group uses through `internal`).
#[derive(Clone)]
pub(super) struct UrlAccessors {
    /// `search` getter.
    pub search_get: JsValue,
    /// `search` setter.
    pub search_set: JsValue,
    /// `href` getter.
    pub href_get: JsValue,
    /// `href` setter.
    pub href_set: JsValue,
}

/// Replaces `searchParams`, and the setters of `search` and `href`, on `URL.prototype`; the
/// built-in accessors they wrap.
pub(super) fn install(url: &JsValue, context: &mut Context) -> JsResult<UrlAccessors> {
    let url = url
        .as_object()
        .ok_or_else(|| JsNativeError::error().with_message("URL is not registered"))?;
    let prototype = url.get(js_string!("prototype"), context)?;
    let prototype = prototype
        .as_object()
        .ok_or_else(|| JsNativeError::error().with_message("URL has no prototype"))?;
    let (search_get, search_set) = accessors(&prototype, "search", context)?;
    let (href_get, href_set) = accessors(&prototype, "href", context)?;
    let function = |context: &mut Context, name: &str, body| -> JsObject {
        FunctionObjectBuilder::new(context.realm(), NativeFunction::from_fn_ptr(body))
            .name(js_string!(name))
            .length(usize::from(name.starts_with("set")))
            .build()
            .into()
    };
    let search_params = function(context, "get searchParams", search_params);
    let set_search = function(context, "set search", set_search);
    let set_href = function(context, "set href", set_href);
    let define = |prototype: &JsObject,
                  name: &str,
                  get: JsValue,
                  set: Option<JsObject>,
                  context: &mut Context| {
        let mut descriptor = PropertyDescriptor::builder()
            .get(get)
            .enumerable(true)
            .configurable(true);
        if let Some(set) = set {
            descriptor = descriptor.set(set);
        }
        prototype.define_property_or_throw(js_string!(name), descriptor, context)
    };
    define(
        &prototype,
        "searchParams",
        search_params.into(),
        None,
        context,
    )?;
    define(
        &prototype,
        "search",
        search_get.clone(),
        Some(set_search),
        context,
    )?;
    define(
        &prototype,
        "href",
        href_get.clone(),
        Some(set_href),
        context,
    )?;
    Ok(UrlAccessors {
        search_get,
        search_set,
        href_get,
        href_set,
    })
}

/// The getter and setter of `prototype[name]`, through `Object.getOwnPropertyDescriptor`.
fn accessors(
    prototype: &JsObject,
    name: &str,
    context: &mut Context,
) -> JsResult<(JsValue, JsValue)> {
    let object = context.intrinsics().constructors().object().constructor();
    let describe = object.get(js_string!("getOwnPropertyDescriptor"), context)?;
    let describe = describe
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message("no getOwnPropertyDescriptor"))?;
    let descriptor = describe.call(
        &object.clone().into(),
        &[prototype.clone().into(), js_string!(name).into()],
        context,
    )?;
    let descriptor = descriptor
        .as_object()
        .ok_or_else(|| JsNativeError::error().with_message(format!("URL has no {name}")))?;
    Ok((
        descriptor.get(js_string!("get"), context)?,
        descriptor.get(js_string!("set"), context)?,
    ))
}

fn call(
    function: &JsValue,
    this: &JsValue,
    args: &[JsValue],
    context: &mut Context,
) -> JsResult<JsValue> {
    function
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message("not a URL accessor"))?
        .call(this, args, context)
}

/// Calls the `url` group's export `name` with the URL `this`.
fn call_export(name: &str, this: &JsValue, context: &mut Context) -> JsResult<JsValue> {
    let exports = load_named("url", context)?;
    let function = exports.get(js_string!(name), context)?;
    call(
        &function,
        &JsValue::undefined(),
        std::slice::from_ref(this),
        context,
    )
}

/// Lets the URL's URLSearchParams (if it has any yet) re-read the query after a change.
fn refresh(this: &JsValue, context: &mut Context) -> JsResult<()> {
    if loaded("url", context)? {
        call_export("refresh", this, context)?;
    }
    Ok(())
}

fn search_params(this: &JsValue, _: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    // The built-in getter throws on anything that is not a URL.
    let search_get = state(context)?.url_accessors.search_get.clone();
    call(&search_get, this, &[], context)?;
    call_export("paramsFor", this, context)
}

fn set_search(this: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let search_set = state(context)?.url_accessors.search_set.clone();
    set_then_refresh(&search_set, this, args, context)
}

fn set_href(this: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let href_set = state(context)?.url_accessors.href_set.clone();
    set_then_refresh(&href_set, this, args, context)
}

/// Calls a built-in setter, then lets the URL's URLSearchParams re-read the query.
fn set_then_refresh(
    setter: &JsValue,
    this: &JsValue,
    args: &[JsValue],
    context: &mut Context,
) -> JsResult<JsValue> {
    call(setter, this, args, context)?;
    refresh(this, context)?;
    Ok(JsValue::undefined())
}
