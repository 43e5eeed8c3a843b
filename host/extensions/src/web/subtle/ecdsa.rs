//! ECDSA on P-256 and P-384 (FIPS 186-4): import (raw public point, spki, pkcs8, jwk), export,
//! generation, sign and verify. The message is hashed with the hash the call names, whatever
//! the curve, and the signature is WebCrypto's `r || s` of fixed size (not DER).
//!
//! The two curves share every step; [`curve!`] writes each step once for both, so that a fix
//! to one cannot miss the other.

use serde_json::Value;

use super::error::{CryptoResult, data, invalid_access, no_such_export, not_supported};
use super::key::{Key, KeyAlgorithm, KeyType, Material};
use super::params::{Params, Usage, check_usages, intersect};
use super::{Exported, Format, Generated, Import, jwk};

/// An ECDSA key's material, by curve.
pub enum EcKey {
    /// P-256, private.
    P256Private(Box<p256::ecdsa::SigningKey>),
    /// P-256, public.
    P256Public(p256::ecdsa::VerifyingKey),
    /// P-384, private.
    P384Private(Box<p384::ecdsa::SigningKey>),
    /// P-384, public.
    P384Public(p384::ecdsa::VerifyingKey),
}

/// The curves WebCrypto names for ECDSA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Curve {
    P256,
    P384,
}

impl Curve {
    fn parse(name: Option<&str>) -> CryptoResult<Curve> {
        match name {
            Some("P-256") => Ok(Curve::P256),
            Some("P-384") => Ok(Curve::P384),
            Some("P-521") => Err(not_supported("P-521 is not supported")),
            Some(other) => Err(not_supported(format!("Unrecognized namedCurve {other}"))),
            None => Err(super::error::type_error("ECDSA: namedCurve is missing")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Curve::P256 => "P-256",
            Curve::P384 => "P-384",
        }
    }

    /// The JWK `alg` of ECDSA with the curve's own hash.
    fn jwk_alg(self) -> &'static str {
        match self {
            Curve::P256 => "ES256",
            Curve::P384 => "ES384",
        }
    }
}

/// One curve's operations, over its crate (`p256` or `p384`).
macro_rules! curve {
    ($module:ident, $krate:ident, $private:ident, $public:ident, $field:literal) => {
        mod $module {
            use $krate::ecdsa::signature::hazmat::{PrehashSigner, PrehashVerifier};
            use $krate::ecdsa::{Signature, SigningKey, VerifyingKey};
            use $krate::pkcs8::{
                DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey,
            };

            use super::super::error::{CryptoResult, data, operation};
            use super::EcKey;

            /// The size of a coordinate or of the private scalar, in bytes.
            pub const FIELD: usize = $field;

            pub fn public_point(bytes: &[u8]) -> CryptoResult<EcKey> {
                VerifyingKey::from_sec1_bytes(bytes)
                    .map(EcKey::$public)
                    .map_err(|_| data("Invalid keyData: not a point on the curve"))
            }

            pub fn spki(der: &[u8]) -> CryptoResult<EcKey> {
                VerifyingKey::from_public_key_der(der)
                    .map(EcKey::$public)
                    .map_err(|_| data("Invalid keyData"))
            }

            pub fn pkcs8(der: &[u8]) -> CryptoResult<EcKey> {
                SigningKey::from_pkcs8_der(der)
                    .map(|key| EcKey::$private(Box::new(key)))
                    .map_err(|_| data("Invalid keyData"))
            }

            /// The private key of scalar `d`, which must be the key of `public` (a JWK's x, y).
            pub fn private_scalar(d: &[u8], public: &EcKey) -> CryptoResult<EcKey> {
                let key = SigningKey::from_slice(d).map_err(|_| data("Invalid JWK \"d\""))?;
                match public {
                    EcKey::$public(point) if key.verifying_key() == point => {
                        Ok(EcKey::$private(Box::new(key)))
                    }
                    _ => Err(data("JWK \"x\" and \"y\" are not the public key of \"d\"")),
                }
            }

            /// A fresh private key from the OS random source.
            pub fn generate() -> CryptoResult<(EcKey, EcKey)> {
                for _ in 0..16 {
                    let bytes = zeroize::Zeroizing::new(super::super::hmac::random(FIELD)?);
                    if let Ok(key) = SigningKey::from_slice(&bytes) {
                        let public = *key.verifying_key();
                        return Ok((EcKey::$private(Box::new(key)), EcKey::$public(public)));
                    }
                }
                Err(operation("could not draw a private key"))
            }

            /// The public half's uncompressed point.
            pub fn point(key: &EcKey) -> Option<Vec<u8>> {
                match key {
                    EcKey::$public(public) => Some(public.to_sec1_point(false).as_bytes().to_vec()),
                    EcKey::$private(private) => Some(
                        private
                            .verifying_key()
                            .to_sec1_point(false)
                            .as_bytes()
                            .to_vec(),
                    ),
                    _ => None,
                }
            }

            pub fn spki_of(key: &EcKey) -> CryptoResult<Vec<u8>> {
                match key {
                    EcKey::$public(public) => public
                        .to_public_key_der()
                        .map(|der| der.as_bytes().to_vec())
                        .map_err(|_| operation("could not encode the key")),
                    _ => Err(operation("not a public key")),
                }
            }

            pub fn pkcs8_of(key: &EcKey) -> CryptoResult<Vec<u8>> {
                match key {
                    EcKey::$private(private) => private
                        .to_pkcs8_der()
                        .map(|der| der.as_bytes().to_vec())
                        .map_err(|_| operation("could not encode the key")),
                    _ => Err(operation("not a private key")),
                }
            }

            pub fn scalar_of(key: &EcKey) -> Option<zeroize::Zeroizing<Vec<u8>>> {
                match key {
                    EcKey::$private(private) => {
                        Some(zeroize::Zeroizing::new(private.to_bytes().to_vec()))
                    }
                    _ => None,
                }
            }

            /// A hash shorter than the field as the same integer in the field's width (FIPS
            /// 186-4 uses a short hash whole; the crate wants at least half the field).
            fn widened(prehash: &[u8]) -> std::borrow::Cow<'_, [u8]> {
                if prehash.len() >= FIELD {
                    return prehash.into();
                }
                let mut wide = vec![0u8; FIELD - prehash.len()];
                wide.extend_from_slice(prehash);
                wide.into()
            }

            pub fn sign(key: &EcKey, prehash: &[u8]) -> Option<CryptoResult<Vec<u8>>> {
                let EcKey::$private(private) = key else {
                    return None;
                };
                let prehash = &widened(prehash);
                let signed: Result<Signature, _> = private.sign_prehash(prehash);
                Some(
                    signed
                        .map(|signature| signature.to_bytes().to_vec())
                        .map_err(|_| operation("the hash is too short for this curve")),
                )
            }

            pub fn verify(key: &EcKey, prehash: &[u8], signature: &[u8]) -> Option<bool> {
                let EcKey::$public(public) = key else {
                    return None;
                };
                if signature.len() != 2 * FIELD {
                    return Some(false);
                }
                let Ok(signature) = Signature::from_slice(signature) else {
                    return Some(false);
                };
                Some(public.verify_prehash(&widened(prehash), &signature).is_ok())
            }
        }
    };
}

curve!(on_p256, p256, P256Private, P256Public, 32);
curve!(on_p384, p384, P384Private, P384Public, 48);

/// Dispatches `$call` to the module of `$curve`.
macro_rules! on {
    ($curve:expr, $function:ident ( $($arg:expr),* )) => {
        match $curve {
            Curve::P256 => on_p256::$function($($arg),*),
            Curve::P384 => on_p384::$function($($arg),*),
        }
    };
}

fn curve_of(material: &EcKey) -> Curve {
    match material {
        EcKey::P256Private(_) | EcKey::P256Public(_) => Curve::P256,
        EcKey::P384Private(_) | EcKey::P384Public(_) => Curve::P384,
    }
}

fn field_size(curve: Curve) -> usize {
    match curve {
        Curve::P256 => on_p256::FIELD,
        Curve::P384 => on_p384::FIELD,
    }
}

fn make_key(material: EcKey, extractable: bool, usages: &[Usage]) -> Key {
    let kind = match material {
        EcKey::P256Private(_) | EcKey::P384Private(_) => KeyType::Private,
        _ => KeyType::Public,
    };
    Key {
        kind,
        extractable,
        algorithm: KeyAlgorithm {
            named_curve: Some(curve_of(&material).name().to_string()),
            ..KeyAlgorithm::named("ECDSA")
        },
        usages: usages.to_vec(),
        material: Material::Ecdsa(material),
    }
}

/// importKey for ECDSA.
///
/// # Errors
/// `SyntaxError` for usages the key's type does not allow, `DataError` for key data that does
/// not decode or is on another curve, `NotSupportedError` for an unknown curve.
pub fn import(import: &Import<'_>) -> CryptoResult<Key> {
    let curve = Curve::parse(import.params.named_curve.as_deref())?;
    let (extractable, usages) = (import.extractable, import.usages);
    let public_only = || check_usages(usages, &[Usage::Verify], "ECDSA");
    let material = match import.format {
        Format::Raw => {
            public_only()?;
            on!(curve, public_point(import.data.bytes()?))?
        }
        Format::Spki => {
            public_only()?;
            on!(curve, spki(import.data.bytes()?))?
        }
        Format::Pkcs8 => {
            check_usages(usages, &[Usage::Sign], "ECDSA")?;
            on!(curve, pkcs8(import.data.bytes()?))?
        }
        Format::Jwk => {
            let jwk = import.data.jwk()?;
            let private = jwk.d.is_some();
            if private {
                check_usages(usages, &[Usage::Sign], "ECDSA")?;
            } else {
                public_only()?;
            }
            jwk.check("EC", "sig", usages, extractable)?;
            if jwk.crv.as_deref() != Some(curve.name()) {
                return Err(data(format!(
                    "JWK \"crv\" does not match the requested namedCurve {}",
                    curve.name()
                )));
            }
            jwk.check_alg(curve.jwk_alg())?;
            let size = field_size(curve);
            let x = jwk::decode(&jwk.x, "x")?;
            let y = jwk::decode(&jwk.y, "y")?;
            if x.len() != size || y.len() != size {
                return Err(data("Invalid JWK \"x\" or \"y\": wrong length"));
            }
            let public = on!(curve, public_point(&[&[4u8][..], &x, &y].concat()))?;
            if private {
                let d = zeroize::Zeroizing::new(jwk::decode(&jwk.d, "d")?);
                if d.len() != size {
                    return Err(data("Invalid JWK \"d\": wrong length"));
                }
                on!(curve, private_scalar(&d, &public))?
            } else {
                public
            }
        }
    };
    Ok(make_key(material, extractable, usages))
}

/// exportKey for ECDSA: raw and spki for a public key, pkcs8 for a private one, jwk for both.
///
/// # Errors
/// `InvalidAccessError` for a format the key's type does not have.
pub fn export(format: Format, key: &Key) -> CryptoResult<Exported> {
    let Material::Ecdsa(material) = &key.material else {
        return Err(invalid_access("Not an ECDSA key"));
    };
    let curve = curve_of(material);
    let wrong = || no_such_export("ECDSA", key.kind == KeyType::Public, format.name());
    match (format, key.kind) {
        (Format::Raw, KeyType::Public) => on!(curve, point(material))
            .map(Exported::Bytes)
            .ok_or_else(wrong),
        (Format::Spki, KeyType::Public) => on!(curve, spki_of(material)).map(Exported::Bytes),
        (Format::Pkcs8, KeyType::Private) => on!(curve, pkcs8_of(material)).map(Exported::Bytes),
        (Format::Jwk, _) => {
            let point = on!(curve, point(material)).ok_or_else(wrong)?;
            let size = field_size(curve);
            let mut members = jwk::start(&key.usages, key.extractable);
            members.insert("kty".into(), Value::from("EC"));
            members.insert("crv".into(), Value::from(curve.name()));
            members.insert("x".into(), Value::from(jwk::encode(&point[1..1 + size])));
            members.insert("y".into(), Value::from(jwk::encode(&point[1 + size..])));
            if let Some(scalar) = on!(curve, scalar_of(material)) {
                members.insert("d".into(), Value::from(jwk::encode(&scalar)));
            }
            Ok(Exported::Jwk(members))
        }
        _ => Err(wrong()),
    }
}

/// generateKey for ECDSA: a pair on the named curve (the public key always extractable).
///
/// # Errors
/// `SyntaxError` for usages other than sign/verify, `NotSupportedError` for an unknown curve.
pub fn generate(params: &Params, extractable: bool, usages: &[Usage]) -> CryptoResult<Generated> {
    let curve = Curve::parse(params.named_curve.as_deref())?;
    check_usages(usages, &[Usage::Sign, Usage::Verify], "ECDSA")?;
    let (private, public) = on!(curve, generate())?;
    Ok(Generated::Pair {
        public: make_key(public, true, &intersect(usages, &[Usage::Verify])),
        private: make_key(private, extractable, &intersect(usages, &[Usage::Sign])),
    })
}

/// sign for ECDSA: `r || s` over the hash of `data` with the algorithm's hash.
///
/// # Errors
/// `InvalidAccessError` for a public key, `OperationError` when the curve refuses the hash.
pub fn sign(params: &Params, key: &Key, data: &[u8]) -> CryptoResult<Vec<u8>> {
    let Material::Ecdsa(material) = &key.material else {
        return Err(invalid_access("Not an ECDSA key"));
    };
    let prehash = params.hash()?.digest(data);
    on!(curve_of(material), sign(material, &prehash))
        .unwrap_or_else(|| Err(invalid_access("Unable to use this key to sign")))
}

/// verify for ECDSA: false for a signature of the wrong size or that does not decode.
///
/// # Errors
/// `InvalidAccessError` for a private key.
pub fn verify(params: &Params, key: &Key, signature: &[u8], data: &[u8]) -> CryptoResult<bool> {
    let Material::Ecdsa(material) = &key.material else {
        return Err(invalid_access("Not an ECDSA key"));
    };
    let prehash = params.hash()?.digest(data);
    on!(curve_of(material), verify(material, &prehash, signature))
        .ok_or_else(|| invalid_access("Unable to use this key to verify"))
}
