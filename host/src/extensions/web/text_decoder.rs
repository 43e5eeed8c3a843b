//! `TextDecoder.prototype.decode` wrapped: boa_runtime 0.22 decodes UTF-16 by casting the bytes
//! to `u16`s in place, which panics (and takes the extension's JS thread with it) when the view
//! starts at an odd byte offset. The wrapper hands it a copy at offset 0 in that case.

use boa_engine::object::FunctionObjectBuilder;
use boa_engine::object::builtins::{JsArrayBuffer, JsDataView, JsTypedArray, JsUint8Array};
use boa_engine::property::PropertyDescriptor;
use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsValue, NativeFunction, js_string};

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

/// The byte offset of a typed array or DataView, if `value` is one.
fn byte_offset(value: &JsValue, context: &mut Context) -> JsResult<Option<usize>> {
    let Some(object) = value.as_object() else {
        return Ok(None);
    };
    if let Ok(array) = JsTypedArray::from_object(object.clone()) {
        return Ok(Some(array.byte_offset(context)?));
    }
    if let Ok(view) = JsDataView::from_object(object) {
        return Ok(Some(view.byte_offset(context)? as usize));
    }
    Ok(None)
}

/// A copy of the bytes `value` views, as a Uint8Array at offset 0.
fn aligned_copy(value: &JsValue, context: &mut Context) -> JsResult<JsValue> {
    let object = value
        .as_object()
        .ok_or_else(|| JsNativeError::typ().with_message("expected a buffer view"))?;
    let (buffer, offset, length) = match JsTypedArray::from_object(object.clone()) {
        Ok(array) => (
            array.buffer(context)?,
            array.byte_offset(context)?,
            array.byte_length(context)?,
        ),
        Err(_) => {
            let view = JsDataView::from_object(object)?;
            (
                view.buffer(context)?,
                view.byte_offset(context)? as usize,
                view.byte_length(context)? as usize,
            )
        }
    };
    let buffer = JsArrayBuffer::from_object(
        buffer
            .as_object()
            .ok_or_else(|| JsNativeError::typ().with_message("a view without a buffer"))?,
    )?;
    let bytes = buffer
        .data()
        .and_then(|data| data.get(offset..offset + length).map(<[u8]>::to_vec))
        .ok_or_else(|| JsNativeError::typ().with_message("the view is out of its buffer"))?;
    Ok(JsUint8Array::from_iter(bytes, context)?.into())
}

fn decode(this: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let original = state(context)?.text_decode.clone();
    let mut args = args.to_vec();
    if let Some(input) = args.first()
        && byte_offset(input, context)?.is_some_and(|offset| offset % 2 == 1)
    {
        args[0] = aligned_copy(input, context)?;
    }
    original
        .as_callable()
        .ok_or_else(|| {
            JsNativeError::typ().with_message("TextDecoder.prototype.decode is missing")
        })?
        .call(this, &args, context)
}
