//! RSASSA-PKCS1-v1_5 and RSA-PSS (RFC 8017): import (spki, pkcs8, jwk), export, generation,
//! sign and verify, on the `rsa` crate (constant-time arithmetic; see host/Cargo.toml). A key is
//! bound to its hash at import or generation, as WebCrypto asks; RSA-PSS takes its salt length
//! per call.

use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{BoxedUint, Pkcs1v15Sign, PrivateKey, Pss, PublicKey};
use serde_json::Value;

use super::error::{CryptoResult, data, invalid_access, no_such_export, operation};
use super::key::{Key, KeyAlgorithm, KeyType, Material};
use super::params::{Hash, Params, Usage, check_usages, intersect};
use super::{Exported, Format, Generated, Import, jwk};

/// The smallest and largest modulus earshot generates or accepts, in bits (the `rsa` crate's
/// limits: below 1,024 bits a key is breakable, above 8,192 a call could run for minutes).
const MODULUS_BITS: std::ops::RangeInclusive<usize> = 1024..=8192;

/// An RSA key's material.
pub enum RsaKey {
    /// A private key.
    Private(Box<PrivateKey>),
    /// A public key.
    Public(PublicKey),
}

impl RsaKey {
    fn public(&self) -> &PublicKey {
        match self {
            RsaKey::Private(private) => private.as_public_key(),
            RsaKey::Public(public) => public,
        }
    }
}

/// The OS random source as the `rsa` crate's RNG, for key generation.
struct OsRandom;

/// The OS random source failed.
#[derive(Debug)]
struct NoRandomness;

impl std::fmt::Display for NoRandomness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the OS random source failed")
    }
}

impl std::error::Error for NoRandomness {}

/// Random bytes, or an error once the generating job is cancelled: key generation asks for
/// them at every prime candidate, so a generation whose call ended stops there.
fn fill(bytes: &mut [u8]) -> Result<(), NoRandomness> {
    if super::blocking::cancelled() {
        return Err(NoRandomness);
    }
    getrandom::fill(bytes).map_err(|_| NoRandomness)
}

impl rsa::rand_core::TryRng for OsRandom {
    type Error = NoRandomness;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut bytes = [0u8; 4];
        fill(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut bytes = [0u8; 8];
        fill(&mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        fill(dst)
    }
}

impl rsa::rand_core::TryCryptoRng for OsRandom {}

/// The JWK `alg` of `algorithm` with `hash` (`RS256`, `PS384`).
fn jwk_alg(algorithm: &str, hash: Hash) -> String {
    let prefix = if algorithm == "RSA-PSS" { "PS" } else { "RS" };
    format!("{prefix}{}", hash.jwk_suffix())
}

fn make_key(
    algorithm: &str,
    hash: Hash,
    material: RsaKey,
    extractable: bool,
    usages: &[Usage],
) -> Key {
    let public = material.public();
    let kind = match material {
        RsaKey::Private(_) => KeyType::Private,
        RsaKey::Public(_) => KeyType::Public,
    };
    Key {
        kind,
        extractable,
        algorithm: KeyAlgorithm {
            modulus_length: Some(public.n().bit_width()),
            public_exponent: Some(public.e_bytes().to_vec()),
            hash: Some(hash),
            ..KeyAlgorithm::named(algorithm)
        },
        usages: usages.to_vec(),
        material: Material::Rsa(material),
    }
}

fn check_size(public: &PublicKey) -> CryptoResult<()> {
    let bits = public.n().bit_width() as usize;
    if MODULUS_BITS.contains(&bits) {
        Ok(())
    } else {
        Err(data(format!(
            "an RSA modulus of {bits} bits is outside what earshot accepts ({} to {} bits)",
            MODULUS_BITS.start(),
            MODULUS_BITS.end()
        )))
    }
}

fn number(member: &Option<String>, name: &str) -> CryptoResult<BoxedUint> {
    let bytes = zeroize::Zeroizing::new(jwk::decode(member, name)?);
    Ok(BoxedUint::from_be_slice_vartime(&bytes))
}

/// A `DataError` unless the JWK's CRT members (`dp`, `dq`, `qi`), which the key recomputes from
/// its primes, are the key's own: a JWK whose members disagree is not one key.
fn check_crt(key: &PrivateKey, jwk: &jwk::Jwk) -> CryptoResult<()> {
    let computed = [
        ("dp", key.dp().cloned()),
        ("dq", key.dq().cloned()),
        ("qi", key.crt_coefficient()),
    ];
    for ((name, own), given) in computed.into_iter().zip([&jwk.dp, &jwk.dq, &jwk.qi]) {
        let given = number(given, name)?;
        if own.is_none_or(|own| {
            own.to_be_bytes_trimmed_vartime() != given.to_be_bytes_trimmed_vartime()
        }) {
            return Err(data(format!("Invalid JWK \"{name}\": not the key's own")));
        }
    }
    Ok(())
}

/// importKey for RSASSA-PKCS1-v1_5 and RSA-PSS.
///
/// # Errors
/// `SyntaxError` for usages the key's type does not allow, `DataError` for key data that does
/// not decode, a JWK whose `alg` names another hash, or a modulus outside 1,024–8,192 bits.
pub fn import(import: &Import<'_>) -> CryptoResult<Key> {
    let params = import.params;
    let hash = params.hash()?;
    let (extractable, usages) = (import.extractable, import.usages);
    let name = params.name.as_str();
    let material = match import.format {
        Format::Spki => {
            check_usages(usages, &[Usage::Verify], name)?;
            RsaKey::Public(
                PublicKey::from_public_key_der(import.data.bytes()?)
                    .map_err(|_| data("Invalid keyData"))?,
            )
        }
        Format::Pkcs8 => {
            check_usages(usages, &[Usage::Sign], name)?;
            RsaKey::Private(Box::new(
                PrivateKey::from_pkcs8_der(import.data.bytes()?)
                    .map_err(|_| data("Invalid keyData"))?,
            ))
        }
        Format::Jwk => {
            let jwk = import.data.jwk()?;
            let private = jwk.d.is_some();
            check_usages(
                usages,
                if private {
                    &[Usage::Sign]
                } else {
                    &[Usage::Verify]
                },
                name,
            )?;
            jwk.check("RSA", "sig", usages, extractable)?;
            jwk.check_alg(&jwk_alg(name, hash))?;
            let (n, e) = (number(&jwk.n, "n")?, number(&jwk.e, "e")?);
            if private {
                let primes = vec![number(&jwk.p, "p")?, number(&jwk.q, "q")?];
                let key = PrivateKey::from_components(n, e, number(&jwk.d, "d")?, primes)
                    .map_err(|_| data("Invalid JWK: not a consistent RSA private key"))?;
                check_crt(&key, jwk)?;
                RsaKey::Private(Box::new(key))
            } else {
                RsaKey::Public(
                    PublicKey::new(n, e).map_err(|_| data("Invalid JWK \"n\" or \"e\""))?,
                )
            }
        }
        Format::Raw => {
            return Err(super::error::not_supported(format!(
                "Unable to import {name} key with format raw"
            )));
        }
    };
    check_size(material.public())?;
    Ok(make_key(name, hash, material, extractable, usages))
}

/// exportKey for RSA: spki for a public key, pkcs8 for a private one, jwk for both.
///
/// # Errors
/// `InvalidAccessError` for a format the key's type does not have.
pub fn export(format: Format, key: &Key) -> CryptoResult<Exported> {
    let Material::Rsa(material) = &key.material else {
        return Err(invalid_access("Not an RSA key"));
    };
    let encoded = |result: Result<Vec<u8>, _>| {
        result
            .map(Exported::Bytes)
            .map_err(|_: rsa::pkcs8::Error| operation("could not encode the key"))
    };
    match (format, material) {
        (Format::Spki, RsaKey::Public(public)) => encoded(
            public
                .to_public_key_der()
                .map(|der| der.as_bytes().to_vec())
                .map_err(rsa::pkcs8::Error::from),
        ),
        (Format::Pkcs8, RsaKey::Private(private)) => {
            encoded(private.to_pkcs8_der().map(|der| der.as_bytes().to_vec()))
        }
        (Format::Jwk, material) => {
            let hash = key.algorithm.hash.ok_or_else(|| operation("no hash"))?;
            let public = material.public();
            let mut members = jwk::start(&key.usages, key.extractable);
            members.insert("kty".into(), Value::from("RSA"));
            members.insert("n".into(), Value::from(jwk::encode(&public.n_bytes())));
            members.insert("e".into(), Value::from(jwk::encode(&public.e_bytes())));
            if let RsaKey::Private(private) = material {
                let member = |value: &BoxedUint| {
                    Value::from(jwk::encode(&value.to_be_bytes_trimmed_vartime()))
                };
                let primes = private.primes();
                let (Some(dp), Some(dq), Some(qi), [p, q]) = (
                    private.dp(),
                    private.dq(),
                    private.crt_coefficient(),
                    primes,
                ) else {
                    return Err(operation("the key has no CRT values"));
                };
                members.insert("d".into(), member(private.d()));
                members.insert("p".into(), member(p.as_ref()));
                members.insert("q".into(), member(q.as_ref()));
                members.insert("dp".into(), member(dp));
                members.insert("dq".into(), member(dq));
                members.insert("qi".into(), member(&qi));
            }
            members.insert(
                "alg".into(),
                Value::from(jwk_alg(&key.algorithm.name, hash)),
            );
            Ok(Exported::Jwk(members))
        }
        _ => Err(no_such_export(
            &key.algorithm.name,
            key.kind == KeyType::Public,
            format.name(),
        )),
    }
}

/// The public exponent to generate with: odd, at least 3 and at most 32 bits, as OpenSSL (and so
/// Node) takes it. Any other would never make a key: the `rsa` crate searches for primes
/// forever when the exponent is even.
///
/// # Errors
/// An `OperationError` naming the exponent.
fn public_exponent(bytes: &[u8]) -> CryptoResult<BoxedUint> {
    let significant: &[u8] = match bytes.iter().position(|byte| *byte != 0) {
        Some(first) => &bytes[first..],
        None => &[],
    };
    let value = (significant.len() <= 4).then(|| {
        significant
            .iter()
            .fold(0u64, |value, byte| (value << 8) | u64::from(*byte))
    });
    match value {
        Some(value) if value >= 3 && value % 2 == 1 => Ok(BoxedUint::from(value)),
        _ => Err(operation(format!(
            "publicExponent {bytes:?} cannot make an RSA key: it must be odd, at least 3 and at most 32 bits (65537 is [1, 0, 1])"
        ))),
    }
}

/// generateKey for RSA: a pair of `modulusLength` bits with `publicExponent` (the public key
/// always extractable).
///
/// # Errors
/// `SyntaxError` for usages other than sign/verify, `OperationError` for a size or exponent
/// the `rsa` crate refuses.
pub fn generate(params: &Params, extractable: bool, usages: &[Usage]) -> CryptoResult<Generated> {
    let name = params.name.as_str();
    let hash = params.hash()?;
    check_usages(usages, &[Usage::Sign, Usage::Verify], name)?;
    let bits = params.modulus_length.unwrap_or_default() as usize;
    if !MODULUS_BITS.contains(&bits) {
        return Err(operation(format!(
            "modulusLength {bits} is outside what earshot generates ({} to {} bits)",
            MODULUS_BITS.start(),
            MODULUS_BITS.end()
        )));
    }
    let exponent = public_exponent(params.public_exponent.as_deref().unwrap_or_default())?;
    let private = PrivateKey::new_with_exp(&mut OsRandom, bits, exponent).map_err(|error| {
        if super::blocking::cancelled() {
            super::blocking::cancelled_error()
        } else {
            operation(format!("could not generate the key: {error}"))
        }
    })?;
    let public = private.to_public_key();
    Ok(Generated::Pair {
        public: make_key(
            name,
            hash,
            RsaKey::Public(public),
            true,
            &intersect(usages, &[Usage::Verify]),
        ),
        private: make_key(
            name,
            hash,
            RsaKey::Private(Box::new(private)),
            extractable,
            &intersect(usages, &[Usage::Sign]),
        ),
    })
}

/// Runs `$run` with `$scheme`, the padding of `$pss` (RSA-PSS with `$salt` bytes, else
/// RSASSA-PKCS1-v1_5) over the hash `$hash` (the `rsa` crate takes the hash as a type).
macro_rules! with_scheme {
    ($hash:expr, $pss:expr, $salt:expr, |$scheme:ident| $run:expr) => {{
        macro_rules! run {
            ($digest:ty) => {
                if $pss {
                    let $scheme = Pss::<$digest>::new_with_salt($salt);
                    $run
                } else {
                    let $scheme = Pkcs1v15Sign::new::<$digest>();
                    $run
                }
            };
        }
        match $hash {
            Hash::Sha1 => run!(sha1_v11::Sha1),
            Hash::Sha256 => run!(sha2_v11::Sha256),
            Hash::Sha384 => run!(sha2_v11::Sha384),
            Hash::Sha512 => run!(sha2_v11::Sha512),
        }
    }};
}

/// The key's hash, and RSA-PSS's salt length (which must leave room in the modulus).
fn scheme(params: &Params, key: &Key) -> CryptoResult<(Hash, usize)> {
    let hash = key.algorithm.hash.ok_or_else(|| operation("no hash"))?;
    let salt = if params.name == "RSA-PSS" {
        params.salt_length.unwrap_or_default() as usize
    } else {
        0
    };
    Ok((hash, salt))
}

/// sign for RSA: the signature over the hash of `data` with the key's hash.
///
/// # Errors
/// `InvalidAccessError` for a public key, `OperationError` when the salt does not fit.
pub fn sign(params: &Params, key: &Key, data: &[u8]) -> CryptoResult<Vec<u8>> {
    let Material::Rsa(RsaKey::Private(private)) = &key.material else {
        return Err(invalid_access("Unable to use this key to sign"));
    };
    let (hash, salt) = scheme(params, key)?;
    let hashed = hash.digest(data);
    let pss = params.name == "RSA-PSS";
    let signed = with_scheme!(hash, pss, salt, |scheme| private.sign(scheme, &hashed));
    signed.map_err(|error| operation(format!("{} could not sign: {error}", params.name)))
}

/// verify for RSA: false for a signature that does not verify, whatever its length.
///
/// # Errors
/// `InvalidAccessError` for a private key.
pub fn verify(params: &Params, key: &Key, signature: &[u8], data: &[u8]) -> CryptoResult<bool> {
    let Material::Rsa(RsaKey::Public(public)) = &key.material else {
        return Err(invalid_access("Unable to use this key to verify"));
    };
    let (hash, salt) = scheme(params, key)?;
    let hashed = hash.digest(data);
    let pss = params.name == "RSA-PSS";
    let verified = with_scheme!(hash, pss, salt, |scheme| public
        .verify(scheme, &hashed, signature));
    Ok(verified.is_ok())
}
