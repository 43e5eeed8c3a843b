//! Trusting a project's skill or command: the signed record names the digest of every file it
//! consists of (a skill's whole folder, a command's file), so any change lapses it. The records,
//! keys and signatures are those of servers, extensions and hooks (`crate::trust`).

use crate::settings::Settings;
use crate::trust::{RecordError, record_trust, remove_trust};

use super::item::{ItemKind, ItemOrigin};
use super::library::Library;

/// Why `earshot skills|commands trust` did nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ItemTrustError {
    /// No project item of that name was found (or it did not load).
    #[error("{0}")]
    NotFound(String),
    /// The record could not be written.
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// Trusts the project's `kind` named `name` as it is now; returns its digest. With `reviewed`
/// (the digest `show` printed), only if it is still exactly that. Only a project item needs (or
/// takes) a record: the user's own load as they are.
///
/// # Errors
/// [`ItemTrustError::NotFound`] saying what is there instead (a problem at `file:line`, only a
/// user item of that name), or the record's error.
pub fn trust_item(
    settings: &Settings,
    kind: ItemKind,
    name: &str,
    reviewed: Option<&str>,
) -> Result<String, ItemTrustError> {
    let library = Library::load(settings);
    let name = name.strip_prefix('/').unwrap_or(name);
    let name = name
        .strip_prefix(super::names::PROJECT_PREFIX)
        .unwrap_or(name);
    let found = library
        .items()
        .iter()
        .find(|item| item.kind == kind && item.origin == ItemOrigin::Project && item.name == name);
    let Some(item) = found else {
        return Err(ItemTrustError::NotFound(not_found(&library, kind, name)));
    };
    if let Some(reviewed) = reviewed
        && reviewed != item.digest
    {
        return Err(ItemTrustError::NotFound(format!(
            "the project's {} \"{}\" changed since you reviewed it (it is now {}); review it again with `earshot {} show {}`",
            kind.as_str(),
            item.name,
            item.digest,
            kind.noun_plural(),
            item.name
        )));
    }
    record_trust(settings, kind.trust_kind(), &item.name, &item.digest)?;
    Ok(item.digest.clone())
}

/// Removes the trust record of the project's `kind` named `name`; returns whether there was one.
///
/// # Errors
/// The record's error.
pub fn untrust_item(settings: &Settings, kind: ItemKind, name: &str) -> Result<bool, RecordError> {
    let name = name.strip_prefix('/').unwrap_or(name);
    let name = name
        .strip_prefix(super::names::PROJECT_PREFIX)
        .unwrap_or(name);
    remove_trust(settings, kind.trust_kind(), name)
}

/// Why there is nothing to trust by that name: a problem that kept it from loading, a user item
/// (which needs no trust), or nothing at all (with the names there are).
fn not_found(library: &Library, kind: ItemKind, name: &str) -> String {
    let noun = kind.as_str();
    if let Some(problem) = library.problems().iter().find(|problem| {
        problem.path.iter().any(|part| {
            part.to_str()
                .is_some_and(|part| part == name || part.strip_suffix(".md") == Some(name))
        })
    }) {
        return format!("the project's {noun} \"{name}\" did not load: {problem}");
    }
    if library
        .items()
        .iter()
        .any(|item| item.kind == kind && item.name == name)
    {
        return format!("\"{name}\" is your own {noun}; only a project's {noun} needs trust");
    }
    let names: Vec<&str> = library
        .items()
        .iter()
        .filter(|item| item.kind == kind && item.origin == ItemOrigin::Project)
        .map(|item| item.name.as_str())
        .collect();
    if names.is_empty() {
        format!("the project has no {noun} \"{name}\"")
    } else {
        format!(
            "the project has no {noun} \"{name}\"; its {noun}s: {}",
            names.join(", ")
        )
    }
}
