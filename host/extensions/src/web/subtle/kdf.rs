//! PBKDF2 (RFC 8018) and HKDF (RFC 5869) over HMAC-SHA-1/256/384/512: raw import of the base key
//! (never extractable) and deriveBits.

use hmac_v13::{Hmac, KeyInit, Mac};
use zeroize::Zeroizing;

use super::blocking;

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
            pbkdf2(hash, secret, derivation.salt, iterations, &mut out)?;
        }
        "HKDF" => hkdf(hash, secret, derivation.salt, derivation.info, &mut out)?,
        other => return Err(not_supported(format!("{other} does not derive bits"))),
    }
    Ok(out)
}

fn pbkdf2(
    hash: Hash,
    password: &[u8],
    salt: &[u8],
    rounds: u32,
    out: &mut [u8],
) -> CryptoResult<()> {
    match hash {
        Hash::Sha1 => pbkdf2_with::<Hmac<sha1_v11::Sha1>>(password, salt, rounds, out),
        Hash::Sha256 => pbkdf2_with::<Hmac<sha2_v11::Sha256>>(password, salt, rounds, out),
        Hash::Sha384 => pbkdf2_with::<Hmac<sha2_v11::Sha384>>(password, salt, rounds, out),
        Hash::Sha512 => pbkdf2_with::<Hmac<sha2_v11::Sha512>>(password, salt, rounds, out),
    }
}

/// PBKDF2 (RFC 8018, 5.2) with the keyed `Prf`, as the `pbkdf2` crate computes it, but looking
/// at the job's cancellation every [`blocking::CHECK_EVERY`] iterations: a derivation of 2^31
/// iterations whose call ended stops within a moment instead of running for an hour.
fn pbkdf2_with<Prf: KeyInit + Mac + Clone>(
    password: &[u8],
    salt: &[u8],
    rounds: u32,
    out: &mut [u8],
) -> CryptoResult<()> {
    let prf = <Prf as KeyInit>::new_from_slice(password)
        .map_err(|_| operation("the PBKDF2 password cannot key HMAC"))?;
    let size = <Prf as hmac_v13::digest::OutputSizeUser>::output_size();
    for (index, block) in out.chunks_mut(size).enumerate() {
        let number = u32::try_from(index + 1).map_err(|_| operation("length is too large"))?;
        let mut first = prf.clone();
        first.update(salt);
        first.update(&number.to_be_bytes());
        let mut u = first.finalize().into_bytes();
        let mut t = u.clone();
        for round in 1..rounds {
            if round % blocking::CHECK_EVERY == 0 && blocking::cancelled() {
                return Err(blocking::cancelled_error());
            }
            let mut next = prf.clone();
            next.update(&u);
            u = next.finalize().into_bytes();
            t.iter_mut().zip(u.iter()).for_each(|(a, b)| *a ^= b);
        }
        block.copy_from_slice(&t[..block.len()]);
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked loop gives what the `pbkdf2` crate gives, for every hash, for iteration counts
    /// around the check interval and outputs of several blocks.
    #[test]
    fn pbkdf2_matches_the_pbkdf2_crate() {
        for rounds in [1, 2, 4096, 4097] {
            for length in [1, 32, 33, 100] {
                let mut ours = vec![0u8; length];
                let mut theirs = vec![0u8; length];
                pbkdf2(Hash::Sha256, b"password", b"salt", rounds, &mut ours).unwrap();
                pbkdf2::pbkdf2_hmac::<sha2_v11::Sha256>(b"password", b"salt", rounds, &mut theirs);
                assert_eq!(ours, theirs, "{rounds} {length}");
                pbkdf2(Hash::Sha1, b"pw", b"s", rounds, &mut ours).unwrap();
                pbkdf2::pbkdf2_hmac::<sha1_v11::Sha1>(b"pw", b"s", rounds, &mut theirs);
                assert_eq!(ours, theirs, "{rounds} {length}");
                pbkdf2(Hash::Sha512, b"", b"", rounds, &mut ours).unwrap();
                pbkdf2::pbkdf2_hmac::<sha2_v11::Sha512>(b"", b"", rounds, &mut theirs);
                assert_eq!(ours, theirs, "{rounds} {length}");
                pbkdf2(Hash::Sha384, b"k", b"salt", rounds, &mut ours).unwrap();
                pbkdf2::pbkdf2_hmac::<sha2_v11::Sha384>(b"k", b"salt", rounds, &mut theirs);
                assert_eq!(ours, theirs, "{rounds} {length}");
            }
        }
    }
}
