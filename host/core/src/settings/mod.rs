//! Settings: the user file, the project's checked-in file, and the project's local file, loaded
//! in layers; finding the project; and safe edits.
//!
//! | layer   | file                                  | owned by the user? |
//! |---------|---------------------------------------|--------------------|
//! | user    | `<config dir>/settings.json`          | yes                |
//! | project | `.earshot/settings.json` (checked in) | no: the repository chose it |
//! | local   | `.earshot/settings.local.json`        | yes (never committed) |
//!
//! Only files the user owns can grant permissions or trust, and in the local file (which a download
//! or a submodule can ship) only what earshot wrote and signed for this user grants.

mod edit;
mod git_index;
mod ignore_file;
mod layers;
mod no_links;
mod project;
mod shape;
mod strict_json;

pub use edit::{EditError, edit_project_settings, edit_settings};
pub use ignore_file::{
    IgnoreError, ensure_local_files_ignored, not_ignored_because,
    written_by_earshot as ignore_line_written_by_earshot,
};
pub use layers::{Layer, Settings, SettingsFile, SettingsProblem};
pub use no_links::{
    NoLinkError, open_dir_no_follow, open_lock_no_follow, read_text_no_follow, refuse_links_below,
};
pub use project::{ProjectPaths, find_project_root};
pub use shape::PERMISSION_KEYS;
pub(crate) use shape::{edit_distance, is_near_hooks as reads_as_hooks};
pub use strict_json::{StrictJsonError, from_str_refusing_duplicates};
