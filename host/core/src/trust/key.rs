//! The per-user key that signs trust records.

use std::io::Write;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The key's file name inside the user config dir.
pub const KEY_FILE: &str = "trust.key";

/// Why the trust key is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// There is no user config dir to keep the key in.
    #[error("no user config dir: set EARSHOT_CONFIG_DIR or HOME")]
    NoConfigDir,
    /// The key file exists but cannot be read or is not a key.
    #[error(
        "the trust key at {path} cannot be used ({reason}); fix or delete it (deleting it lapses every trust record)"
    )]
    Unusable {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The key could not be created.
    #[error("cannot create the trust key at {path}: {reason}")]
    CannotCreate {
        /// The key file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// 32 random bytes known only to this user on this machine.
pub struct TrustKey {
    bytes: [u8; 32],
}

impl std::fmt::Debug for TrustKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TrustKey(..)")
    }
}

impl TrustKey {
    /// Reads the key from `config_dir`; `Ok(None)` when there is none yet.
    ///
    /// # Errors
    /// [`TrustError::Unusable`] when the file exists but cannot be read or is malformed.
    pub fn load(config_dir: &Path) -> Result<Option<TrustKey>, TrustError> {
        let path = config_dir.join(KEY_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(TrustError::Unusable {
                    path,
                    reason: error.to_string(),
                });
            }
        };
        let decoded = hex::decode(text.trim())
            .ok()
            .filter(|bytes| bytes.len() == 32);
        match decoded {
            Some(decoded) => {
                let mut bytes = [0u8; 32];
                bytes.copy_from_slice(&decoded);
                Ok(Some(TrustKey { bytes }))
            }
            None => Err(TrustError::Unusable {
                path,
                reason: "it is not 64 hex digits".into(),
            }),
        }
    }

    /// Reads the key, creating it (mode 0600) on first use.
    ///
    /// # Errors
    /// As [`TrustKey::load`], or [`TrustError::CannotCreate`].
    pub fn load_or_create(config_dir: &Path) -> Result<TrustKey, TrustError> {
        if let Some(key) = TrustKey::load(config_dir)? {
            return Ok(key);
        }
        let path = config_dir.join(KEY_FILE);
        let cannot = |reason: String| TrustError::CannotCreate {
            path: path.clone(),
            reason,
        };
        std::fs::create_dir_all(config_dir).map_err(|error| cannot(error.to_string()))?;
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|error| cannot(error.to_string()))?;
        // Written whole to a private temp file (mode 0600), then linked into place only if no key
        // exists yet: a concurrent earshot never reads a half-written key.
        let mut temp = tempfile::NamedTempFile::new_in(config_dir)
            .map_err(|error| cannot(error.to_string()))?;
        temp.write_all(hex::encode(bytes).as_bytes())
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|error| cannot(error.to_string()))?;
        match temp.persist_noclobber(&path) {
            Ok(_) => Ok(TrustKey { bytes }),
            // Another earshot created it first: use theirs.
            Err(error) if error.error.kind() == std::io::ErrorKind::AlreadyExists => {
                TrustKey::load(config_dir)?
                    .ok_or_else(|| cannot("it vanished while being created".into()))
            }
            Err(error) => Err(cannot(error.error.to_string())),
        }
    }

    fn mac(&self, project: &Path, kind: &str, name: &str, digest: &str) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        // The path's own bytes (identical to its text for a UTF-8 path): two different
        // non-UTF-8 roots must not share a signature.
        use std::os::unix::ffi::OsStrExt;
        for part in [
            b"earshot-trust-v1".as_slice(),
            project.as_os_str().as_bytes(),
            kind.as_bytes(),
            name.as_bytes(),
            digest.as_bytes(),
        ] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac
    }

    /// `hmac-sha256:<hex>` of `bytes` under this key: the digest of something that may hold a
    /// secret (an MCP server definition after `${VAR}` expansion), so the digest written next
    /// to the project cannot be used to guess the secret the way a plain SHA-256 could.
    pub fn keyed_digest(&self, bytes: &[u8]) -> String {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        mac.update(b"earshot-digest-v1\0");
        mac.update(bytes);
        format!("hmac-sha256:{}", hex::encode(mac.finalize().into_bytes()))
    }

    /// The key of `purpose`'s cache digests (`components`, `modules`), derived from this key so
    /// that a cache entry verifies only for this user: someone who can write the cache folder but
    /// cannot read the trust key cannot make an entry that is run.
    pub fn cache_key(&self, purpose: &str) -> CacheKey {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        mac.update(b"earshot-cache-v1\0");
        mac.update(purpose.as_bytes());
        CacheKey {
            bytes: mac.finalize().into_bytes().into(),
        }
    }

    /// Signs a record: hex HMAC-SHA256 over the project path, kind, name and digest.
    pub fn sign(&self, project: &Path, kind: &str, name: &str, digest: &str) -> String {
        hex::encode(
            self.mac(project, kind, name, digest)
                .finalize()
                .into_bytes(),
        )
    }

    /// Checks a signature in constant time.
    pub fn verify(
        &self,
        project: &Path,
        kind: &str,
        name: &str,
        digest: &str,
        signature: &str,
    ) -> bool {
        let Ok(signature) = hex::decode(signature) else {
            return false;
        };
        self.mac(project, kind, name, digest)
            .verify_slice(&signature)
            .is_ok()
    }
}

/// The key of one cache's entry digests (keyed BLAKE3), derived from the user's [`TrustKey`].
#[derive(Clone)]
pub struct CacheKey {
    bytes: [u8; 32],
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CacheKey(..)")
    }
}

impl CacheKey {
    /// The key of `purpose` for the user of `config_dir`, from their trust key, which is created
    /// (mode 0600) when there is none yet, as `trust` does.
    ///
    /// # Errors
    /// As [`TrustKey::load_or_create`].
    pub fn for_user(config_dir: &Path, purpose: &str) -> Result<CacheKey, TrustError> {
        Ok(TrustKey::load_or_create(config_dir)?.cache_key(purpose))
    }

    /// A random key that lives only in this process: entries written under it are never read by
    /// another process (tests, benchmarks).
    ///
    /// # Panics
    /// When the OS has no random source.
    pub fn ephemeral() -> CacheKey {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the OS random source works");
        CacheKey { bytes }
    }

    /// A keyed BLAKE3 hasher that has already taken `name` (length-prefixed): the digest of an
    /// entry binds it to the name it is stored under, so one valid entry cannot stand in for
    /// another.
    pub fn hasher(&self, name: &[u8]) -> blake3::Hasher {
        let mut hasher = blake3::Hasher::new_keyed(&self.bytes);
        hasher.update(&(name.len() as u64).to_be_bytes());
        hasher.update(name);
        hasher
    }
}
