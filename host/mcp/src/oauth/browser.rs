//! Opening the authorization URL: the program in `EARSHOT_BROWSER`, else the user's
//! `mcp.oauth.browser` setting, else `xdg-open` (`open` on macOS). `none` opens nothing: the URL
//! is printed and the redirected URL may be pasted on stdin (a login over SSH, where the
//! browser's machine cannot reach earshot's loopback listener).

use std::process::Stdio;

/// The variable that names the program that opens authorization URLs (or `none`).
pub const BROWSER_VARIABLE: &str = "EARSHOT_BROWSER";

/// How the authorization URL reaches the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Browser {
    /// Run this program with the URL as its one argument.
    Program(String),
    /// Print the URL; accept the redirected URL on stdin as well as on the listener.
    PrintAndPaste,
    /// Print the URL; only the listener finishes the login (a login inside a running session,
    /// where stdin belongs to someone else).
    PrintOnly,
}

impl Browser {
    /// The browser from `EARSHOT_BROWSER`, else `setting` (the user's `mcp.oauth.browser`:
    /// never the project's, which would run a program the repository chose), else the
    /// platform's opener.
    pub fn choose(variable: Option<String>, setting: Option<&str>) -> Browser {
        let chosen = variable
            .filter(|value| !value.trim().is_empty())
            .or_else(|| setting.map(str::to_string));
        match chosen.as_deref().map(str::trim) {
            Some("none") => Browser::PrintAndPaste,
            Some(program) => Browser::Program(program.to_string()),
            None if cfg!(target_os = "macos") => Browser::Program("open".into()),
            None => Browser::Program("xdg-open".into()),
        }
    }

    /// Whether a pasted URL is read from stdin.
    pub fn reads_paste(&self) -> bool {
        matches!(self, Browser::PrintAndPaste)
    }

    /// The same browser for a login inside a session: never reading stdin (a read left pending
    /// after the login would swallow the next line meant for a prompt or a form).
    pub fn without_paste(&self) -> Browser {
        match self {
            Browser::PrintAndPaste => Browser::PrintOnly,
            other => other.clone(),
        }
    }

    /// Opens `url` (tells the user on stderr either way). A browser that cannot be started is
    /// reported, and the printed URL still works.
    pub fn open(&self, server: &str, url: &str) {
        match self {
            Browser::PrintOnly => {
                eprintln!(
                    "To log in to \"{server}\", open this URL in a browser on this machine:\n\n  {url}\n"
                );
            }
            Browser::PrintAndPaste => {
                eprintln!(
                    "To log in to \"{server}\", open this URL in a browser:\n\n  {url}\n\nthen wait here, or paste the address the browser was sent to at the end (it starts with http://127.0.0.1) and press Enter:"
                );
            }
            Browser::Program(program) => {
                eprintln!(
                    "Opening the browser to log in to \"{server}\"; if it does not open, visit:\n  {url}"
                );
                let started = std::process::Command::new(program)
                    .arg(url)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn();
                match started {
                    // Reaped on its own thread so it never lingers as a zombie.
                    Ok(mut child) => drop(std::thread::spawn(move || child.wait())),
                    Err(error) => eprintln!(
                        "could not start the browser \"{program}\" ({error}); open the URL above yourself, or set {BROWSER_VARIABLE}=none"
                    ),
                }
            }
        }
    }
}
