//! OAuth for HTTP servers against a small authorization server of our own
//! (`fixtures/mcp/oauth/auth_server.py`, loopback, with refresh tokens, which the conformance
//! suite never issues): login through the real loopback listener, the token file, refresh before
//! expiry with rotation, a restarted process refreshing with a registered client's secret (basic
//! and post), a rejected refresh, two processes refreshing at once, a changed URL, and trust.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Sandbox, free_port, wait_listening};

/// The authorization + resource server, killed when dropped.
struct AuthServer {
    child: std::process::Child,
    port: u16,
}

impl AuthServer {
    fn start(auth_method: &str, expires_in: u64) -> AuthServer {
        AuthServer::start_with(auth_method, expires_in, &[])
    }

    fn start_with(auth_method: &str, expires_in: u64, extra: &[&str]) -> AuthServer {
        let port = free_port();
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp/oauth/auth_server.py");
        let child = std::process::Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .args(["--auth-method", auth_method, "--expires-in"])
            .arg(expires_in.to_string())
            .args(extra)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("the fixture authorization server starts");
        wait_listening(port, Duration::from_secs(15));
        AuthServer { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn send(&self, method: &str, path: &str) -> Value {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("{}");
        serde_json::from_str(body).unwrap_or(Value::Null)
    }

    /// One counter of the server.
    fn stat(&self, name: &str) -> u64 {
        self.send("GET", "/stats")[name].as_u64().unwrap()
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Access tokens live this long (seconds)...
const EXPIRES_IN: u64 = 6;

/// ...and rmcp refreshes once less than half of that remains, counted in whole seconds since the
/// token was received: after this long, the next request always refreshes, a second before the
/// server would refuse the token.
const PAST_THE_REFRESH_POINT: Duration = Duration::from_millis(5_100);

fn follow_browser() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp/oauth/follow-browser")
}

/// A sandbox whose user settings define `remote` at `url`, its tools allowed.
fn sandbox_with(url: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": { "remote": { "type": "http", "url": url } },
        "permissions": { "allow": ["Mcp(remote__*)"] },
    }));
    sandbox
}

/// Runs earshot with the test browser.
fn run(sandbox: &Sandbox, args: &[&str]) -> (i32, String, String) {
    let output = sandbox
        .earshot()
        .env("EARSHOT_BROWSER", follow_browser())
        .args(args)
        .output()
        .expect("earshot runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn token_files(sandbox: &Sandbox) -> Vec<PathBuf> {
    std::fs::read_dir(sandbox.config().join("mcp-oauth"))
        .map(|dir| {
            dir.flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|e| e == "json"))
                .collect()
        })
        .unwrap_or_default()
}

fn login(sandbox: &Sandbox) {
    let (code, stdout, stderr) = run(sandbox, &["mcp", "login", "remote"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("logged in to \"remote\""), "{stdout}");
    assert!(stdout.contains("connected: 1 tool(s)"), "{stdout}");
}

fn whoami(sandbox: &Sandbox) -> (i32, String, String) {
    run(sandbox, &["tools", "call", "remote__whoami", "{}"])
}

#[test]
fn a_server_that_needs_oauth_is_listed_as_needing_login_until_the_user_logs_in() {
    let server = AuthServer::start("basic", 3600);
    let sandbox = sandbox_with(&server.url());
    let (code, stdout, stderr) = run(&sandbox, &["mcp", "list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("needs login: run `earshot mcp login remote`"),
        "{stdout}"
    );
    // Listing never opens a browser or registers.
    assert_eq!(server.stat("authorize_requests"), 0);
    assert_eq!(server.stat("registrations"), 0);
    let (code, _, stderr) = whoami(&sandbox);
    assert_ne!(code, 0);
    assert!(
        stderr.contains(
            "server \"remote\" needs login: run `earshot mcp login remote` before remote__whoami can be called"
        ),
        "{stderr}"
    );

    login(&sandbox);
    assert_eq!(server.stat("registrations"), 1);
    let (code, stdout, stderr) = whoami(&sandbox);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("token 1"), "{stdout}");

    // One file, only the user's, with no secret in what `mcp get` prints.
    let files = token_files(&sandbox);
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let dir_mode = std::fs::metadata(sandbox.config().join("mcp-oauth"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700, "{dir_mode:o}");
    }
    let record: Value = serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    let access = record["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let secret = record["client_secret"].as_str().unwrap().to_string();
    let (_, get_out, get_err) = run(&sandbox, &["mcp", "get", "remote"]);
    assert!(!get_out.contains(&access) && !get_err.contains(&access));
    assert!(!get_out.contains(&secret) && !get_err.contains(&secret));

    // Logout deletes it; the server needs a login again.
    let (code, stdout, _) = run(&sandbox, &["mcp", "logout", "remote"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("logged out"), "{stdout}");
    assert!(token_files(&sandbox).is_empty());
    let (_, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("needs login"), "{stdout}");
}

#[test]
fn tokens_are_refreshed_before_they_expire_and_rotated_refresh_tokens_are_kept() {
    let server = AuthServer::start("basic", EXPIRES_IN);
    let sandbox = sandbox_with(&server.url());
    login(&sandbox);
    for round in 1..=2 {
        // Past the refresh point, the next call refreshes first.
        std::thread::sleep(PAST_THE_REFRESH_POINT);
        let (code, stdout, stderr) = whoami(&sandbox);
        assert_eq!(code, 0, "round {round}: {stdout}{stderr}");
        assert_eq!(server.stat("refresh_grants"), round, "round {round}");
    }
    // Each refresh spent the previous refresh token (rotation): none was refused, and no
    // request ever carried an expired token.
    assert_eq!(server.stat("refresh_rejected"), 0);
    assert_eq!(server.stat("expired_token_requests"), 0);
}

#[test]
fn a_restarted_process_refreshes_with_the_registered_clients_secret() {
    for method in ["basic", "post"] {
        let server = AuthServer::start(method, EXPIRES_IN);
        let sandbox = sandbox_with(&server.url());
        login(&sandbox);
        std::thread::sleep(PAST_THE_REFRESH_POINT);
        // A new process: rmcp alone would refresh without the secret (rust-sdk#784).
        let (code, stdout, stderr) = whoami(&sandbox);
        assert_eq!(code, 0, "{method}: {stdout}{stderr}");
        assert_eq!(server.stat("refresh_grants"), 1, "{method}");
        assert_eq!(server.stat("client_auth_failures"), 0, "{method}");
    }
}

#[test]
fn a_rejected_refresh_token_needs_a_new_login_and_is_tried_once() {
    let server = AuthServer::start("basic", EXPIRES_IN);
    let sandbox = sandbox_with(&server.url());
    login(&sandbox);
    server.send("POST", "/control/revoke-refresh");
    std::thread::sleep(PAST_THE_REFRESH_POINT);
    let (code, _, stderr) = whoami(&sandbox);
    assert_ne!(code, 0);
    assert!(stderr.contains("earshot mcp login remote"), "{stderr}");
    assert_eq!(server.stat("refresh_rejected"), 1);
    // No loop: more commands do not spend more refresh attempts, and list says what to do.
    let (_, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("needs login"), "{stdout}");
    let _ = whoami(&sandbox);
    assert_eq!(server.stat("refresh_rejected"), 1);
    // The dead tokens are gone from the file; a login makes it work again.
    let record: Value =
        serde_json::from_slice(&std::fs::read(&token_files(&sandbox)[0]).unwrap()).unwrap();
    assert!(record["credentials"].is_null(), "{record}");
    login(&sandbox);
    assert_eq!(whoami(&sandbox).0, 0);
}

#[test]
fn two_processes_refreshing_at_once_spend_the_rotating_refresh_token_once_each_in_turn() {
    // A slow token endpoint, so that two refreshes not serialised by the lock overlap.
    let server = AuthServer::start_with("basic", EXPIRES_IN, &["--refresh-delay-ms", "700"]);
    let sandbox = sandbox_with(&server.url());
    login(&sandbox);
    std::thread::sleep(PAST_THE_REFRESH_POINT);
    let children: Vec<std::process::Child> = (0..2)
        .map(|_| {
            sandbox
                .earshot()
                .args(["tools", "call", "remote__whoami", "{}"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // Under the lock, the second one refreshes with the token the first one stored; without
    // it, one of them would spend a refresh token already spent and be refused.
    assert_eq!(server.stat("refresh_rejected"), 0);
    assert!(server.stat("refresh_grants") >= 1);
}

#[test]
fn a_token_is_never_sent_to_a_changed_url() {
    let server = AuthServer::start("basic", 3600);
    let sandbox = sandbox_with(&server.url());
    login(&sandbox);
    assert_eq!(whoami(&sandbox).0, 0);
    let with_token = server.stat("mcp_with_token");
    // The same server under another URL (same port, another host name): a different key.
    sandbox.user_settings(json!({
        "mcpServers": { "remote": { "type": "http", "url": format!("http://localhost:{}/mcp", server.port) } },
        "permissions": { "allow": ["Mcp(remote__*)"] },
    }));
    let (_, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("needs login"), "{stdout}");
    assert_eq!(server.stat("mcp_with_token"), with_token);
}

#[test]
fn an_untrusted_project_server_gets_no_request_and_no_login() {
    let server = AuthServer::start("basic", 3600);
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/settings.json",
        json!({ "mcpServers": { "remote": { "type": "http", "url": server.url() } } }).to_string(),
    );
    let (_, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("earshot mcp trust remote"), "{stdout}");
    let (code, _, stderr) = run(&sandbox, &["mcp", "login", "remote"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("not started"), "{stderr}");
    assert!(stderr.contains("earshot mcp trust remote"), "{stderr}");
    assert_eq!(server.stat("requests"), 0);
    assert!(token_files(&sandbox).is_empty());
}

#[test]
fn a_literal_client_secret_in_the_projects_checked_in_file_is_refused() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/settings.json",
        json!({ "mcpServers": { "remote": {
            "type": "http", "url": "http://127.0.0.1:9/mcp",
            "oauth": { "clientId": "earshot", "clientSecret": "hunter2" }
        } } })
        .to_string(),
    );
    let (_, stdout, stderr) = run(&sandbox, &["mcp", "list"]);
    assert!(
        stdout.contains(
            "oauth.clientSecret in the project's checked-in settings must be exactly a reference"
        ),
        "{stdout}{stderr}"
    );
    assert!(!stdout.contains("hunter2") && !stderr.contains("hunter2"));
}

#[test]
fn a_login_over_ssh_accepts_the_redirected_address_pasted_on_stdin() {
    let server = AuthServer::start("basic", 3600);
    let sandbox = sandbox_with(&server.url());
    let mut child = sandbox
        .earshot()
        .env("EARSHOT_BROWSER", "none")
        .args(["mcp", "login", "remote"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read the printed URL, "open" it elsewhere (no redirect followed: the browser's machine
    // cannot reach earshot's listener), and paste where it was sent.
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    let url = loop {
        let mut buffer = [0u8; 4096];
        let n = stderr.read(&mut buffer).unwrap();
        assert!(n > 0, "earshot ended before printing the URL: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        if let Some(line) = seen
            .lines()
            .find(|line| line.trim_start().starts_with("http://"))
            && seen.contains("paste")
        {
            break line.trim().to_string();
        }
    };
    let location = {
        let parsed = url::Url::parse(&url).unwrap();
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(
            stream,
            "GET {}?{} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n",
            parsed.path(),
            parsed.query().unwrap()
        )
        .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text.lines()
            .find_map(|line| {
                line.strip_prefix("location: ")
                    .or_else(|| line.strip_prefix("Location: "))
            })
            .unwrap()
            .trim()
            .to_string()
    };
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "not the address").unwrap();
    writeln!(stdin, "{location}").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("connected: 1 tool(s)"));
    assert_eq!(whoami(&sandbox).0, 0);
}

#[test]
fn a_running_session_picks_up_a_login_made_by_another_process() {
    let server = AuthServer::start("basic", 3600);
    let sandbox = sandbox_with(&server.url());
    let host = sandbox.host();
    let prompter = earshot_host::gate::NonInteractivePrompter;
    let refused = host.call("remote__whoami", "{}", &prompter);
    assert!(refused.is_err(), "{refused:?}");
    // `earshot mcp login remote` in another terminal; the session is not restarted.
    login(&sandbox);
    let output = host
        .call("remote__whoami", "{}", &prompter)
        .expect("the new login is used");
    assert!(output.output.contains("token 1"), "{}", output.output);
    // The session's own reconnect sent the stored token; it made no login of its own.
    assert_eq!(server.stat("authorize_requests"), 1);
}

#[test]
fn a_login_nobody_completes_gives_up_and_stores_nothing() {
    use earshot_host::mcp::oauth::{
        Browser, LoginError, LoginRequest, OAuthSettings, TokenKey, TokenStore, login,
    };
    let server = AuthServer::start("basic", 3600);
    let config = tempfile::tempdir().unwrap();
    let store = TokenStore::in_config_dir(config.path());
    let url = server.url();
    let key = TokenKey::new(earshot_host::settings::Layer::User, None, "remote", &url);
    // A browser that opens nothing: nobody ever reaches the listener.
    let browser = Browser::Program("true".into());
    let result = crate::common::block_on(login(LoginRequest {
        server: "remote",
        url: &url,
        headers: &std::collections::BTreeMap::new(),
        settings: &OAuthSettings::default(),
        store: &store,
        key: &key,
        challenge: None,
        browser: &browser,
        timeout: Duration::from_secs(1),
    }));
    let error = result.expect_err("nobody logged in");
    assert!(matches!(error, LoginError::TimedOut(_)), "{error}");
    assert!(error.to_string().contains("run the login again"), "{error}");
    assert!(store.read(&key).unwrap().is_none());
    assert_eq!(server.stat("code_grants"), 0);
}

#[test]
fn a_call_refused_for_lack_of_scope_names_the_login_that_grants_it_and_that_login_does() {
    let server = AuthServer::start_with("basic", 3600, &["--call-needs-scope", "write"]);
    let sandbox = sandbox_with(&server.url());
    login(&sandbox);
    // No terminal: no step-up; the call fails with what to run.
    let (code, _, stderr) = whoami(&sandbox);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("lacks the scopes it needs (mcp write)")
            && stderr.contains("earshot mcp login remote"),
        "{stderr}"
    );
    assert_eq!(server.send("GET", "/stats")["last_authorize_scope"], "mcp");
    // That login asks for what was granted plus what the server asked for.
    login(&sandbox);
    let scope = server.send("GET", "/stats")["last_authorize_scope"].clone();
    let scope: Vec<&str> = scope.as_str().unwrap().split(' ').collect();
    assert!(
        scope.contains(&"mcp") && scope.contains(&"write"),
        "{scope:?}"
    );
    let (code, stdout, stderr) = whoami(&sandbox);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The registration (and its redirect URI's port) was reused: one registration, no mismatch.
    assert_eq!(server.stat("registrations"), 1);
    assert_eq!(server.stat("redirect_mismatches"), 0);
}

#[test]
fn a_session_with_a_user_at_hand_steps_up_once_and_retries_the_call() {
    use earshot_host::mcp::oauth::Browser;
    let server = AuthServer::start_with("basic", 3600, &["--call-needs-scope", "write"]);
    let sandbox = sandbox_with(&server.url());
    let host = sandbox.host();
    let servers = host.mcp().unwrap();
    let browser = Browser::Program(follow_browser().display().to_string());
    crate::common::block_on(servers.login("remote", &browser)).expect("the login works");
    servers.allow_step_up(browser);
    let output = host
        .call(
            "remote__whoami",
            "{}",
            &earshot_host::gate::NonInteractivePrompter,
        )
        .expect("the call works after the step-up");
    assert!(output.output.contains("token 2"), "{}", output.output);
    assert_eq!(server.stat("insufficient_scope"), 1);
    assert_eq!(server.stat("authorize_requests"), 2);
}

#[test]
fn an_authorization_endpoint_that_is_not_https_is_never_opened() {
    let marker = tempfile::tempdir().unwrap();
    let opened = marker.path().join("opened");
    let browser = marker.path().join("browser");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > {}\n", opened.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for hostile in ["file:///etc/passwd", "http://198.51.100.7/authorize"] {
        let server = AuthServer::start_with("basic", 3600, &["--authorization-endpoint", hostile]);
        let sandbox = sandbox_with(&server.url());
        let output = sandbox
            .earshot()
            .env("EARSHOT_BROWSER", &browser)
            .args(["mcp", "login", "remote"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(stderr.contains("authorization endpoint"), "{stderr}");
        assert!(stderr.contains("earshot does not use it"), "{stderr}");
        assert!(!opened.exists(), "the browser was run for {hostile}");
        assert!(token_files(&sandbox).is_empty());
        assert_eq!(server.stat("registrations"), 0);
    }
}

#[test]
fn a_same_named_server_in_another_layer_gets_no_token() {
    let server = AuthServer::start("basic", 3600);
    let sandbox = sandbox_with(&server.url());
    login(&sandbox);
    let with_token = server.stat("mcp_with_token");
    // The user's own local entry of the same name and URL (written by earshot, so trusted).
    let (code, _, stderr) = run(
        &sandbox,
        &[
            "mcp",
            "add",
            "-s",
            "local",
            "-t",
            "http",
            "remote",
            &server.url(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let (_, stdout, _) = run(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("local (overrides user)"), "{stdout}");
    assert!(stdout.contains("needs login"), "{stdout}");
    assert_eq!(server.stat("mcp_with_token"), with_token);
}

#[test]
fn mcp_get_shows_the_client_secrets_reference_never_its_value() {
    let server = AuthServer::start("basic", 3600);
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": { "remote": { "type": "http", "url": server.url(),
            "oauth": { "clientId": "earshot", "clientSecret": "${REMOTE_SECRET}" } } },
    }));
    for json_flag in [false, true] {
        let mut args = vec!["mcp", "get", "remote"];
        if json_flag {
            args.push("--json");
        }
        let output = sandbox
            .earshot()
            .env("REMOTE_SECRET", "s3cr3t-value")
            .args(&args)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(all.contains("${REMOTE_SECRET}"), "{all}");
        assert!(!all.contains("s3cr3t-value"), "{all}");
    }
}

#[test]
fn logging_in_to_a_server_that_asks_for_no_authorization_says_so_and_registers_nothing() {
    let (mut everything, port) = crate::common::everything_over_http();
    let sandbox = sandbox_with(&format!("http://127.0.0.1:{port}/mcp"));
    let (code, _, stderr) = run(&sandbox, &["mcp", "login", "remote"]);
    everything.kill().ok();
    everything.wait().ok();
    assert_ne!(code, 0);
    assert!(stderr.contains("it needs no login"), "{stderr}");
    assert!(token_files(&sandbox).is_empty());
}
