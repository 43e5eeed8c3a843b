//! Trust: code a repository chose stays inert until the user trusts it by name, and a trust
//! record counts only if this user made it, on this machine, for this project, for exactly what
//! is there now.
//!
//! A record lives in `.earshot/settings.local.json` under `trust.<kind>.<name>`:
//! `{ "digest": "sha256:…", "project": "/abs/project", "signature": "…" }`. The signature is
//! HMAC-SHA256, under a per-user key kept in the user config dir (mode 0600), over the
//! canonical project path, the kind, the name and the digest. So a record committed by a
//! repository, copied from another clone, or left over from before the thing changed does not
//! count, and [`TrustState`] says which of these it is.
//!
//! The same key signs the allow rules earshot writes to that file (`trust.allow.<rule>`), so an
//! allow rule a download or a submodule shipped there grants nothing (see [`allow_rule_signed`]).

mod grants;
mod key;
mod manifest;
mod record;
mod snapshot;
mod written;

pub use grants::{RuleFile, allow_rule_signed, write_rule};
pub use key::{CacheKey, KEY_FILE, TrustError, TrustKey};
pub use manifest::{DEFINITION_PART, Manifest};
pub use record::{
    RecordError, TrustJudge, TrustKind, TrustState, record_trust, record_trust_parts, remove_trust,
    trust_state,
};
pub use snapshot::{
    Launch, SNAPSHOTS_DIR, Snapshot, SnapshotError, exec_launch, shell_launch, snapshots_dir,
    take_for_run,
};
pub use written::{record_written, written_by_earshot};

use sha2::{Digest, Sha256};

/// The user's trust key, when there is a usable one: what every signed record and grant is
/// checked against (no key, or an unusable one, means nothing signed counts).
pub fn user_key(settings: &crate::settings::Settings) -> Option<TrustKey> {
    settings
        .user_config_dir
        .as_deref()
        .and_then(|dir| TrustKey::load(dir).ok().flatten())
}

/// `sha256:<hex>` of `bytes`: the digest format of trust records.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}
