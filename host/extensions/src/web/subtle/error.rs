//! SubtleCrypto's failures, each thrown as the exception WebCrypto names for it: a
//! `DOMException` of that name, or a `TypeError`.

use boa_engine::{Context, JsError, JsNativeError, JsResult, JsString, JsValue, js_string};

/// The kind of a failure: the `DOMException` name it is thrown with (or `TypeError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `NotSupportedError`: an algorithm, format or parameter earshot does not offer.
    NotSupported,
    /// `InvalidAccessError`: the key does not allow the operation (usage, algorithm, export).
    InvalidAccess,
    /// `DataError`: key data that does not decode, or does not fit the algorithm.
    Data,
    /// `OperationError`: the operation itself failed (a GCM tag that does not match, bad padding).
    Operation,
    /// `SyntaxError`: usages the key's type does not allow, or none where some are required.
    Syntax,
    /// `TypeError`: an argument of the wrong type or out of range.
    Type,
}

/// A failure with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CryptoError {
    /// Which exception it is thrown as.
    pub kind: Kind,
    /// What went wrong.
    pub message: String,
}

impl CryptoError {
    /// A failure of `kind` saying `message`.
    pub fn new(kind: Kind, message: impl Into<String>) -> CryptoError {
        CryptoError {
            kind,
            message: message.into(),
        }
    }

    /// The JS exception: a `DOMException` named after the kind, or a `TypeError`.
    ///
    /// # Errors
    /// When `DOMException` itself cannot be loaded or constructed (a bug, not the caller's fault).
    pub fn into_js(self, context: &mut Context) -> JsResult<JsError> {
        let name = match self.kind {
            Kind::Type => return Ok(JsNativeError::typ().with_message(self.message).into()),
            Kind::NotSupported => "NotSupportedError",
            Kind::InvalidAccess => "InvalidAccessError",
            Kind::Data => "DataError",
            Kind::Operation => "OperationError",
            Kind::Syntax => "SyntaxError",
        };
        let events = super::super::load_named("events", context)?;
        let constructor = events.get(js_string!("DOMException"), context)?;
        let constructor = constructor.as_constructor().ok_or_else(|| {
            JsNativeError::error().with_message("DOMException is not a constructor")
        })?;
        let error = constructor.construct(
            &[
                JsString::from(self.message).into(),
                JsString::from(name).into(),
            ],
            None,
            context,
        )?;
        Ok(JsError::from_opaque(JsValue::from(error)))
    }
}

/// A `DataError` saying `message`.
pub fn data(message: impl Into<String>) -> CryptoError {
    CryptoError::new(Kind::Data, message)
}

/// An `OperationError` saying `message`.
pub fn operation(message: impl Into<String>) -> CryptoError {
    CryptoError::new(Kind::Operation, message)
}

/// A `NotSupportedError` saying `message`.
pub fn not_supported(message: impl Into<String>) -> CryptoError {
    CryptoError::new(Kind::NotSupported, message)
}

/// An `InvalidAccessError` saying `message`.
pub fn invalid_access(message: impl Into<String>) -> CryptoError {
    CryptoError::new(Kind::InvalidAccess, message)
}

/// A `SyntaxError` saying `message`.
pub fn syntax(message: impl Into<String>) -> CryptoError {
    CryptoError::new(Kind::Syntax, message)
}

/// A `TypeError` saying `message`.
pub fn type_error(message: impl Into<String>) -> CryptoError {
    CryptoError::new(Kind::Type, message)
}

/// A subtle operation's result.
pub type CryptoResult<T> = Result<T, CryptoError>;

/// The `NotSupportedError` Node gives for exporting a key in a format its type does not have
/// (`Unable to export ECDSA private key using raw format`).
pub fn no_such_export(algorithm: &str, public: bool, format: &str) -> CryptoError {
    not_supported(format!(
        "Unable to export {algorithm} {} key using {format} format",
        if public { "public" } else { "private" }
    ))
}
