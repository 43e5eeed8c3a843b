//! `earshot tools list` (what a model would be shown) and `earshot tools call NAME JSON`
//! (through the gate).

use std::io::IsTerminal;

use clap::Subcommand;
use serde_json::json;

use earshot_host::dispatch::CallError;
use earshot_host::gate::{NonInteractivePrompter, Prompter, TerminalPrompter, strip_for_terminal};
use earshot_host::host::Host;

use super::{CommandResult, Context, Failure, exit, output};

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// Exactly what a model would be shown: name, description, input schema.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Call a tool through the permission gate. Asks on a terminal; denies otherwise unless a
    /// rule allows it.
    Call {
        /// The tool's name as listed (`source__tool`).
        name: String,
        /// The input, as JSON.
        #[arg(default_value = "{}")]
        input: String,
    },
}

pub(crate) fn run(context: Context, command: ToolsCommand) -> CommandResult {
    let host = Host::load(context.settings).map_err(|error| Failure::new(error.to_string()))?;
    for problem in host.registry().problems() {
        output::warning_line(&problem);
    }
    match command {
        ToolsCommand::List { json } => list(&host, json),
        ToolsCommand::Call { name, input } => call(&host, &name, &input),
    }
}

fn list(host: &Host, as_json: bool) -> CommandResult {
    let tools: Vec<_> = host.registry().tools().collect();
    if as_json {
        let items: Vec<_> = tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.model_name,
                    "identity": tool.id.rule(),
                    "description": tool.description,
                    "input_schema": serde_json::from_str::<serde_json::Value>(&tool.input_schema).unwrap_or_default(),
                    "read_only": tool.read_only,
                })
            })
            .collect();
        output::json(&json!({ "tools": items }));
        return Ok(exit::OK);
    }
    if tools.is_empty() {
        println!("no tools: nothing is loaded (see `earshot plugins list`)");
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|tool| {
            vec![
                tool.model_name.clone(),
                tool.id.kind().noun().to_string(),
                if tool.read_only {
                    "read-only".into()
                } else {
                    "-".into()
                },
                tool.description.clone(),
            ]
        })
        .collect();
    output::table(&["NAME", "SOURCE", "ACCESS", "DESCRIPTION"], &rows);
    Ok(exit::OK)
}

fn call(host: &Host, name: &str, input: &str) -> CommandResult {
    let prompter: Box<dyn Prompter> =
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Box::new(TerminalPrompter::stdio())
        } else {
            Box::new(NonInteractivePrompter)
        };
    match host.call(name, input, prompter.as_ref()) {
        Ok(result) => {
            if let Some(title) = &result.title {
                eprintln!("title: {}", strip_for_terminal(title));
            }
            println!("{}", strip_for_terminal(&result.output));
            if result.is_error {
                Err(Failure::new(format!("{name} reported an error")).code(exit::TOOL_ERROR))
            } else {
                Ok(exit::OK)
            }
        }
        Err(error @ CallError::Denied(_)) => {
            Err(Failure::new(error.to_string()).code(exit::DENIED))
        }
        Err(error @ CallError::InvalidInput { .. }) => {
            Err(Failure::new(error.to_string()).code(exit::TOOL_ERROR))
        }
        Err(error) => Err(Failure::new(error.to_string())),
    }
}
