//! Component files: `.earshot/plugins/*.wasm` (project) and `plugins/*.wasm` (user).

use std::path::Path;

use crate::names::{SourceKind, check_source_name};
use crate::settings::Settings;

use super::{FoundFile, Scope};

/// Every `.wasm` file directly in the user and project plugin folders, user first.
pub fn find_components(settings: &Settings) -> Vec<FoundFile> {
    let mut found = Vec::new();
    if let Some(dir) = &settings.user_config_dir {
        scan(&dir.join("plugins"), Scope::User, &mut found);
    }
    if let Some(project) = &settings.project {
        scan(&project.plugins_dir(), Scope::Project, &mut found);
    }
    found
}

/// The component called `name`, preferring the user's own over the project's.
pub fn find_component(settings: &Settings, name: &str) -> Option<FoundFile> {
    find_components(settings)
        .into_iter()
        .find(|file| file.name == name)
}

fn scan(dir: &Path, scope: Scope, into: &mut Vec<FoundFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "wasm"))
        .collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        into.push(FoundFile {
            kind: SourceKind::Plugin,
            name_problem: check_source_name(&name)
                .err()
                .map(|error| error.to_string()),
            name,
            scope,
            path,
        });
    }
}
