//! What leaves the process about MCP servers: no value a `${VAR}` expanded to (in a url, a
//! header, an env value, an argument, the command) in any output, state, warning, error or log;
//! no configured header carried across a redirect; and `--json` escaped for the terminal the way
//! text is stripped.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::{Sandbox, free_port, mcp_fixture};

/// The secrets, each handed in through its own variable.
const SECRETS: &[(&str, &str)] = &[
    ("EARSHOT_T_URL_KEY", "url-s3cret-7Qx"),
    ("EARSHOT_T_HEADER_KEY", "header-s3cret-8Rz"),
    ("EARSHOT_T_ENV_KEY", "env-s3cret-9Sy"),
    ("EARSHOT_T_ARG_KEY", "arg-s3cret-1Tw"),
    ("EARSHOT_T_CMD_KEY", "cmd-s3cret-2Uv"),
    ("EARSHOT_T_CALL_KEY", "call-s3cret-3Vu"),
];

/// Runs `earshot ARGS` with the secrets in its environment: exit code, stdout, stderr.
fn run_split(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let mut command = sandbox.earshot();
    for (name, value) in SECRETS {
        command.env(name, value);
    }
    let output = command.args(args).output().expect("earshot runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// [`run_split`] with stdout and stderr together.
fn run_with_secrets(sandbox: &Sandbox, args: &[&str]) -> (i32, String) {
    let (code, stdout, stderr) = run_split(sandbox, args);
    (code, format!("{stdout}{stderr}"))
}

fn assert_no_secret(args: &[&str], output: &str) {
    for (name, value) in SECRETS {
        assert!(
            !output.contains(value),
            "`earshot {}` shows ${{{name}}}'s value:\n{output}",
            args.join(" ")
        );
    }
}

/// A user's server on the fixtures' `mcpfake` whose one tool writes `$TOKEN` to stderr and exits.
fn leaky_server(sandbox: &Sandbox) -> String {
    let fixtures = std::path::Path::new(&mcp_fixture("mcpfake.py"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    let script = sandbox.dir.path().join("leaky.py");
    std::fs::write(
        &script,
        format!(
            r#"import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, {fixtures:?})
import mcpfake
from mcpfake import EMPTY_SCHEMA
def leak(_a, _i):
    sys.stderr.write("token is " + os.environ["TOKEN"] + "\n")
    sys.stderr.flush()
    os._exit(1)
srv = mcpfake.Server("leaky")
srv.tool("leak", "Leaks its token on stderr and exits.", EMPTY_SCHEMA, leak)
srv.run()
"#
        ),
    )
    .unwrap();
    script.display().to_string()
}

#[test]
fn no_expanded_secret_appears_in_any_output_state_warning_error_or_log() {
    let sandbox = Sandbox::new();
    let closed = free_port();
    let leaky = leaky_server(&sandbox);
    sandbox.user_settings(json!({"mcpServers": {
            "byurl": {"type": "http", "url": format!("http://127.0.0.1:{closed}/mcp?key=${{EARSHOT_T_URL_KEY}}")},
            "byheader": {"type": "http", "url": format!("http://127.0.0.1:{closed}/h"),
                         "headers": {"X-Api-Key": "${EARSHOT_T_HEADER_KEY}"}},
            "byenv": {"command": "python3", "env": {"TOKEN": "${EARSHOT_T_ENV_KEY}"},
                      "args": ["-c", "import os, sys; sys.stderr.write('token is ' + os.environ['TOKEN'] + '\\n'); sys.exit(3)"]},
            "byarg": {"command": "python3",
                      "args": ["-c", "import sys; sys.stderr.write('args: ' + ' '.join(sys.argv[1:]) + '\\n'); sys.exit(3)", "--key=${EARSHOT_T_ARG_KEY}"]},
            "bycmd": {"command": "/nonexistent/${EARSHOT_T_CMD_KEY}"},
            "leaky": {"command": "python3", "args": [leaky], "env": {"TOKEN": "${EARSHOT_T_CALL_KEY}"}},
        },
        "permissions": {"allow": ["Mcp(leaky__*)"]}}));

    let (_, listed) = run_with_secrets(&sandbox, &["mcp", "list"]);
    assert_no_secret(&["mcp", "list"], &listed);
    // The lines are there, with the variable where its value was.
    for shown in [
        "key=${EARSHOT_T_URL_KEY}",
        "token is ${EARSHOT_T_ENV_KEY}",
        "--key=${EARSHOT_T_ARG_KEY}",
        "/nonexistent/${EARSHOT_T_CMD_KEY}",
    ] {
        assert!(listed.contains(shown), "{shown} in:\n{listed}");
    }
    let commands: Vec<Vec<&str>> = vec![
        vec!["mcp", "list", "--json"],
        vec!["-vv", "mcp", "list"],
        vec!["mcp", "get", "byurl"],
        vec!["mcp", "get", "byurl", "--json"],
        vec!["mcp", "get", "byheader"],
        vec!["mcp", "get", "byheader", "--json"],
        vec!["mcp", "get", "byenv"],
        vec!["mcp", "get", "byenv", "--json"],
        vec!["mcp", "get", "byarg"],
        vec!["mcp", "get", "byarg", "--json"],
        vec!["mcp", "get", "bycmd", "--json"],
        vec!["tools", "list"],
        vec!["tools", "list", "--json"],
        vec!["tools", "call", "byurl__anything", "{}"],
    ];
    for args in &commands {
        let (_, output) = run_with_secrets(&sandbox, args);
        assert_no_secret(args, &output);
    }
    let (_, json_listed) = run_with_secrets(&sandbox, &["mcp", "list", "--json"]);
    assert!(
        json_listed.contains("token is ${EARSHOT_T_ENV_KEY}"),
        "{json_listed}"
    );

    // A call that fails with the server's stderr, which holds the secret.
    let args = ["tools", "call", "leaky__leak", "{}"];
    let (code, output) = run_with_secrets(&sandbox, &args);
    assert_ne!(code, 0);
    assert!(
        output.contains("exited with code 1 during the call to leak")
            && output.contains("token is ${EARSHOT_T_CALL_KEY}"),
        "{output}"
    );
    assert_no_secret(&args, &output);
}

/// A loopback HTTP server that answers every request with `answer(port)` and records each
/// request's head (request line and headers).
fn loopback(answer: impl Fn() -> String + Send + 'static) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            recorded
                .lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let _ = stream.write_all(answer().as_bytes());
        }
    });
    (port, seen)
}

#[test]
fn a_configured_header_never_follows_a_redirect_to_another_origin() {
    let (target, arrived) = loopback(|| {
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into()
    });
    let (redirector, asked) = loopback(move || {
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{target}/mcp\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    });
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {
        "hop": {"type": "http", "url": format!("http://localhost:{redirector}/mcp"),
                "headers": {"X-Api-Key": "${EARSHOT_T_HEADER_KEY}"}},
    }}));

    let (_, stdout, stderr) = run_split(&sandbox, &["mcp", "list", "--json"]);
    let listed: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("JSON: {stdout}{stderr}"));
    let reason = listed["servers"][0]["reason"].as_str().unwrap().to_string();
    assert!(
        reason
            .contains("it answered with a redirect, which earshot does not follow for MCP servers")
            && !reason.contains('\n'),
        "{reason}"
    );
    let (_, warned) = run_with_secrets(&sandbox, &["tools", "list"]);
    assert!(
        warned.contains("warning: server \"hop\"") && warned.contains("answered with a redirect"),
        "{warned}"
    );
    assert!(
        asked
            .lock()
            .unwrap()
            .iter()
            .any(|head| head.to_ascii_lowercase().contains("x-api-key")),
        "the server the user configured got its header"
    );
    assert!(
        arrived.lock().unwrap().is_empty(),
        "nothing reached the other origin: {:?}",
        arrived.lock().unwrap()
    );
}

/// A user's server whose tool description and resource name carry C1 and bidirectional
/// characters.
fn odd_text_server(sandbox: &Sandbox) -> Value {
    let fixtures = std::path::Path::new(&mcp_fixture("mcpfake.py"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    let script = sandbox.dir.path().join("odd.py");
    std::fs::write(
        &script,
        format!(
            r#"import sys
sys.dont_write_bytecode = True
sys.path.insert(0, {fixtures:?})
import mcpfake
from mcpfake import EMPTY_SCHEMA, text
ODD = "csi\u009b31m red \u202eevil\u202c isolate\u2066x\u2069 nel\u0085 del\u007f end"
srv = mcpfake.Server("odd")
srv.capabilities["resources"] = {{}}
srv.methods["resources/list"] = lambda p: {{"resources": [{{"uri": "demo://odd", "name": ODD}}]}}
srv.methods["resources/templates/list"] = lambda p: {{"resourceTemplates": []}}
srv.tool("odd", ODD, EMPTY_SCHEMA, lambda a, _: text("ok"))
srv.run()
"#
        ),
    )
    .unwrap();
    json!({"command": "python3", "args": [script.display().to_string()]})
}

const STRIPPED: &[char] = &[
    '\u{9b}', '\u{85}', '\u{7f}', '\u{202e}', '\u{202c}', '\u{2066}', '\u{2069}',
];

#[test]
fn json_output_escapes_c1_and_bidirectional_characters_and_keeps_the_value() {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({"mcpServers": {"odd": odd_text_server(&sandbox)}}));
    for args in [
        &["mcp", "resources", "--json"][..],
        &["tools", "list", "--json"],
        &["mcp", "get", "odd", "--json"],
        &["mcp", "list", "--json"],
    ] {
        let (code, stdout, stderr) = sandbox.run(args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        for c in STRIPPED {
            assert!(
                !stdout.contains(*c),
                "{args:?} writes U+{:04X} raw:\n{stdout}",
                *c as u32
            );
        }
        serde_json::from_str::<Value>(&stdout).expect("still JSON");
    }
    let (_, stdout, _) = sandbox.run(&["mcp", "resources", "--json"]);
    assert!(
        stdout.contains(r"\u009b31m") && stdout.contains(r"\u202eevil"),
        "{stdout}"
    );
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        listed[0]["name"],
        "csi\u{9b}31m red \u{202e}evil\u{202c} isolate\u{2066}x\u{2069} nel\u{85} del\u{7f} end",
        "a JSON reader gets the value the server sent"
    );
}

#[test]
fn mcp_serve_never_sends_an_expanded_secret_to_its_client_or_its_log() {
    use std::io::BufRead;
    let sandbox = Sandbox::new();
    let leaky = leaky_server(&sandbox);
    sandbox.user_settings(json!({"mcpServers": {
            "leaky": {"command": "python3", "args": [leaky], "env": {"TOKEN": "${EARSHOT_T_CALL_KEY}"}},
            "byurl": {"type": "http", "url": format!("http://127.0.0.1:{}/mcp?key=${{EARSHOT_T_URL_KEY}}", free_port())},
        },
        "permissions": {"allow": ["Mcp(leaky__*)"]}}));
    let log = sandbox.dir.path().join("serve.log");
    let mut command = sandbox.earshot();
    for (name, value) in SECRETS {
        command.env(name, value);
    }
    let mut serve = command
        .args(["-vv", "mcp", "serve"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    let mut send = move |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "leaky__leak", "arguments": {}}}));
    let mut seen = String::new();
    let answer = loop {
        let line = lines.next().expect("an answer").unwrap();
        seen.push_str(&line);
        seen.push('\n');
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break message;
        }
    };
    drop(send);
    for line in lines.map_while(Result::ok) {
        seen.push_str(&line);
    }
    serve.wait().unwrap();
    assert!(
        answer
            .to_string()
            .contains("token is ${EARSHOT_T_CALL_KEY}"),
        "{answer}"
    );
    assert_no_secret(&["mcp", "serve"], &seen);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("${EARSHOT_T_URL_KEY}"), "{logged}");
    assert_no_secret(&["-vv", "mcp", "serve", "(stderr)"], &logged);
}

/// A value a `${VAR}` expanded to never reaches a hook: the failed call's error (the server's
/// stderr holds the token) goes to a command hook that logs its stdin and to an HTTP hook on
/// loopback that records its body; both get the error with `${VAR}` where the value was.
#[test]
fn a_secret_in_a_failed_calls_error_never_reaches_a_hooks_stdin_or_an_http_hooks_body() {
    let sandbox = Sandbox::new();
    let leaky = leaky_server(&sandbox);
    let dir = tempfile::tempdir().unwrap();
    let stdin_log = dir.path().join("stdin");
    let body_log = dir.path().join("bodies");
    let port = free_port();
    let mut endpoint = std::process::Command::new("python3")
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/hooks/http_hook.py"),
        )
        .args([&port.to_string(), body_log.to_str().unwrap(), "{}"])
        .spawn()
        .unwrap();
    crate::common::wait_listening(port, std::time::Duration::from_secs(20));
    sandbox.user_settings(json!({
        "mcpServers": {"leaky": {"command": "python3", "args": [leaky], "env": {"TOKEN": "${EARSHOT_T_CALL_KEY}"}}},
        "permissions": {"allow": ["Mcp(leaky__*)"]},
        "hooks": {"PostToolUseFailure": [{"matcher": "*", "hooks": [
            {"command": "python3", "args": [crate::hooks::hook_py(), "--log", stdin_log, "print", "{}"], "name": "logs"},
            {"type": "http", "url": format!("http://127.0.0.1:{port}/hook"), "name": "posts"},
        ]}]},
    }));
    let args = ["tools", "call", "leaky__leak", "{}"];
    let (code, stdout, stderr) = run_split(&sandbox, &args);
    let _ = endpoint.kill();
    let _ = endpoint.wait();
    assert_ne!(code, 0, "{stdout}{stderr}");
    assert_no_secret(&args, &format!("{stdout}{stderr}"));
    let stdin = std::fs::read_to_string(&stdin_log).unwrap_or_default();
    let bodies = std::fs::read_to_string(&body_log).unwrap_or_default();
    for (what, seen) in [
        ("the command hook's stdin", &stdin),
        ("the http hook's body", &bodies),
    ] {
        let event: Value = serde_json::from_str(seen.lines().next().unwrap_or("null")).unwrap();
        let event = event.get("body").unwrap_or(&event);
        assert_eq!(
            event["hook_event_name"], "PostToolUseFailure",
            "{what}: {seen}"
        );
        let error = event["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("token is ${EARSHOT_T_CALL_KEY}"),
            "{what}: {seen}"
        );
        for (name, value) in SECRETS {
            assert!(
                !seen.contains(value),
                "{what} holds ${{{name}}}'s value: {seen}"
            );
        }
    }
}
