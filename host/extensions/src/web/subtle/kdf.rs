//! PBKDF2 (RFC 8018) and HKDF (RFC 5869) over HMAC-SHA-1/256/384/512: raw import of the base key
//! (never extractable) and deriveBits.

use zeroize::Zeroizing;

use super::error::{CryptoResult, not_supported, operation, syntax};
use super::key::{Key, KeyAlgorithm, KeyType, Material};
use super::params::{Hash, Params, Usage, check_usages};
use super::{Format, Import};

const USAGES: &[Usage] = &[Usage::DeriveKey, Usage::DeriveBits];

/// importKey for PBKDF2 and HKDF: the raw secret.
///
/// # Errors
/// `NotSupportedError` for a format other than raw, `SyntaxError` for other usages or an
/// extractable key.
pub fn import(import: &Import<'_>) -> CryptoResult<Key> {
    let name = import.params.name.as_str();
    if import.format != Format::Raw {
        return Err(not_supported(format!(
            "{name} keys cannot be imported as {}",
            import.format.name()
        )));
    }
    check_usages(import.usages, USAGES, name)?;
    if import.extractable {
        return Err(syntax(format!("{name} keys are not extractable")));
    }
    Ok(Key {
        kind: KeyType::Secret,
        extractable: false,
        algorithm: KeyAlgorithm::named(name),
        usages: import.usages.to_vec(),
        material: Material::Secret(Zeroizing::new(import.data.bytes()?.to_vec())),
    })
}

/// One deriveBits request.
pub struct Derivation<'a> {
    /// The normalised algorithm (hash, iterations).
    pub params: &'a Params,
    /// The salt.
    pub salt: &'a [u8],
    /// HKDF's info.
    pub info: &'a [u8],
    /// How many bits (`None`: not given).
    pub length: Option<u32>,
}

/// deriveBits for PBKDF2 or HKDF.
///
/// # Errors
/// `OperationError` for a missing length or one that is not a multiple of 8, zero iterations, or
/// more HKDF output than 255 hashes.
pub fn derive(derivation: &Derivation<'_>, secret: &[u8]) -> CryptoResult<Vec<u8>> {
    let length = derivation
        .length
        .ok_or_else(|| operation("length cannot be null"))?;
    if length % 8 != 0 {
        return Err(operation("length must be a multiple of 8"));
    }
    let mut out = vec![0u8; (length / 8) as usize];
    let hash = derivation.params.hash()?;
    match derivation.params.name.as_str() {
        "PBKDF2" => {
            let iterations = derivation.params.iterations.unwrap_or(0);
            if iterations == 0 {
                return Err(operation("iterations cannot be zero"));
            }
            pbkdf2(hash, secret, derivation.salt, iterations, &mut out);
        }
        "HKDF" => hkdf(hash, secret, derivation.salt, derivation.info, &mut out)?,
        other => return Err(not_supported(format!("{other} does not derive bits"))),
    }
    Ok(out)
}

fn pbkdf2(hash: Hash, password: &[u8], salt: &[u8], rounds: u32, out: &mut [u8]) {
    match hash {
        Hash::Sha1 => pbkdf2::pbkdf2_hmac::<sha1_v11::Sha1>(password, salt, rounds, out),
        Hash::Sha256 => pbkdf2::pbkdf2_hmac::<sha2_v11::Sha256>(password, salt, rounds, out),
        Hash::Sha384 => pbkdf2::pbkdf2_hmac::<sha2_v11::Sha384>(password, salt, rounds, out),
        Hash::Sha512 => pbkdf2::pbkdf2_hmac::<sha2_v11::Sha512>(password, salt, rounds, out),
    }
}

fn hkdf(hash: Hash, ikm: &[u8], salt: &[u8], info: &[u8], out: &mut [u8]) -> CryptoResult<()> {
    let too_long = |_| operation("The HKDF output is longer than 255 hashes");
    match hash {
        Hash::Sha1 => hkdf::Hkdf::<sha1_v11::Sha1>::new(Some(salt), ikm).expand(info, out),
        Hash::Sha256 => hkdf::Hkdf::<sha2_v11::Sha256>::new(Some(salt), ikm).expand(info, out),
        Hash::Sha384 => hkdf::Hkdf::<sha2_v11::Sha384>::new(Some(salt), ikm).expand(info, out),
        Hash::Sha512 => hkdf::Hkdf::<sha2_v11::Sha512>::new(Some(salt), ikm).expand(info, out),
    }
    .map_err(too_long)
}
