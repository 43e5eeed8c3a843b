//! JSON Web Keys (RFC 7517) as importKey reads and exportKey writes them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::{CryptoResult, data, type_error};
use super::params::Usage;

/// The members of a JWK earshot reads (subtle.js converted each to a string, `ext` to a boolean
/// and `key_ops` to a list of strings).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Jwk {
    /// Key type: `oct`, `EC`, `OKP`, `RSA`.
    pub kty: Option<String>,
    /// Intended use: `sig` or `enc`.
    #[serde(rename = "use")]
    pub use_: Option<String>,
    /// Permitted operations.
    pub key_ops: Option<Vec<String>>,
    /// Algorithm (`HS256`, `A128GCM`, `RS256`, ...).
    pub alg: Option<String>,
    /// Extractable.
    pub ext: Option<bool>,
    /// Curve.
    pub crv: Option<String>,
    /// EC/OKP public coordinate.
    pub x: Option<String>,
    /// EC public coordinate.
    pub y: Option<String>,
    /// EC/OKP private key, RSA private exponent.
    pub d: Option<String>,
    /// RSA modulus.
    pub n: Option<String>,
    /// RSA public exponent.
    pub e: Option<String>,
    /// RSA first prime.
    pub p: Option<String>,
    /// RSA second prime.
    pub q: Option<String>,
    /// RSA first CRT exponent.
    pub dp: Option<String>,
    /// RSA second CRT exponent.
    pub dq: Option<String>,
    /// RSA CRT coefficient.
    pub qi: Option<String>,
    /// A symmetric key.
    pub k: Option<String>,
}

impl Jwk {
    /// Parses the JSON subtle.js made.
    ///
    /// # Errors
    /// A `TypeError` when it is not a JWK dictionary.
    pub fn parse(json: &str) -> CryptoResult<Jwk> {
        serde_json::from_str(json).map_err(|error| type_error(format!("keyData: {error}")))
    }

    /// The checks every algorithm's JWK import makes: `kty`, `use` (for keys with usages),
    /// `key_ops` (containing every usage asked for) and `ext` (not false for an extractable key).
    ///
    /// # Errors
    /// A `DataError` naming what does not match.
    pub fn check(
        &self,
        kty: &str,
        use_: &str,
        usages: &[Usage],
        extractable: bool,
    ) -> CryptoResult<()> {
        if self.kty.as_deref() != Some(kty) {
            return Err(data(format!("Invalid JWK \"kty\": expected \"{kty}\"")));
        }
        if !usages.is_empty() && self.use_.as_deref().is_some_and(|found| found != use_) {
            return Err(data(format!("Invalid JWK \"use\": expected \"{use_}\"")));
        }
        if let Some(ops) = &self.key_ops {
            let mut seen = std::collections::HashSet::new();
            if !ops.iter().all(|op| seen.insert(op.as_str())) {
                return Err(data("Invalid JWK \"key_ops\": duplicate operations"));
            }
            if let Some(missing) = usages.iter().find(|usage| !seen.contains(usage.name())) {
                return Err(data(format!(
                    "JWK \"key_ops\" does not allow {}",
                    missing.name()
                )));
            }
        }
        if extractable && self.ext == Some(false) {
            return Err(data(
                "JWK \"ext\" is false but the key is to be extractable",
            ));
        }
        Ok(())
    }

    /// An `alg` that is present must be `expected`.
    ///
    /// # Errors
    /// A `DataError` otherwise.
    pub fn check_alg(&self, expected: &str) -> CryptoResult<()> {
        match &self.alg {
            Some(alg) if alg != expected => Err(data(format!(
                "JWK \"alg\" is \"{alg}\", expected \"{expected}\""
            ))),
            _ => Ok(()),
        }
    }
}

/// Member `name` (`Some` of it) decoded from base64url.
///
/// # Errors
/// A `DataError` when it is missing or not base64url.
pub fn decode(value: &Option<String>, name: &str) -> CryptoResult<Vec<u8>> {
    let text = value
        .as_deref()
        .ok_or_else(|| data(format!("JWK member \"{name}\" is missing")))?;
    // Node takes the standard alphabet's `+` and `/` too; so does earshot.
    let text: String = text
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect();
    URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| data(format!("JWK member \"{name}\" is not base64url")))
}

/// Bytes as base64url without padding.
pub fn encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A JWK being exported, its members in the order Node writes them: `key_ops`, `ext`, then each
/// algorithm's own.
pub fn start(usages: &[Usage], extractable: bool) -> Map<String, Value> {
    let mut jwk = Map::new();
    let ops: Vec<Value> = usages.iter().map(|u| Value::from(u.name())).collect();
    jwk.insert("key_ops".into(), Value::Array(ops));
    jwk.insert("ext".into(), Value::Bool(extractable));
    jwk
}
