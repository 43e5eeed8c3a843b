//! `earshot acp`: an editor can answer an ask but never turn a deny into an allow, only the
//! options the host offered count, and the editor's own MCP definitions are screened (stdio never
//! spawned). Driven in-process by the ACP crate's client side, with a recording editor and the
//! sentinel fixture server (its `touch` tool creates a file, so a call that ran is visible).

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ClientSessionCapabilities, ContentBlock,
    InitializeRequest, McpServer, NewSessionRequest, NewSessionResponse, NoticeCapabilities,
    PermissionOptionKind, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification,
    SessionUpdate, StopReason, ToolCallStatus,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error};
use earshot_host::acp::{AcpAgent, AcpConfig, ConsoleDriver};
use serde_json::{Value, json};

use crate::common::{Sandbox, block_on, everything_over_http, fixture_server, shared_cache};

/// How the recording editor answers `session/request_permission`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    AllowOnce,
    AllowAlways,
    Reject,
    /// An id that looks like the host's but was never offered.
    Forged,
    Cancelled,
    /// A JSON-RPC error instead of a result.
    RpcError,
    /// No answer at all (the responder is parked).
    Never,
}

/// Everything the editor saw.
#[derive(Default)]
struct Seen {
    asks: Vec<RequestPermissionRequest>,
    updates: Vec<SessionUpdate>,
    parked: Vec<Responder<RequestPermissionResponse>>,
}

impl Seen {
    /// The statuses of tool-call updates, in order.
    fn statuses(&self) -> Vec<ToolCallStatus> {
        self.updates
            .iter()
            .filter_map(|update| match update {
                SessionUpdate::ToolCallUpdate(update) => update.fields.status,
                _ => None,
            })
            .collect()
    }

    /// The agent's messages, joined.
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
}

type Editor = ConnectionTo<Agent>;

/// Waits until the editor holds an unanswered permission request (at most 60 s).
async fn until_asked(seen: &Arc<Mutex<Seen>>) {
    for _ in 0..3_000 {
        if !seen.lock().unwrap().parked.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the editor was never asked");
}

/// An agent on `sandbox`'s config dir, with the console driver.
fn agent(sandbox: &Sandbox) -> AcpAgent {
    AcpAgent::new(AcpConfig {
        user_config_dir: Some(sandbox.config()),
        cache: shared_cache(),
        driver: Arc::new(ConsoleDriver),
        end_servers_on_signals: false,
        hooks: true,
    })
}

/// Connects a recording editor answering `answer` to `agent` and runs `script` as that editor.
fn with_editor<R>(
    agent: &AcpAgent,
    answer: Answer,
    seen: &Arc<Mutex<Seen>>,
    script: impl AsyncFnOnce(Editor) -> Result<R, Error>,
) -> R {
    with_editor_declaring(agent, ClientCapabilities::new(), answer, seen, script)
}

/// [`with_editor`], for an editor that declares `capabilities` at `initialize`.
fn with_editor_declaring<R>(
    agent: &AcpAgent,
    capabilities: ClientCapabilities,
    answer: Answer,
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
                    let offered = |kind: PermissionOptionKind| {
                        ask.options
                            .iter()
                            .find(|option| option.kind == kind)
                            .map(|option| option.option_id.clone())
                            .expect("the three options are offered")
                    };
                    let selected = |id| {
                        RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
                            SelectedPermissionOutcome::new(id),
                        ))
                    };
                    let reply = match answer {
                        Answer::AllowOnce => {
                            Some(Ok(selected(offered(PermissionOptionKind::AllowOnce))))
                        }
                        Answer::AllowAlways => {
                            Some(Ok(selected(offered(PermissionOptionKind::AllowAlways))))
                        }
                        Answer::Reject => {
                            Some(Ok(selected(offered(PermissionOptionKind::RejectOnce))))
                        }
                        Answer::Forged => {
                            Some(Ok(selected("allow-always-0000000000000000".into())))
                        }
                        Answer::Cancelled => Some(Ok(RequestPermissionResponse::new(
                            RequestPermissionOutcome::Cancelled,
                        ))),
                        Answer::RpcError => Some(Err(Error::internal_error())),
                        Answer::Never => None,
                    };
                    let mut seen = on_ask.lock().unwrap();
                    seen.asks.push(ask);
                    match reply {
                        Some(Ok(response)) => responder.respond(response),
                        Some(Err(error)) => responder.respond_with_error(error),
                        None => {
                            seen.parked.push(responder);
                            Ok(())
                        }
                    }
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
                    .send_request(
                        InitializeRequest::new(ProtocolVersion::V1)
                            .client_capabilities(capabilities),
                    )
                    .block_task()
                    .await?;
                script(editor).await
            }),
    );
    result.expect("the ACP connection works")
}

async fn new_session(
    editor: &Editor,
    cwd: &Path,
    servers: Vec<McpServer>,
) -> Result<NewSessionResponse, Error> {
    editor
        .send_request(NewSessionRequest::new(cwd).mcp_servers(servers))
        .block_task()
        .await
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

/// A project whose user settings start the sentinel server (the user's own: no trust needed).
fn sentinel_project(extra_user_settings: Value) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    let sentinel = sandbox.dir.path().join("sentinel");
    let mut settings = json!({"mcpServers": {"sentinel": fixture_server("sentinel.py", &["--path", sentinel.to_str().unwrap()])}});
    if let (Some(settings), Some(extra)) =
        (settings.as_object_mut(), extra_user_settings.as_object())
    {
        settings.extend(extra.clone());
    }
    sandbox.user_settings(settings);
    (sandbox, sentinel)
}

fn local_settings(sandbox: &Sandbox) -> Option<String> {
    std::fs::read_to_string(sandbox.project().join(".earshot/settings.local.json")).ok()
}

#[cfg(feature = "mcp")]
#[test]
fn a_deny_rule_is_never_asked_and_an_editor_that_allows_everything_cannot_run_it() {
    // The deny in the project's checked-in file; then in the user's file with an allow in the
    // local file (deny beats allow, whichever file).
    for (user, project, local) in [
        (
            json!({}),
            json!({"permissions": {"deny": ["Mcp(sentinel__touch)"]}}),
            json!({"permissions": {"allow": ["Mcp(other__*)"]}}),
        ),
        (
            json!({"permissions": {"deny": ["Mcp(sentinel__touch)"]}}),
            json!({}),
            json!({"permissions": {"allow": ["Mcp(sentinel__touch)"]}}),
        ),
    ] {
        let (sandbox, sentinel) = sentinel_project(user);
        sandbox.write(".earshot/settings.json", project.to_string());
        sandbox.write(".earshot/settings.local.json", local.to_string());
        let before = local_settings(&sandbox);
        let agent = agent(&sandbox);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = with_editor(&agent, Answer::AllowAlways, &seen, async |editor| {
            let session = new_session(&editor, &sandbox.project(), vec![]).await?;
            prompt(&editor, &session.session_id, "/call sentinel__touch {}").await
        });
        block_on(agent.shutdown());
        let seen = seen.lock().unwrap();
        assert_eq!(stop, StopReason::EndTurn);
        assert!(seen.asks.is_empty(), "a denied call reached the editor");
        assert!(!sentinel.exists(), "the denied tool ran");
        assert_eq!(seen.statuses(), [ToolCallStatus::Failed]);
        assert!(
            seen.messages().contains("is denied by the rule"),
            "{}",
            seen.messages()
        );
        assert_eq!(
            local_settings(&sandbox),
            before,
            "the local settings changed"
        );
    }
}

#[cfg(feature = "mcp")]
#[test]
fn only_the_options_offered_count_and_every_other_answer_denies() {
    for answer in [
        Answer::Forged,
        Answer::Cancelled,
        Answer::RpcError,
        Answer::Reject,
    ] {
        let (sandbox, sentinel) = sentinel_project(json!({}));
        let agent = agent(&sandbox);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (first, second) = with_editor(&agent, answer, &seen, async |editor| {
            let session = new_session(&editor, &sandbox.project(), vec![]).await?;
            let first = prompt(&editor, &session.session_id, "/call sentinel__touch {}").await?;
            let second = prompt(&editor, &session.session_id, "/tools").await?;
            Ok((first, second))
        });
        block_on(agent.shutdown());
        let seen = seen.lock().unwrap();
        assert_eq!(seen.asks.len(), 1, "{answer:?}");
        assert_eq!(seen.asks[0].options.len(), 3);
        assert!(!sentinel.exists(), "{answer:?} ran the tool");
        assert_eq!(local_settings(&sandbox), None, "{answer:?} wrote a rule");
        assert_eq!(seen.statuses(), [ToolCallStatus::Failed], "{answer:?}");
        assert_eq!((first, second), (StopReason::EndTurn, StopReason::EndTurn));
        // The connection still works: the next prompt was answered.
        assert!(
            seen.messages().contains("sentinel__touch"),
            "{answer:?}: {}",
            seen.messages()
        );
    }
}

#[cfg(feature = "mcp")]
#[test]
fn a_cancel_while_the_editor_is_asked_denies_and_ends_the_turn_cancelled() {
    let (sandbox, sentinel) = sentinel_project(json!({}));
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let waiting = seen.clone();
    let (stop, next) = with_editor(&agent, Answer::Never, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), vec![]).await?;
        let turn = editor.send_request(PromptRequest::new(
            session.session_id.clone(),
            vec![ContentBlock::from("/call sentinel__touch {}".to_string())],
        ));
        until_asked(&waiting).await;
        editor.send_notification(CancelNotification::new(session.session_id.clone()))?;
        let stop = turn.block_task().await?.stop_reason;
        // The late answer (an allow) changes nothing.
        let parked = waiting.lock().unwrap().parked.pop().unwrap();
        let _ = parked.respond(RequestPermissionResponse::new(
            RequestPermissionOutcome::Cancelled,
        ));
        let next = prompt(&editor, &session.session_id, "/tools").await?;
        Ok((stop, next))
    });
    block_on(agent.shutdown());
    assert_eq!(stop, StopReason::Cancelled);
    assert_eq!(next, StopReason::EndTurn);
    assert!(!sentinel.exists());
    assert_eq!(local_settings(&sandbox), None);
    assert_eq!(seen.lock().unwrap().statuses(), [ToolCallStatus::Failed]);
}

#[cfg(feature = "mcp")]
#[test]
fn a_connection_dropped_while_the_editor_is_asked_runs_nothing() {
    let (sandbox, sentinel) = sentinel_project(json!({}));
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let waiting = seen.clone();
    with_editor(&agent, Answer::Never, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), vec![]).await?;
        let _turn = editor.send_request(PromptRequest::new(
            session.session_id.clone(),
            vec![ContentBlock::from("/call sentinel__touch {}".to_string())],
        ));
        until_asked(&waiting).await;
        // The editor goes away without answering.
        Ok(())
    });
    block_on(agent.shutdown());
    std::thread::sleep(Duration::from_millis(300));
    assert!(!sentinel.exists());
    assert_eq!(local_settings(&sandbox), None);
}

#[cfg(feature = "mcp")]
#[test]
fn allow_always_writes_one_rule_for_that_tool_and_a_later_deny_still_wins_without_asking() {
    let (sandbox, sentinel) = sentinel_project(json!({}));
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    with_editor(&agent, Answer::AllowAlways, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), vec![]).await?;
        prompt(&editor, &session.session_id, "/call sentinel__touch {}").await?;
        prompt(&editor, &session.session_id, "/call sentinel__touch {}").await
    });
    block_on(agent.shutdown());
    assert!(sentinel.exists());
    assert_eq!(
        seen.lock().unwrap().asks.len(),
        1,
        "the second call asked again"
    );
    assert_eq!(
        seen.lock().unwrap().statuses(),
        [
            ToolCallStatus::InProgress,
            ToolCallStatus::Completed,
            ToolCallStatus::InProgress,
            ToolCallStatus::Completed
        ]
    );
    let local: Value = serde_json::from_str(&local_settings(&sandbox).unwrap()).unwrap();
    assert_eq!(
        local["permissions"]["allow"],
        json!(["Mcp(sentinel__touch)"])
    );

    // A deny rule added later wins over that allow, without asking.
    std::fs::remove_file(&sentinel).unwrap();
    sandbox.write(
        ".earshot/settings.json",
        json!({"permissions": {"deny": ["Mcp(sentinel__*)"]}}).to_string(),
    );
    let agent = self::agent(&sandbox);
    let later = Arc::new(Mutex::new(Seen::default()));
    with_editor(&agent, Answer::AllowAlways, &later, async |editor| {
        let session = new_session(&editor, &sandbox.project(), vec![]).await?;
        prompt(&editor, &session.session_id, "/call sentinel__touch {}").await
    });
    block_on(agent.shutdown());
    assert!(later.lock().unwrap().asks.is_empty());
    assert!(!sentinel.exists());
    assert_eq!(later.lock().unwrap().statuses(), [ToolCallStatus::Failed]);
}

#[cfg(feature = "mcp")]
#[test]
fn an_untrusted_project_server_stays_stopped_and_meta_grants_nothing() {
    let sandbox = Sandbox::new();
    let sentinel = sandbox.dir.path().join("sentinel");
    let project_sentinel = sandbox.dir.path().join("project-sentinel");
    sandbox.user_settings(json!({"mcpServers": {"sentinel": fixture_server("sentinel.py", &["--path", sentinel.to_str().unwrap()])}}));
    sandbox.write(
        ".earshot/settings.json",
        json!({"mcpServers": {"repo": fixture_server("sentinel.py", &["--path", project_sentinel.to_str().unwrap()])}}).to_string(),
    );
    let grant: serde_json::Map<String, Value> = serde_json::from_value(
        json!({"earshot": {"permissions": {"allow": ["Mcp(*)"]}, "trust": ["repo"]}}),
    )
    .unwrap();
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    with_editor(&agent, Answer::Reject, &seen, async |editor| {
        let session = editor
            .send_request(NewSessionRequest::new(sandbox.project()).meta(grant.clone()))
            .block_task()
            .await?;
        for text in ["/tools", "/call repo__touch {}"] {
            editor
                .send_request(
                    PromptRequest::new(
                        session.session_id.clone(),
                        vec![ContentBlock::from(text.to_string())],
                    )
                    .meta(grant.clone()),
                )
                .block_task()
                .await?;
        }
        editor
            .send_request(
                PromptRequest::new(
                    session.session_id.clone(),
                    vec![ContentBlock::from("/call sentinel__touch {}".to_string())],
                )
                .meta(grant.clone()),
            )
            .block_task()
            .await
    });
    block_on(agent.shutdown());
    let seen = seen.lock().unwrap();
    let messages = seen.messages();
    assert!(!messages.contains("repo__touch  "), "{messages}");
    assert!(
        messages.contains("server \"repo\" is not connected, so repo__touch cannot be called"),
        "{messages}"
    );
    assert!(
        messages.contains("earshot mcp trust repo"),
        "the untrusted server is reported with what to run: {messages}"
    );
    assert!(!project_sentinel.exists());
    // The _meta allow did not skip the ask, and the reject held.
    assert_eq!(seen.asks.len(), 1);
    assert!(!sentinel.exists());
}

#[cfg(feature = "mcp")]
#[test]
fn the_editors_stdio_servers_are_never_started_and_each_rejection_is_reported() {
    let (sandbox, sentinel) = sentinel_project(json!({}));
    let spawned = sandbox.dir.path().join("spawned-by-editor");
    let touch = format!("touch {}", spawned.display());
    let servers: Vec<McpServer> = serde_json::from_value(json!([
        {"name": "evil", "command": "/bin/sh", "args": ["-c", touch], "env": []},
        {"type": "stdio", "name": "evil2", "command": "/bin/sh", "args": ["-c", touch], "env": []},
        {"type": "ws", "name": "evil3", "command": "/bin/sh", "args": ["-c", touch], "env": []},
        {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
        {"type": "http", "name": "sentinel", "url": "http://127.0.0.1:9/mcp", "headers": []},
    ]))
    .unwrap();
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let session = with_editor(&agent, Answer::Reject, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), servers.clone()).await?;
        prompt(&editor, &session.session_id, "/tools").await?;
        Ok(session)
    });
    block_on(agent.shutdown());
    std::thread::sleep(Duration::from_millis(300));
    assert!(!spawned.exists(), "an editor's stdio server was started");
    let rejected = &session.meta.as_ref().unwrap()["earshot"]["rejectedMcpServers"];
    let names: Vec<(&str, &str)> = rejected
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("evil", "stdio"),
            ("evil2", "stdio"),
            ("evil3", "stdio"),
            ("old", "sse"),
            ("sentinel", "name-collision")
        ]
    );
    let messages = seen.lock().unwrap().messages();
    for name in ["evil", "evil2", "evil3", "old", "sentinel"] {
        assert!(
            messages.contains(&format!(
                "MCP server \"{name}\" from the editor is not used"
            )),
            "{messages}"
        );
    }
    // The configured server of that name is the one listed, not shadowed.
    assert!(messages.contains("sentinel__touch"), "{messages}");
    assert!(!sentinel.exists());
}

#[cfg(feature = "mcp")]
#[test]
fn an_editors_http_server_joins_the_session_gated_asking_the_editor_and_obeying_deny_rules() {
    let (mut server, port) = everything_over_http();
    let web: Vec<McpServer> = serde_json::from_value(json!([
        {"type": "http", "name": "web", "url": format!("http://127.0.0.1:{port}/mcp"), "headers": []}
    ]))
    .unwrap();
    let sandbox = Sandbox::new();
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    with_editor(&agent, Answer::AllowOnce, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), web.clone()).await?;
        prompt(&editor, &session.session_id, "/tools").await?;
        prompt(
            &editor,
            &session.session_id,
            r#"/call web__echo {"message":"through the editor"}"#,
        )
        .await
    });
    block_on(agent.shutdown());
    {
        let seen = seen.lock().unwrap();
        let messages = seen.messages();
        assert!(messages.contains("web__echo"), "{messages}");
        assert!(messages.contains("through the editor"), "{messages}");
        assert_eq!(
            seen.asks.len(),
            1,
            "the editor's server is asked about like any other"
        );
        assert_eq!(
            seen.statuses(),
            [ToolCallStatus::InProgress, ToolCallStatus::Completed]
        );
    }

    // A deny rule in the user's settings denies its tools without asking.
    sandbox.user_settings(json!({"permissions": {"deny": ["Mcp(web__*)"]}}));
    let agent = self::agent(&sandbox);
    let denied = Arc::new(Mutex::new(Seen::default()));
    with_editor(&agent, Answer::AllowAlways, &denied, async |editor| {
        let session = new_session(&editor, &sandbox.project(), web.clone()).await?;
        prompt(
            &editor,
            &session.session_id,
            r#"/call web__echo {"message":"no"}"#,
        )
        .await
    });
    block_on(agent.shutdown());
    server.kill().ok();
    server.wait().ok();
    let denied = denied.lock().unwrap();
    assert!(denied.asks.is_empty());
    assert_eq!(denied.statuses(), [ToolCallStatus::Failed]);
    assert!(
        denied.messages().contains("is denied by the rule"),
        "{}",
        denied.messages()
    );
}

#[test]
fn an_editor_that_declares_notices_hears_each_rejection_as_a_notice() {
    let sandbox = Sandbox::new();
    let servers: Vec<McpServer> = serde_json::from_value(json!([
        {"name": "evil", "command": "/bin/sh", "args": [], "env": []},
        {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
    ]))
    .unwrap();
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let notices = ClientCapabilities::new()
        .session(ClientSessionCapabilities::new().notices(NoticeCapabilities::new()));
    with_editor_declaring(&agent, notices, Answer::Reject, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), servers.clone()).await?;
        prompt(&editor, &session.session_id, "/tools").await
    });
    block_on(agent.shutdown());
    let seen = seen.lock().unwrap();
    let titles: Vec<String> = seen
        .updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::Notice(notice) => Some(notice.title.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        titles,
        [
            "MCP server \"evil\" from the editor is not used",
            "MCP server \"old\" from the editor is not used"
        ]
    );
    assert!(!seen.messages().contains("from the editor is not used"));
}

#[cfg(feature = "mcp")]
#[test]
fn a_pre_tool_use_hook_that_blocks_fails_the_tool_call_and_the_editor_is_never_asked() {
    let (sandbox, sentinel) = sentinel_project(json!({
        "permissions": {"allow": ["Mcp(sentinel__touch)"]},
        "hooks": crate::hooks::on(
            "PreToolUse",
            "*",
            vec![crate::hooks::handler("guard", &["exit", "2", "not from the editor"])],
        ),
    }));
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let stop = with_editor(&agent, Answer::AllowAlways, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), vec![]).await?;
        prompt(&editor, &session.session_id, "/call sentinel__touch {}").await
    });
    block_on(agent.shutdown());
    let seen = seen.lock().unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    assert!(seen.asks.is_empty(), "a blocked call reached the editor");
    assert!(!sentinel.exists(), "the blocked tool ran");
    // The rule allows it, so the call starts; the hook fails it.
    let statuses = seen.statuses();
    assert_eq!(
        statuses.last(),
        Some(&ToolCallStatus::Failed),
        "{statuses:?}"
    );
    assert!(
        !statuses.contains(&ToolCallStatus::Completed),
        "{statuses:?}"
    );
    assert!(
        seen.messages()
            .contains("blocked by hook \"guard\": not from the editor"),
        "{}",
        seen.messages()
    );
}

#[cfg(feature = "mcp")]
#[test]
fn every_result_shape_reaches_the_editor_neutralised_and_ending_with_the_hooks_context() {
    use crate::hooks_results::{
        FORGED_SOURCE, SHAPES, assert_neutralised_with_context, block_reading, context_for,
        forging_sandbox, host_reading,
    };
    let sandbox = forging_sandbox();
    let host = sandbox.host();
    let agent = agent(&sandbox);
    let seen = Arc::new(Mutex::new(Seen::default()));
    with_editor(&agent, Answer::AllowOnce, &seen, async |editor| {
        let session = new_session(&editor, &sandbox.project(), vec![]).await?;
        for shape in SHAPES {
            prompt(
                &editor,
                &session.session_id,
                &format!("/call forge__{shape} {{}}"),
            )
            .await?;
        }
        Ok(())
    });
    block_on(agent.shutdown());
    let seen = seen.lock().unwrap();
    // Each call's last update: its result's blocks and raw output.
    let finished: Vec<(Vec<Value>, Value)> = seen
        .updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::ToolCallUpdate(update)
                if matches!(
                    update.fields.status,
                    Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
                ) =>
            {
                let blocks = update
                    .fields
                    .content
                    .iter()
                    .flatten()
                    .map(|content| serde_json::to_value(content).unwrap()["content"].clone())
                    .collect();
                Some((
                    blocks,
                    update.fields.raw_output.clone().unwrap_or(Value::Null),
                ))
            }
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), SHAPES.len(), "{:?}", seen.statuses());
    for (shape, (blocks, raw_output)) in SHAPES.iter().zip(&finished) {
        let structured = if *shape == "structured" {
            raw_output.clone()
        } else {
            Value::Null
        };
        assert_neutralised_with_context("acp", shape, blocks, &structured);
        let output = host
            .call(
                &format!("forge__{shape}"),
                "{}",
                &earshot_host::NonInteractivePrompter,
            )
            .unwrap();
        let (expected, expected_structured) = host_reading(&output);
        let readings = |blocks: &[Value]| blocks.iter().map(block_reading).collect::<Vec<_>>();
        assert_eq!(readings(blocks), readings(&expected), "{shape}");
        if *shape == "structured" {
            assert_eq!(*raw_output, expected_structured);
        } else {
            assert_eq!(raw_output.as_str(), Some(output.output.as_str()), "{shape}");
            assert!(!output.output.contains(FORGED_SOURCE));
            assert!(
                output.output.ends_with(&context_for(shape)),
                "{}",
                output.output
            );
        }
    }
    // What the console says to the editor (the tool's text) is neutralised too.
    assert!(
        !seen.messages().contains(FORGED_SOURCE),
        "{}",
        seen.messages()
    );
}
