//! What each loader would load, found without loading it: MCP server entries, extension files
//! and component files, in each scope, with the digest a trust record binds to.
//!
//! Finding sources never starts a process, imports a module or instantiates a component, so
//! `list` commands are safe on an untrusted repository.

mod components;
mod extensions;
pub mod parse_guard;

pub use components::{find_component, find_components};
pub use extensions::{import_candidates, relative_imports, source_type_of, typescript_twin};
/// The largest component file read: a sparse multi-gigabyte `.wasm` fails alone, never read whole.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

pub use extensions::read_capped;
pub use extensions::{
    EXTENSION_SUFFIXES, ExtensionSnapshot, extension_digest, extension_snapshot,
    extension_snapshot_with, find_extension, find_extensions,
};

use std::path::{Path, PathBuf};

use crate::names::{SourceKind, check_source_name};
use crate::settings::Layer;
use crate::settings::Settings;
use crate::trust::{Manifest, TrustJudge, TrustState};

/// Where a source was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The user's own config dir: the user's own code, loads without trust.
    User,
    /// The project, chosen by the repository: inert until trusted.
    Project,
    /// The project's local settings (MCP only): inside the project, so a download or submodule
    /// can ship it; a server there starts only when earshot wrote it for the user (a signed
    /// record, as for a project server).
    Local,
}

impl Scope {
    /// The scope of a settings layer.
    pub fn of_layer(layer: Layer) -> Scope {
        match layer {
            Layer::User => Scope::User,
            Layer::Project => Scope::Project,
            Layer::Local => Scope::Local,
        }
    }

    /// Whether a source in this scope needs the user's trust before it loads.
    pub fn needs_trust(self) -> bool {
        matches!(self, Scope::Project | Scope::Local)
    }

    /// `user`, `project` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

/// A file-based source (extension or component) found on disk.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FoundFile {
    /// Extension or plugin.
    pub kind: SourceKind,
    /// The file stem.
    pub name: String,
    /// Where it was found.
    pub scope: Scope,
    /// The file.
    pub path: PathBuf,
    /// Why the name is invalid, when it is.
    pub name_problem: Option<String>,
    /// The other files in the same folder with the same stem (`a.ts` beside `a.js`): the name
    /// is ambiguous, and none of them loads or can be trusted until only one is left.
    pub same_stem: Vec<PathBuf>,
}

impl FoundFile {
    /// Why this file cannot load under its name, whatever its trust: an invalid name, or a name
    /// that another file in the same folder also has. One line, saying what to do.
    pub fn name_refusal(&self) -> Option<String> {
        if let Some(problem) = &self.name_problem {
            return Some(format!("invalid name: {problem}"));
        }
        if self.same_stem.is_empty() {
            return None;
        }
        let mut paths: Vec<String> = std::iter::once(&self.path)
            .chain(&self.same_stem)
            .map(|path| path.display().to_string())
            .collect();
        paths.sort();
        let last = paths.pop().unwrap_or_default();
        let verb = if paths.len() == 1 { "both" } else { "all" };
        Some(format!(
            "ambiguous name: {} and {last} are {verb} {} \"{}\"; earshot loads none of them until you rename or remove all but one",
            paths.join(", "),
            self.kind.noun(),
            self.name
        ))
    }
}

/// Whether `file` is a project file that the user's own file of the same name (in `found`)
/// replaces: the user's is used, and the project's is reported.
pub fn is_shadowed(found: &[FoundFile], file: &FoundFile) -> bool {
    file.scope == Scope::Project
        && found
            .iter()
            .any(|other| other.scope == Scope::User && other.name == file.name)
}

/// Whether a found source may load: not needed for the user's own, else the trust state.
/// `manifest` says what `digest` is made of now, so that a change is named part by part.
pub fn admission(
    settings: &Settings,
    kind: SourceKind,
    name: &str,
    scope: Scope,
    digest: &str,
    manifest: Option<&Manifest>,
) -> TrustState {
    if scope.needs_trust() {
        TrustJudge::new(settings).judge_parts(kind, name, digest, manifest)
    } else {
        TrustState::Trusted
    }
}

/// Every file directly in `dir` whose suffix is one of `suffixes`, sorted, as sources of `kind`
/// named after their file stems (an invalid stem is kept, with its problem, to be reported).
fn scan_folder(
    dir: &Path,
    scope: Scope,
    kind: SourceKind,
    suffixes: &[&str],
    into: &mut Vec<FoundFile>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.is_file()
                && path
                    .extension()
                    .and_then(|ext| ext.to_str())
                    .is_some_and(|ext| suffixes.contains(&ext))
        })
        .collect();
    paths.sort();
    let stem = |path: &Path| {
        path.file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    for path in &paths {
        let name = stem(path);
        let same_stem = paths
            .iter()
            .filter(|other| *other != path && stem(other) == name)
            .cloned()
            .collect();
        into.push(FoundFile {
            kind,
            name_problem: check_source_name(&name)
                .err()
                .map(|error| error.to_string()),
            name,
            scope,
            path: path.clone(),
            same_stem,
        });
    }
}
