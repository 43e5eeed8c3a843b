//! Which tools a hook fires for, in the gate's rule syntax over namespaced names.
//!
//! * `*` or an empty matcher: every tool, the host's own (`tool_search`, `read_mcp_resource`)
//!   included, as in Claude Code.
//! * `Mcp(github__*)`, `Extension(*)`, `Plugin(hello__*)`: a rule, as in `permissions`.
//! * `Bash(git *)`, `Edit(*)`: a rule over one of the embedder's own tools, its glob over the
//!   target the embedder gives (a command line, a path).
//! * `Bash`, `Mcp`: every tool of that keyword. `tool_search`, `github__create_issue`: that tool
//!   by name (globs allowed).
//! * `A|B`: any of them.
//! * `re:PATTERN`: a regular expression, always anchored (`re:github__.*` is
//!   `^(?:github__.*)$`), matched against the tool's name and against its rule form.

use globset::{Glob, GlobMatcher};

use crate::gate::OTHER_TOOL_KEYWORDS;

/// A tool as hooks see it: its name, the rule keyword it falls under, and the target that
/// keyword's rules match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookTool {
    /// What the model calls (`github__create_issue`, `tool_search`, `Bash`).
    pub name: String,
    /// `Mcp`, `Extension`, `Plugin`, or the embedder's own keyword (`Bash`); `None` for the
    /// host's own tools.
    pub keyword: Option<String>,
    /// What the keyword's rules match: the namespaced name for a plugin tool, the command line
    /// for `Bash`.
    pub target: String,
}

impl HookTool {
    /// A tool of the embedder's own (`Bash` with target `git status`), for
    /// `earshot_host::Host::fire_pre_tool_use`.
    pub fn embedder(keyword: &str, target: &str) -> HookTool {
        HookTool {
            name: keyword.to_string(),
            keyword: Some(keyword.to_string()),
            target: target.to_string(),
        }
    }

    /// `read_mcp_resource` with `input`, as hooks match it: as what its gate decides on,
    /// `Mcp(server__resources)` for the server its input names (its bare name without one).
    pub fn read_resource(input: &serde_json::Value) -> HookTool {
        let name = crate::mcp::READ_RESOURCE_TOOL;
        match input.get("server").and_then(serde_json::Value::as_str) {
            Some(server) => HookTool {
                name: name.to_string(),
                keyword: Some("Mcp".to_string()),
                target: format!("{server}__{}", crate::mcp::RESOURCES_RULE_TOOL),
            },
            None => HookTool {
                name: name.to_string(),
                keyword: None,
                target: name.to_string(),
            },
        }
    }

    /// The tool in rule form (`Mcp(github__x)`, `Bash(git status)`), or its bare name.
    pub fn rule_form(&self) -> String {
        match &self.keyword {
            Some(keyword) => format!("{keyword}({})", self.target),
            None => self.name.clone(),
        }
    }
}

/// A parsed matcher, with the text it was written as.
#[derive(Debug, Clone)]
pub struct HookMatcher {
    text: String,
    alternatives: Vec<Alternative>,
}

#[derive(Debug, Clone)]
enum Alternative {
    Any,
    Keyword(String),
    Rule { keyword: String, glob: GlobMatcher },
    Name(GlobMatcher),
    Regex(regex::Regex),
}

impl serde::Serialize for HookMatcher {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

/// The keywords of plugin tools: their rules are the gate's own.
const PLUGIN_KEYWORDS: &[&str] = &["Mcp", "Extension", "Plugin"];

fn known_keyword(word: &str) -> bool {
    PLUGIN_KEYWORDS.contains(&word) || OTHER_TOOL_KEYWORDS.contains(&word)
}

fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    Glob::new(pattern)
        .map(|glob| glob.compile_matcher())
        .map_err(|error| format!("\"{pattern}\" is not a glob: {}", error.kind()))
}

impl HookMatcher {
    /// Parses a matcher.
    ///
    /// # Errors
    /// What is wrong with it, as a phrase (an unknown rule keyword, a bad glob or regex).
    pub fn parse(text: &str) -> Result<HookMatcher, String> {
        if text.chars().any(char::is_control) {
            return Err("a matcher may not hold control characters".into());
        }
        let trimmed = text.trim();
        let alternatives = if trimmed.is_empty() || trimmed == "*" {
            vec![Alternative::Any]
        } else if let Some(pattern) = trimmed.strip_prefix("re:") {
            let anchored = format!("^(?:{pattern})$");
            let regex = regex::RegexBuilder::new(&anchored)
                .size_limit(1 << 20)
                .build()
                .map_err(|error| format!("not a regular expression: {error}"))?;
            vec![Alternative::Regex(regex)]
        } else {
            trimmed
                .split('|')
                .map(|part| parse_alternative(part.trim()))
                .collect::<Result<_, _>>()?
        };
        Ok(HookMatcher {
            text: text.to_string(),
            alternatives,
        })
    }

    /// The matcher as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it fires for `tool`.
    pub fn matches(&self, tool: &HookTool) -> bool {
        self.alternatives
            .iter()
            .any(|alternative| match alternative {
                Alternative::Any => true,
                Alternative::Keyword(keyword) => tool.keyword.as_deref() == Some(keyword),
                Alternative::Rule { keyword, glob } => {
                    tool.keyword.as_deref() == Some(keyword) && glob.is_match(&tool.target)
                }
                Alternative::Name(glob) => glob.is_match(&tool.name),
                Alternative::Regex(regex) => {
                    regex.is_match(&tool.name) || regex.is_match(&tool.rule_form())
                }
            })
    }
}

fn parse_alternative(part: &str) -> Result<Alternative, String> {
    if part.is_empty() {
        return Err("an empty alternative between '|'".into());
    }
    if let Some((keyword, rest)) = part.split_once('(') {
        let pattern = rest
            .strip_suffix(')')
            .ok_or_else(|| format!("\"{part}\" is missing its closing ')'"))?;
        if !known_keyword(keyword) {
            return Err(format!(
                "unknown rule keyword \"{keyword}\" (Mcp, Extension, Plugin, or one of earshot's other tools: {})",
                OTHER_TOOL_KEYWORDS.join(", ")
            ));
        }
        if pattern.is_empty() {
            return Err(format!("\"{part}\" has an empty pattern"));
        }
        return Ok(Alternative::Rule {
            keyword: keyword.to_string(),
            glob: glob(pattern)?,
        });
    }
    if known_keyword(part) {
        return Ok(Alternative::Keyword(part.to_string()));
    }
    Ok(Alternative::Name(glob(part)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcp(name: &str) -> HookTool {
        HookTool {
            name: name.into(),
            keyword: Some("Mcp".into()),
            target: name.into(),
        }
    }

    fn host_tool(name: &str) -> HookTool {
        HookTool {
            name: name.into(),
            keyword: None,
            target: name.into(),
        }
    }

    #[test]
    fn every_form_matches_what_it_says_and_nothing_else() {
        let all = HookMatcher::parse("*").unwrap();
        assert!(all.matches(&mcp("github__x")) && all.matches(&host_tool("tool_search")));
        assert!(
            HookMatcher::parse("")
                .unwrap()
                .matches(&host_tool("read_mcp_resource"))
        );
        let rule = HookMatcher::parse("Mcp(github__*)").unwrap();
        assert!(rule.matches(&mcp("github__create_issue")));
        assert!(!rule.matches(&mcp("gitlab__x")));
        assert!(!rule.matches(&HookTool::embedder("Extension", "github__x")));
        let bash = HookMatcher::parse("Bash(git *)").unwrap();
        assert!(bash.matches(&HookTool::embedder("Bash", "git status")));
        assert!(!bash.matches(&HookTool::embedder("Bash", "rm -rf /")));
        let either = HookMatcher::parse("Bash | tool_search").unwrap();
        assert!(either.matches(&HookTool::embedder("Bash", "ls")));
        assert!(either.matches(&host_tool("tool_search")));
        assert!(!either.matches(&mcp("a__b")));
    }

    #[test]
    fn a_regex_is_anchored() {
        let regex = HookMatcher::parse("re:github__.*").unwrap();
        assert!(regex.matches(&mcp("github__x")));
        assert!(!regex.matches(&mcp("evil_github__x")));
        let partial = HookMatcher::parse("re:create").unwrap();
        assert!(!partial.matches(&mcp("github__create_issue")));
    }

    #[test]
    fn unknown_keywords_and_bad_patterns_are_refused() {
        assert!(HookMatcher::parse("Mpc(x)").is_err());
        assert!(HookMatcher::parse("Mcp()").is_err());
        assert!(HookMatcher::parse("re:(").is_err());
        assert!(HookMatcher::parse("a||b").is_err());
        assert!(HookMatcher::parse("Mcp(x").is_err());
    }
}
