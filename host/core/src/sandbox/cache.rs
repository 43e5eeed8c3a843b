//! Compiled components, cached on disk so that no call after the first ever compiles again.
//!
//! An entry is `<dir>/<engine hash>/<component sha256>.cwasm` plus a `.blake3` file holding the
//! keyed BLAKE3 digest of the entry's name and the `.cwasm` itself, under a key derived from the
//! user's trust key ([`CacheKey`]). The engine hash changes whenever wasmtime or its configuration
//! changes, so stale code is never loaded; the digest is checked before every load, so a
//! truncated or altered file is recompiled rather than mapped, also when whoever altered it
//! recomputed a plain digest or copied another valid entry in its place (they cannot read the
//! key, which is not in the cache folder).

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

use super::engine::SandboxEngine;
use crate::sandbox_error::SandboxError;
use crate::trust::CacheKey;

/// Where compiled components are kept, and the key of their digests. `None` keeps nothing
/// (every load compiles).
#[derive(Debug, Clone, Default)]
pub struct ComponentCache {
    dir: Option<(PathBuf, CacheKey)>,
}

/// How a component became ready, for logs and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a verified cache entry.
    Hit,
    /// Compiled now (and stored, when the cache has a directory).
    Compiled,
    /// Taken from the code precompiled at build time (and stored, when the cache has a
    /// directory): the host's own components on a fresh machine.
    Precompiled,
}

impl ComponentCache {
    /// A cache under `dir` (created on first store) whose entries are digested under `key`.
    pub fn in_dir(dir: impl Into<PathBuf>, key: CacheKey) -> ComponentCache {
        ComponentCache {
            dir: Some((dir.into(), key)),
        }
    }

    /// The cache of the user of `config_dir`: `<config dir>/cache/components`, keyed by their
    /// trust key (created when there is none yet). When the key is unusable nothing is cached
    /// (every load compiles), which is logged.
    pub fn for_config_dir(config_dir: &Path) -> ComponentCache {
        match CacheKey::for_user(config_dir, "components") {
            Ok(key) => ComponentCache::in_dir(config_dir.join("cache").join("components"), key),
            Err(error) => {
                tracing::warn!(%error, "compiled components are not cached");
                ComponentCache::disabled()
            }
        }
    }

    /// The user's cache: [`ComponentCache::for_config_dir`] of the user config dir.
    pub fn user() -> ComponentCache {
        match crate::paths::user_config_dir() {
            Some(config) => ComponentCache::for_config_dir(&config),
            None => ComponentCache::disabled(),
        }
    }

    /// No cache: every load compiles.
    pub fn disabled() -> ComponentCache {
        ComponentCache { dir: None }
    }

    /// Returns the compiled form of `bytes`, from the cache when a verified entry exists.
    ///
    /// # Errors
    /// [`SandboxError::Compile`] when `bytes` is not a component wasmtime can compile. A cache
    /// directory that cannot be written is logged and otherwise ignored.
    pub fn load(
        &self,
        engine: &SandboxEngine,
        name: &str,
        bytes: &[u8],
    ) -> Result<(Component, CacheOutcome), SandboxError> {
        let digest = hex::encode(Sha256::digest(bytes));
        self.load_with_precompiled(engine, name, bytes, &digest, None)
    }

    /// As [`ComponentCache::load`], with `digest` (hex SHA-256 of `bytes`, the cache key) already
    /// known — computed at build time for the host's own components, saving milliseconds per
    /// start — and, on a cache miss, `precompiled` tried first: native code for `bytes` made at
    /// build time by this same wasmtime and configuration (wasmtime checks both and refuses a
    /// mismatch, in which case `bytes` is compiled as usual).
    ///
    /// # Errors
    /// As [`ComponentCache::load`].
    pub fn load_with_precompiled(
        &self,
        engine: &SandboxEngine,
        name: &str,
        bytes: &[u8],
        digest: &str,
        precompiled: Option<&[u8]>,
    ) -> Result<(Component, CacheOutcome), SandboxError> {
        let entry = self
            .dir
            .as_ref()
            .map(|(dir, key)| (entry_path(dir, engine, digest), key));
        if let Some((entry, key)) = &entry
            && let Some(component) = load_verified(engine, entry, key)
        {
            return Ok((component, CacheOutcome::Hit));
        }
        if let Some(precompiled) = precompiled {
            // SAFETY: `precompiled` is embedded in this binary by its own build script;
            // `deserialize` refuses code from another wasmtime version or configuration.
            match unsafe { Component::deserialize(engine.engine(), precompiled) } {
                Ok(component) => {
                    if let Some((entry, key)) = &entry
                        && let Err(error) = store_entry(entry, key, precompiled)
                    {
                        tracing::warn!(component = name, %error, "could not cache the precompiled component");
                    }
                    return Ok((component, CacheOutcome::Precompiled));
                }
                Err(error) => {
                    tracing::debug!(component = name, error = %first_line(&error), "build-time code does not fit this engine; compiling");
                }
            }
        }
        let compiled = engine
            .engine()
            .precompile_component(bytes)
            .map_err(|error| SandboxError::Compile {
                component: name.to_string(),
                reason: first_line(&error),
            })?;
        if let Some((entry, key)) = &entry
            && let Err(error) = store_entry(entry, key, &compiled)
        {
            tracing::warn!(component = name, path = %entry.display(), %error, "could not cache the compiled component");
        }
        // SAFETY: `compiled` was produced by this engine a moment ago.
        let component =
            unsafe { Component::deserialize(engine.engine(), &compiled) }.map_err(|error| {
                SandboxError::Compile {
                    component: name.to_string(),
                    reason: first_line(&error),
                }
            })?;
        Ok((component, CacheOutcome::Compiled))
    }
}

fn entry_path(dir: &Path, engine: &SandboxEngine, digest: &str) -> PathBuf {
    let mut hasher = std::hash::DefaultHasher::new();
    engine
        .engine()
        .precompile_compatibility_hash()
        .hash(&mut hasher);
    let engine_hash = format!("{:016x}", hasher.finish());
    dir.join(engine_hash).join(format!("{digest}.cwasm"))
}

fn digest_path(entry: &Path) -> PathBuf {
    entry.with_extension("blake3")
}

/// What an entry's digest binds besides its contents: its engine folder and file name, so a
/// valid entry copied under another component's name does not verify.
fn entry_name(entry: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut parts = entry.iter().rev().take(2).collect::<Vec<_>>();
    parts.reverse();
    parts.join(std::ffi::OsStr::new("/")).as_bytes().to_vec()
}

/// Loads `entry` if its recorded digest matches its name and contents under `key`.
fn load_verified(engine: &SandboxEngine, entry: &Path, key: &CacheKey) -> Option<Component> {
    let started = std::time::Instant::now();
    let recorded = std::fs::read_to_string(digest_path(entry)).ok()?;
    let digest = key
        .hasher(&entry_name(entry))
        .update_mmap(entry)
        .ok()?
        .finalize();
    tracing::debug!(
        verify_ms = started.elapsed().as_secs_f64() * 1e3,
        "cache entry verified"
    );
    // `blake3::Hash` compares in constant time.
    if blake3::Hash::from_hex(recorded.trim()).ok() != Some(digest) {
        tracing::warn!(path = %entry.display(), "cached component does not match its digest; recompiling");
        return None;
    }
    // SAFETY: the file was written by `store_entry` for an engine with the same compatibility
    // hash, and its contents match the digest recorded with it.
    match unsafe { Component::deserialize_file(engine.engine(), entry) } {
        Ok(component) => Some(component),
        Err(error) => {
            tracing::warn!(path = %entry.display(), error = %first_line(&error), "cached component did not load; recompiling");
            None
        }
    }
}

/// Writes the entry and its keyed digest, each atomically (temp file in the same directory +
/// rename).
fn store_entry(entry: &Path, key: &CacheKey, compiled: &[u8]) -> std::io::Result<()> {
    let dir = entry.parent().expect("cache entries live in a directory");
    std::fs::create_dir_all(dir)?;
    write_atomically(entry, compiled)?;
    let digest = key.hasher(&entry_name(entry)).update(compiled).finalize();
    write_atomically(&digest_path(entry), digest.to_hex().as_bytes())
}

fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("cache entries live in a directory");
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(contents)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// The first line of an error chain, for one-line reports.
pub fn first_line(error: &wasmtime::Error) -> String {
    format!("{error:#}")
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}
