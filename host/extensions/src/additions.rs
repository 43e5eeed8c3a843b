//! `Array.fromAsync` and `structuredClone`'s `DataCloneError`, as Node has them, added to every
//! extension's context by a small script (`js/additions.js`) after the web platform.

use boa_engine::{Context, JsResult, Source};

/// Evaluates `js/additions.js` in `context`.
pub(crate) fn install(context: &mut Context) -> JsResult<()> {
    context.eval(Source::from_bytes(include_str!("js/additions.js")))?;
    Ok(())
}
