//! A CryptoKey's host side: its type, algorithm, usages, whether it is extractable, and its
//! material, which never becomes a JS value (JS holds an opaque handle object).

use boa_engine::object::JsObject;
use boa_engine::{Finalize, JsData, JsValue, Trace};
use serde::Serialize;
use zeroize::Zeroizing;

use super::ecdsa::EcKey;
use super::ed25519::EdKey;
use super::error::{CryptoResult, invalid_access, type_error};
use super::params::{Hash, Usage};
use super::rsa::RsaKey;

/// A key's type (`CryptoKey.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyType {
    /// A symmetric key.
    Secret,
    /// The public half of a pair.
    Public,
    /// The private half of a pair.
    Private,
}

/// `CryptoKey.algorithm`: the members in the order Node shows them.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyAlgorithm {
    /// The algorithm's canonical name.
    pub name: String,
    /// RSA: the modulus length in bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modulus_length: Option<u32>,
    /// RSA: the public exponent, big-endian.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_exponent: Option<Vec<u8>>,
    /// HMAC and RSA: the hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<Hash>,
    /// HMAC and AES: the key length in bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length: Option<u32>,
    /// ECDSA: the curve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named_curve: Option<String>,
}

impl KeyAlgorithm {
    /// An algorithm with only a name.
    pub fn named(name: &str) -> KeyAlgorithm {
        KeyAlgorithm {
            name: name.to_string(),
            ..KeyAlgorithm::default()
        }
    }
}

/// A key's material.
pub enum Material {
    /// HMAC, AES, PBKDF2 and HKDF keys: bytes, wiped when dropped.
    Secret(Zeroizing<Vec<u8>>),
    /// An Ed25519 key.
    Ed25519(EdKey),
    /// An ECDSA key (P-256 or P-384).
    Ecdsa(EcKey),
    /// An RSA key (RSASSA-PKCS1-v1_5 or RSA-PSS).
    Rsa(RsaKey),
}

/// A whole key.
pub struct Key {
    /// Its type.
    pub kind: KeyType,
    /// Whether exportKey may read it.
    pub extractable: bool,
    /// Its algorithm.
    pub algorithm: KeyAlgorithm,
    /// What it may be used for.
    pub usages: Vec<Usage>,
    /// Its material.
    pub material: Material,
}

impl Key {
    /// The JSON subtle.js builds the CryptoKey's attributes from.
    pub fn info(&self) -> String {
        serde_json::json!({
            "type": self.kind,
            "extractable": self.extractable,
            "algorithm": self.algorithm,
            "usages": self.usages,
        })
        .to_string()
    }

    /// An `InvalidAccessError` unless the key is for `algorithm` and allows `usage`.
    ///
    /// # Errors
    /// As above.
    pub fn allow(&self, algorithm: &str, usage: Usage) -> CryptoResult<()> {
        if self.algorithm.name != algorithm {
            return Err(invalid_access(format!(
                "The key is a {} key, not {algorithm}",
                self.algorithm.name
            )));
        }
        if !self.usages.contains(&usage) {
            return Err(invalid_access(format!(
                "The key does not allow {}",
                usage.name()
            )));
        }
        Ok(())
    }

    /// The secret bytes of a secret key.
    ///
    /// # Errors
    /// An `InvalidAccessError` for any other key.
    pub fn secret(&self) -> CryptoResult<&[u8]> {
        match &self.material {
            Material::Secret(bytes) => Ok(bytes),
            _ => Err(invalid_access("The key is not a secret key")),
        }
    }
}

/// The JS-side handle of a [`Key`]: an object without prototype or properties, kept in
/// crypto.js's private record of its CryptoKey.
#[derive(Trace, Finalize, JsData)]
pub struct KeyHandle {
    /// The key.
    #[unsafe_ignore_trace]
    pub key: Key,
}

/// A handle object for `key`.
pub fn handle(key: Key) -> JsValue {
    JsObject::from_proto_and_data(None, KeyHandle { key }).into()
}

/// The key behind a handle object.
///
/// # Errors
/// A `TypeError` for anything else.
pub fn key_of(value: &JsValue) -> CryptoResult<JsObject<KeyHandle>> {
    value
        .as_object()
        .and_then(|object| object.clone().downcast::<KeyHandle>().ok())
        .ok_or_else(|| type_error("not a CryptoKey"))
}
