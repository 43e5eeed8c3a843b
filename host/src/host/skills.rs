//! The session's skills and slash commands: the catalogue and the `skill` tool a model gets, the
//! `/name`s a client offers, and expanding one through the gate.

use super::{Host, ModelTool};
use crate::dispatch::HookNote;
use crate::gate::{Action, Outcome, Prompter};
use crate::runner::{CallError, ToolOutput};
use crate::skills::tool::{input_schema, parse_request, respond, tool_description};
use crate::skills::{
    Catalogue, ExpandError, Expansion, Library, SKILL_TOOL_NAME, SlashEntry, budget,
    expand_command, skill_denied,
};

impl Host {
    /// Every skill and command found for this session, loaded or not (with what kept each
    /// problem from loading).
    pub fn library(&self) -> &Library {
        &self.skills
    }

    /// What the model is told about the skills it may load: each active, model-invocable skill
    /// that no `Skill(…)` deny rule covers, its description sanitised, escaped and capped, the
    /// whole within the budget (`skills.catalogueBudget`, default 8,000 characters).
    pub fn skills(&self) -> Catalogue {
        Catalogue::build(
            self.skills
                .model_skills()
                .filter(|item| !self.denies_skill(&item.name)),
            budget(&self.settings),
        )
    }

    fn denies_skill(&self, name: &str) -> bool {
        skill_denied(&self.gate, name).is_some()
    }

    /// The `skill` tool as the model is shown it, when there is a skill to load.
    pub(super) fn skill_tool(&self) -> Option<ModelTool> {
        let catalogue = self.skills();
        if catalogue.is_empty() {
            return None;
        }
        // The enum is the catalogue's skills, so the budget bounds the schema too (a skill left
        // out is still loaded when named).
        let names: Vec<String> = catalogue
            .entries
            .iter()
            .map(|entry| entry.name.clone())
            .collect();
        Some(ModelTool {
            name: SKILL_TOOL_NAME.into(),
            identity: None,
            description: tool_description(&catalogue),
            input_schema: input_schema(&names),
            read_only: true,
            kind: None,
            output_schema: None,
        })
    }

    /// Whether `name` is the `skill` tool in this session.
    pub(super) fn is_skill_tool(&self, name: &str) -> bool {
        name == SKILL_TOOL_NAME && self.skills.model_skills().next().is_some()
    }

    /// Runs the `skill` tool: gated as `Skill(name)` (no rule: it runs, since it only adds text;
    /// deny and ask rules apply; a hook's ask is asked first).
    pub(super) async fn call_skill_tool(
        &self,
        input_json: &str,
        prompter: &dyn Prompter,
        hooks: Option<&HookNote>,
    ) -> Result<ToolOutput, CallError> {
        let request = parse_request(input_json).map_err(|issue| CallError::InvalidInput {
            tool: SKILL_TOOL_NAME.into(),
            issues: vec![issue],
        })?;
        let name = request.name.as_str();
        let Some(item) = self.skills.skill(name) else {
            return Err(CallError::InvalidInput {
                tool: SKILL_TOOL_NAME.into(),
                issues: vec![format!(
                    "there is no skill \"{}\"; the tool's \"name\" lists them",
                    crate::gate::sanitise_for_terminal(name, 80)
                )],
            });
        };
        if !item.model_invocable() {
            return Err(CallError::Denied(format!(
                "skill \"{name}\" is run by the user only (disable-model-invocation); ask the user to run /{name}"
            )));
        }
        if hooks.is_some_and(|hooks| hooks.ask.is_some()) {
            Box::pin(self.ask_for_hook(SKILL_TOOL_NAME, input_json, hooks, prompter)).await?;
        }
        let title = format!("load skill \"{name}\"");
        let detail = match &request.file {
            Some(file) => format!("reads {file} of skill \"{name}\" ({})", item.file.display()),
            None => format!("loads {}", item.file.display()),
        };
        if let Outcome::Denied(reason) = self
            .gate
            .authorize_action(&Action::Skill(name), &title, &detail, prompter)
            .await
        {
            return Err(CallError::Denied(reason));
        }
        let output = respond(item, &request).map_err(CallError::Denied)?;
        Ok(ToolOutput {
            output,
            is_error: false,
            title: Some(match &request.file {
                Some(file) => format!("skill {name}: {file}"),
                None => format!("skill {name}"),
            }),
            notice: None,
            ..ToolOutput::default()
        })
    }

    /// Every `/name` the user can type from skills and commands (MCP prompts are
    /// [`Host::mcp_prompts`]): the user's, then trusted project items (as `project:name` when
    /// the user's own has the name); a skill a `Skill(…)` deny rule covers is left out.
    pub fn slash_commands(&self) -> Vec<SlashEntry> {
        self.skills
            .slash_entries()
            .into_iter()
            .filter(|entry| {
                entry.kind != crate::skills::ItemKind::Skill || {
                    let bare = entry
                        .name
                        .strip_prefix(crate::skills::names::PROJECT_PREFIX)
                        .unwrap_or(&entry.name);
                    !self.denies_skill(bare)
                }
            })
            .collect()
    }

    /// Expands `/name ARGS` into the text the model gets, asking `prompter` through the gate for
    /// each `@path` (`Read(path)`) and `` !`cmd` `` (`Bash(cmd)`) the rules leave to ask.
    ///
    /// # Errors
    /// An [`ExpandError`] saying why; nothing is returned half-expanded.
    pub async fn expand_command(
        &self,
        name: &str,
        arguments: &str,
        prompter: &dyn Prompter,
    ) -> Result<Expansion, ExpandError> {
        expand_command(
            &self.skills,
            &self.settings,
            &self.gate,
            prompter,
            name,
            arguments,
        )
        .await
    }

    /// When `prompt` starts with `/name` of a command, a skill or an MCP prompt
    /// (`/mcp__server__prompt`), its expansion (the rest of the first line and the lines after
    /// are the arguments); `None` when it names none (earshot's own commands are left to the
    /// caller).
    pub async fn expand_prompt(
        &self,
        prompt: &str,
        prompter: &dyn Prompter,
    ) -> Option<Result<Expansion, ExpandError>> {
        let rest = prompt.trim_start().strip_prefix('/')?;
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (name, arguments) = rest.split_at(end);
        if name.starts_with("mcp__") {
            return self.expand_mcp_prompt(name, arguments.trim()).await;
        }
        let bare = name
            .strip_prefix(crate::skills::names::PROJECT_PREFIX)
            .unwrap_or(name);
        // An untrusted project item of that name gets its "not trusted" line, not silence.
        if self.skills.slash(name).is_none()
            && !self.skills.items().iter().any(|item| item.name == bare)
        {
            return None;
        }
        Some(self.expand_command(name, arguments.trim(), prompter).await)
    }

    /// `/mcp__server__prompt ARGS` as text for the model: the server's prompt, its arguments
    /// given as `key=value` words (or, for a prompt with one argument, the whole text), its
    /// messages normalised in the mcp-output sandbox and joined. `None` when no running server
    /// lists a prompt of that name.
    async fn expand_mcp_prompt(
        &self,
        name: &str,
        arguments: &str,
    ) -> Option<Result<Expansion, ExpandError>> {
        let (prompts, _) = self.mcp_prompts(None).await;
        let prompt = prompts
            .into_iter()
            .find(|prompt| prompt.command.strip_prefix('/') == Some(name))?;
        let refuse = |reason: String| ExpandError::Arguments {
            command: name.to_string(),
            reason,
        };
        let words = match shell_words::split(arguments) {
            Ok(words) => words,
            Err(_) => {
                return Some(Err(refuse(
                    "the arguments have a quote that is never closed".into(),
                )));
            }
        };
        let known = |key: &str| prompt.arguments.iter().any(|argument| argument.name == key);
        let mut values = std::collections::BTreeMap::new();
        if words
            .iter()
            .all(|word| word.split_once('=').is_some_and(|(key, _)| known(key)))
        {
            for word in &words {
                if let Some((key, value)) = word.split_once('=') {
                    values.insert(key.to_string(), value.to_string());
                }
            }
        } else if let [only] = prompt.arguments.as_slice() {
            values.insert(only.name.clone(), arguments.to_string());
        } else {
            let names: Vec<String> = prompt
                .arguments
                .iter()
                .map(|argument| format!("{}=VALUE", argument.name))
                .collect();
            return Some(Err(refuse(format!(
                "give its arguments as {}",
                if names.is_empty() {
                    "nothing (it takes none)".to_string()
                } else {
                    names.join(" ")
                }
            ))));
        }
        let messages = match self
            .get_mcp_prompt(&prompt.server, &prompt.name, &values)
            .await
        {
            Ok(messages) => messages,
            Err(error) => return Some(Err(ExpandError::NotUsable(format!("/{name}: {error}")))),
        };
        let text = messages
            .iter()
            .map(|message| message.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        Some(Ok(Expansion {
            name: name.to_string(),
            kind: None,
            origin: None,
            file: None,
            digest: None,
            text,
        }))
    }
}
