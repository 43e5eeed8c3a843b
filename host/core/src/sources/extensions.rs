//! Extension files, and the digest of an extension's module graph (the file and every file it
//! imports, found statically by oxc's parser without running anything).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oxc::allocator::Allocator;
use oxc::parser::Parser;
use oxc::span::SourceType;
use oxc::syntax::module_record::ModuleRecord;
use sha2::{Digest, Sha256};

use crate::names::SourceKind;
use crate::settings::Settings;
use crate::trust::Manifest;

use super::{FoundFile, Scope, parse_guard, scan_folder};

/// The file suffixes that make an extension.
pub const EXTENSION_SUFFIXES: &[&str] = &["ts", "mts", "js", "mjs"];

/// Every extension file directly in the user and project extension folders, user first.
pub fn find_extensions(settings: &Settings) -> Vec<FoundFile> {
    let mut found = Vec::new();
    if let Some(dir) = &settings.user_config_dir {
        scan_folder(
            &dir.join("extensions"),
            Scope::User,
            SourceKind::Extension,
            EXTENSION_SUFFIXES,
            &mut found,
        );
    }
    if let Some(project) = &settings.project {
        scan_folder(
            &project.extensions_dir(),
            Scope::Project,
            SourceKind::Extension,
            EXTENSION_SUFFIXES,
            &mut found,
        );
    }
    found
}

/// The extension called `name`, preferring the user's own over the project's.
pub fn find_extension(settings: &Settings, name: &str) -> Option<FoundFile> {
    find_extensions(settings)
        .into_iter()
        .find(|file| file.name == name)
}

/// `sha256:` over the extension file and every file it imports (relative imports, followed
/// transitively, confined to the extension's folder). An import that cannot be resolved is
/// part of the digest by its specifier, so creating that file later also lapses trust.
///
/// # Errors
/// A description when the entry file cannot be read.
pub fn extension_digest(entry: &Path) -> Result<String, String> {
    extension_snapshot(entry).map(|snapshot| snapshot.digest)
}

/// An extension's module graph as read once: its digest, and the bytes of every file it covers
/// (by canonical path). The loader runs exactly these bytes, so what runs is what was trusted,
/// even if a file changes on disk meanwhile.
#[derive(Debug, Clone)]
pub struct ExtensionSnapshot {
    /// What a trust record binds to (as [`extension_digest`]).
    pub digest: String,
    /// Every file of the graph, by canonical path.
    pub files: std::collections::HashMap<PathBuf, Vec<u8>>,
    /// What the digest is made of, file by file (relative to the extension's folder), for a
    /// trust record to name what changed.
    pub manifest: Manifest,
}

/// Reads an extension's module graph once; see [`ExtensionSnapshot`].
///
/// # Errors
/// A description when a file of the graph cannot be read.
pub fn extension_snapshot(entry: &Path) -> Result<ExtensionSnapshot, String> {
    extension_snapshot_with(entry, &mut imports_of)
}

/// Gives the relative imports of one file of an extension's graph (its path and text), or why the
/// file cannot be read safely.
pub type ImportScan<'a> = dyn FnMut(&Path, &str) -> Result<Vec<String>, String> + 'a;

/// [`extension_snapshot`], with `scan` giving the relative imports of each file read (its path
/// and text). The extension loader passes a scan that strips each file in the same parse and keeps
/// the result, so that a file is parsed once between its trust check and its run.
///
/// # Errors
/// A description when a file of the graph cannot be read, or `scan` refuses one.
pub fn extension_snapshot_with(
    entry: &Path,
    scan: &mut ImportScan<'_>,
) -> Result<ExtensionSnapshot, String> {
    let mut files = std::collections::HashMap::new();
    let root = entry
        .parent()
        .ok_or_else(|| format!("{} has no folder", entry.display()))?
        .to_path_buf();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut pending: Vec<PathBuf> = vec![entry.to_path_buf()];
    while let Some(file) = pending.pop() {
        let relative = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned();
        if seen.contains_key(&relative) {
            continue;
        }
        let bytes = read_capped(&file, parse_guard::MAX_SOURCE_BYTES as u64)?;
        seen.insert(relative, hex::encode(Sha256::digest(&bytes)));
        let source = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(canonical) = file.canonicalize() {
            files.insert(canonical, bytes);
        }
        for specifier in scan(&file, &source)? {
            match resolve(&root, &file, &specifier) {
                Some(target) => pending.push(target),
                None => {
                    seen.insert(format!("unresolved:{specifier}"), String::new());
                }
            }
        }
    }
    let mut hasher = Sha256::new();
    let mut manifest = Manifest::new();
    for (path, digest) in &seen {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(digest.as_bytes());
        hasher.update([b'\n']);
        match path.strip_prefix("unresolved:") {
            Some(specifier) => {
                manifest.insert(format!("import \"{specifier}\" (no such file)"), "")
            }
            None => manifest.insert(path.clone(), format!("sha256:{digest}")),
        }
    }
    Ok(ExtensionSnapshot {
        digest: format!("sha256:{}", hex::encode(hasher.finalize())),
        files,
        manifest,
    })
}

/// How oxc reads an extension file: a module, TypeScript or JavaScript by its suffix, never JSX
/// (which Boa cannot run, and whose text the nesting scan does not read).
pub fn source_type_of(path: &Path) -> SourceType {
    SourceType::from_path(path)
        .unwrap_or_default()
        .with_module(true)
        .with_jsx(false)
}

/// The relative module specifiers `source` imports or re-exports (static, and dynamic imports
/// of a string literal), parsed behind the guards of [`parse_guard`].
///
/// # Errors
/// When the file is too large or nests too deep to parse safely, or the parser failed.
fn imports_of(path: &Path, source: &str) -> Result<Vec<String>, String> {
    parse_guard::check_source(source)
        .map_err(|problem| parse_guard::located(path, source, problem))?;
    parse_guard::on_parse_thread(path, || parsed_imports(path, source))
}

fn parsed_imports(path: &Path, source: &str) -> Vec<String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type_of(path)).parse();
    relative_imports(&parsed.module_record, source)
}

/// The relative specifiers a parsed module imports or re-exports, static or by a dynamic import
/// of a string literal, sorted and without repeats: the edges of the graph the trust digest
/// covers. Shared with the stripper, which parses each file once for both.
pub fn relative_imports(record: &ModuleRecord<'_>, source: &str) -> Vec<String> {
    let mut specifiers: Vec<String> = record
        .requested_modules
        .keys()
        .map(|specifier| specifier.to_string())
        .collect();
    for dynamic in &record.dynamic_imports {
        let text = dynamic.module_request.source_text(source).trim();
        let unquoted = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .or_else(|| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')));
        if let Some(specifier) = unquoted {
            specifiers.push(specifier.to_string());
        }
    }
    specifiers.retain(|specifier| specifier.starts_with("./") || specifier.starts_with("../"));
    specifiers.sort();
    specifiers.dedup();
    specifiers
}

/// The TypeScript file a JavaScript suffix stands for in an import, as `tsc`'s `NodeNext`
/// resolution has authors write it (`./util.js` for `util.ts`), and as tsx, Bun and Deno resolve
/// it. `.jsx` has no twin: extensions are never JSX.
const TYPESCRIPT_TWINS: &[(&str, &str)] = &[("js", "ts"), ("mjs", "mts"), ("cjs", "cts")];

/// The files a relative import may name, in the order they are tried, where `base` is the
/// importer's folder joined with the specifier: as written; then its TypeScript twin when it
/// ends in `.js`, `.mjs` or `.cjs` (so a real JavaScript file wins over its twin); then with each
/// extension suffix added. The trust digest and the loader both take the first that exists.
pub fn import_candidates(base: &Path) -> Vec<PathBuf> {
    let mut candidates = vec![base.to_path_buf()];
    if let Some(twin) = typescript_twin(base) {
        candidates.push(twin);
    }
    for suffix in EXTENSION_SUFFIXES {
        let mut with_suffix = base.as_os_str().to_os_string();
        with_suffix.push(".");
        with_suffix.push(suffix);
        candidates.push(PathBuf::from(with_suffix));
    }
    candidates
}

/// `util.ts` for `util.js`, `util.mts` for `util.mjs`, `util.cts` for `util.cjs`; else `None`.
pub fn typescript_twin(path: &Path) -> Option<PathBuf> {
    let suffix = path.extension()?.to_str()?;
    let (_, twin) = TYPESCRIPT_TWINS.iter().find(|(js, _)| *js == suffix)?;
    Some(path.with_extension(twin))
}

/// Resolves a relative specifier to a file inside `root`: the first of [`import_candidates`]
/// that exists, canonical. `None` when there is none, or when it leads out of `root` (through
/// `..` or a link): the loader refuses that import, and the digest records it as unresolved.
pub fn resolve(root: &Path, importer: &Path, specifier: &str) -> Option<PathBuf> {
    let base = importer.parent()?.join(specifier);
    let root = root.canonicalize().ok()?;
    let found = import_candidates(&base)
        .into_iter()
        .find(|candidate| candidate.is_file())?
        .canonicalize()
        .ok()?;
    found.starts_with(&root).then_some(found)
}

/// Reads a file of at most `cap` bytes; a larger one (a sparse multi-gigabyte file, a link to
/// one) fails alone instead of being read whole into memory first.
///
/// # Errors
/// A one-line description naming the file.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "{} is larger than {} MiB; earshot does not read it",
            path.display(),
            cap >> 20
        ));
    }
    Ok(bytes)
}
