//! The one-shot loopback listener the authorization server redirects the browser to:
//! `http://127.0.0.1:<port>/callback`. Only a GET of that path carrying the login's `state` ends
//! it; any other request is refused and the wait goes on, for at most [`CALLBACK_TIMEOUT`].

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How long a login waits for the browser.
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);

/// The path the redirect URI names.
pub const CALLBACK_PATH: &str = "/callback";

/// The most bytes read of one request's head.
const MAX_REQUEST_BYTES: usize = 16 << 10;

/// A bound listener, waiting for the browser.
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    /// Binds `127.0.0.1:port` (a random free port for 0).
    ///
    /// # Errors
    /// The port is taken or cannot be bound.
    pub async fn bind(port: u16) -> Result<CallbackListener, String> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|error| {
                format!("could not listen on 127.0.0.1:{port} for the login's callback: {error}")
            })?;
        let port = listener
            .local_addr()
            .map_err(|error| error.to_string())?
            .port();
        Ok(CallbackListener { listener, port })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for the redirect carrying `state`; returns the full URL it was sent to.
    pub async fn wait(self, state: &str) -> String {
        loop {
            let Ok((stream, _)) = self.listener.accept().await else {
                continue;
            };
            if let Some(url) = answer(stream, self.port, state).await {
                return url;
            }
        }
    }
}

/// Reads one request and answers it; the callback URL when it is the one awaited.
async fn answer(mut stream: TcpStream, port: u16, state: &str) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        while !head.windows(4).any(|window| window == b"\r\n\r\n") && head.len() < MAX_REQUEST_BYTES
        {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    if read.is_err() {
        return None;
    }
    let line = String::from_utf8_lossy(&head);
    let target = line
        .lines()
        .next()
        .and_then(|first| first.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or("");
    let url = format!("http://127.0.0.1:{port}{target}");
    let parsed = url::Url::parse(&url).ok();
    let matches = parsed.as_ref().is_some_and(|parsed| {
        parsed.path() == CALLBACK_PATH
            && parsed
                .query_pairs()
                .any(|(name, value)| name == "state" && value == state)
    });
    let (status, body) = if matches {
        let error = parsed.as_ref().and_then(|parsed| {
            parsed
                .query_pairs()
                .find(|(name, _)| name == "error")
                .map(|(_, value)| value.into_owned())
        });
        match error {
            Some(_) => (
                "200 OK",
                "The login was refused. You can close this tab and see earshot for details.",
            ),
            None => (
                "200 OK",
                "Logged in. You can close this tab and return to earshot.",
            ),
        }
    } else if parsed
        .as_ref()
        .is_some_and(|parsed| parsed.path() == CALLBACK_PATH)
    {
        (
            "400 Bad Request",
            "This is not the login earshot is waiting for.",
        )
    } else {
        ("404 Not Found", "Not found.")
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    matches.then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream
            .write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn only_the_callback_path_with_the_logins_state_ends_the_wait() {
        let listener = CallbackListener::bind(0).await.unwrap();
        let port: u16 = listener
            .redirect_uri()
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches(CALLBACK_PATH)
            .parse()
            .unwrap();
        let waiting = tokio::spawn(async move { listener.wait("expected-state").await });
        // Another path, then the right path with another login's state: refused, still waiting.
        assert!(
            get(port, "/other?code=c&state=expected-state")
                .await
                .starts_with("HTTP/1.1 404")
        );
        assert!(
            get(port, "/callback?code=c&state=forged")
                .await
                .starts_with("HTTP/1.1 400")
        );
        assert!(!waiting.is_finished());
        let answer = get(port, "/callback?code=the-code&state=expected-state").await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let url = waiting.await.unwrap();
        assert_eq!(
            url,
            format!("http://127.0.0.1:{port}/callback?code=the-code&state=expected-state")
        );
    }
}
