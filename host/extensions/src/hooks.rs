//! The engine hooks of an extension's context: code compiled at run time (`eval`, `new
//! Function`) passes the same size and nesting checks as the extension's files, and starts only
//! with a parse's worth of native stack left. Boa's parser recurses in Rust once per level of
//! nesting, so `eval("[".repeat(1 << 20))` overflowed the JS thread's stack and aborted the
//! process; now it is a `SyntaxError` (too deep) or a `RangeError` (too little stack left) in
//! that one call. ArrayBuffers are capped at [`MAX_BUFFER_BYTES`].

use boa_engine::context::HostHooks;
use boa_engine::realm::Realm;
use boa_engine::{Context, JsNativeError, JsResult, JsString};

use crate::sources::parse_guard;

/// The largest `ArrayBuffer` (and so typed array) an extension may make: Boa's default is
/// 1.5 GiB, which alone would take most of a small machine's memory.
pub const MAX_BUFFER_BYTES: u64 = 256 << 20;

/// Hooks for every extension context.
#[derive(Debug, Default)]
pub struct ExtensionHooks;

impl HostHooks for ExtensionHooks {
    fn ensure_can_compile_strings(
        &self,
        _realm: Realm,
        parameters: &[JsString],
        body: &JsString,
        _direct: bool,
        context: &mut Context,
    ) -> JsResult<()> {
        if context
            .native_stack_remaining()
            .is_some_and(|left| left < parse_guard::PARSE_STACK_BYTES)
        {
            return Err(JsNativeError::range()
                .with_message("Maximum call stack size exceeded")
                .into());
        }
        // As `CreateDynamicFunction` joins them, so nesting split across parameters still counts.
        let text = if parameters.is_empty() {
            body.to_std_string_lossy()
        } else {
            let parameters: Vec<String> = parameters
                .iter()
                .map(JsString::to_std_string_lossy)
                .collect();
            format!(
                "({}\n) {{\n{}\n}}",
                parameters.join(","),
                body.to_std_string_lossy()
            )
        };
        parse_guard::check_source(&text).map_err(|(_, reason)| {
            JsNativeError::syntax()
                .with_message(format!("code compiled at run time: {reason}"))
                .into()
        })
    }

    fn max_buffer_size(&self, _context: &mut Context) -> u64 {
        MAX_BUFFER_BYTES
    }
}
