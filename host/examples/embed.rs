//! An async agent loop holding earshot-host as a library: build a `Host` on a project, show the
//! model its tools, make a scripted sequence of calls of every kind while the loop answers the
//! gate's asks asynchronously (over a channel, as an editor or chat UI would), then shut down.
//!
//! `cargo run -p earshot-host --example embed -- PROJECT CONFIG_DIR` (`.ci/demo` runs it on the
//! demo project; `tests/all/embedding.rs` runs the same loop on both tokio runtime flavours).

use std::path::Path;
use std::time::Duration;

use earshot_host::{
    BoxFuture, CallError, Host, HostBuilder, PermissionPrompt, ProjectPaths, PromptAnswer,
    Prompter, Settings,
};
use tokio::sync::{mpsc, oneshot};

/// One ask the agent loop must answer: the rule the gate computed, and where the answer goes.
pub struct Ask {
    /// The rule that would allow exactly this call (`Mcp(everything__echo)`).
    pub rule: String,
    /// Where the answer goes.
    pub reply: oneshot::Sender<PromptAnswer>,
}

/// Forwards each ask to the agent loop and awaits its answer; holds no thread meanwhile.
pub struct ChannelPrompter(pub mpsc::UnboundedSender<Ask>);

impl Prompter for ChannelPrompter {
    fn ask<'a>(&'a self, prompt: &'a PermissionPrompt) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let rule = prompt.rule_name().to_string();
            if self.0.send(Ask { rule, reply }).is_err() {
                return PromptAnswer::Deny("the agent loop is gone".into());
            }
            answer
                .await
                .unwrap_or(PromptAnswer::Deny("no answer".into()))
        })
    }
}

/// The script: a component, an extension, and MCP tools asked about (once, always, deny).
pub const CALLS: &[(&str, &str)] = &[
    ("hello__greet", r#"{"name": "Ada"}"#),
    ("wordcount__count", r#"{"text": "to be or not to be"}"#),
    ("everything__echo", r#"{"message": "hello from an agent"}"#),
    ("everything__get-sum", r#"{"a": 2, "b": 40}"#),
    ("everything__get-sum", r#"{"a": 1, "b": 1}"#),
    ("everything__get-env", "{}"),
];

/// How the "user" answers: echo once, get-sum always (so the second get-sum is not asked), the
/// rest denied.
pub fn answer(rule: &str) -> PromptAnswer {
    match rule {
        "Mcp(everything__echo)" => PromptAnswer::AllowOnce,
        "Mcp(everything__get-sum)" => PromptAnswer::AllowAlwaysForProject,
        _ => PromptAnswer::Deny(format!("{rule} was declined by the user")),
    }
}

/// The whole loop; returns what it printed, one line per step.
pub async fn agent_loop(project: &Path, config: &Path, parts_bin: Option<String>) -> Vec<String> {
    let settings = Settings::load(Some(config), Some(ProjectPaths::new(project.to_path_buf())));
    let host: Host = HostBuilder::new(settings)
        .env(move |name| match name {
            "MCP_PARTS_BIN" => parts_bin.clone(),
            _ => std::env::var(name).ok(),
        })
        .build()
        .await
        .expect("the host's own sandboxes start");
    let mut lines: Vec<String> = host.registry().problems();
    // Hooks that do not run (untrusted, changed) and why: show them at start.
    lines.extend(host.hook_notices().iter().cloned());
    // The user's prompt goes through the UserPromptSubmit hooks first: they may block it or
    // replace it, and what they add for the model is labelled as theirs.
    let submitted = host
        .user_prompt_submit("greet Ada, then count my words")
        .await;
    if let Some((hook, reason)) = submitted.blocked() {
        lines.push(format!("prompt blocked by hook {hook}: {reason}"));
        host.shutdown().await;
        return lines;
    }
    let prompt = submitted
        .updated_prompt()
        .unwrap_or("greet Ada, then count my words");
    lines.push(format!("prompt: {prompt}"));
    for tool in host.model_tools().await {
        lines.push(format!("tool {}: {}", tool.name, tool.description));
    }
    let (asks, mut incoming) = mpsc::unbounded_channel::<Ask>();
    let user = tokio::spawn(async move {
        let mut asked = Vec::new();
        while let Some(ask) = incoming.recv().await {
            tokio::time::sleep(Duration::from_millis(20)).await; // someone thinking
            let _ = ask.reply.send(answer(&ask.rule));
            asked.push(ask.rule);
        }
        asked
    });
    let prompter = ChannelPrompter(asks);
    for (name, input) in CALLS {
        lines.push(match host.call(name, input, &prompter).await {
            Ok(output) => format!("{name} -> {}", output.output.replace('\n', " ")),
            Err(CallError::Denied(reason)) => format!("{name} denied: {reason}"),
            Err(error) => format!("{name} failed: {error}"),
        });
    }
    drop(prompter);
    let asked = user.await.expect("the user task ends");
    lines.push(format!("asked: {}", asked.join(", ")));
    // Before the turn ends, the Stop hooks may send the agent back to work (at most 8 times in
    // a row); this script has nothing more to do, so it only reports a block.
    let stop = host
        .fire_hook(earshot_host::HookEvent::Stop, Default::default())
        .await;
    if let Some((hook, reason)) = stop.blocked() {
        lines.push(format!("stop blocked by hook {hook}: {reason}"));
    }
    host.shutdown().await;
    lines
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [project, config] = args.as_slice() else {
        eprintln!("usage: embed PROJECT CONFIG_DIR");
        std::process::exit(2);
    };
    let parts = std::env::var("MCP_PARTS_BIN").ok();
    for line in agent_loop(Path::new(project), Path::new(config), parts).await {
        println!("{line}");
    }
}
