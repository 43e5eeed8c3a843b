//! Component files: `.earshot/plugins/*.wasm` (project) and `plugins/*.wasm` (user).

use crate::names::SourceKind;
use crate::settings::Settings;

use super::{FoundFile, Scope, scan_folder};

/// Every `.wasm` file directly in the user and project plugin folders, user first.
pub fn find_components(settings: &Settings) -> Vec<FoundFile> {
    let mut found = Vec::new();
    if let Some(dir) = &settings.user_config_dir {
        scan_folder(
            &dir.join("plugins"),
            Scope::User,
            SourceKind::Plugin,
            &["wasm"],
            &mut found,
        );
    }
    if let Some(project) = &settings.project {
        scan_folder(
            &project.plugins_dir(),
            Scope::Project,
            SourceKind::Plugin,
            &["wasm"],
            &mut found,
        );
    }
    found
}

/// The component called `name`, preferring the user's own over the project's.
pub fn find_component(settings: &Settings, name: &str) -> Option<FoundFile> {
    find_components(settings)
        .into_iter()
        .find(|file| file.name == name)
}
