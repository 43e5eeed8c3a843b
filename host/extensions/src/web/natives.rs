//! The native half of the web platform: what the scripts in `js/` cannot do in JavaScript, or
//! should not (randomness, digests, compression, the form-urlencoded codec, UTF-8 decoding, the
//! HTTP client). Each is a function on the `internal` object only those scripts see.

use std::cell::RefCell;
use std::io::Write;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use boa_engine::object::builtins::{
    AlignedVec, JsArray, JsArrayBuffer, JsDataView, JsPromise, JsTypedArray,
};
use boa_engine::object::{JsObject, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    Context, Finalize, JsData, JsNativeError, JsResult, JsString, JsValue, NativeFunction, Trace,
    js_string,
};
use sha2::Digest;

use super::super::fetch::{Head, InFlight, Redirect};

/// The process's time origin: `performance.timeOrigin` and the zero of `performance.now()`.
fn origin() -> &'static (Instant, f64) {
    static ORIGIN: OnceLock<(Instant, f64)> = OnceLock::new();
    ORIGIN.get_or_init(|| {
        let epoch_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or_default();
        (Instant::now(), epoch_ms)
    })
}

fn type_error(message: impl Into<String>) -> boa_engine::JsError {
    JsNativeError::typ().with_message(message.into()).into()
}

fn arg(args: &[JsValue], index: usize) -> JsValue {
    args.get(index).cloned().unwrap_or_default()
}

/// A string argument as Rust text, lone surrogates replaced (a USVString).
fn text_arg(args: &[JsValue], index: usize, context: &mut Context) -> JsResult<String> {
    Ok(arg(args, index).to_string(context)?.to_std_string_lossy())
}

/// The buffer a typed array or DataView views, and the byte range of the view in it.
pub(super) fn view_of(
    value: &JsValue,
    context: &mut Context,
) -> JsResult<(JsArrayBuffer, std::ops::Range<usize>)> {
    let object = value
        .as_object()
        .ok_or_else(|| type_error("expected a Uint8Array"))?;
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
            .ok_or_else(|| type_error("a view without a buffer"))?,
    )?;
    Ok((buffer, offset..offset + length))
}

/// The bytes a Uint8Array (or any typed array or DataView) views, copied.
pub(super) fn bytes_arg(value: &JsValue, context: &mut Context) -> JsResult<Vec<u8>> {
    let (buffer, range) = view_of(value, context)?;
    let data = buffer
        .data()
        .ok_or_else(|| type_error("the buffer is detached"))?;
    Ok(data
        .get(range)
        .ok_or_else(|| type_error("the view is out of its buffer"))?
        .to_vec())
}

/// A new ArrayBuffer holding `bytes`.
pub(super) fn array_buffer(bytes: &[u8], context: &mut Context) -> JsResult<JsValue> {
    Ok(JsArrayBuffer::from_byte_block(AlignedVec::from_slice(0, bytes), context)?.into())
}

fn to_usv_string(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    Ok(JsString::from(text_arg(args, 0, context)?).into())
}

fn parse_urlencoded(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let text = text_arg(args, 0, context)?;
    let pairs = JsArray::new(context)?;
    for (name, value) in url::form_urlencoded::parse(text.as_bytes()) {
        let pair = JsArray::from_iter(
            [
                JsString::from(name.as_ref()).into(),
                JsString::from(value.as_ref()).into(),
            ],
            context,
        );
        pairs.push(pair, context)?;
    }
    Ok(pairs.into())
}

/// A JS array of `[name, value]` pairs as Rust strings (lone surrogates replaced).
fn string_pairs(value: &JsValue, context: &mut Context) -> JsResult<Vec<(String, String)>> {
    let pairs = value
        .as_object()
        .ok_or_else(|| type_error("expected a list of pairs"))?;
    let pairs = JsArray::from_object(pairs)?;
    let mut out = Vec::new();
    for index in 0..pairs.length(context)? {
        let pair = pairs.get(index, context)?;
        let pair = pair
            .as_object()
            .ok_or_else(|| type_error("expected a [name, value] pair"))?;
        let mut text = |at: u32| -> JsResult<String> {
            Ok(pair
                .get(at, context)?
                .to_string(context)?
                .to_std_string_lossy())
        };
        out.push((text(0)?, text(1)?));
    }
    Ok(out)
}

fn serialize_urlencoded(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in string_pairs(&arg(args, 0), context)? {
        serializer.append_pair(&name, &value);
    }
    Ok(JsString::from(serializer.finish()).into())
}

/// `indexOfBytes(haystack, needle, from)`: where `needle` first occurs in `haystack` at or
/// after `from`, or -1 (linear: the multipart parser's boundary search on a server's body).
fn index_of_bytes(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let haystack = bytes_arg(&arg(args, 0), context)?;
    let needle = bytes_arg(&arg(args, 1), context)?;
    let from = (arg(args, 2).to_length(context)? as usize).min(haystack.len());
    Ok(match memchr::memmem::find(&haystack[from..], &needle) {
        Some(at) => JsValue::new((from + at) as f64),
        None => JsValue::new(-1),
    })
}

fn random_digits(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let count = arg(args, 0).to_u32(context)?.min(64) as usize;
    let mut bytes = vec![0u8; count];
    getrandom::fill(&mut bytes).map_err(|error| type_error(error.to_string()))?;
    let digits: String = bytes.iter().map(|b| char::from(b'0' + b % 10)).collect();
    Ok(JsString::from(digits).into())
}

fn random_fill(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let (buffer, range) = view_of(&arg(args, 0), context)?;
    let mut data = buffer
        .data_mut()
        .ok_or_else(|| type_error("the buffer is detached"))?;
    let view = data
        .get_mut(range)
        .ok_or_else(|| type_error("the view is out of its buffer"))?;
    getrandom::fill(view).map_err(|error| type_error(error.to_string()))?;
    Ok(JsValue::undefined())
}

fn random_uuid(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|error| type_error(error.to_string()))?;
    let uuid = uuid::Builder::from_random_bytes(bytes).into_uuid();
    Ok(JsString::from(uuid.hyphenated().to_string()).into())
}

fn digest(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let algorithm = text_arg(args, 0, context)?;
    let data = bytes_arg(&arg(args, 1), context)?;
    let hash: Vec<u8> = match algorithm.as_str() {
        "SHA-1" => sha1::Sha1::digest(&data).to_vec(),
        "SHA-256" => sha2::Sha256::digest(&data).to_vec(),
        "SHA-384" => sha2::Sha384::digest(&data).to_vec(),
        "SHA-512" => sha2::Sha512::digest(&data).to_vec(),
        other => return Err(type_error(format!("no digest named {other}"))),
    };
    array_buffer(&hash, context)
}

fn decode_utf8(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let bytes = bytes_arg(&arg(args, 0), context)?;
    let fatal = arg(args, 1).to_boolean();
    let strip_bom = arg(args, 2).to_boolean();
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) if strip_bom => rest,
        _ => &bytes[..],
    };
    let text = if fatal {
        std::str::from_utf8(bytes)
            .map_err(|_| type_error("The encoded data was not valid for encoding utf-8"))?
            .to_string()
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    };
    Ok(JsString::from(text).into())
}

/// One CompressionStream's or DecompressionStream's state.
enum Codec {
    GzipEncode(flate2::write::GzEncoder<Vec<u8>>),
    ZlibEncode(flate2::write::ZlibEncoder<Vec<u8>>),
    DeflateEncode(flate2::write::DeflateEncoder<Vec<u8>>),
    GzipDecode(flate2::write::GzDecoder<Vec<u8>>),
    ZlibDecode(flate2::write::ZlibDecoder<Vec<u8>>),
    DeflateDecode(flate2::write::DeflateDecoder<Vec<u8>>),
}

/// The JS handle of a [`Codec`]; `None` once finished.
#[derive(Trace, Finalize, JsData)]
struct CodecHandle {
    #[unsafe_ignore_trace]
    codec: RefCell<Option<Codec>>,
    /// Bytes handed back so far.
    #[unsafe_ignore_trace]
    produced: std::cell::Cell<usize>,
}

fn codec(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let format = text_arg(args, 0, context)?;
    let compress = arg(args, 1).to_boolean();
    let level = flate2::Compression::default();
    let codec = match (format.as_str(), compress) {
        ("gzip", true) => Codec::GzipEncode(flate2::write::GzEncoder::new(Vec::new(), level)),
        ("deflate", true) => Codec::ZlibEncode(flate2::write::ZlibEncoder::new(Vec::new(), level)),
        ("deflate-raw", true) => {
            Codec::DeflateEncode(flate2::write::DeflateEncoder::new(Vec::new(), level))
        }
        ("gzip", false) => Codec::GzipDecode(flate2::write::GzDecoder::new(Vec::new())),
        ("deflate", false) => Codec::ZlibDecode(flate2::write::ZlibDecoder::new(Vec::new())),
        ("deflate-raw", false) => {
            Codec::DeflateDecode(flate2::write::DeflateDecoder::new(Vec::new()))
        }
        (other, _) => return Err(type_error(format!("no compression format {other}"))),
    };
    let handle = CodecHandle {
        codec: RefCell::new(Some(codec)),
        produced: std::cell::Cell::new(0),
    };
    Ok(JsObject::from_proto_and_data(None, handle).into())
}

fn codec_handle(value: &JsValue) -> JsResult<JsObject<CodecHandle>> {
    value
        .as_object()
        .and_then(|object| object.clone().downcast::<CodecHandle>().ok())
        .ok_or_else(|| type_error("not a codec"))
}

/// The most bytes one CompressionStream or DecompressionStream produces in all: a stream that
/// would produce more fails (a small hostile body cannot inflate into gigabytes of memory).
pub const MAX_CODEC_OUTPUT: usize = 256 * 1024 * 1024;

/// The input is fed to the codec in slices of this size, so that what one slice produces is
/// moved out (and counted) before the next one is written.
const CODEC_SLICE: usize = 16 * 1024;

impl Codec {
    /// Writes some of `input`: how many bytes the codec took (0: a decoder at the end of its data).
    fn write(&mut self, input: &[u8]) -> std::io::Result<usize> {
        match self {
            Codec::GzipEncode(w) => w.write(input),
            Codec::ZlibEncode(w) => w.write(input),
            Codec::DeflateEncode(w) => w.write(input),
            Codec::GzipDecode(w) => w.write(input),
            Codec::ZlibDecode(w) => w.write(input),
            Codec::DeflateDecode(w) => w.write(input),
        }
    }

    /// The output produced so far, moved out.
    fn take_output(&mut self) -> Vec<u8> {
        match self {
            Codec::GzipEncode(w) => std::mem::take(w.get_mut()),
            Codec::ZlibEncode(w) => std::mem::take(w.get_mut()),
            Codec::DeflateEncode(w) => std::mem::take(w.get_mut()),
            Codec::GzipDecode(w) => std::mem::take(w.get_mut()),
            Codec::ZlibDecode(w) => std::mem::take(w.get_mut()),
            Codec::DeflateDecode(w) => std::mem::take(w.get_mut()),
        }
    }

    fn decoding(&self) -> bool {
        matches!(
            self,
            Codec::GzipDecode(_) | Codec::ZlibDecode(_) | Codec::DeflateDecode(_)
        )
    }
}

/// The output a codec handed back so far, counted against [`MAX_CODEC_OUTPUT`].
fn count_output(handle: &CodecHandle, produced: usize) -> JsResult<()> {
    let total = handle.produced.get().saturating_add(produced);
    handle.produced.set(total);
    if total > MAX_CODEC_OUTPUT {
        return Err(type_error(format!(
            "The stream's output is larger than {} MiB.",
            MAX_CODEC_OUTPUT / (1024 * 1024)
        )));
    }
    Ok(())
}

/// Writes all of `input` in slices, moving the output out after each; a decoder that stops
/// taking bytes has reached the end of its data, and anything after that end is an error (as
/// the Compression standard says).
fn write_all(handle: &CodecHandle, codec: &mut Codec, input: &[u8]) -> JsResult<Vec<Vec<u8>>> {
    let decoding = codec.decoding();
    let mut pieces = Vec::new();
    for mut slice in input.chunks(CODEC_SLICE) {
        while !slice.is_empty() {
            let taken = codec.write(slice).map_err(|error| {
                type_error(if decoding {
                    format!("The compressed data is not valid: {error}")
                } else {
                    error.to_string()
                })
            })?;
            if taken == 0 {
                return Err(type_error("Junk found after end of compressed data."));
            }
            slice = &slice[taken..];
            let out = codec.take_output();
            if !out.is_empty() {
                count_output(handle, out.len())?;
                pieces.push(out);
            }
        }
    }
    Ok(pieces)
}

/// The pieces as an array of ArrayBuffers.
fn buffers(pieces: &[Vec<u8>], context: &mut Context) -> JsResult<JsValue> {
    let array = JsArray::new(context)?;
    for piece in pieces {
        let buffer = array_buffer(piece, context)?;
        array.push(buffer, context)?;
    }
    Ok(array.into())
}

fn codec_write(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let handle = codec_handle(&arg(args, 0))?;
    let input = bytes_arg(&arg(args, 1), context)?;
    let pieces = {
        let handle = handle.borrow();
        let data = handle.data();
        let mut slot = data.codec.borrow_mut();
        let codec = slot
            .as_mut()
            .ok_or_else(|| type_error("the stream has finished"))?;
        write_all(data, codec, &input)
    };
    // A failed codec stays failed: nothing more is written to it.
    let pieces = pieces.inspect_err(|_| {
        handle.borrow().data().codec.borrow_mut().take();
    })?;
    buffers(&pieces, context)
}

fn codec_finish(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let handle = codec_handle(&arg(args, 0))?;
    let codec = handle
        .borrow()
        .data()
        .codec
        .borrow_mut()
        .take()
        .ok_or_else(|| type_error("the stream has finished"))?;
    let truncated =
        |_| type_error("The compressed data ended before its end (unexpected end of file).");
    let corrupt =
        |error: std::io::Error| type_error(format!("The compressed data is not valid: {error}"));
    let out = match codec {
        Codec::GzipEncode(w) => w.finish().map_err(|e| type_error(e.to_string()))?,
        Codec::ZlibEncode(w) => w.finish().map_err(|e| type_error(e.to_string()))?,
        Codec::DeflateEncode(w) => w.finish().map_err(|e| type_error(e.to_string()))?,
        Codec::GzipDecode(w) => w.finish().map_err(|error| {
            if error.kind() == std::io::ErrorKind::UnexpectedEof {
                truncated(error)
            } else {
                corrupt(error)
            }
        })?,
        Codec::ZlibDecode(mut w) => {
            // `finish` flushes what it has; a stream cut short yields less, never an error, so
            // the end of the data is checked by asking for one more byte to be taken.
            w.try_finish().map_err(corrupt)?;
            ensure_ended(&mut w)?;
            w.finish().map_err(corrupt)?
        }
        Codec::DeflateDecode(mut w) => {
            w.try_finish().map_err(corrupt)?;
            ensure_ended(&mut w)?;
            w.finish().map_err(corrupt)?
        }
    };
    count_output(handle.borrow().data(), out.len())?;
    let pieces: Vec<Vec<u8>> = out.chunks(64 * 1024).map(<[u8]>::to_vec).collect();
    buffers(&pieces, context)
}

/// A zlib or raw-deflate decoder that would still take input has not seen its end yet.
fn ensure_ended(writer: &mut impl Write) -> JsResult<()> {
    match writer.write(&[0]) {
        Ok(0) => Ok(()),
        _ => Err(type_error(
            "The compressed data ended before its end (unexpected end of file).",
        )),
    }
}

/// The JS handle of one request in flight.
#[derive(Trace, Finalize, JsData)]
struct FetchHandle {
    #[unsafe_ignore_trace]
    request: RefCell<InFlight>,
}

fn fetch_handle(value: &JsValue) -> JsResult<JsObject<FetchHandle>> {
    value
        .as_object()
        .and_then(|object| object.clone().downcast::<FetchHandle>().ok())
        .ok_or_else(|| type_error("not a request"))
}

fn fetch_start(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let method = text_arg(args, 0, context)?;
    let method = http::Method::from_bytes(method.as_bytes())
        .map_err(|_| type_error(format!("'{method}' is not a valid HTTP method.")))?;
    let url = text_arg(args, 1, context)?;
    let mut headers = http::HeaderMap::new();
    for (name, value) in string_pairs(&arg(args, 2), context)? {
        let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            type_error(format!(
                "Header name must be a valid HTTP token [\"{name}\"]"
            ))
        })?;
        // ByteString: each code point below 256 is one byte (fetch.js checked; checked again).
        let bytes = value
            .chars()
            .map(|c| u8::try_from(u32::from(c)))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| type_error(format!("Invalid header value \"{value}\"")))?;
        let value = http::HeaderValue::from_bytes(&bytes)
            .map_err(|_| type_error(format!("Invalid header value \"{value}\"")))?;
        headers.append(name, value);
    }
    let body = match arg(args, 3) {
        value if value.is_null_or_undefined() => None,
        value => Some(bytes_arg(&value, context)?),
    };
    let redirect = match text_arg(args, 4, context)?.as_str() {
        "error" => Redirect::Error,
        "manual" => Redirect::Manual,
        _ => Redirect::Follow,
    };
    let handle = FetchHandle {
        request: RefCell::new(InFlight::new(method, url, headers, body, redirect)),
    };
    Ok(JsObject::from_proto_and_data(None, handle).into())
}

fn fetch_abort(_: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    fetch_handle(&arg(args, 0))?
        .borrow()
        .data()
        .request
        .borrow()
        .abort();
    Ok(JsValue::undefined())
}

fn fetch_wait(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let head = fetch_handle(&arg(args, 0))?
        .borrow()
        .data()
        .request
        .borrow_mut()
        .head()
        .ok_or_else(|| type_error("the request was already awaited"))?;
    let promise = JsPromise::from_async_fn(
        async move |context| {
            let head = head
                .await
                .map_err(|failure| failure.into_js_error(&mut context.borrow_mut()))?;
            head_to_js(head, &mut context.borrow_mut())
        },
        context,
    );
    Ok(promise.into())
}

/// `fetchRead(handle)`: a promise of the next body chunk (an ArrayBuffer), or null at the end.
fn fetch_read(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let chunk = fetch_handle(&arg(args, 0))?
        .borrow()
        .data()
        .request
        .borrow()
        .read();
    let promise = JsPromise::from_async_fn(
        async move |context| match chunk.await.map_err(type_error)? {
            Some(bytes) => array_buffer(&bytes, &mut context.borrow_mut()),
            None => Ok(JsValue::null()),
        },
        context,
    );
    Ok(promise.into())
}

fn head_to_js(head: Head, context: &mut Context) -> JsResult<JsValue> {
    let headers = JsArray::new(context)?;
    for (name, value) in &head.headers {
        // ByteString: each byte is one code point.
        let value: String = value.as_bytes().iter().map(|b| char::from(*b)).collect();
        let pair = JsArray::from_iter(
            [
                JsString::from(name.as_str()).into(),
                JsString::from(value).into(),
            ],
            context,
        );
        headers.push(pair, context)?;
    }
    let result = ObjectInitializer::new(context)
        .property(
            js_string!("url"),
            JsString::from(head.url),
            Attribute::all(),
        )
        .property(js_string!("status"), head.status, Attribute::all())
        .property(
            js_string!("statusText"),
            JsString::from(head.status_text),
            Attribute::all(),
        )
        .property(js_string!("headers"), headers, Attribute::all())
        .build();
    Ok(result.into())
}

fn now(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::new(origin().0.elapsed().as_secs_f64() * 1000.0))
}

fn time_origin(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::new(origin().1))
}

/// The `internal` object the web scripts receive: every function above, `load` (another group's
/// exports), the built-in `URL` class and its `search`/`href` accessors, and what `navigator`
/// reports.
pub(super) fn internal_object(
    url: JsValue,
    accessors: &super::url_search_params::UrlAccessors,
    report_error: NativeFunction,
    load: NativeFunction,
    context: &mut Context,
) -> JsObject {
    let user_agent = JsString::from(concat!("earshot/", env!("CARGO_PKG_VERSION")));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let functions: [(&str, NativeFunction, usize); 20] = [
        ("load", load, 1),
        ("reportError", report_error, 1),
        ("toUSVString", NativeFunction::from_fn_ptr(to_usv_string), 1),
        (
            "parseUrlencoded",
            NativeFunction::from_fn_ptr(parse_urlencoded),
            1,
        ),
        (
            "serializeUrlencoded",
            NativeFunction::from_fn_ptr(serialize_urlencoded),
            1,
        ),
        (
            "randomDigits",
            NativeFunction::from_fn_ptr(random_digits),
            1,
        ),
        (
            "indexOfBytes",
            NativeFunction::from_fn_ptr(index_of_bytes),
            3,
        ),
        ("randomFill", NativeFunction::from_fn_ptr(random_fill), 1),
        ("randomUUID", NativeFunction::from_fn_ptr(random_uuid), 0),
        ("digest", NativeFunction::from_fn_ptr(digest), 2),
        ("decodeUtf8", NativeFunction::from_fn_ptr(decode_utf8), 3),
        ("codec", NativeFunction::from_fn_ptr(codec), 2),
        ("codecWrite", NativeFunction::from_fn_ptr(codec_write), 2),
        ("codecFinish", NativeFunction::from_fn_ptr(codec_finish), 1),
        ("fetchStart", NativeFunction::from_fn_ptr(fetch_start), 5),
        ("fetchWait", NativeFunction::from_fn_ptr(fetch_wait), 1),
        ("fetchRead", NativeFunction::from_fn_ptr(fetch_read), 1),
        ("fetchAbort", NativeFunction::from_fn_ptr(fetch_abort), 1),
        ("now", NativeFunction::from_fn_ptr(now), 0),
        ("timeOrigin", NativeFunction::from_fn_ptr(time_origin), 0),
    ];
    let subtle = super::subtle::natives(context);
    let mut builder = ObjectInitializer::new(context);
    for (name, function, length) in functions {
        builder.function(function, JsString::from(name), length);
    }
    builder
        .property(js_string!("URL"), url, Attribute::all())
        .property(
            js_string!("urlSearchGet"),
            accessors.search_get.clone(),
            Attribute::all(),
        )
        .property(
            js_string!("urlSearchSet"),
            accessors.search_set.clone(),
            Attribute::all(),
        )
        .property(
            js_string!("urlHrefGet"),
            accessors.href_get.clone(),
            Attribute::all(),
        )
        .property(
            js_string!("urlHrefSet"),
            accessors.href_set.clone(),
            Attribute::all(),
        )
        .property(js_string!("subtle"), subtle, Attribute::all())
        .property(js_string!("userAgent"), user_agent, Attribute::all())
        .property(
            js_string!("hardwareConcurrency"),
            cores as u32,
            Attribute::all(),
        )
        .property(
            js_string!("platform"),
            JsString::from(std::env::consts::OS),
            Attribute::all(),
        )
        .build()
}
