//! The normalised algorithm a method receives from subtle.js (as JSON: the canonical name and
//! the converted members of its parameter dictionary), the hashes and the key usages.

use serde::{Deserialize, Serialize};
use sha2_v11::Digest;

use super::error::{CryptoResult, syntax, type_error};

/// A normalised algorithm. The byte-string members (`iv`, `salt`, `info`, `additionalData`) come
/// as arguments of their own, not here.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Params {
    /// The canonical name (`HMAC`, `AES-GCM`, `RSA-PSS`, ...).
    pub name: String,
    /// A hash's canonical name, where the algorithm takes one.
    pub hash: Option<Hash>,
    /// A key length in bits (HMAC, AES).
    pub length: Option<u32>,
    /// An elliptic curve (`P-256`, `P-384`).
    pub named_curve: Option<String>,
    /// RSA-PSS's salt length in bytes.
    pub salt_length: Option<u32>,
    /// RSA key generation: the modulus length in bits.
    pub modulus_length: Option<u32>,
    /// RSA key generation: the public exponent, big-endian.
    pub public_exponent: Option<Vec<u8>>,
    /// PBKDF2's iteration count.
    pub iterations: Option<u32>,
    /// AES-GCM's tag length in bits.
    pub tag_length: Option<u32>,
}

impl Params {
    /// Parses the JSON subtle.js made.
    ///
    /// # Errors
    /// A `TypeError` when it is not a normalised algorithm (a bug in subtle.js).
    pub fn parse(json: &str) -> CryptoResult<Params> {
        serde_json::from_str(json).map_err(|error| type_error(format!("algorithm: {error}")))
    }

    /// The hash, which normalisation made present for every algorithm that takes one.
    ///
    /// # Errors
    /// A `TypeError` when it is missing.
    pub fn hash(&self) -> CryptoResult<Hash> {
        self.hash
            .ok_or_else(|| type_error(format!("{}: hash is missing", self.name)))
    }
}

/// The SHA hashes WebCrypto names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Hash {
    /// SHA-1.
    #[serde(rename = "SHA-1")]
    Sha1,
    /// SHA-256.
    #[serde(rename = "SHA-256")]
    Sha256,
    /// SHA-384.
    #[serde(rename = "SHA-384")]
    Sha384,
    /// SHA-512.
    #[serde(rename = "SHA-512")]
    Sha512,
}

impl Hash {
    /// The number in JWK `alg` names (`HS256`, `RS1`, `PS512`).
    pub fn jwk_suffix(self) -> &'static str {
        match self {
            Hash::Sha1 => "1",
            Hash::Sha256 => "256",
            Hash::Sha384 => "384",
            Hash::Sha512 => "512",
        }
    }

    /// The digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha1 => sha1_v11::Sha1::digest(data).to_vec(),
            Hash::Sha256 => sha2_v11::Sha256::digest(data).to_vec(),
            Hash::Sha384 => sha2_v11::Sha384::digest(data).to_vec(),
            Hash::Sha512 => sha2_v11::Sha512::digest(data).to_vec(),
        }
    }
}

/// A key usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Usage {
    /// `encrypt`.
    Encrypt,
    /// `decrypt`.
    Decrypt,
    /// `sign`.
    Sign,
    /// `verify`.
    Verify,
    /// `deriveKey`.
    DeriveKey,
    /// `deriveBits`.
    DeriveBits,
    /// `wrapKey`.
    WrapKey,
    /// `unwrapKey`.
    UnwrapKey,
}

impl Usage {
    /// Its name, as in `key_ops`.
    pub fn name(self) -> &'static str {
        match self {
            Usage::Encrypt => "encrypt",
            Usage::Decrypt => "decrypt",
            Usage::Sign => "sign",
            Usage::Verify => "verify",
            Usage::DeriveKey => "deriveKey",
            Usage::DeriveBits => "deriveBits",
            Usage::WrapKey => "wrapKey",
            Usage::UnwrapKey => "unwrapKey",
        }
    }
}

/// Parses the usages subtle.js checked (a JSON array of usage names).
///
/// # Errors
/// A `TypeError` for anything else.
pub fn parse_usages(json: &str) -> CryptoResult<Vec<Usage>> {
    serde_json::from_str(json).map_err(|error| type_error(format!("keyUsages: {error}")))
}

/// A `SyntaxError` unless every usage is one of `allowed` (what the algorithm's key of this type
/// can do).
///
/// # Errors
/// As above, naming the algorithm.
pub fn check_usages(usages: &[Usage], allowed: &[Usage], algorithm: &str) -> CryptoResult<()> {
    match usages.iter().find(|usage| !allowed.contains(usage)) {
        Some(usage) => Err(syntax(format!(
            "Unsupported key usage for an {algorithm} key: {}",
            usage.name()
        ))),
        None => Ok(()),
    }
}

/// The usages of `usages` that are in `allowed`, in order (a key pair's half).
pub fn intersect(usages: &[Usage], allowed: &[Usage]) -> Vec<Usage> {
    usages
        .iter()
        .copied()
        .filter(|usage| allowed.contains(usage))
        .collect()
}
