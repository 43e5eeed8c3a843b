//! Stripped modules kept on disk by the digest of their source, so that an extension file oxc has
//! stripped once is never parsed by oxc again until it changes.
//!
//! An entry is `<dir>/<build fingerprint>/<sha256 of source type and text>.json`: its first line
//! is the keyed BLAKE3 digest of the entry's name and the rest, under a key derived from the
//! user's trust key ([`CacheKey`]), checked on every read, so a truncated or altered entry is
//! stripped again rather than run, also when whoever altered it recomputed a plain digest or
//! copied another file's valid entry in its place (they cannot read the key). The fingerprint covers earshot's version, oxc's version and the
//! text of the code that strips, lists imports and guards the parser, so an entry written by other
//! code is never read. Only files that stripped cleanly are kept; a file with an error is parsed
//! again each time, so its message is always today's.
//!
//! The entry holds what trusting and running the file needs: its relative imports (the edges the
//! trust digest follows), the JavaScript and the position map back to the original text.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use super::strip::{Analysis, StrippedModule, analyse};
use crate::settings::Settings;
use crate::sources::source_type_of;
use crate::trust::CacheKey;

/// Where stripped modules are kept, and the key of their digests. `None` keeps nothing (every
/// load strips).
#[derive(Debug, Clone, Default)]
pub struct ModuleCache {
    dir: Option<(PathBuf, CacheKey)>,
}

/// What an entry holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    imports: Vec<String>,
    module: StrippedModule,
}

impl ModuleCache {
    /// A cache under `dir` (created on first store) whose entries are digested under `key`.
    pub fn in_dir(dir: impl Into<PathBuf>, key: CacheKey) -> ModuleCache {
        ModuleCache {
            dir: Some((dir.into(), key)),
        }
    }

    /// The cache of the settings' user: `<user config dir>/cache/modules`, beside the compiled
    /// components, keyed by their trust key (created when there is none yet); none when there
    /// is no user config dir or the key is unusable (logged).
    pub fn for_settings(settings: &Settings) -> ModuleCache {
        let Some(dir) = &settings.user_config_dir else {
            return ModuleCache::disabled();
        };
        match CacheKey::for_user(dir, "modules") {
            Ok(key) => ModuleCache::in_dir(dir.join("cache").join("modules"), key),
            Err(error) => {
                tracing::warn!(%error, "stripped modules are not cached");
                ModuleCache::disabled()
            }
        }
    }

    /// No cache: every load strips.
    pub fn disabled() -> ModuleCache {
        ModuleCache { dir: None }
    }

    /// The analysis of `source` (the text of `path`): from a verified entry when there is one,
    /// else from oxc (behind the parser's guards), stored when it stripped cleanly.
    ///
    /// # Errors
    /// As [`analyse`]: the file is refused before parsing, or the parser failed.
    pub fn analyse(&self, path: &Path, source: &str) -> Result<Analysis, String> {
        let Some((entry_path, key)) = self.entry_path(path, source) else {
            return analyse(path, source);
        };
        if let Some(entry) = read_verified(&entry_path, key) {
            return Ok(Analysis {
                imports: entry.imports,
                module: Ok(entry.module),
            });
        }
        let analysis = analyse(path, source)?;
        if let Ok(module) = &analysis.module {
            let entry = Entry {
                imports: analysis.imports.clone(),
                module: module.clone(),
            };
            match store(&entry_path, key, &entry) {
                Ok(()) => {
                    let build_dir = entry_path.parent().expect("entries live in a directory");
                    prune(build_dir, MAX_ENTRIES);
                    if let Some(cache_dir) = build_dir.parent() {
                        prune_other_builds(cache_dir, fingerprint(), OTHER_BUILDS_KEPT_FOR);
                    }
                }
                Err(error) => {
                    tracing::debug!(path = %entry_path.display(), %error, "stripped module not cached");
                }
            }
        }
        Ok(analysis)
    }

    fn entry_path(&self, path: &Path, source: &str) -> Option<(PathBuf, &CacheKey)> {
        let (dir, key) = self.dir.as_ref()?;
        let mut hasher = Sha256::new();
        hasher.update(format!("{:?}", source_type_of(path)).as_bytes());
        hasher.update([0]);
        hasher.update(source.as_bytes());
        let name = hex::encode(hasher.finalize());
        Some((dir.join(fingerprint()).join(format!("{name}.json")), key))
    }
}

/// What an entry depends on besides its source: earshot's and oxc's versions and the code that
/// makes an entry (a change to any of them makes every older entry unreachable).
fn fingerprint() -> &'static str {
    static FINGERPRINT: OnceLock<String> = OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        let mut hasher = blake3::Hasher::new();
        for part in [
            env!("CARGO_PKG_VERSION"),
            earshot_core::OXC_VERSION,
            include_str!("strip.rs"),
            include_str!("module_cache.rs"),
            include_str!("../../core/src/sources/extensions.rs"),
            include_str!("../../core/src/sources/parse_guard.rs"),
        ] {
            hasher.update(part.as_bytes());
            hasher.update(&[0]);
        }
        hasher.finalize().to_hex()[..16].to_string()
    })
}

/// The keyed digest of the entry at `path` holding `body`: it binds the file name too, so one
/// file's valid entry does not verify under another's name.
fn digest(path: &Path, key: &CacheKey, body: &[u8]) -> blake3::Hash {
    let name = path.file_name().unwrap_or_default().as_encoded_bytes();
    key.hasher(name).update(body).finalize()
}

/// The entry at `path` if its recorded digest matches its name and body under `key`.
fn read_verified(path: &Path, key: &CacheKey) -> Option<Entry> {
    let bytes = std::fs::read(path).ok()?;
    let split = bytes.iter().position(|byte| *byte == b'\n')?;
    let (recorded, body) = (&bytes[..split], &bytes[split + 1..]);
    // `blake3::Hash` compares in constant time.
    if blake3::Hash::from_hex(recorded).ok() != Some(digest(path, key, body)) {
        tracing::warn!(path = %path.display(), "cached module does not match its digest; stripping again");
        return None;
    }
    serde_json::from_slice(body).ok()
}

/// The most entries kept for one build: every version of every file an author edits is an
/// entry, so the oldest go once there are more.
const MAX_ENTRIES: usize = 1_000;

/// Deletes the least recently written entries of `dir` until at most `keep` are left. Runs only
/// after a store (a file stripped for the first time), never on a load from the cache.
fn prune(dir: &Path, keep: usize) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = read
        .flatten()
        .filter(|entry| {
            entry
                .path()
                .extension()
                .is_some_and(|suffix| suffix == "json")
        })
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .collect();
    if entries.len() <= keep {
        return;
    }
    entries.sort();
    let excess = entries.len() - keep;
    for (_, path) in entries.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

/// How long the entries of another build (an older earshot, another oxc) are kept after their
/// folder last changed: long enough for two installed versions to share a machine, short enough
/// that upgrades do not pile up folders nobody reads.
const OTHER_BUILDS_KEPT_FOR: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Deletes the folders of other builds under `cache_dir` not written to for `kept_for`. Runs only
/// after a store, like [`prune`].
fn prune_other_builds(cache_dir: &Path, current: &str, kept_for: std::time::Duration) {
    let Ok(read) = std::fs::read_dir(cache_dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in read.flatten() {
        let stale = entry.file_name() != current
            && entry.file_type().is_ok_and(|kind| kind.is_dir())
            && entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() > kept_for);
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Writes the entry atomically (temp file in the same directory + rename).
fn store(path: &Path, key: &CacheKey, entry: &Entry) -> std::io::Result<()> {
    let dir = path.parent().expect("entries live in a directory");
    std::fs::create_dir_all(dir)?;
    let body = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(digest(path, key, &body).to_hex().as_bytes())?;
    temp.write_all(b"\n")?;
    temp.write_all(&body)?;
    temp.persist(path).map_err(|error| error.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One key for every cache of a test (an ephemeral key per call would never verify).
    fn key() -> CacheKey {
        static KEY: OnceLock<CacheKey> = OnceLock::new();
        KEY.get_or_init(CacheKey::ephemeral).clone()
    }

    const SOURCE: &str =
        "import { a } from './a.ts';\nenum E { X = 1 }\nexport const value: number = a + E.X;\n";

    #[test]
    fn another_builds_entries_go_once_unused_for_a_week_and_recent_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join("0123456789abcdef");
        let recent = dir.path().join("fedcba9876543210");
        for build in [&stale, &recent] {
            std::fs::create_dir_all(build).unwrap();
            std::fs::write(build.join("entry.json"), "x").unwrap();
        }
        let month_ago =
            std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 24 * 3600);
        std::fs::File::open(&stale)
            .unwrap()
            .set_modified(month_ago)
            .unwrap();
        let cache = ModuleCache::in_dir(dir.path(), key());
        cache.analyse(Path::new("a.ts"), SOURCE).unwrap();
        assert!(!stale.exists());
        assert!(recent.join("entry.json").exists());
        assert_eq!(entries(dir.path()).len(), 1);
    }

    fn entries(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir.join(fingerprint()))
            .map(|read| read.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_second_analysis_is_read_from_the_entry_and_equals_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModuleCache::in_dir(dir.path(), key());
        let first = cache.analyse(Path::new("m.ts"), SOURCE).unwrap();
        assert_eq!(first.imports, ["./a.ts"]);
        let stored = entries(dir.path());
        assert_eq!(stored.len(), 1);
        // Proof the second answer comes from the entry: an entry with other (verified) contents
        // is what it returns.
        let mut altered = read_verified(&stored[0], &key()).unwrap();
        altered.imports = vec!["./from-the-cache.ts".into()];
        store(&stored[0], &key(), &altered).unwrap();
        let second = cache.analyse(Path::new("m.ts"), SOURCE).unwrap();
        assert_eq!(second.imports, ["./from-the-cache.ts"]);
        assert_eq!(second.module.unwrap(), first.module.unwrap());
    }

    #[test]
    fn a_corrupted_entry_is_stripped_again_and_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModuleCache::in_dir(dir.path(), key());
        let first = cache.analyse(Path::new("m.ts"), SOURCE).unwrap();
        let entry = entries(dir.path()).remove(0);
        let text = std::fs::read_to_string(&entry).unwrap();
        std::fs::write(&entry, text.replace("./a.ts", "./b.ts")).unwrap();
        let again = cache.analyse(Path::new("m.ts"), SOURCE).unwrap();
        assert_eq!(again.imports, first.imports);
        assert!(read_verified(&entry, &key()).is_some(), "rewritten whole");
    }

    #[test]
    fn an_entry_rewritten_with_a_plain_digest_or_copied_from_another_file_is_stripped_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModuleCache::in_dir(dir.path(), key());
        let first = cache.analyse(Path::new("m.ts"), SOURCE).unwrap();
        let entry = entries(dir.path()).remove(0);
        // An attacker who can write the cache but not read the key: a changed body with its
        // plain BLAKE3 (the old format) and its plain SHA-256 recomputed.
        let text = std::fs::read_to_string(&entry).unwrap();
        let body = text
            .split_once('\n')
            .unwrap()
            .1
            .replace("./a.ts", "./evil.ts");
        for forged in [
            blake3::hash(body.as_bytes()).to_hex().to_string(),
            hex::encode(Sha256::digest(body.as_bytes())),
        ] {
            std::fs::write(&entry, format!("{forged}\n{body}")).unwrap();
            let again = cache.analyse(Path::new("m.ts"), SOURCE).unwrap();
            assert_eq!(
                again.imports, first.imports,
                "the forged entry was not used"
            );
            assert!(
                !std::fs::read_to_string(&entry).unwrap().contains("evil"),
                "rebuilt"
            );
        }
        // Another file's valid entry, copied under this file's name.
        cache
            .analyse(Path::new("m.ts"), "import './other.ts';")
            .unwrap();
        let other = entries(dir.path())
            .into_iter()
            .find(|path| *path != entry)
            .unwrap();
        std::fs::copy(&other, &entry).unwrap();
        let again = cache.analyse(Path::new("m.ts"), SOURCE).unwrap();
        assert_eq!(again.imports, first.imports);
        // And an entry under another user's key does not verify either.
        let stranger = ModuleCache::in_dir(dir.path(), CacheKey::ephemeral());
        assert_eq!(
            stranger.analyse(Path::new("m.ts"), SOURCE).unwrap().imports,
            first.imports
        );
        assert!(
            read_verified(&entry, &key()).is_none(),
            "rewritten under the other key"
        );
    }

    #[test]
    fn only_the_most_recently_written_entries_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModuleCache::in_dir(dir.path(), key());
        for version in 0..4 {
            cache
                .analyse(
                    Path::new("m.ts"),
                    &format!("export const version = {version};"),
                )
                .unwrap();
            // Distinct modification times on file systems with coarse clocks.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(entries(dir.path()).len(), 4);
        prune(&dir.path().join(fingerprint()), 2);
        let kept: Vec<String> = entries(dir.path())
            .iter()
            .map(|path| std::fs::read_to_string(path).unwrap())
            .collect();
        assert_eq!(kept.len(), 2);
        assert!(
            kept.iter()
                .all(|text| text.contains("version = 2") || text.contains("version = 3")),
            "{kept:?}"
        );
    }

    #[test]
    fn the_same_text_as_javascript_and_a_file_with_an_error_are_not_shared_or_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModuleCache::in_dir(dir.path(), key());
        cache
            .analyse(Path::new("m.ts"), "export const x = 1;")
            .unwrap();
        cache
            .analyse(Path::new("m.js"), "export const x = 1;")
            .unwrap();
        assert_eq!(entries(dir.path()).len(), 2, "one entry per source type");
        let broken = cache
            .analyse(Path::new("bad.ts"), "export const = ;")
            .unwrap();
        assert!(broken.module.is_err());
        assert_eq!(entries(dir.path()).len(), 2, "errors are not kept");
    }
}
