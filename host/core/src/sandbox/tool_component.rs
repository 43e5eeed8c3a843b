//! Third-party tool components (the `tool-provider` world), each in its own sandbox.

use parking_lot::Mutex;

use serde_json::{Value, json};

use super::bindings::tool_provider::ToolProvider;
use super::bindings::tool_provider::earshot::plugin::types as wit;
use super::bindings::tool_provider_v1::ToolProvider as ToolProviderV1;
use super::cache::{CacheOutcome, ComponentCache};
use super::engine::SandboxEngine;
use super::limits::SandboxLimits;
use super::runner::Runner;
use crate::sandbox_error::SandboxError;

/// A tool as the component described it (names are not yet namespaced or checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentTool {
    /// The tool's name inside the component.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input schema, as JSON text.
    pub input_schema: String,
    /// Whether the component says it only reads.
    pub read_only: bool,
}

/// What a component tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentOutput {
    /// Text for the model.
    pub output: String,
    /// The tool reported failure.
    pub is_error: bool,
    /// A title for the user's display.
    pub title: Option<String>,
    /// The blocks after `output`, as MCP content blocks (JSON), unchecked (contract 0.2.0).
    pub content: Vec<Value>,
    /// The structured content, as the JSON text the component sent (contract 0.2.0).
    pub structured_content: Option<String>,
}

/// The component's runner, for the contract version it implements.
enum VersionedRunner {
    /// `earshot:plugin/tool-provider@0.2.0`.
    Current(Runner<ToolProvider>),
    /// `earshot:plugin/tool-provider@0.1.0`: text results only.
    V1(Runner<ToolProviderV1>),
}

/// A loaded tool component: its tools, and a sandbox to call them in.
///
/// This type runs what it is asked to run. Only the host's dispatch, after the gate has allowed
/// the call and the validator has accepted the input, may call [`ToolComponent::call`].
pub struct ToolComponent {
    name: String,
    tools: Vec<ComponentTool>,
    runner: Mutex<VersionedRunner>,
    readiness: CacheOutcome,
}

impl ToolComponent {
    /// Compiles (or loads from `cache`) `bytes`, checks it implements `tool-provider`, and asks
    /// it for its tools.
    ///
    /// # Errors
    /// [`SandboxError::Compile`] for bytes that are not a component, [`SandboxError::WrongShape`]
    /// for a component of another world or contract version, or the failure of `list-tools`.
    pub fn load(
        engine: &SandboxEngine,
        cache: &ComponentCache,
        name: &str,
        bytes: &[u8],
        limits: SandboxLimits,
    ) -> Result<Self, SandboxError> {
        let sha256 = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes));
        Self::load_with_digest(engine, cache, name, bytes, &sha256, limits)
    }

    /// As [`ToolComponent::load`], for a caller that already has the hex SHA-256 of `bytes`
    /// (the loader computes it for the trust check; hashing once is enough).
    ///
    /// # Errors
    /// As [`ToolComponent::load`].
    pub fn load_with_digest(
        engine: &SandboxEngine,
        cache: &ComponentCache,
        name: &str,
        bytes: &[u8],
        sha256: &str,
        limits: SandboxLimits,
    ) -> Result<Self, SandboxError> {
        let (component, readiness) =
            cache.load_with_precompiled(engine, name, bytes, sha256, None)?;
        let (runner, tools) = match Runner::<ToolProvider>::new(engine, name, &component, limits) {
            Ok(mut runner) => {
                let specs = runner
                    .call(|world, store| world.earshot_plugin_tools().call_list_tools(store))?;
                let tools = specs
                    .into_iter()
                    .map(|spec| ComponentTool {
                        name: spec.name,
                        description: spec.description,
                        input_schema: spec.input_schema,
                        read_only: spec.read_only,
                    })
                    .collect();
                (VersionedRunner::Current(runner), tools)
            }
            Err(SandboxError::WrongShape { .. }) => {
                let mut runner = Runner::<ToolProviderV1>::new(engine, name, &component, limits)
                    .map_err(|error| match error {
                        SandboxError::WrongShape {
                            component, reason, ..
                        } => SandboxError::WrongShape {
                            component,
                            expected: SUPPORTED_WORLDS.to_string(),
                            reason,
                        },
                        other => other,
                    })?;
                let specs = runner
                    .call(|world, store| world.earshot_plugin_tools().call_list_tools(store))?;
                let tools = specs
                    .into_iter()
                    .map(|spec| ComponentTool {
                        name: spec.name,
                        description: spec.description,
                        input_schema: spec.input_schema,
                        read_only: spec.read_only,
                    })
                    .collect();
                (VersionedRunner::V1(runner), tools)
            }
            Err(other) => return Err(other),
        };
        Ok(ToolComponent {
            name: name.to_string(),
            tools,
            runner: Mutex::new(runner),
            readiness,
        })
    }

    /// The component's name (its file stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools it contributes, as it described them.
    pub fn tools(&self) -> &[ComponentTool] {
        &self.tools
    }

    /// Whether loading hit the compiled-component cache.
    pub fn readiness(&self) -> CacheOutcome {
        self.readiness
    }

    /// Runs `tool` with `input_json` under the component's limits.
    ///
    /// # Errors
    /// A [`SandboxError`] when the call traps, panics, runs out of time or memory; the component
    /// answers its next call from a fresh store.
    pub fn call(&self, tool: &str, input_json: &str) -> Result<ComponentOutput, SandboxError> {
        let mut runner = self.runner.lock();
        match &mut *runner {
            VersionedRunner::Current(runner) => {
                let output = runner.call(|world, store| {
                    world
                        .earshot_plugin_tools()
                        .call_call_tool(store, tool, input_json)
                })?;
                Ok(ComponentOutput {
                    output: output.output,
                    is_error: output.is_error,
                    title: output.title,
                    content: output.content.into_iter().map(mcp_block).collect(),
                    structured_content: output.structured_content,
                })
            }
            VersionedRunner::V1(runner) => {
                let output = runner.call(|world, store| {
                    world
                        .earshot_plugin_tools()
                        .call_call_tool(store, tool, input_json)
                })?;
                Ok(ComponentOutput {
                    output: output.output,
                    is_error: output.is_error,
                    title: output.title,
                    content: Vec::new(),
                    structured_content: None,
                })
            }
        }
    }
}

/// The contract versions a tool component may implement, for the error when it implements none.
pub const SUPPORTED_WORLDS: &str = "earshot:plugin/tool-provider@0.2.0 (or @0.1.0)";

/// A contract block as an MCP content block, checked by the host afterwards like an extension's.
fn mcp_block(block: wit::ContentBlock) -> Value {
    let media = |kind: &str, media: wit::Media| json!({ "type": kind, "data": media.data_base64, "mimeType": media.mime_type });
    match block {
        wit::ContentBlock::Text(text) => json!({ "type": "text", "text": text }),
        wit::ContentBlock::Image(m) => media("image", m),
        wit::ContentBlock::Audio(m) => media("audio", m),
        wit::ContentBlock::ResourceLink(link) => json!({
            "type": "resource_link",
            "uri": link.uri,
            "name": link.name,
            "title": link.title,
            "description": link.description,
            "mimeType": link.mime_type,
        }),
        wit::ContentBlock::Resource(resource) => {
            let mut contents = json!({ "uri": resource.uri, "mimeType": resource.mime_type });
            match resource.contents {
                wit::ResourceContents::Text(text) => contents["text"] = text.into(),
                wit::ResourceContents::BlobBase64(blob) => contents["blob"] = blob.into(),
            }
            json!({ "type": "resource", "resource": contents })
        }
    }
}
