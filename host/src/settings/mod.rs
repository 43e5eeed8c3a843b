//! Settings: the user file, the project's checked-in file, and the project's local file, loaded
//! in layers; finding the project; and safe edits.
//!
//! | layer   | file                                  | owned by the user? |
//! |---------|---------------------------------------|--------------------|
//! | user    | `<config dir>/settings.json`          | yes                |
//! | project | `.earshot/settings.json` (checked in) | no: the repository chose it |
//! | local   | `.earshot/settings.local.json`        | yes (never committed) |
//!
//! Only files the user owns can grant permissions or trust.

mod edit;
mod layers;
mod project;

pub use edit::{EditError, edit_settings};
pub use layers::{Layer, Settings, SettingsFile, SettingsProblem};
pub use project::{ProjectPaths, find_project_root};
