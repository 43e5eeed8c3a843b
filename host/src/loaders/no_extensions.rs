//! Extensions in a build without the JS runtime (the `js` feature off): each extension the
//! settings would load is reported, by name, as one that this build cannot run, so that a user
//! sees why its tools are missing instead of an empty list.

use crate::names::SourceKind;
use crate::registry::ToolRegistry;
use crate::settings::Settings;
use crate::sources::find_extensions;

/// What a user sees for each extension in a build without the JS runtime.
pub const NO_JS_RUNTIME: &str = "not loaded: this build of earshot-host has no TypeScript/JavaScript runtime (built without its `js` feature); rebuild with the default features to run extensions";

/// Reports every extension the settings name as not loadable in this build.
pub fn load_extensions(settings: &Settings, registry: &mut ToolRegistry) {
    let mut reported = std::collections::HashSet::new();
    for file in find_extensions(settings) {
        if reported.insert(file.name.clone()) {
            registry.report(SourceKind::Extension, &file.name, NO_JS_RUNTIME.to_string());
        }
    }
}
