//! Ed25519 (RFC 8032): import (raw public, spki, pkcs8, jwk), export, generation, sign, verify.

use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde_json::Value;

use super::error::{CryptoResult, data, invalid_access, no_such_export, not_supported};
use super::key::{Key, KeyAlgorithm, KeyType, Material};
use super::params::{Usage, check_usages, intersect};
use super::{Exported, Format, Generated, Import, jwk};

/// The DER of a PKCS #8 v1 Ed25519 private key before its 32-byte seed (RFC 8410), as Node
/// writes it.
const PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// The DER of an Ed25519 SubjectPublicKeyInfo before its 32-byte key (RFC 8410).
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// An Ed25519 key's material.
pub enum EdKey {
    /// A private key (its seed).
    Private(Box<SigningKey>),
    /// A public key.
    Public(VerifyingKey),
}

fn public_key(key: VerifyingKey, extractable: bool, usages: &[Usage]) -> Key {
    Key {
        kind: KeyType::Public,
        extractable,
        algorithm: KeyAlgorithm::named("Ed25519"),
        usages: usages.to_vec(),
        material: Material::Ed25519(EdKey::Public(key)),
    }
}

fn private_key(key: SigningKey, extractable: bool, usages: &[Usage]) -> Key {
    Key {
        kind: KeyType::Private,
        extractable,
        algorithm: KeyAlgorithm::named("Ed25519"),
        usages: usages.to_vec(),
        material: Material::Ed25519(EdKey::Private(Box::new(key))),
    }
}

fn verifying(bytes: &[u8]) -> CryptoResult<VerifyingKey> {
    let bytes: &[u8; 32] = bytes
        .try_into()
        .map_err(|_| data("An Ed25519 public key is 32 bytes"))?;
    VerifyingKey::from_bytes(bytes).map_err(|_| data("Invalid Ed25519 public key"))
}

/// importKey for Ed25519.
///
/// # Errors
/// `SyntaxError` for usages the key's type does not allow, `DataError` for key data that does
/// not decode.
pub fn import(import: &Import<'_>) -> CryptoResult<Key> {
    let (extractable, usages) = (import.extractable, import.usages);
    match import.format {
        Format::Raw => {
            check_usages(usages, &[Usage::Verify], "Ed25519")?;
            Ok(public_key(
                verifying(import.data.bytes()?)?,
                extractable,
                usages,
            ))
        }
        Format::Spki => {
            check_usages(usages, &[Usage::Verify], "Ed25519")?;
            let key = VerifyingKey::from_public_key_der(import.data.bytes()?)
                .map_err(|_| data("Invalid keyData"))?;
            Ok(public_key(key, extractable, usages))
        }
        Format::Pkcs8 => {
            check_usages(usages, &[Usage::Sign], "Ed25519")?;
            let key = SigningKey::from_pkcs8_der(import.data.bytes()?)
                .map_err(|_| data("Invalid keyData"))?;
            Ok(private_key(key, extractable, usages))
        }
        Format::Jwk => {
            let jwk = import.data.jwk()?;
            let private = jwk.d.is_some();
            let allowed: &[Usage] = if private {
                &[Usage::Sign]
            } else {
                &[Usage::Verify]
            };
            check_usages(usages, allowed, "Ed25519")?;
            jwk.check("OKP", "sig", usages, extractable)?;
            if jwk.crv.as_deref() != Some("Ed25519") {
                return Err(data("Invalid JWK \"crv\": expected \"Ed25519\""));
            }
            if let Some(alg) = &jwk.alg
                && alg != "Ed25519"
                && alg != "EdDSA"
            {
                return Err(data(format!(
                    "JWK \"alg\" is \"{alg}\", expected \"Ed25519\""
                )));
            }
            let public = verifying(&jwk::decode(&jwk.x, "x")?)?;
            if !private {
                return Ok(public_key(public, extractable, usages));
            }
            let seed = zeroize::Zeroizing::new(jwk::decode(&jwk.d, "d")?);
            let seed: &[u8; 32] = seed
                .as_slice()
                .try_into()
                .map_err(|_| data("An Ed25519 private key is 32 bytes"))?;
            let key = SigningKey::from_bytes(seed);
            if key.verifying_key() != public {
                return Err(data("JWK \"x\" is not the public key of \"d\""));
            }
            Ok(private_key(key, extractable, usages))
        }
    }
}

/// exportKey for Ed25519: raw and spki for a public key, pkcs8 for a private one, jwk for both.
///
/// # Errors
/// `InvalidAccessError` for a format the key's type does not have.
pub fn export(format: Format, key: &Key) -> CryptoResult<Exported> {
    let Material::Ed25519(material) = &key.material else {
        return Err(invalid_access("Not an Ed25519 key"));
    };
    let wrong = || no_such_export("Ed25519", key.kind == KeyType::Public, format.name());
    match (format, material) {
        (Format::Raw, EdKey::Public(public)) => Ok(Exported::Bytes(public.to_bytes().to_vec())),
        (Format::Spki, EdKey::Public(public)) => Ok(Exported::Bytes(
            [&SPKI_PREFIX[..], public.as_bytes()].concat(),
        )),
        (Format::Pkcs8, EdKey::Private(private)) => Ok(Exported::Bytes(
            [&PKCS8_PREFIX[..], private.as_bytes()].concat(),
        )),
        (Format::Jwk, material) => {
            let mut members = jwk::start(&key.usages, key.extractable);
            members.insert("alg".into(), Value::from("Ed25519"));
            members.insert("crv".into(), Value::from("Ed25519"));
            let public = match material {
                EdKey::Private(private) => {
                    members.insert("d".into(), Value::from(jwk::encode(private.as_bytes())));
                    private.verifying_key()
                }
                EdKey::Public(public) => *public,
            };
            members.insert("x".into(), Value::from(jwk::encode(public.as_bytes())));
            members.insert("kty".into(), Value::from("OKP"));
            Ok(Exported::Jwk(members))
        }
        _ => Err(wrong()),
    }
}

/// generateKey for Ed25519: a pair from a random seed (the public key always extractable).
///
/// # Errors
/// `SyntaxError` for usages other than sign/verify.
pub fn generate(extractable: bool, usages: &[Usage]) -> CryptoResult<Generated> {
    check_usages(usages, &[Usage::Sign, Usage::Verify], "Ed25519")?;
    let seed = zeroize::Zeroizing::new(super::hmac::random(32)?);
    let seed: &[u8; 32] = seed
        .as_slice()
        .try_into()
        .map_err(|_| not_supported("no seed"))?;
    let private = SigningKey::from_bytes(seed);
    Ok(Generated::Pair {
        public: public_key(
            private.verifying_key(),
            true,
            &intersect(usages, &[Usage::Verify]),
        ),
        private: private_key(private, extractable, &intersect(usages, &[Usage::Sign])),
    })
}

/// sign for Ed25519.
///
/// # Errors
/// `InvalidAccessError` for a public key.
pub fn sign(key: &Key, data: &[u8]) -> CryptoResult<Vec<u8>> {
    match &key.material {
        Material::Ed25519(EdKey::Private(private)) => Ok(private.sign(data).to_bytes().to_vec()),
        _ => Err(invalid_access("Unable to use this key to sign")),
    }
}

/// verify for Ed25519: false for a signature of the wrong length.
///
/// # Errors
/// `InvalidAccessError` for a private key.
pub fn verify(key: &Key, signature: &[u8], data: &[u8]) -> CryptoResult<bool> {
    let Material::Ed25519(EdKey::Public(public)) = &key.material else {
        return Err(invalid_access("Unable to use this key to verify"));
    };
    let Ok(signature) = Signature::from_slice(signature) else {
        return Ok(false);
    };
    Ok(public.verify(data, &signature).is_ok())
}
