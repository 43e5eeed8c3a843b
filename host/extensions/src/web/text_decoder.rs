//! `TextDecoder.prototype.decode` wrapped: boa_runtime 0.22 decodes UTF-16 by casting the bytes
//! to `u16`s in place, which panics (and takes the extension's JS thread with it) when the view
//! starts at an odd byte offset. The wrapper hands it a copy at offset 0 in that case.

use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsValue, NativeFunction, js_string};

use super::natives::{array_buffer, bytes_arg, view_of};
use super::state;

/// Replaces `TextDecoder.prototype.decode`; returns the built-in one the wrapper calls.
pub(super) fn install(context: &mut Context) -> JsResult<JsValue> {
    let decoder = context
        .global_object()
        .get(js_string!("TextDecoder"), context)?;
    let prototype = decoder
        .as_object()
        .ok_or_else(|| JsNativeError::error().with_message("TextDecoder is not registered"))?
        .get(js_string!("prototype"), context)?;
    let prototype = prototype
        .as_object()
        .ok_or_else(|| JsNativeError::error().with_message("TextDecoder has no prototype"))?;
    let original = prototype.get(js_string!("decode"), context)?;
    let wrapper: JsObject =
        FunctionObjectBuilder::new(context.realm(), NativeFunction::from_fn_ptr(decode))
            .name(js_string!("decode"))
            .length(0)
            .build()
            .into();
    prototype.define_property_or_throw(
        js_string!("decode"),
        PropertyDescriptor::builder()
            .value(wrapper)
            .writable(true)
            .enumerable(true)
            .configurable(true),
        context,
    )?;
    Ok(original)
}

fn decode(this: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let original = state(context)?.text_decode.clone();
    let mut args = args.to_vec();
    if let Some(input) = args.first()
        && view_of(input, context).is_ok_and(|(_, range)| range.start % 2 == 1)
    {
        // A copy of the viewed bytes, in a buffer of its own (offset 0).
        let bytes = bytes_arg(input, context)?;
        args[0] = array_buffer(&bytes, context)?;
    }
    original
        .as_callable()
        .ok_or_else(|| {
            JsNativeError::typ().with_message("TextDecoder.prototype.decode is missing")
        })?
        .call(this, &args, context)
}
