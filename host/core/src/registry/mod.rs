//! The tool registry: one namespace for every source's tools.
//!
//! Every tool is registered under its [`ToolId`] (`<source>__<tool>` plus its kind). Two sources
//! producing the same namespaced name are both reported and neither is registered. A tool a
//! model API would refuse by name gets a stable alias; rules still match the full identity.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::names::{SourceKind, ToolId};
use crate::runner::ToolRunner;
use crate::sandbox::CompiledSchema;

/// One registered tool.
#[derive(Clone)]
pub struct RegisteredTool {
    /// Its identity; rules match this.
    pub id: ToolId,
    /// The name a model sees (the namespaced name, or a stable alias).
    pub model_name: String,
    /// What it does.
    pub description: String,
    /// Its input schema, as JSON text.
    pub input_schema: String,
    /// The source's read-only claim (the gate decides whether it is honoured).
    pub read_only: bool,
    /// The input schema compiled in the validator sandbox.
    pub compiled_schema: Arc<CompiledSchema>,
    /// What runs it (its source kind's runtime, behind the one seam).
    pub runner: Arc<dyn ToolRunner>,
}

/// A problem found while registering, reported and never silently resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryProblem {
    /// The kind of the source that had the problem.
    pub kind: SourceKind,
    /// The source's name.
    pub source: String,
    /// What went wrong.
    pub message: String,
}

/// Every tool in the session, by namespaced name.
#[derive(Default)]
pub struct ToolRegistry {
    /// Shared, so a call takes its entry without copying it.
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    /// Names claimed by more than one source: (name, the sources that claimed it).
    collisions: BTreeMap<String, Vec<String>>,
    problems: Vec<RegistryProblem>,
    /// How many of `tools` are MCP tools: every call asks whether `tool_search` is active,
    /// which must not walk 3,000 entries each time.
    mcp_tools: usize,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Registers `tool`, unless another source already produced the same namespaced name (or
    /// the same model-facing alias), in which case neither is kept and both are reported.
    pub fn register(&mut self, tool: RegisteredTool) {
        let name = tool.id.namespaced();
        let who = |t: &RegisteredTool| claimant(t.id.kind(), t.id.source());
        if let Some(claimants) = self.collisions.get_mut(&name) {
            claimants.push(who(&tool));
            return;
        }
        let clash = self
            .tools
            .values()
            .find(|existing| {
                existing.id.namespaced() == name || existing.model_name == tool.model_name
            })
            .map(|existing| existing.id.namespaced());
        if let Some(existing_name) = clash {
            let existing = self.tools.remove(&existing_name).expect("found above");
            if existing.id.kind() == SourceKind::Mcp {
                self.mcp_tools -= 1;
            }
            self.collisions
                .insert(name, vec![who(&existing), who(&tool)]);
            return;
        }
        if tool.id.kind() == SourceKind::Mcp {
            self.mcp_tools += 1;
        }
        self.tools.insert(name, Arc::new(tool));
    }

    /// Removes every tool of one source (before registering its new list), and its problems.
    pub fn remove_source(&mut self, kind: SourceKind, source: &str) {
        let before = self.tools.len();
        self.tools
            .retain(|_, tool| !(tool.id.kind() == kind && tool.id.source() == source));
        if kind == SourceKind::Mcp {
            self.mcp_tools -= before - self.tools.len();
        }
        self.problems
            .retain(|problem| !(problem.kind == kind && problem.source == source));
        let gone = claimant(kind, source);
        for claimants in self.collisions.values_mut() {
            claimants.retain(|who| *who != gone);
        }
        self.collisions.retain(|_, claimants| !claimants.is_empty());
    }

    /// Records a problem with a source.
    pub fn report(&mut self, kind: SourceKind, source: &str, message: impl Into<String>) {
        self.problems.push(RegistryProblem {
            kind,
            source: source.to_string(),
            message: message.into(),
        });
    }

    /// Every registered tool, sorted by namespaced name.
    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values().map(|tool| &**tool)
    }

    /// How many MCP tools are registered (kept as tools come and go, not counted per call).
    pub fn mcp_tool_count(&self) -> usize {
        // Every test that calls a tool checks the kept count against a walk.
        debug_assert_eq!(
            self.mcp_tools,
            self.tools
                .values()
                .filter(|tool| tool.id.kind() == SourceKind::Mcp)
                .count()
        );
        self.mcp_tools
    }

    /// The tool a model or user names: by namespaced name or by model-facing alias.
    pub fn find(&self, name: &str) -> Option<&RegisteredTool> {
        self.find_shared(name).map(|tool| &**tool)
    }

    /// [`ToolRegistry::find`], as a shared entry a call can hold without the registry's lock.
    pub fn find_shared(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools
            .get(name)
            .or_else(|| self.tools.values().find(|tool| tool.model_name == name))
    }

    /// Every problem, including collisions, as one line each.
    pub fn problems(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .problems
            .iter()
            .map(|problem| {
                format!(
                    "{} \"{}\": {}",
                    problem.kind.noun(),
                    problem.source,
                    problem.message
                )
            })
            .collect();
        for (name, claimants) in &self.collisions {
            lines.push(format!(
                "{name} is contributed by {}; neither is loaded until one is renamed",
                claimants.join(" and ")
            ));
        }
        lines
    }
}

/// How a collision names one of its sources: `server github`.
fn claimant(kind: SourceKind, source: &str) -> String {
    format!("{} {source}", kind.noun())
}
