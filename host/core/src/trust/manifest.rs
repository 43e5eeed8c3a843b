//! What a trust record's digest was made of, part by part, so that "changed since you trusted
//! it" can name what changed (`server.py`, `lib/util.ts`, its definition) instead of sending the
//! user to diff a whole folder.
//!
//! A manifest is kept beside the digest in the record, signed with the same key over the digest
//! it explains, so a record edited by hand (or shipped) cannot point the user at the wrong file.
//! It only ever explains a refusal: the digest alone decides whether something loads.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The label of a server's or hook's definition (its command, arguments and environment) among
/// the files of its manifest.
pub const DEFINITION_PART: &str = "(its definition)";

/// The most changed parts an explanation names before it says how many more there are.
const NAMED_AT_MOST: usize = 3;

/// Each part of what a digest covers (a file by its path relative to the project or the
/// extension's folder, or [`DEFINITION_PART`]) with the digest of that part alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    parts: BTreeMap<String, String>,
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Manifest {
        Manifest::default()
    }

    /// Records `part` with its own digest (a later entry for the same part replaces it).
    pub fn insert(&mut self, part: impl Into<String>, digest: impl Into<String>) {
        self.parts.insert(part.into(), digest.into());
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Each part with its digest, in path order.
    pub fn parts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.parts
            .iter()
            .map(|(part, digest)| (part.as_str(), digest.as_str()))
    }

    /// The parts of `self` (now) that differ from `then` (when trusted), as one would say them:
    /// `` `lib/util.ts` ``, `` new `lib/x.ts` ``, `` without `old.ts` `` (no longer part of it: gone,
    /// or no longer imported), `its definition`; in
    /// path order, the definition first.
    pub fn changes_since(&self, then: &Manifest) -> Vec<String> {
        let shown = |part: &str| {
            if part == DEFINITION_PART {
                "its definition".to_string()
            } else {
                format!("`{part}`")
            }
        };
        let mut changes = Vec::new();
        for (part, digest) in &self.parts {
            match then.parts.get(part) {
                Some(before) if before == digest => {}
                Some(_) => changes.push(shown(part)),
                None => changes.push(format!("new {}", shown(part))),
            }
        }
        for part in then.parts.keys() {
            if !self.parts.contains_key(part) {
                changes.push(format!("without {}", shown(part)));
            }
        }
        changes
    }

    /// `sha256:<hex>` over every part and its digest: what the record's manifest signature binds.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for (part, digest) in &self.parts {
            hasher.update(part.as_bytes());
            hasher.update([0]);
            hasher.update(digest.as_bytes());
            hasher.update([b'\n']);
        }
        format!("sha256:{}", hex::encode(hasher.finalize()))
    }

    /// The manifest as a record stores it: `{ "part": "digest", ... }`.
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.parts
                .iter()
                .map(|(part, digest)| (part.clone(), Value::String(digest.clone())))
                .collect(),
        )
    }

    /// Reads a stored manifest; `None` when it is not an object of strings.
    pub fn from_json(value: &Value) -> Option<Manifest> {
        let mut manifest = Manifest::new();
        for (part, digest) in value.as_object()? {
            manifest.insert(part.clone(), digest.as_str()?);
        }
        Some(manifest)
    }
}

/// The string a record's manifest signature is made over: the digest it explains and the
/// manifest's own digest, so a manifest cannot be moved to another record or another digest.
pub(super) fn signed_manifest_text(digest: &str, manifest: &Manifest) -> String {
    format!("files:{digest}:{}", manifest.digest())
}

/// The changes of [`Manifest::changes_since`] in one phrase: at most three named, then how
/// many more (`` `a`, new `b`, without `c` and 2 more ``).
pub(super) fn describe_changes(changes: &[String]) -> String {
    let named = changes[..changes.len().min(NAMED_AT_MOST)].join(", ");
    match changes.len().saturating_sub(NAMED_AT_MOST) {
        0 => named,
        rest => format!("{named} and {rest} more"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(parts: &[(&str, &str)]) -> Manifest {
        let mut manifest = Manifest::new();
        for (part, digest) in parts {
            manifest.insert(*part, *digest);
        }
        manifest
    }

    #[test]
    fn names_changed_new_and_removed_parts_in_path_order() {
        let then = manifest(&[("a.ts", "1"), ("b.ts", "2"), ("old.ts", "3")]);
        let now = manifest(&[("a.ts", "1"), ("b.ts", "9"), ("c.ts", "4")]);
        assert_eq!(
            now.changes_since(&then),
            ["`b.ts`", "new `c.ts`", "without `old.ts`"]
        );
        let defined = manifest(&[(DEFINITION_PART, "1"), ("srv.py", "2")]);
        let mut edited = defined.clone();
        edited.insert(DEFINITION_PART, "3");
        assert_eq!(edited.changes_since(&defined), ["its definition"]);
        assert!(then.changes_since(&then).is_empty());
    }

    #[test]
    fn describes_one_two_and_many_changes() {
        let changes = |n: usize| (0..n).map(|i| format!("f{i}")).collect::<Vec<_>>();
        assert_eq!(describe_changes(&changes(1)), "f0");
        assert_eq!(describe_changes(&changes(3)), "f0, f1, f2");
        assert_eq!(describe_changes(&changes(5)), "f0, f1, f2 and 2 more");
    }

    #[test]
    fn round_trips_through_json_and_refuses_other_shapes() {
        let one = manifest(&[("a.ts", "sha256:1"), (DEFINITION_PART, "hmac:2")]);
        assert_eq!(Manifest::from_json(&one.to_json()), Some(one.clone()));
        assert_eq!(Manifest::from_json(&serde_json::json!({"a": 1})), None);
        assert_eq!(Manifest::from_json(&serde_json::json!([])), None);
        assert_ne!(one.digest(), manifest(&[("a.ts", "sha256:1")]).digest());
    }
}
