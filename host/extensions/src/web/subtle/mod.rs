//! `crypto.subtle` beyond `digest`: importKey, exportKey, generateKey, sign, verify, encrypt,
//! decrypt, deriveBits (deriveKey is deriveBits then importKey, in subtle.js).
//!
//! subtle.js converts the arguments and normalises the algorithm; the natives here (the
//! `internal.subtle` object) hold each key's material in an opaque handle, check that a key
//! allows what is asked of it, and run the algorithm family's module. Work that can take long
//! (RSA key generation, PBKDF2 with many iterations) runs on [`blocking`]'s threads, so the
//! extension's JS thread goes on and its call's time limit still applies.

mod aes;
pub(crate) mod blocking;
mod ecdsa;
mod ed25519;
mod error;
mod hmac;
mod jwk;
mod kdf;
mod key;
mod params;
mod rsa;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::{JsObject, ObjectInitializer};
use boa_engine::{Context, JsResult, JsString, JsValue, NativeFunction};

use super::natives::{array_buffer, bytes_arg};
use error::{CryptoError, CryptoResult, not_supported, syntax, type_error};
use jwk::Jwk;
use key::{Key, KeyType, handle, key_of};
use params::{Params, Usage, parse_usages};

/// A key format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Raw bytes: a secret key, or an EC/Ed25519 public point.
    Raw,
    /// SubjectPublicKeyInfo (DER): a public key.
    Spki,
    /// PKCS #8 PrivateKeyInfo (DER): a private key.
    Pkcs8,
    /// A JSON Web Key.
    Jwk,
}

impl Format {
    fn parse(text: &str) -> CryptoResult<Format> {
        match text {
            "raw" => Ok(Format::Raw),
            "spki" => Ok(Format::Spki),
            "pkcs8" => Ok(Format::Pkcs8),
            "jwk" => Ok(Format::Jwk),
            other => Err(type_error(format!("'{other}' is not a valid KeyFormat"))),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Raw => "raw",
            Format::Spki => "spki",
            Format::Pkcs8 => "pkcs8",
            Format::Jwk => "jwk",
        }
    }
}

/// Key data to import: bytes (raw, spki, pkcs8) or a JWK.
#[allow(
    clippy::large_enum_variant,
    reason = "one short-lived value per import"
)]
pub enum KeyData {
    /// The bytes of a raw, spki or pkcs8 key.
    Bytes(Vec<u8>),
    /// A JWK.
    Jwk(Jwk),
}

impl KeyData {
    /// The bytes, for a format other than `jwk`.
    ///
    /// # Errors
    /// A `TypeError` for a JWK.
    pub fn bytes(&self) -> CryptoResult<&[u8]> {
        match self {
            KeyData::Bytes(bytes) => Ok(bytes),
            KeyData::Jwk(_) => Err(type_error("keyData is a JsonWebKey")),
        }
    }

    /// The JWK, for format `jwk`.
    ///
    /// # Errors
    /// A `TypeError` for bytes.
    pub fn jwk(&self) -> CryptoResult<&Jwk> {
        match self {
            KeyData::Jwk(jwk) => Ok(jwk),
            KeyData::Bytes(_) => Err(type_error("keyData is not a JsonWebKey")),
        }
    }
}

/// An exported key: bytes, or a JWK's members in order.
pub enum Exported {
    /// raw, spki or pkcs8.
    Bytes(Vec<u8>),
    /// jwk.
    Jwk(serde_json::Map<String, serde_json::Value>),
}

/// What generateKey made: a secret key or a pair.
#[allow(
    clippy::large_enum_variant,
    reason = "one short-lived value per generateKey"
)]
pub enum Generated {
    /// A secret key.
    Secret(Key),
    /// A key pair.
    Pair {
        /// The public key.
        public: Key,
        /// The private key.
        private: Key,
    },
}

/// What importKey is given, for an algorithm family's `import`.
pub struct Import<'a> {
    /// The format.
    pub format: Format,
    /// The key data.
    pub data: &'a KeyData,
    /// The normalised algorithm.
    pub params: &'a Params,
    /// Whether the key is to be extractable.
    pub extractable: bool,
    /// Its usages.
    pub usages: &'a [Usage],
}

/// The algorithm families, by canonical name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Hmac,
    Aes,
    Kdf,
    Ed25519,
    Ecdsa,
    Rsa,
}

fn family(name: &str) -> CryptoResult<Family> {
    Ok(match name {
        "HMAC" => Family::Hmac,
        "AES-GCM" | "AES-CBC" => Family::Aes,
        "PBKDF2" | "HKDF" => Family::Kdf,
        "Ed25519" => Family::Ed25519,
        "ECDSA" => Family::Ecdsa,
        "RSASSA-PKCS1-v1_5" | "RSA-PSS" => Family::Rsa,
        other => {
            return Err(not_supported(format!(
                "Unrecognized algorithm name {other}"
            )));
        }
    })
}

fn arg(args: &[JsValue], index: usize) -> JsValue {
    args.get(index).cloned().unwrap_or_default()
}

fn text(args: &[JsValue], index: usize, context: &mut Context) -> JsResult<String> {
    Ok(arg(args, index).to_string(context)?.to_std_string_lossy())
}

/// Argument `index` as bytes, or empty when undefined.
fn optional_bytes(args: &[JsValue], index: usize, context: &mut Context) -> JsResult<Vec<u8>> {
    let value = arg(args, index);
    if value.is_undefined() {
        return Ok(Vec::new());
    }
    bytes_arg(&value, context)
}

/// `Ok(value)`, or the error thrown as its JS exception.
fn settle<T>(result: CryptoResult<T>, context: &mut Context) -> JsResult<T> {
    result.or_else(|error: CryptoError| Err(error.into_js(context)?))
}

/// `[handle, info JSON]` of a key.
fn key_pair_value(key: Key, context: &mut Context) -> JsValue {
    JsArray::from_iter(split(key), context).into()
}

fn import_key(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let format = text(args, 0, context)?;
    let data = if format == "jwk" {
        let json = text(args, 1, context)?;
        settle(Jwk::parse(&json).map(KeyData::Jwk), context)?
    } else {
        KeyData::Bytes(bytes_arg(&arg(args, 1), context)?)
    };
    let params = text(args, 2, context)?;
    let extractable = arg(args, 3).to_boolean();
    let usages = text(args, 4, context)?;
    let result = (|| {
        let format = Format::parse(&format)?;
        let params = Params::parse(&params)?;
        let usages = parse_usages(&usages)?;
        let import = Import {
            format,
            data: &data,
            params: &params,
            extractable,
            usages: &usages,
        };
        let key = match family(&params.name)? {
            Family::Hmac => hmac::import(&import)?,
            Family::Aes => aes::import(&import)?,
            Family::Kdf => kdf::import(&import)?,
            Family::Ed25519 => ed25519::import(&import)?,
            Family::Ecdsa => ecdsa::import(&import)?,
            Family::Rsa => rsa::import(&import)?,
        };
        if matches!(key.kind, KeyType::Secret | KeyType::Private) && key.usages.is_empty() {
            return Err(syntax(format!(
                "Usages cannot be empty when importing a {} key.",
                if key.kind == KeyType::Secret {
                    "secret"
                } else {
                    "private"
                }
            )));
        }
        Ok(key)
    })();
    let key = settle(result, context)?;
    Ok(key_pair_value(key, context))
}

fn export_key(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let format = text(args, 0, context)?;
    let handle = settle(key_of(&arg(args, 1)), context)?;
    let result = (|| {
        let format = Format::parse(&format)?;
        let handle = handle.borrow();
        let key = &handle.data().key;
        let family = family(&key.algorithm.name)?;
        if family == Family::Kdf {
            return Err(not_supported(format!(
                "{} keys cannot be exported",
                key.algorithm.name
            )));
        }
        if !key.extractable {
            return Err(error::invalid_access("The key is not extractable"));
        }
        match family {
            Family::Hmac | Family::Aes => hmac::export_secret(format, key),
            Family::Kdf => Err(not_supported(format!(
                "{} keys cannot be exported",
                key.algorithm.name
            ))),
            Family::Ed25519 => ed25519::export(format, key),
            Family::Ecdsa => ecdsa::export(format, key),
            Family::Rsa => rsa::export(format, key),
        }
    })();
    match settle(result, context)? {
        Exported::Bytes(bytes) => array_buffer(&bytes, context),
        Exported::Jwk(members) => {
            Ok(JsString::from(serde_json::Value::Object(members).to_string()).into())
        }
    }
}

fn generate_key(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let params = text(args, 0, context)?;
    let extractable = arg(args, 1).to_boolean();
    let usages = text(args, 2, context)?;
    let checked = (|| Ok((Params::parse(&params)?, parse_usages(&usages)?)))();
    let (params, usages) = settle(checked, context)?;
    Ok(blocking::run(
        context,
        move || {
            let generated = match family(&params.name)? {
                Family::Hmac => hmac::generate(&params, extractable, &usages)?,
                Family::Aes => aes::generate(&params, extractable, &usages)?,
                Family::Ed25519 => ed25519::generate(extractable, &usages)?,
                Family::Ecdsa => ecdsa::generate(&params, extractable, &usages)?,
                Family::Rsa => rsa::generate(&params, extractable, &usages)?,
                Family::Kdf => {
                    return Err(not_supported(format!(
                        "{} keys are imported, not generated",
                        params.name
                    )));
                }
            };
            let empty = match &generated {
                Generated::Secret(key) => key.usages.is_empty(),
                Generated::Pair { private, .. } => private.usages.is_empty(),
            };
            if empty {
                return Err(syntax("Usages cannot be empty when creating a key."));
            }
            Ok(generated)
        },
        |generated, context| {
            let values: Vec<JsValue> = match generated {
                Generated::Secret(key) => split(key).collect(),
                Generated::Pair { public, private } => {
                    split(public).chain(split(private)).collect()
                }
            };
            Ok(JsArray::from_iter(values, context).into())
        },
    ))
}

/// A key as its handle and info JSON.
fn split(key: Key) -> impl Iterator<Item = JsValue> {
    let info: JsValue = JsString::from(key.info()).into();
    [handle(key), info].into_iter()
}

fn sign(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let params = text(args, 0, context)?;
    let handle = settle(key_of(&arg(args, 1)), context)?;
    let data = bytes_arg(&arg(args, 2), context)?;
    let result = (|| {
        let params = Params::parse(&params)?;
        let handle = handle.borrow();
        let key = &handle.data().key;
        key.allow(&params.name, Usage::Sign)?;
        match family(&params.name)? {
            Family::Hmac => hmac::sign(key, &data),
            Family::Ed25519 => ed25519::sign(key, &data),
            Family::Ecdsa => ecdsa::sign(&params, key, &data),
            Family::Rsa => rsa::sign(&params, key, &data),
            _ => Err(not_supported(format!("{} does not sign", params.name))),
        }
    })();
    let signature = settle(result, context)?;
    array_buffer(&signature, context)
}

fn verify(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let params = text(args, 0, context)?;
    let handle = settle(key_of(&arg(args, 1)), context)?;
    let signature = bytes_arg(&arg(args, 2), context)?;
    let data = bytes_arg(&arg(args, 3), context)?;
    let result = (|| {
        let params = Params::parse(&params)?;
        let handle = handle.borrow();
        let key = &handle.data().key;
        key.allow(&params.name, Usage::Verify)?;
        match family(&params.name)? {
            Family::Hmac => hmac::verify(key, &signature, &data),
            Family::Ed25519 => ed25519::verify(key, &signature, &data),
            Family::Ecdsa => ecdsa::verify(&params, key, &signature, &data),
            Family::Rsa => rsa::verify(&params, key, &signature, &data),
            _ => Err(not_supported(format!("{} does not verify", params.name))),
        }
    })();
    Ok(settle(result, context)?.into())
}

/// `encrypt(algorithm, key, data, iv, additionalData, encrypting)`: encrypt or decrypt.
fn encrypt(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let params = text(args, 0, context)?;
    let handle = settle(key_of(&arg(args, 1)), context)?;
    let data = bytes_arg(&arg(args, 2), context)?;
    let iv = optional_bytes(args, 3, context)?;
    let additional = optional_bytes(args, 4, context)?;
    let encrypting = arg(args, 5).to_boolean();
    let result = (|| {
        let params = Params::parse(&params)?;
        let handle = handle.borrow();
        let key = &handle.data().key;
        let usage = if encrypting {
            Usage::Encrypt
        } else {
            Usage::Decrypt
        };
        key.allow(&params.name, usage)?;
        let cipher = aes::Cipher {
            params: &params,
            iv: &iv,
            additional: &additional,
        };
        match family(&params.name)? {
            Family::Aes if encrypting => aes::encrypt(&cipher, key.secret()?, &data),
            Family::Aes => aes::decrypt(&cipher, key.secret()?, &data),
            _ => Err(not_supported(format!("{} does not encrypt", params.name))),
        }
    })();
    let out = settle(result, context)?;
    array_buffer(&out, context)
}

/// `deriveBits(algorithm, key, length, salt, info, usage)`: a promise of the bits.
fn derive_bits(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let params = text(args, 0, context)?;
    let handle = settle(key_of(&arg(args, 1)), context)?;
    let length = match arg(args, 2) {
        value if value.is_null_or_undefined() => None,
        value => Some(value.to_u32(context)?),
    };
    let salt = optional_bytes(args, 3, context)?;
    let info = optional_bytes(args, 4, context)?;
    let usage = if text(args, 5, context)? == "deriveKey" {
        Usage::DeriveKey
    } else {
        Usage::DeriveBits
    };
    let prepared = (|| {
        let params = Params::parse(&params)?;
        let handle = handle.borrow();
        let key = &handle.data().key;
        key.allow(&params.name, usage)?;
        let secret = zeroize::Zeroizing::new(key.secret()?.to_vec());
        Ok((params, secret))
    })();
    let (params, secret) = settle(prepared, context)?;
    Ok(blocking::run(
        context,
        move || {
            let derivation = kdf::Derivation {
                params: &params,
                salt: &salt,
                info: &info,
                length,
            };
            kdf::derive(&derivation, &secret)
        },
        |bits, context| array_buffer(&bits, context),
    ))
}

/// The `internal.subtle` object: the natives subtle.js calls.
pub fn natives(context: &mut Context) -> JsObject {
    let functions: [(&str, NativeFunction, usize); 7] = [
        ("importKey", NativeFunction::from_fn_ptr(import_key), 5),
        ("exportKey", NativeFunction::from_fn_ptr(export_key), 2),
        ("generateKey", NativeFunction::from_fn_ptr(generate_key), 3),
        ("sign", NativeFunction::from_fn_ptr(sign), 3),
        ("verify", NativeFunction::from_fn_ptr(verify), 4),
        ("encrypt", NativeFunction::from_fn_ptr(encrypt), 6),
        ("deriveBits", NativeFunction::from_fn_ptr(derive_bits), 6),
    ];
    let mut builder = ObjectInitializer::new(context);
    for (name, function, length) in functions {
        builder.function(function, JsString::from(name), length);
    }
    builder.build()
}
