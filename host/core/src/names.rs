//! Source names, namespaced tool names, and the model-facing alias for names a model API refuses.
//!
//! Every tool is `<source>__<tool>`. A source name (server, extension file stem, component stem)
//! is non-empty `[A-Za-z0-9_-]`, contains no `__`, and neither starts nor ends with `_`; otherwise
//! `gh_` + `__` + `x` would read as `gh` + `___x` and be matched by rules written for `gh`.

use std::fmt;

use sha2::{Digest, Sha256};

/// The most characters a model API accepts in a tool name.
pub const MODEL_NAME_LIMIT: usize = 64;

/// Where a tool comes from; decides the rule form (`Mcp(..)`, `Extension(..)`, `Plugin(..)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// An MCP server.
    Mcp,
    /// An in-process TypeScript/JavaScript extension.
    Extension,
    /// A sandboxed WebAssembly component.
    Plugin,
}

impl SourceKind {
    /// The rule keyword: `Mcp`, `Extension` or `Plugin`.
    pub fn rule_keyword(self) -> &'static str {
        match self {
            SourceKind::Mcp => "Mcp",
            SourceKind::Extension => "Extension",
            SourceKind::Plugin => "Plugin",
        }
    }

    /// The CLI noun: `mcp`, `extensions` or `plugins`.
    pub fn cli_noun(self) -> &'static str {
        match self {
            SourceKind::Mcp => "mcp",
            SourceKind::Extension => "extensions",
            SourceKind::Plugin => "plugins",
        }
    }

    /// How a user would call one of these: `server`, `extension`, `plugin`.
    pub fn noun(self) -> &'static str {
        match self {
            SourceKind::Mcp => "server",
            SourceKind::Extension => "extension",
            SourceKind::Plugin => "plugin",
        }
    }
}

/// Why a source or tool name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    #[error("the name is empty")]
    Empty,
    /// A character outside `[A-Za-z0-9_-]`.
    #[error("{0:?} contains {1:?}; only letters, digits, '_' and '-' are allowed")]
    BadCharacter(String, char),
    /// Contains `__`, the namespace separator.
    #[error("{0:?} contains \"__\", which separates a source from its tools")]
    DoubleUnderscore(String),
    /// Starts or ends with `_`, which would blur into the `__` separator.
    #[error("{0:?} starts or ends with '_', which would blur into the \"__\" separator")]
    EdgeUnderscore(String),
    /// A character no MCP tool name may contain (whitespace, control, non-ASCII, rule syntax).
    #[error("{0:?} contains {1:?}, which a tool name may not contain")]
    RefusedCharacter(String, char),
    /// Longer than an MCP tool name may be.
    #[error("the name starting {0:?} is longer than 128 characters")]
    TooLong(String),
}

/// Checks a source name (server, extension stem, component stem).
///
/// # Errors
/// The [`NameError`] saying what is wrong.
pub fn check_source_name(name: &str) -> Result<(), NameError> {
    check_name(name)
}

/// Checks a tool name inside its source. The same rules apply: a tool `_x` in source `gh` would
/// produce `gh___x`, which a rule for source `gh_` could match.
///
/// # Errors
/// The [`NameError`] saying what is wrong.
pub fn check_tool_name(name: &str) -> Result<(), NameError> {
    check_name(name)
}

/// The longest MCP tool name accepted (the MCP specification's limit).
pub const MCP_TOOL_NAME_LIMIT: usize = 128;

/// Checks a tool name an MCP server lists. MCP allows more than a model API does (dots, slashes,
/// long names): those are kept, and the model sees an alias. What is refused is what cannot be
/// a name at all: empty, too long, whitespace, control characters, or glob and rule syntax
/// (`*?[]{}(),\`), which would make a permission rule ambiguous.
///
/// # Errors
/// The [`NameError`] saying what is wrong.
pub fn check_mcp_tool_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.chars().count() > MCP_TOOL_NAME_LIMIT {
        return Err(NameError::TooLong(name.chars().take(40).collect()));
    }
    let refused = |c: char| {
        c.is_whitespace() || c.is_control() || !c.is_ascii() || "*?[]{}(),\\\"'`".contains(c)
    };
    if let Some(bad) = name.chars().find(|c| refused(*c)) {
        return Err(NameError::RefusedCharacter(name.to_string(), bad));
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(NameError::BadCharacter(name.to_string(), bad));
    }
    if name.contains("__") {
        return Err(NameError::DoubleUnderscore(name.to_string()));
    }
    if name.starts_with('_') || name.ends_with('_') {
        return Err(NameError::EdgeUnderscore(name.to_string()));
    }
    Ok(())
}

/// `<source>__<tool>`: the one spelling of a namespaced name, also for a pair that was never
/// checked as a [`ToolId`] (a direct caller's tool name).
pub fn namespaced(source: &str, tool: &str) -> String {
    format!("{source}__{tool}")
}

/// A tool's full identity: where it comes from and its namespaced name. Rules match this.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolId {
    kind: SourceKind,
    source: String,
    tool: String,
}

impl ToolId {
    /// Builds the identity of `tool` from `source`, checking both names.
    ///
    /// # Errors
    /// The [`NameError`] of whichever name is invalid.
    pub fn new(kind: SourceKind, source: &str, tool: &str) -> Result<ToolId, NameError> {
        check_source_name(source)?;
        check_tool_name(tool)?;
        Ok(ToolId {
            kind,
            source: source.to_string(),
            tool: tool.to_string(),
        })
    }

    /// The identity of tool `tool` of MCP server `server`: the server name is checked as every
    /// source name is, the tool name by [`check_mcp_tool_name`].
    ///
    /// # Errors
    /// The [`NameError`] of whichever name is invalid.
    pub fn mcp(server: &str, tool: &str) -> Result<ToolId, NameError> {
        check_source_name(server)?;
        check_mcp_tool_name(tool)?;
        Ok(ToolId {
            kind: SourceKind::Mcp,
            source: server.to_string(),
            tool: tool.to_string(),
        })
    }

    /// The source kind.
    pub fn kind(&self) -> SourceKind {
        self.kind
    }

    /// The source's name.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The tool's name inside its source.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// `<source>__<tool>`.
    pub fn namespaced(&self) -> String {
        namespaced(&self.source, &self.tool)
    }

    /// The rule that names exactly this tool: `Mcp(github__create_issue)`.
    pub fn rule(&self) -> String {
        format!("{}({})", self.kind.rule_keyword(), self.namespaced())
    }

    /// The name shown to a model: the namespaced name when a model API accepts it, otherwise a
    /// stable shortened alias (a prefix plus a hash of the full name).
    pub fn model_name(&self) -> String {
        model_facing_name(&self.namespaced())
    }
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}__{}", self.source, self.tool)
    }
}

/// `name` when a model API would accept it (at most 64 characters of `[A-Za-z0-9_-]`), else a
/// stable alias: the first 51 acceptable characters, `_`, and 12 hex digits of the name's SHA-256.
pub fn model_facing_name(name: &str) -> String {
    let acceptable = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.len() <= MODEL_NAME_LIMIT && name.chars().all(acceptable) {
        return name.to_string();
    }
    let prefix: String = name
        .chars()
        .map(|c| if acceptable(c) { c } else { '_' })
        .take(MODEL_NAME_LIMIT - 13)
        .collect();
    let digest = hex::encode(Sha256::digest(name.as_bytes()));
    format!("{prefix}_{}", &digest[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_names_that_could_blur_the_separator_are_refused() {
        assert_eq!(check_source_name("gh"), Ok(()));
        assert_eq!(check_source_name("my-server_2"), Ok(()));
        assert_eq!(
            check_source_name("gh_"),
            Err(NameError::EdgeUnderscore("gh_".into()))
        );
        assert_eq!(
            check_source_name("_gh"),
            Err(NameError::EdgeUnderscore("_gh".into()))
        );
        assert_eq!(
            check_source_name("g__h"),
            Err(NameError::DoubleUnderscore("g__h".into()))
        );
        assert_eq!(check_source_name(""), Err(NameError::Empty));
        assert_eq!(
            check_source_name("gh.x"),
            Err(NameError::BadCharacter("gh.x".into(), '.'))
        );
        assert_eq!(
            check_source_name("gh x"),
            Err(NameError::BadCharacter("gh x".into(), ' '))
        );
    }

    #[test]
    fn mcp_tool_names_allow_what_mcp_allows_and_refuse_rule_syntax() {
        assert_eq!(check_mcp_tool_name("dots.in.name"), Ok(()));
        assert_eq!(check_mcp_tool_name("a/b-c_d"), Ok(()));
        assert_eq!(check_mcp_tool_name(""), Err(NameError::Empty));
        assert!(check_mcp_tool_name("has space").is_err());
        assert!(check_mcp_tool_name("star*").is_err());
        assert!(check_mcp_tool_name("x(y)").is_err());
        assert!(check_mcp_tool_name(&"x".repeat(129)).is_err());
        let id = ToolId::mcp("srv", "dots.in.name").unwrap();
        assert_eq!(id.rule(), "Mcp(srv__dots.in.name)");
        assert_ne!(id.model_name(), id.namespaced(), "a model API refuses dots");
    }

    #[test]
    fn a_tool_id_names_its_rule() {
        let id = ToolId::new(SourceKind::Mcp, "github", "create_issue").unwrap();
        assert_eq!(id.namespaced(), "github__create_issue");
        assert_eq!(id.rule(), "Mcp(github__create_issue)");
        assert_eq!(id.model_name(), "github__create_issue");
    }

    #[test]
    fn long_names_get_a_stable_short_alias() {
        let long = format!("server__{}", "t".repeat(80));
        let alias = model_facing_name(&long);
        assert_eq!(alias.len(), MODEL_NAME_LIMIT);
        assert_eq!(alias, model_facing_name(&long), "stable across calls");
        assert_ne!(
            alias,
            model_facing_name(&format!("{long}x")),
            "distinct names, distinct aliases"
        );
        assert!(alias.starts_with("server__ttt"));
    }
}
