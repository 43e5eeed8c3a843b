//! HMAC (RFC 2104) with SHA-1/256/384/512: import (raw, jwk), generation, sign and verify; and the
//! export of secret keys, which AES shares.

use hmac_v13::{EagerHash, Hmac, KeyInit, Mac};
use serde_json::Value;
use zeroize::Zeroizing;

use super::error::{CryptoResult, data, invalid_access, not_supported, operation};
use super::key::{Key, KeyAlgorithm, KeyType, Material};
use super::params::{Hash, Params, Usage, check_usages};
use super::{Exported, Format, Generated, Import, jwk};

const USAGES: &[Usage] = &[Usage::Sign, Usage::Verify];

/// The JWK `alg` of an HMAC key with `hash`.
fn jwk_alg(hash: Hash) -> String {
    format!("HS{}", hash.jwk_suffix())
}

/// The length in bits of an HMAC key with `hash` when none is given: the hash's block size.
fn default_length(hash: Hash) -> u32 {
    match hash {
        Hash::Sha1 | Hash::Sha256 => 512,
        Hash::Sha384 | Hash::Sha512 => 1024,
    }
}

fn key(bytes: Vec<u8>, hash: Hash, length: u32, extractable: bool, usages: &[Usage]) -> Key {
    Key {
        kind: KeyType::Secret,
        extractable,
        algorithm: KeyAlgorithm {
            hash: Some(hash),
            length: Some(length),
            ..KeyAlgorithm::named("HMAC")
        },
        usages: usages.to_vec(),
        material: Material::Secret(Zeroizing::new(bytes)),
    }
}

/// importKey for HMAC.
///
/// # Errors
/// `SyntaxError` for usages other than sign/verify, `NotSupportedError` for spki/pkcs8,
/// `DataError` for empty key data, a length that does not fit it, or a JWK that does not match.
pub fn import(import: &Import<'_>) -> CryptoResult<Key> {
    check_usages(import.usages, USAGES, "HMAC")?;
    let hash = import.params.hash()?;
    let bytes = match import.format {
        Format::Raw => import.data.bytes()?.to_vec(),
        Format::Jwk => {
            let jwk = import.data.jwk()?;
            jwk.check("oct", "sig", import.usages, import.extractable)?;
            let bytes = jwk::decode(&jwk.k, "k")?;
            jwk.check_alg(&jwk_alg(hash))?;
            bytes
        }
        other => {
            return Err(not_supported(format!(
                "HMAC keys cannot be imported as {}",
                other.name()
            )));
        }
    };
    if bytes.is_empty() {
        return Err(data("Zero-length key is not supported"));
    }
    let bits = u32::try_from(bytes.len())
        .ok()
        .and_then(|n| n.checked_mul(8))
        .ok_or_else(|| data("The key is too long"))?;
    let length = match import.params.length {
        None => bits,
        Some(length) if length > bits || length <= bits - 8 => {
            return Err(data("Invalid key length"));
        }
        Some(length) => length,
    };
    Ok(key(bytes, hash, length, import.extractable, import.usages))
}

/// generateKey for HMAC: `length` bits (the hash's block size by default) from the OS.
///
/// # Errors
/// `SyntaxError` for usages other than sign/verify, `OperationError` for a zero length.
pub fn generate(params: &Params, extractable: bool, usages: &[Usage]) -> CryptoResult<Generated> {
    check_usages(usages, USAGES, "HMAC")?;
    let hash = params.hash()?;
    let length = params.length.unwrap_or_else(|| default_length(hash));
    if length == 0 {
        return Err(operation("HMAC key length cannot be zero"));
    }
    let bytes = random(length.div_ceil(8) as usize)?;
    Ok(Generated::Secret(key(
        bytes,
        hash,
        length,
        extractable,
        usages,
    )))
}

/// `count` bytes from the OS random source.
///
/// # Errors
/// `OperationError` when the OS gives none.
pub fn random(count: usize) -> CryptoResult<Vec<u8>> {
    let mut bytes = vec![0u8; count];
    getrandom::fill(&mut bytes).map_err(|error| operation(error.to_string()))?;
    Ok(bytes)
}

/// exportKey for a secret key (HMAC or AES): raw bytes, or a JWK `oct` key.
///
/// # Errors
/// `NotSupportedError` for spki and pkcs8.
pub fn export_secret(format: Format, key: &Key) -> CryptoResult<Exported> {
    let bytes = key.secret()?;
    match format {
        Format::Raw => Ok(Exported::Bytes(bytes.to_vec())),
        Format::Jwk => {
            let mut members = jwk::start(&key.usages, key.extractable);
            let alg = match (key.algorithm.name.as_str(), key.algorithm.hash) {
                ("HMAC", Some(hash)) => jwk_alg(hash),
                ("AES-GCM", _) => format!("A{}GCM", bytes.len() * 8),
                ("AES-CBC", _) => format!("A{}CBC", bytes.len() * 8),
                (other, _) => return Err(not_supported(format!("{other} has no JWK form"))),
            };
            members.insert("alg".into(), Value::from(alg));
            members.insert("kty".into(), Value::from("oct"));
            members.insert("k".into(), Value::from(jwk::encode(bytes)));
            Ok(Exported::Jwk(members))
        }
        other => Err(not_supported(format!(
            "Unable to export {} secret key using {} format",
            key.algorithm.name,
            other.name()
        ))),
    }
}

fn tag_with<D>(secret: &[u8], data: &[u8]) -> CryptoResult<Vec<u8>>
where
    D: EagerHash,
    Hmac<D>: KeyInit + Mac,
{
    let mut mac = <Hmac<D> as KeyInit>::new_from_slice(secret)
        .map_err(|_| operation("HMAC refused the key"))?;
    mac.update(data);
    Ok(mac.finalize().into_bytes().to_vec())
}

/// The HMAC of `data` under `secret` with `hash`.
///
/// # Errors
/// `OperationError` if the HMAC cannot take the key (it takes any).
pub fn tag(hash: Hash, secret: &[u8], data: &[u8]) -> CryptoResult<Vec<u8>> {
    match hash {
        Hash::Sha1 => tag_with::<sha1_v11::Sha1>(secret, data),
        Hash::Sha256 => tag_with::<sha2_v11::Sha256>(secret, data),
        Hash::Sha384 => tag_with::<sha2_v11::Sha384>(secret, data),
        Hash::Sha512 => tag_with::<sha2_v11::Sha512>(secret, data),
    }
}

fn hash_of(key: &Key) -> CryptoResult<Hash> {
    key.algorithm
        .hash
        .ok_or_else(|| invalid_access("The HMAC key has no hash"))
}

/// sign for HMAC: the tag.
///
/// # Errors
/// As [`tag`].
pub fn sign(key: &Key, data: &[u8]) -> CryptoResult<Vec<u8>> {
    tag(hash_of(key)?, key.secret()?, data)
}

/// verify for HMAC: whether `signature` is the tag, compared in constant time.
///
/// # Errors
/// As [`tag`].
pub fn verify(key: &Key, signature: &[u8], data: &[u8]) -> CryptoResult<bool> {
    let expected = tag(hash_of(key)?, key.secret()?, data)?;
    Ok(expected.len() == signature.len()
        && expected
            .iter()
            .zip(signature)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0)
}
