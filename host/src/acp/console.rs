//! The turn driver `earshot acp` ships: a plugin console, so a person can exercise plugins from
//! an editor (and tests can drive real calls) without a model.
//!
//! * `/tools` lists what a model would be shown (as `earshot tools list` does);
//! * `/call NAME JSON` calls that tool through the host as the user's own request (by its exact
//!   name, even behind `tool_search`; the gate decides as always), then says what it returned;
//! * anything else is answered with these two lines.

use crate::gate::sanitise_for_terminal;
use crate::runner::BoxFuture;

use super::turn::{SessionTools, TurnCall, TurnDriver};

/// What a prompt that is not a command is answered with.
const HELP: &str = "earshot acp is a plugin console (no model runs here). Commands:\n/tools — list the tools a model would be shown\n/call NAME JSON — call one tool through earshot's permission gate by a name /tools shows, e.g. /call NAME {\"key\": \"value\"}";

/// The plugin console: `/tools`, `/call NAME JSON`, help for anything else.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConsoleDriver;

impl TurnDriver for ConsoleDriver {
    fn run_turn<'a>(&'a self, text: &'a str, session: &'a SessionTools) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let text = text.trim();
            let (command, rest) = text
                .split_once(char::is_whitespace)
                .map(|(command, rest)| (command, rest.trim()))
                .unwrap_or((text, ""));
            match command {
                "/tools" => session.say(&tool_list(session).await),
                "/call" if !rest.is_empty() => {
                    let (name, input) = rest
                        .split_once(char::is_whitespace)
                        .map(|(name, input)| (name, input.trim()))
                        .unwrap_or((rest, "{}"));
                    // Checked before anything is reported: a typo is not a tool call.
                    if let Err(error) = serde_json::from_str::<serde_json::Value>(input) {
                        session.say(&format!(
                            "the input for {} is not JSON ({error}); nothing was called. Give it as /call NAME {{\"key\": \"value\"}}",
                            sanitise_for_terminal(name, 200)
                        ));
                        return;
                    }
                    match session.call_by_user(name, input).await {
                        TurnCall::Ran(output) if output.is_error => {
                            session.say(&format!("{name} returned an error:\n{}", output.output))
                        }
                        TurnCall::Ran(output) => session.say(&output.output),
                        TurnCall::Refused(error) => session.say(&error.to_string()),
                        TurnCall::Cancelled => {}
                    }
                }
                _ => session.say(HELP),
            }
        })
    }
}

/// One line per tool a model is shown: its name and the first line of its description.
async fn tool_list(session: &SessionTools) -> String {
    let tools = session.host().model_tools().await;
    if tools.is_empty() {
        return "no tools are loaded in this project (`earshot tools list` shows why)".into();
    }
    let problems = session.host().registry().problems();
    let mut text = String::new();
    for tool in &tools {
        let summary =
            sanitise_for_terminal(tool.description.lines().next().unwrap_or_default(), 200);
        text.push_str(&format!("{}  {}\n", tool.name, summary));
    }
    for problem in problems {
        text.push_str(&format!("not loaded: {problem}\n"));
    }
    text.truncate(text.trim_end().len());
    text
}
