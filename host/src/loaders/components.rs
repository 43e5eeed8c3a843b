//! The component loader: trusted `.wasm` tool components into the registry.

use std::sync::Arc;

use crate::names::{SourceKind, ToolId, check_tool_name};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::sandbox::{
    ComponentCache, ComponentRunner, SandboxEngine, SandboxLimits, SchemaValidator, ToolComponent,
};
use crate::settings::Settings;
use crate::sources::{FoundFile, admission, find_components, is_shadowed};
use crate::trust::digest_of;

/// Loads every component the user may load (their own, and trusted project ones) and
/// registers its tools. Everything that goes wrong is reported in `registry` and costs only that
/// component (or that tool).
pub fn load_components(
    settings: &Settings,
    engine: &SandboxEngine,
    cache: &ComponentCache,
    validator: &SchemaValidator,
    limits: SandboxLimits,
    registry: &mut ToolRegistry,
) {
    let found = find_components(settings);
    for file in &found {
        if is_shadowed(&found, file) {
            registry.report(
                SourceKind::Plugin,
                &file.name,
                format!(
                    "{} is shadowed by your own plugin of the same name, which is used",
                    file.path.display()
                ),
            );
            continue;
        }
        if let Err(message) = load_one(settings, engine, cache, validator, limits, file, registry) {
            registry.report(SourceKind::Plugin, &file.name, message);
        }
    }
}

fn load_one(
    settings: &Settings,
    engine: &SandboxEngine,
    cache: &ComponentCache,
    validator: &SchemaValidator,
    limits: SandboxLimits,
    file: &FoundFile,
    registry: &mut ToolRegistry,
) -> Result<(), String> {
    if let Some(problem) = &file.name_problem {
        return Err(format!("not loaded: invalid name: {problem}"));
    }
    let bytes = crate::sources::read_capped(&file.path, crate::sources::MAX_COMPONENT_BYTES)?;
    // Trust is checked against the very bytes that will be compiled.
    let digest = digest_of(&bytes);
    let trust = admission(
        settings,
        SourceKind::Plugin,
        &file.name,
        file.scope,
        &digest,
        None,
    );
    if !trust.is_trusted() {
        return Err(format!(
            "not loaded: {}",
            trust.explain(SourceKind::Plugin, &file.name)
        ));
    }
    let sha256 = digest.strip_prefix("sha256:").unwrap_or(&digest);
    let component =
        ToolComponent::load_with_digest(engine, cache, &file.name, &bytes, sha256, limits)
            .map_err(|error| error.to_string())?;
    let component = Arc::new(component);
    let mut seen = Vec::new();
    for (index, tool) in component.tools().iter().enumerate() {
        if let Err(error) = check_tool_name(&tool.name) {
            registry.report(
                SourceKind::Plugin,
                &file.name,
                format!("tool {index} skipped: invalid name: {error}"),
            );
            continue;
        }
        if seen.contains(&tool.name) {
            registry.report(
                SourceKind::Plugin,
                &file.name,
                format!(
                    "tool \"{}\" is listed twice; the second is skipped",
                    tool.name
                ),
            );
            continue;
        }
        seen.push(tool.name.clone());
        let compiled = match validator.prepare(&tool.input_schema) {
            Ok(compiled) => compiled,
            Err(error) => {
                registry.report(
                    SourceKind::Plugin,
                    &file.name,
                    format!(
                        "tool \"{}\" skipped: its input schema is rejected: {error}",
                        tool.name
                    ),
                );
                continue;
            }
        };
        let id = ToolId::new(SourceKind::Plugin, &file.name, &tool.name)
            .expect("both names were checked");
        registry.register(RegisteredTool {
            model_name: id.model_name(),
            id,
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            read_only: tool.read_only,
            compiled_schema: Arc::new(compiled),
            runner: Arc::new(ComponentRunner::new(component.clone())),
        });
    }
    Ok(())
}
