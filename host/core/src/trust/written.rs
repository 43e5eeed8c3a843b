//! Records of what earshot wrote into the local settings file for the user
//! (`earshot mcp add -s local`), told apart from records `trust` made.
//!
//! A local-file server under the name of one of the user's own servers replaces it in that
//! project only when the user asked for exactly that: `mcp add -s local NAME`. Its record carries
//! a second signature, `written`, over a kind of its own (`mcp+written`), so a record that
//! `mcp trust` made (for a definition a download or submodule shipped) can never pass for one.

use std::path::Path;

use serde_json::Value;

use crate::names::SourceKind;
use crate::settings::{Layer, Settings};

use super::Manifest;
use super::key::TrustKey;
use super::record::{RecordError, signed_record, store_record};

/// The kind the `written` signature is made over.
fn written_kind(kind: SourceKind) -> String {
    format!("{}+written", kind.cli_noun())
}

/// Records that earshot wrote `kind`/`name` for the user as it is now (`digest`): a trust record
/// (it starts) that also proves earshot wrote it (see [`written_by_earshot`]). `manifest`, what
/// the digest is made of, lets a later change be named part by part.
///
/// # Errors
/// A [`RecordError`] when the key or the local file cannot be used.
pub fn record_written(
    settings: &Settings,
    kind: SourceKind,
    name: &str,
    digest: &str,
    manifest: Option<&Manifest>,
) -> Result<(), RecordError> {
    let mut record = signed_record(settings, kind.cli_noun(), name, Some(digest), manifest)?;
    let written = signed_record(settings, &written_kind(kind), name, Some(digest), None)?;
    if let (Some(record), Some(signature)) = (record.as_object_mut(), written.get("signature")) {
        record.insert("written".into(), signature.clone());
    }
    store_record(settings, kind, name, record)
}

/// Whether the local file holds a record, made by `earshot mcp add -s local` for this user in
/// this project, for exactly `digest`.
pub fn written_by_earshot(settings: &Settings, kind: SourceKind, name: &str, digest: &str) -> bool {
    if settings.local_file_refused() {
        return false;
    }
    let (Some(project), Some(Ok(Some(key)))) = (
        &settings.project,
        settings.user_config_dir.as_deref().map(TrustKey::load),
    ) else {
        return false;
    };
    let Some(record) = settings
        .file(Layer::Local)
        .and_then(|file| file.value.as_ref())
        .and_then(|value| value.get("trust")?.get(kind.cli_noun())?.get(name))
    else {
        return false;
    };
    let field = |key: &str| record.get(key).and_then(Value::as_str).unwrap_or_default();
    Path::new(field("project")) == project.root
        && field("digest") == digest
        && key.verify(
            &project.root,
            &written_kind(kind),
            name,
            digest,
            field("written"),
        )
}
