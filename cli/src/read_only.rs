//! What a loaded extension or component tool declares about itself: whether it is read-only,
//! for `permissions check` to show the verdict the gate gives the real call.

#[cfg(feature = "js")]
use earshot_host::loaders::extensions::{limits_from_settings, load_all};
use earshot_host::names::SourceKind;
#[cfg(feature = "js")]
use earshot_host::sandbox::SchemaValidator;
use earshot_host::sandbox::{ComponentCache, SandboxEngine, SandboxLimits, ToolComponent};
use earshot_host::sources::{admission, find_component};

use super::Context;
use super::files::file_digest;

/// Whether `source`'s tool `tool` (an extension or a component, loaded as a session loads it:
/// never when it is not trusted) declares itself read-only. `None` when it does not load, has no
/// such tool, or is of another kind.
pub(crate) fn declared_read_only(
    context: &Context,
    kind: SourceKind,
    source: &str,
    tool: &str,
) -> Option<bool> {
    match kind {
        #[cfg(feature = "js")]
        SourceKind::Extension => {
            let validator =
                SchemaValidator::new(&SandboxEngine::shared(), &ComponentCache::user()).ok()?;
            let limits = limits_from_settings(&context.settings);
            load_all(&context.settings, &validator, limits)
                .into_iter()
                .filter(|outcome| outcome.file.name == source)
                .find_map(|outcome| {
                    let loaded = outcome.result.ok()?;
                    loaded
                        .tools
                        .iter()
                        .find(|(spec, _)| spec.name == tool)
                        .map(|(spec, _)| spec.read_only)
                })
        }
        SourceKind::Plugin => {
            let file = find_component(&context.settings, source)?;
            let hashed = file_digest(&file).ok()?;
            let state = admission(
                &context.settings,
                file.kind,
                &file.name,
                file.scope,
                &hashed.digest,
                hashed.manifest.as_ref(),
            );
            if !state.is_trusted() {
                return None;
            }
            let sha256 = hashed
                .digest
                .strip_prefix("sha256:")
                .unwrap_or(&hashed.digest);
            let component = ToolComponent::load_with_digest(
                &SandboxEngine::shared(),
                &ComponentCache::user(),
                &file.name,
                hashed.bytes.as_deref().unwrap_or_default(),
                sha256,
                SandboxLimits::TOOL_COMPONENT,
            )
            .ok()?;
            component
                .tools()
                .iter()
                .find(|spec| spec.name == tool)
                .map(|spec| spec.read_only)
        }
        SourceKind::Mcp => None,
        // Without the JS runtime no extension loads, so none declares anything.
        #[cfg(not(feature = "js"))]
        SourceKind::Extension => None,
    }
}
