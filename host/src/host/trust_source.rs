//! Trusting a source by name in one call, with the digest computed exactly as the loaders check
//! it: an embedder (or the CLI) never re-implements a digest rule, so its records cannot silently
//! stop counting when a rule changes.

use crate::mcp::{digest_for_trust, read_servers};
use crate::names::SourceKind;
use crate::settings::{Layer, Settings};
use crate::sources::{
    MAX_COMPONENT_BYTES, extension_snapshot, find_component, find_extension, read_capped,
};

use crate::trust::{Manifest, digest_of, record_trust_parts};

/// Why a source could not be trusted: one line naming it and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TrustSourceError(String);

/// The digest a trust record for `kind` `name` binds to, as it is now: a component's bytes, an
/// extension's whole module graph, or a server's definition (with the project files it names).
///
/// # Errors
/// The source does not exist, cannot be read, or (a server) has an unusable definition.
pub fn current_digest(
    settings: &Settings,
    kind: SourceKind,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, TrustSourceError> {
    current_parts(settings, kind, name, env).map(|(digest, _)| digest)
}

/// [`current_digest`], with what it is made of part by part (none for a component, which is
/// one file).
fn current_parts(
    settings: &Settings,
    kind: SourceKind,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, Option<Manifest>), TrustSourceError> {
    let missing = || TrustSourceError(format!("there is no {} \"{name}\"", kind.noun()));
    match kind {
        SourceKind::Plugin => {
            let file = find_component(settings, name).ok_or_else(missing)?;
            read_capped(&file.path, MAX_COMPONENT_BYTES)
                .map(|bytes| (digest_of(&bytes), None))
                .map_err(TrustSourceError)
        }
        SourceKind::Extension => {
            let file = find_extension(settings, name).ok_or_else(missing)?;
            extension_snapshot(&file.path)
                .map(|snapshot| (snapshot.digest, Some(snapshot.manifest)))
                .map_err(TrustSourceError)
        }
        SourceKind::Mcp => {
            let entry = read_servers(settings, env)
                .into_iter()
                .find(|entry| entry.name == name && entry.layer != Layer::User)
                .ok_or_else(missing)?;
            digest_for_trust(settings, &entry, false)
                .map(|digest| (digest.value, Some(digest.manifest)))
                .map_err(TrustSourceError)
        }
    }
}

/// Trusts `kind` `name` in the settings' project as it is now (a change to it lapses the trust).
///
/// # Errors
/// As [`current_digest`], or the record could not be written.
pub fn trust_source(
    settings: &Settings,
    kind: SourceKind,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), TrustSourceError> {
    let (digest, manifest) = current_parts(settings, kind, name, env)?;
    record_trust_parts(settings, kind, name, &digest, manifest.as_ref())
        .map_err(|error| TrustSourceError(error.to_string()))
}
