//! The consumers of skills and slash commands: `earshot acp` offers them to the editor
//! (`available_commands_update`) and expands a typed `/name` before the turn runs, and
//! `earshot mcp serve` offers them as MCP prompts. Both expand through the gate with their own
//! prompter (the editor; the MCP client's elicitation), so an untrusted project command stays
//! inert and a denied `` !`cmd` `` runs nothing. Written as a user would: real files in the
//! config dir and the project.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, InitializeRequest, NewSessionRequest,
    PermissionOptionKind, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification,
    SessionUpdate, StopReason, ToolCallStatus,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error};
use earshot_host::BoxFuture;
use earshot_host::acp::{AcpAgent, AcpConfig, SessionTools, TurnDriver};
#[cfg(feature = "mcp")]
use earshot_host::serve::EarshotServer;
#[cfg(feature = "mcp")]
use rmcp::ServiceExt;
#[cfg(feature = "mcp")]
use rmcp::model::{ErrorCode, GetPromptRequestParams, Role};
#[cfg(feature = "mcp")]
use rmcp::service::ServiceError;
use serde_json::json;

use crate::common::{Sandbox, block_on, fixture_server, shared_cache};

/// A sandbox with a user command `hello` (`Hello $ARGUMENTS`), a user skill `notes`, a user
/// command `mark` whose shell line creates the returned marker file, a user command `greet`
/// whose shell line echoes, and an untrusted project command `deploy`.
fn commands_sandbox() -> (Sandbox, std::path::PathBuf) {
    let sandbox = Sandbox::new();
    let marker = sandbox.dir.path().join("marker");
    let commands = sandbox.config().join("commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("hello.md"),
        "---\ndescription: Say hello\nargument-hint: NAME\n---\nHello $ARGUMENTS\n",
    )
    .unwrap();
    std::fs::write(
        commands.join("mark.md"),
        format!(
            "---\ndescription: Leave a mark\n---\nMarked !`touch {}`\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(
        commands.join("greet.md"),
        "---\ndescription: Greet from the shell\n---\nThe shell says !`echo hi-from-shell`\n",
    )
    .unwrap();
    let skill = sandbox.config().join("skills/notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: notes\ndescription: Take notes\n---\nWrite notes down in NOTES.md.\n",
    )
    .unwrap();
    sandbox.write(
        ".earshot/commands/deploy.md",
        "---\ndescription: Deploy everything\n---\nDeploy now !`touch deployed`\n",
    );
    (sandbox, marker)
}

// ---------------------------------------------------------------------------------------------
// earshot acp
// ---------------------------------------------------------------------------------------------

/// A turn driver that only records the text each turn was given.
#[derive(Default)]
struct Recorder {
    texts: Mutex<Vec<String>>,
}

impl TurnDriver for Recorder {
    fn run_turn<'a>(&'a self, text: &'a str, session: &'a SessionTools) -> BoxFuture<'a, ()> {
        self.texts.lock().unwrap().push(text.to_string());
        session.say("the driver ran");
        Box::pin(std::future::ready(()))
    }
}

/// Everything the editor saw.
#[derive(Default)]
struct Seen {
    asks: Vec<RequestPermissionRequest>,
    updates: Vec<SessionUpdate>,
}

impl Seen {
    fn messages(&self) -> String {
        self.updates
            .iter()
            .filter_map(|update| match update {
                SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                    ContentBlock::Text(text) => Some(text.text.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn statuses(&self) -> Vec<ToolCallStatus> {
        self.updates
            .iter()
            .filter_map(|update| match update {
                SessionUpdate::ToolCallUpdate(update) => update.fields.status,
                _ => None,
            })
            .collect()
    }

    fn available_commands(&self) -> Option<Vec<AvailableCommand>> {
        self.updates.iter().find_map(|update| match update {
            SessionUpdate::AvailableCommandsUpdate(update) => {
                Some(update.available_commands.clone())
            }
            _ => None,
        })
    }
}

type Editor = ConnectionTo<Agent>;

/// An agent on `sandbox`'s config dir whose turns `recorder` records.
fn agent(sandbox: &Sandbox, recorder: &Arc<Recorder>) -> AcpAgent {
    AcpAgent::new(AcpConfig {
        user_config_dir: Some(sandbox.config()),
        cache: shared_cache(),
        driver: recorder.clone(),
        end_servers_on_signals: false,
        hooks: true,
    })
}

/// Connects an editor that answers every permission request with `answer` and runs `script`.
fn with_editor<R>(
    agent: &AcpAgent,
    answer: PermissionOptionKind,
    seen: &Arc<Mutex<Seen>>,
    script: impl AsyncFnOnce(Editor) -> Result<R, Error>,
) -> R {
    let on_ask = seen.clone();
    let on_update = seen.clone();
    let connection = agent.connection();
    let result = block_on(
        Client
            .v1()
            .on_receive_request(
                async move |ask: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _editor| {
                    let id = ask
                        .options
                        .iter()
                        .find(|option| option.kind == answer)
                        .map(|option| option.option_id.clone())
                        .expect("the option is offered");
                    on_ask.lock().unwrap().asks.push(ask);
                    responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
                    ))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |notification: SessionNotification, _editor| {
                    on_update.lock().unwrap().updates.push(notification.update);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_with(connection, async |editor: Editor| {
                editor
                    .send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                script(editor).await
            }),
    );
    result.expect("the ACP connection works")
}

async fn new_session(editor: &Editor, sandbox: &Sandbox) -> Result<SessionId, Error> {
    Ok(editor
        .send_request(NewSessionRequest::new(sandbox.project()))
        .block_task()
        .await?
        .session_id)
}

async fn prompt(editor: &Editor, session: &SessionId, text: &str) -> Result<StopReason, Error> {
    Ok(editor
        .send_request(PromptRequest::new(
            session.clone(),
            vec![ContentBlock::from(text.to_string())],
        ))
        .block_task()
        .await?
        .stop_reason)
}

/// Waits (at most 30 s) until the editor was sent the available commands.
async fn until_commands(seen: &Arc<Mutex<Seen>>) -> Vec<AvailableCommand> {
    for _ in 0..1_500 {
        if let Some(commands) = seen.lock().unwrap().available_commands() {
            return commands;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the editor was never sent available_commands_update");
}

#[cfg(feature = "mcp")]
#[test]
fn the_editor_is_offered_the_users_commands_and_skills_but_not_an_untrusted_project_command() {
    let (sandbox, _) = commands_sandbox();
    sandbox
        .user_settings(json!({"mcpServers": {"bad": fixture_server("hostile_prompts.py", &[])}}));
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&sandbox, &recorder);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let waiting = seen.clone();
    let commands = with_editor(
        &agent,
        PermissionOptionKind::RejectOnce,
        &seen,
        async |editor| {
            new_session(&editor, &sandbox).await?;
            Ok(until_commands(&waiting).await)
        },
    );
    block_on(agent.shutdown());
    let names: Vec<&str> = commands
        .iter()
        .map(|command| command.name.as_str())
        .collect();
    for name in ["hello", "notes", "mark", "greet"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(
        !names.iter().any(|name| name.contains("deploy")),
        "an untrusted project command was offered: {names:?}"
    );
    let hello = commands
        .iter()
        .find(|command| command.name == "hello")
        .unwrap();
    assert_eq!(hello.description, "Say hello");
    assert_eq!(
        hello.input,
        Some(AvailableCommandInput::Unstructured(
            agent_client_protocol::v1::schema::UnstructuredCommandInput::new("NAME")
        ))
    );
    let notes = commands
        .iter()
        .find(|command| command.name == "notes")
        .unwrap();
    assert_eq!(notes.description, "Take notes");
    // The MCP prompts follow, by their slash name without `/`, their text one clean line.
    let ok = commands
        .iter()
        .find(|command| command.name == "mcp__bad__ok")
        .unwrap();
    assert_eq!(ok.description, "An ordinary prompt");
    assert_eq!(
        ok.input,
        Some(AvailableCommandInput::Unstructured(
            agent_client_protocol::v1::schema::UnstructuredCommandInput::new("who=…")
        ))
    );
    let escapes = commands
        .iter()
        .find(|command| command.name == "mcp__bad__escapes")
        .unwrap();
    assert!(
        escapes.description.starts_with("Clears") && !escapes.description.contains('\u{1b}'),
        "{:?}",
        escapes.description
    );
    assert!(recorder.texts.lock().unwrap().is_empty());
}

#[test]
fn a_typed_command_reaches_the_driver_expanded_and_other_text_unchanged() {
    let (sandbox, _) = commands_sandbox();
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&sandbox, &recorder);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stops = with_editor(
        &agent,
        PermissionOptionKind::RejectOnce,
        &seen,
        async |editor| {
            let session = new_session(&editor, &sandbox).await?;
            Ok((
                prompt(&editor, &session, "/hello world").await?,
                prompt(&editor, &session, "just words").await?,
                prompt(&editor, &session, "/no-such-command x").await?,
            ))
        },
    );
    block_on(agent.shutdown());
    assert_eq!(
        stops,
        (
            StopReason::EndTurn,
            StopReason::EndTurn,
            StopReason::EndTurn
        )
    );
    let texts = recorder.texts.lock().unwrap().clone();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0].trim(), "Hello world");
    assert_eq!(texts[1], "just words");
    assert_eq!(texts[2], "/no-such-command x");
    assert!(seen.lock().unwrap().asks.is_empty());
}

#[cfg(feature = "mcp")]
#[test]
fn a_typed_mcp_prompt_reaches_the_driver_as_the_servers_text() {
    let (sandbox, _) = commands_sandbox();
    sandbox
        .user_settings(json!({"mcpServers": {"bad": fixture_server("hostile_prompts.py", &[])}}));
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&sandbox, &recorder);
    let seen = Arc::new(Mutex::new(Seen::default()));
    with_editor(
        &agent,
        PermissionOptionKind::RejectOnce,
        &seen,
        async |editor| {
            let session = new_session(&editor, &sandbox).await?;
            prompt(&editor, &session, "/mcp__bad__ok Ada Lovelace").await?;
            prompt(&editor, &session, "/mcp__bad__ok who=Bob").await?;
            prompt(&editor, &session, "/mcp__bad__escapes").await?;
            Ok(())
        },
    );
    block_on(agent.shutdown());
    let texts = recorder.texts.lock().unwrap().clone();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0], "hello Ada Lovelace");
    assert_eq!(texts[1], "hello Bob");
    assert!(!texts[2].contains('\u{1b}'), "normalised: {:?}", texts[2]);
}

#[test]
fn an_untrusted_project_command_is_reported_and_the_driver_does_not_run() {
    let (sandbox, _) = commands_sandbox();
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&sandbox, &recorder);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stop = with_editor(
        &agent,
        PermissionOptionKind::AllowAlways,
        &seen,
        async |editor| {
            let session = new_session(&editor, &sandbox).await?;
            prompt(&editor, &session, "/deploy now").await
        },
    );
    block_on(agent.shutdown());
    assert_eq!(stop, StopReason::EndTurn);
    assert!(recorder.texts.lock().unwrap().is_empty(), "the driver ran");
    assert!(!sandbox.project().join("deployed").exists());
    let seen = seen.lock().unwrap();
    assert!(seen.asks.is_empty());
    let messages = seen.messages();
    assert!(
        messages.contains("/deploy was not expanded") && messages.contains("not trusted"),
        "{messages}"
    );
    assert!(
        messages.contains("earshot commands trust deploy"),
        "{messages}"
    );
}

#[test]
fn a_shell_line_the_editor_rejects_runs_nothing_and_the_driver_does_not_run() {
    let (sandbox, marker) = commands_sandbox();
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&sandbox, &recorder);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stop = with_editor(
        &agent,
        PermissionOptionKind::RejectOnce,
        &seen,
        async |editor| {
            let session = new_session(&editor, &sandbox).await?;
            prompt(&editor, &session, "/mark").await
        },
    );
    block_on(agent.shutdown());
    assert_eq!(stop, StopReason::EndTurn);
    assert!(!marker.exists(), "the rejected shell line ran");
    assert!(recorder.texts.lock().unwrap().is_empty(), "the driver ran");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.asks.len(), 1, "the editor was asked once");
    let asked = serde_json::to_string(&seen.asks[0]).unwrap();
    assert!(asked.contains("touch"), "{asked}");
    let messages = seen.messages();
    assert!(
        messages.contains("/mark was not expanded") && messages.contains("was not run"),
        "{messages}"
    );
    // The ask belonged to a tool call the editor was shown, which failed.
    assert!(
        seen.updates.iter().any(|update| matches!(
            update,
            SessionUpdate::ToolCall(call) if call.title == "expand /mark"
        )),
        "no tool call announced the ask"
    );
    assert_eq!(seen.statuses(), [ToolCallStatus::Failed]);
    assert_eq!(
        std::fs::read_to_string(sandbox.project().join(".earshot/settings.local.json")).ok(),
        None,
        "a reject wrote a rule"
    );
}

#[test]
fn a_shell_line_the_editor_allows_runs_and_its_output_reaches_the_driver() {
    let (sandbox, _) = commands_sandbox();
    let recorder = Arc::new(Recorder::default());
    let agent = agent(&sandbox, &recorder);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stop = with_editor(
        &agent,
        PermissionOptionKind::AllowOnce,
        &seen,
        async |editor| {
            let session = new_session(&editor, &sandbox).await?;
            prompt(&editor, &session, "/greet").await
        },
    );
    block_on(agent.shutdown());
    assert_eq!(stop, StopReason::EndTurn);
    let texts = recorder.texts.lock().unwrap().clone();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(
        texts[0].starts_with("The shell says") && texts[0].contains("hi-from-shell"),
        "{}",
        texts[0]
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.asks.len(), 1);
    assert_eq!(
        seen.statuses(),
        [ToolCallStatus::InProgress, ToolCallStatus::Completed]
    );
}

// ---------------------------------------------------------------------------------------------
// earshot mcp serve
// ---------------------------------------------------------------------------------------------

/// Serves `sandbox`'s session in-process to an rmcp client (which declares no elicitation) and
/// runs `script` as that client.
#[cfg(feature = "mcp")]
fn with_mcp_client<R>(
    sandbox: &Sandbox,
    script: impl AsyncFnOnce(&rmcp::service::RunningService<rmcp::RoleClient, ()>) -> R,
) -> R {
    let host = Arc::new(sandbox.host().0);
    let served = host.clone();
    let result = block_on(async move {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(async move { EarshotServer::new(served).serve(server_io).await });
        let client = ().serve(client_io).await.expect("the client connects");
        let running = server
            .await
            .unwrap()
            .expect("the server completes the handshake");
        let result = script(&client).await;
        let _ = client.cancel().await;
        let _ = running.cancel().await;
        result
    });
    block_on(host.shutdown());
    result
}

#[cfg(feature = "mcp")]
#[test]
fn serve_offers_commands_and_skills_as_prompts_and_expands_one() {
    let (sandbox, marker) = commands_sandbox();
    let (prompts, hello, unknown, deploy, mark) = with_mcp_client(&sandbox, async |client| {
        let prompts = client.list_all_prompts().await.expect("prompts/list");
        let get = |name: &str, arguments: Option<serde_json::Value>| {
            let mut params = GetPromptRequestParams::new(name);
            if let Some(serde_json::Value::Object(arguments)) = arguments {
                params = params.with_arguments(arguments);
            }
            client.get_prompt(params)
        };
        let hello = get("hello", Some(json!({"arguments": "world"}))).await;
        let unknown = get("no-such-command", None).await;
        let deploy = get("deploy", None).await;
        let mark = get("mark", None).await;
        (prompts, hello, unknown, deploy, mark)
    });
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    for name in ["hello", "notes", "mark", "greet"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(
        !names.iter().any(|name| name.contains("deploy")),
        "an untrusted project command was listed: {names:?}"
    );
    let listed = prompts
        .iter()
        .find(|prompt| prompt.name == "hello")
        .unwrap();
    assert_eq!(listed.description.as_deref(), Some("Say hello"));
    let arguments = listed.arguments.as_ref().unwrap();
    assert_eq!(arguments.len(), 1);
    assert_eq!(arguments[0].name, "arguments");
    assert_eq!(arguments[0].description.as_deref(), Some("NAME"));
    assert_eq!(arguments[0].required, Some(false));

    let hello = hello.expect("prompts/get hello");
    assert_eq!(hello.messages.len(), 1);
    assert_eq!(hello.messages[0].role, Role::User);
    let text = hello.messages[0].content.as_text().unwrap().text.clone();
    assert_eq!(text.trim(), "Hello world");

    let code_and_message = |result: Result<rmcp::model::GetPromptResult, ServiceError>| match result
    {
        Err(ServiceError::McpError(error)) => (error.code, error.message.to_string()),
        other => panic!("expected an MCP error, got {other:?}"),
    };
    let (code, message) = code_and_message(unknown);
    assert_eq!(code, ErrorCode::INVALID_PARAMS, "{message}");
    assert!(message.contains("no-such-command"), "{message}");
    let (_, message) = code_and_message(deploy);
    assert!(message.contains("not trusted"), "{message}");
    assert!(!sandbox.project().join("deployed").exists());
    // No elicitation: the shell line's ask is a deny, and nothing ran.
    let (_, message) = code_and_message(mark);
    assert!(message.contains("was not run"), "{message}");
    assert!(!marker.exists(), "the shell line ran without approval");
}
