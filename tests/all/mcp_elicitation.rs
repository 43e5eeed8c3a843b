//! Elicitation (form mode) with server-everything's `trigger-elicitation-request`: what the
//! elicitor is shown, accept with defaults pre-filled, decline, cancel, an answer that does not
//! fit the form, a session with no one to ask, the terminal elicitor, and that an elicitation
//! never stands in for a permission answer.

use std::sync::{Arc, Mutex};

use earshot_host::gate::NonInteractivePrompter;
use earshot_host::mcp::{
    ElicitationAnswer, ElicitationRequest, Elicitor, FieldKind, TerminalElicitor,
};
use earshot_host::{BoxFuture, CallError, HostBuilder, Settings};
use serde_json::json;

use crate::common::{Sandbox, block_on, mcp_parts, shared_cache};

const TOOL: &str = "every__trigger-elicitation-request";

/// Answers with `answer` (a function of the request) and keeps every request it saw.
struct Scripted {
    answer: fn(&ElicitationRequest) -> ElicitationAnswer,
    seen: Mutex<Vec<ElicitationRequest>>,
}

impl Elicitor for Scripted {
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        self.seen.lock().unwrap().push(request.clone());
        Box::pin(std::future::ready((self.answer)(request)))
    }
}

fn scripted(answer: fn(&ElicitationRequest) -> ElicitationAnswer) -> Arc<Scripted> {
    Arc::new(Scripted {
        answer,
        seen: Mutex::new(Vec::new()),
    })
}

fn sandbox(allow: bool) -> Sandbox {
    let sandbox = Sandbox::new();
    let bin = mcp_parts().join("node_modules/.bin/mcp-server-everything");
    let mut settings =
        json!({"mcpServers": {"every": {"command": bin.display().to_string(), "args": ["stdio"]}}});
    if allow {
        settings["permissions"] = json!({"allow": [format!("Mcp({TOOL})")]});
    }
    sandbox.user_settings(settings);
    sandbox
}

/// Calls the elicitation tool in a session answered by `elicitor` (none: the default).
fn trigger(sandbox: &Sandbox, elicitor: Option<Arc<dyn Elicitor>>) -> Result<String, CallError> {
    let settings = Settings::load(
        Some(&sandbox.config()),
        Some(earshot_host::ProjectPaths::new(sandbox.project())),
    );
    block_on(async move {
        let mut builder = HostBuilder::new(settings).cache(shared_cache());
        if let Some(elicitor) = elicitor {
            builder = builder.elicitor(elicitor);
        }
        let host = builder.build().await.expect("host loads");
        let answer = host.call(TOOL, "{}", &NonInteractivePrompter).await;
        host.shutdown().await;
        answer.map(|output| output.output)
    })
}

#[test]
fn the_form_is_shown_with_its_defaults_and_an_accepted_answer_reaches_the_server() {
    let sandbox = sandbox(true);
    let elicitor = scripted(|request| {
        let mut answer = request.defaults();
        answer.insert("name".into(), json!("Ada Lovelace"));
        answer.insert("check".into(), json!(true));
        ElicitationAnswer::Accept(answer)
    });
    let output = trigger(&sandbox, Some(elicitor.clone())).expect("the call succeeds");
    assert!(
        output.contains("User provided the requested information"),
        "{output}"
    );
    assert!(output.contains("- Name: Ada Lovelace"), "{output}");
    assert!(output.contains("- Favorite Integer: 42"), "{output}");

    let seen = elicitor.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let form = &seen[0];
    assert_eq!(form.server, "every", "the server is named, not earshot");
    assert_eq!(
        form.message,
        "Please provide inputs for the following fields:"
    );
    let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
    assert!(field("name").required && !field("check").required);
    assert_eq!(
        field("firstLine").default,
        Some(json!("It was a dark and stormy night."))
    );
    assert_eq!(field("integer").default, Some(json!(42)));
    assert!(matches!(field("check").kind, FieldKind::Boolean));
    match &field("titledSingleSelectEnum").kind {
        FieldKind::Choice(options) => {
            assert_eq!(options[0].value, "hero-1");
            assert_eq!(options[0].label, "Superman");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        field("titledMultipleSelectEnum").kind,
        FieldKind::Choices { .. }
    ));
}

#[test]
fn decline_cancel_no_one_to_ask_and_an_answer_that_does_not_fit_are_what_the_server_hears() {
    let sandbox = sandbox(true);
    let declined = trigger(&sandbox, Some(scripted(|_| ElicitationAnswer::Decline))).unwrap();
    assert!(declined.contains("\"action\": \"decline\""), "{declined}");
    let cancelled = trigger(&sandbox, Some(scripted(|_| ElicitationAnswer::Cancel))).unwrap();
    assert!(cancelled.contains("User cancelled"), "{cancelled}");
    // No elicitor: declined for the user, the call still returns.
    let nobody = trigger(&sandbox, None).unwrap();
    assert!(nobody.contains("\"action\": \"decline\""), "{nobody}");
    // An embedder's answer that breaks the form (a number for a name, a value out of range) is
    // never sent: the server is told the user declined.
    let unfit = trigger(
        &sandbox,
        Some(scripted(|_| {
            ElicitationAnswer::Accept(
                json!({"name": 7, "integer": 1000})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
        })),
    )
    .unwrap();
    assert!(unfit.contains("\"action\": \"decline\""), "{unfit}");
    assert!(!unfit.contains("1000"), "{unfit}");
}

#[test]
fn the_terminal_elicitor_fills_the_form_from_what_is_typed() {
    let sandbox = sandbox(true);
    // The name, then Enter on the twelve other fields (each keeps its default or is left out),
    // then accept.
    let typed = format!("Grace Hopper\n{}send\n", "\n".repeat(12));
    let shown = Arc::new(Mutex::new(Vec::new()));
    let terminal = TerminalElicitor::new(
        Box::new(std::io::Cursor::new(typed.into_bytes())),
        Box::new(SharedBuffer(shown.clone())),
    );
    let output = trigger(&sandbox, Some(Arc::new(terminal))).unwrap();
    let shown = String::from_utf8(shown.lock().unwrap().clone()).unwrap();
    assert!(output.contains("- Name: Grace Hopper"), "{output}\n{shown}");
    assert!(output.contains("- Favorite Number: 3.14"), "{output}");
    assert!(
        shown.contains("server \"every\" asks for input (the server is asking, not earshot)"),
        "{shown}"
    );
    assert!(
        shown.contains("[It was a dark and stormy night.]"),
        "{shown}"
    );
}

#[test]
fn an_elicitation_never_answers_a_permission_ask() {
    // No rule allows the tool and no one can be asked: the call is denied before the server
    // runs, so its form is never shown, whatever the elicitor would have answered.
    let sandbox = sandbox(false);
    let elicitor = scripted(|request| ElicitationAnswer::Accept(request.defaults()));
    let denied = trigger(&sandbox, Some(elicitor.clone()));
    assert!(matches!(denied, Err(CallError::Denied(_))), "{denied:?}");
    assert!(elicitor.seen.lock().unwrap().is_empty());
}

/// A writer whose bytes the test reads afterwards.
struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_server_that_elicits_in_a_loop_is_declined_past_five_and_costs_only_itself() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {
            "loop": crate::common::fixture_server("elicits_in_a_loop.py", &[]),
            "clock": crate::common::fixture_server("clock.py", &[]),
        },
        "permissions": {"allow": ["Mcp(*)"]},
    }));
    let settings = Settings::load(
        Some(&sandbox.config()),
        Some(earshot_host::ProjectPaths::new(sandbox.project())),
    );
    let elicitor = scripted(|request| ElicitationAnswer::Accept(request.defaults()));
    let shared: Arc<dyn Elicitor> = elicitor.clone();
    block_on(async move {
        let host = HostBuilder::new(settings)
            .cache(shared_cache())
            .elicitor(shared)
            .build()
            .await
            .expect("host loads");
        let output = host
            .call("loop__ask", "{}", &NonInteractivePrompter)
            .await
            .expect("the call ends");
        let counts: serde_json::Value = serde_json::from_str(&output.output).unwrap();
        assert_eq!(counts, json!({"accept": 5, "decline": 45, "cancel": 0}));
        let echoed = host
            .call("clock__echo", r#"{"text":"fine"}"#, &NonInteractivePrompter)
            .await
            .expect("another server still answers");
        assert_eq!(echoed.output, "fine");
        host.shutdown().await;
    });
    assert_eq!(
        elicitor.seen.lock().unwrap().len(),
        5,
        "the user was asked five times"
    );
}

#[test]
fn a_form_sent_while_no_request_is_in_flight_is_declined_without_asking() {
    let sandbox = Sandbox::new();
    let notes = sandbox.dir.path().join("late.txt");
    let notes_arg = notes.display().to_string();
    sandbox.user_settings(json!({
        "mcpServers": {"late": crate::common::fixture_server("elicits_in_a_loop.py", &["--notes", &notes_arg])},
        "permissions": {"allow": ["Mcp(*)"]},
    }));
    let settings = Settings::load(
        Some(&sandbox.config()),
        Some(earshot_host::ProjectPaths::new(sandbox.project())),
    );
    let elicitor = scripted(|request| ElicitationAnswer::Accept(request.defaults()));
    let shared: Arc<dyn Elicitor> = elicitor.clone();
    let answered = block_on(async move {
        let host = HostBuilder::new(settings)
            .cache(shared_cache())
            .elicitor(shared)
            .build()
            .await
            .expect("host loads");
        let output = host
            .call("late__ask_later", "{}", &NonInteractivePrompter)
            .await
            .expect("the call answers");
        // The server asks after its answer: wait for what it heard.
        let mut heard = String::new();
        for _ in 0..100 {
            heard = std::fs::read_to_string(&notes).unwrap_or_default();
            if !heard.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        host.shutdown().await;
        (output.output, heard)
    });
    assert_eq!(answered.0, "answered");
    assert_eq!(
        answered.1.trim(),
        "decline",
        "out of turn, the form is declined"
    );
    assert!(elicitor.seen.lock().unwrap().is_empty(), "no one was asked");
}
