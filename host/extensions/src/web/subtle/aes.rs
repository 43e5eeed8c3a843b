//! AES-GCM and AES-CBC (128, 192 and 256-bit keys): import (raw, jwk), generation, encrypt and
//! decrypt. GCM takes 12 or 16-byte IVs and tags of 96 to 128 bits; CBC pads with PKCS #7.

use aes::cipher::array::ArraySize;
use aes::cipher::consts::{U12, U13, U14, U15, U16};
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt};
use aes::{Aes128, Aes192, Aes256};
use aes_gcm::AesGcm;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockModeDecrypt, BlockModeEncrypt, KeyIvInit};
use zeroize::Zeroizing;

use super::error::{CryptoResult, data, not_supported, operation};
use super::key::{Key, KeyAlgorithm, KeyType, Material};
use super::params::{Params, Usage, check_usages};
use super::{Format, Generated, Import, jwk};

const USAGES: &[Usage] = &[
    Usage::Encrypt,
    Usage::Decrypt,
    Usage::WrapKey,
    Usage::UnwrapKey,
];

fn key(name: &str, bytes: Vec<u8>, extractable: bool, usages: &[Usage]) -> Key {
    Key {
        kind: KeyType::Secret,
        extractable,
        algorithm: KeyAlgorithm {
            length: Some(bytes.len() as u32 * 8),
            ..KeyAlgorithm::named(name)
        },
        usages: usages.to_vec(),
        material: Material::Secret(Zeroizing::new(bytes)),
    }
}

/// The JWK `alg` of an AES key of `bytes` bytes for algorithm `name`.
fn jwk_alg(name: &str, bytes: usize) -> String {
    let mode = name.trim_start_matches("AES-");
    format!("A{}{mode}", bytes * 8)
}

/// importKey for AES-GCM and AES-CBC.
///
/// # Errors
/// `SyntaxError` for other usages, `NotSupportedError` for spki/pkcs8, `DataError` for a key that
/// is not 16, 24 or 32 bytes or a JWK that does not match.
pub fn import(import: &Import<'_>) -> CryptoResult<Key> {
    let name = import.params.name.as_str();
    check_usages(import.usages, USAGES, name)?;
    let bytes = match import.format {
        Format::Raw => import.data.bytes()?.to_vec(),
        Format::Jwk => {
            let jwk = import.data.jwk()?;
            jwk.check("oct", "enc", import.usages, import.extractable)?;
            let bytes = jwk::decode(&jwk.k, "k")?;
            jwk.check_alg(&jwk_alg(name, bytes.len()))?;
            bytes
        }
        other => {
            return Err(not_supported(format!(
                "{name} keys cannot be imported as {}",
                other.name()
            )));
        }
    };
    if ![16, 24, 32].contains(&bytes.len()) {
        return Err(data("Invalid key length"));
    }
    Ok(key(name, bytes, import.extractable, import.usages))
}

/// generateKey for AES: 128, 192 or 256 random bits.
///
/// # Errors
/// `SyntaxError` for other usages, `OperationError` for another length.
pub fn generate(params: &Params, extractable: bool, usages: &[Usage]) -> CryptoResult<Generated> {
    check_usages(usages, USAGES, &params.name)?;
    let length = params.length.unwrap_or(0);
    if ![128, 192, 256].contains(&length) {
        return Err(operation("AES key length must be 128, 192 or 256 bits"));
    }
    let bytes = super::hmac::random(length as usize / 8)?;
    Ok(Generated::Secret(key(
        &params.name,
        bytes,
        extractable,
        usages,
    )))
}

/// One encrypt or decrypt request's parameters.
pub struct Cipher<'a> {
    /// The normalised algorithm (name, tagLength).
    pub params: &'a Params,
    /// The IV (GCM, CBC).
    pub iv: &'a [u8],
    /// GCM's additional data.
    pub additional: &'a [u8],
}

/// encrypt for AES-GCM (ciphertext then tag) or AES-CBC.
///
/// # Errors
/// `OperationError` for a bad IV or tag length.
pub fn encrypt(cipher: &Cipher<'_>, secret: &[u8], plain: &[u8]) -> CryptoResult<Vec<u8>> {
    match cipher.params.name.as_str() {
        "AES-GCM" => gcm(cipher, secret, plain, true),
        _ => cbc(cipher, secret, plain, true),
    }
}

/// decrypt for AES-GCM or AES-CBC.
///
/// # Errors
/// `OperationError` for a bad IV or tag length, a tag that does not match, or bad padding.
pub fn decrypt(cipher: &Cipher<'_>, secret: &[u8], sealed: &[u8]) -> CryptoResult<Vec<u8>> {
    match cipher.params.name.as_str() {
        "AES-GCM" => gcm(cipher, secret, sealed, false),
        _ => cbc(cipher, secret, sealed, false),
    }
}

fn seal<A, N, T>(
    secret: &[u8],
    iv: &[u8],
    aad: &[u8],
    input: &[u8],
    encrypting: bool,
) -> CryptoResult<Vec<u8>>
where
    T: aes_gcm::TagSize,
    AesGcm<A, N, T>: KeyInit + Aead + aes_gcm::AeadCore<NonceSize = N>,
    N: ArraySize,
{
    let cipher = <AesGcm<A, N, T> as KeyInit>::new_from_slice(secret)
        .map_err(|_| data("Invalid key length"))?;
    let nonce = aes_gcm::Nonce::<N>::try_from(iv).map_err(|_| operation("Invalid IV length"))?;
    let payload = Payload { msg: input, aad };
    if encrypting {
        cipher
            .encrypt(&nonce, payload)
            .map_err(|_| operation("The data is too long"))
    } else {
        cipher
            .decrypt(&nonce, payload)
            .map_err(|_| operation("The operation failed for an operation-specific reason"))
    }
}

/// AES-GCM with the key size, IV size and tag size as types.
macro_rules! gcm_sizes {
    ($aes:ty, $secret:expr, $iv:expr, $aad:expr, $input:expr, $enc:expr, $tag:expr) => {
        match ($iv.len(), $tag) {
            (12, 96) => seal::<$aes, U12, U12>($secret, $iv, $aad, $input, $enc),
            (12, 104) => seal::<$aes, U12, U13>($secret, $iv, $aad, $input, $enc),
            (12, 112) => seal::<$aes, U12, U14>($secret, $iv, $aad, $input, $enc),
            (12, 120) => seal::<$aes, U12, U15>($secret, $iv, $aad, $input, $enc),
            (12, 128) => seal::<$aes, U12, U16>($secret, $iv, $aad, $input, $enc),
            (16, 96) => seal::<$aes, U16, U12>($secret, $iv, $aad, $input, $enc),
            (16, 104) => seal::<$aes, U16, U13>($secret, $iv, $aad, $input, $enc),
            (16, 112) => seal::<$aes, U16, U14>($secret, $iv, $aad, $input, $enc),
            (16, 120) => seal::<$aes, U16, U15>($secret, $iv, $aad, $input, $enc),
            (16, 128) => seal::<$aes, U16, U16>($secret, $iv, $aad, $input, $enc),
            (0, _) => Err(operation("The IV cannot be empty")),
            // Node 22 refuses an IV shorter than 96 bits as an OperationError.
            (1..12, _) => Err(operation("AES-GCM IVs shorter than 12 bytes are refused")),
            (_, 32 | 64) => Err(not_supported(
                "AES-GCM tags of 32 or 64 bits are not offered",
            )),
            _ => Err(not_supported("AES-GCM takes IVs of 12 or 16 bytes here")),
        }
    };
}

fn gcm(
    cipher: &Cipher<'_>,
    secret: &[u8],
    input: &[u8],
    encrypting: bool,
) -> CryptoResult<Vec<u8>> {
    let tag = cipher.params.tag_length.unwrap_or(128);
    if ![32, 64, 96, 104, 112, 120, 128].contains(&tag) {
        return Err(operation(format!(
            "{tag} is not a valid AES-GCM tag length"
        )));
    }
    let (iv, aad) = (cipher.iv, cipher.additional);
    match secret.len() {
        16 => gcm_sizes!(Aes128, secret, iv, aad, input, encrypting, tag),
        24 => gcm_sizes!(Aes192, secret, iv, aad, input, encrypting, tag),
        _ => gcm_sizes!(Aes256, secret, iv, aad, input, encrypting, tag),
    }
}

fn cbc_with<A>(secret: &[u8], iv: &[u8], input: &[u8], encrypting: bool) -> CryptoResult<Vec<u8>>
where
    A: BlockCipherEncrypt + BlockCipherDecrypt,
    cbc::Encryptor<A>: KeyIvInit + BlockModeEncrypt,
    cbc::Decryptor<A>: KeyIvInit + BlockModeDecrypt,
{
    let bad_key = |_| data("Invalid key or IV length");
    if encrypting {
        let cipher = cbc::Encryptor::<A>::new_from_slices(secret, iv).map_err(bad_key)?;
        Ok(cipher.encrypt_padded_vec::<Pkcs7>(input))
    } else {
        let cipher = cbc::Decryptor::<A>::new_from_slices(secret, iv).map_err(bad_key)?;
        cipher
            .decrypt_padded_vec::<Pkcs7>(input)
            .map_err(|_| operation("The operation failed for an operation-specific reason"))
    }
}

fn cbc(
    cipher: &Cipher<'_>,
    secret: &[u8],
    input: &[u8],
    encrypting: bool,
) -> CryptoResult<Vec<u8>> {
    if cipher.iv.len() != 16 {
        return Err(operation("algorithm.iv must contain exactly 16 bytes"));
    }
    match secret.len() {
        16 => cbc_with::<Aes128>(secret, cipher.iv, input, encrypting),
        24 => cbc_with::<Aes192>(secret, cipher.iv, input, encrypting),
        _ => cbc_with::<Aes256>(secret, cipher.iv, input, encrypting),
    }
}
