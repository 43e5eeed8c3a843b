//! Compiled components, cached on disk so that no call after the first ever compiles again.
//!
//! An entry is `<dir>/<engine hash>/<component sha256>.cwasm` plus a `.blake3` file holding the
//! digest of the `.cwasm` itself. The engine hash changes whenever wasmtime or its configuration
//! changes, so stale code is never loaded; the `.blake3` digest is checked before every load, so a
//! truncated or altered file is recompiled rather than mapped.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

use super::engine::SandboxEngine;
use super::error::SandboxError;

/// Where compiled components are kept. `None` keeps nothing (every load compiles).
#[derive(Debug, Clone, Default)]
pub struct ComponentCache {
    dir: Option<PathBuf>,
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
    /// A cache under `dir` (created on first store).
    pub fn in_dir(dir: impl Into<PathBuf>) -> ComponentCache {
        ComponentCache {
            dir: Some(dir.into()),
        }
    }

    /// The user's cache: `<user config dir>/cache/components`.
    pub fn user() -> ComponentCache {
        match crate::paths::user_config_dir() {
            Some(config) => ComponentCache::in_dir(config.join("cache").join("components")),
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
        let entry = self.dir.as_ref().map(|dir| entry_path(dir, engine, digest));
        if let Some(entry) = &entry
            && let Some(component) = load_verified(engine, entry)
        {
            return Ok((component, CacheOutcome::Hit));
        }
        if let Some(precompiled) = precompiled {
            // SAFETY: `precompiled` is embedded in this binary by its own build script;
            // `deserialize` refuses code from another wasmtime version or configuration.
            match unsafe { Component::deserialize(engine.engine(), precompiled) } {
                Ok(component) => {
                    if let Some(entry) = &entry
                        && let Err(error) = store_entry(entry, precompiled)
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
        if let Some(entry) = &entry
            && let Err(error) = store_entry(entry, &compiled)
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

/// Loads `entry` if its recorded digest matches its contents.
fn load_verified(engine: &SandboxEngine, entry: &Path) -> Option<Component> {
    let started = std::time::Instant::now();
    let recorded = std::fs::read_to_string(digest_path(entry)).ok()?;
    let digest = blake3::Hasher::new()
        .update_mmap(entry)
        .ok()?
        .finalize()
        .to_hex();
    tracing::debug!(
        verify_ms = started.elapsed().as_secs_f64() * 1e3,
        "cache entry verified"
    );
    if digest.as_str() != recorded.trim() {
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

/// Writes the entry and its digest, each atomically (temp file in the same directory + rename).
fn store_entry(entry: &Path, compiled: &[u8]) -> std::io::Result<()> {
    let dir = entry.parent().expect("cache entries live in a directory");
    std::fs::create_dir_all(dir)?;
    write_atomically(entry, compiled)?;
    write_atomically(
        &digest_path(entry),
        blake3::hash(compiled).to_hex().as_bytes(),
    )
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
pub(crate) fn first_line(error: &wasmtime::Error) -> String {
    format!("{error:#}")
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}
