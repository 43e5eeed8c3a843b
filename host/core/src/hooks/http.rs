//! Running one HTTP hook: the event's JSON POSTed to its `url`, no redirect followed, the
//! response body read up to 1 MiB and read like a command hook's stdout. A header value names an
//! environment variable (`$TOKEN`, `${TOKEN}`) only when `allowedEnvVars` lists it; any other
//! reference expands to nothing, so a project hook cannot send the user's secrets anywhere.

use std::time::Duration;

use super::config::{HookDefinition, HookKind};
use super::process::{Ended, Finished, OUTPUT_CAP};

/// POSTs `input` to the hook's URL.
pub async fn run_http(
    definition: &HookDefinition,
    input: Vec<u8>,
    env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
) -> Finished {
    let HookKind::Http {
        url,
        headers,
        allowed_env_vars,
    } = &definition.kind
    else {
        unreachable!("only an http hook is POSTed");
    };
    let failed = |why: String| Finished {
        ended: Ended::NotStarted(why),
        stdout: Vec::new(),
        stderr: String::new(),
    };
    crate::tls::install_crypto_provider();
    let client = match reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(client) => client,
        Err(error) => return failed(format!("could not build an HTTP client: {error}")),
    };
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(input);
    // Only the user's own hooks name variables (a project's `allowedEnvVars` is refused when
    // read); this is the second lock on that door.
    let allowed: &[String] = if definition.layer == crate::settings::Layer::User {
        allowed_env_vars
    } else {
        &[]
    };
    for (name, value) in headers {
        request = request.header(name, expand_allowed(value, allowed, env));
    }
    let answer = async {
        let mut response = request.send().await.map_err(|error| {
            format!(
                "could not POST to {url}: {}",
                without_url(&error.to_string())
            )
        })?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| format!("its response broke off: {error}"))?
        {
            if body.len() + chunk.len() > OUTPUT_CAP {
                return Ok((status, body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok::<_, String>((status, body, false))
    };
    match tokio::time::timeout(definition.timeout, answer).await {
        Err(_) => Finished {
            ended: Ended::TimedOut(definition.timeout),
            stdout: Vec::new(),
            stderr: String::new(),
        },
        Ok(Err(why)) => failed(why),
        Ok(Ok((_, _, true))) => Finished {
            ended: Ended::TooMuchOutput,
            stdout: Vec::new(),
            stderr: String::new(),
        },
        Ok(Ok((status, body, false))) if status.is_success() => Finished {
            ended: Ended::Exited(0),
            stdout: body,
            stderr: String::new(),
        },
        Ok(Ok((status, body, false))) => Finished {
            ended: Ended::Crashed(format!("answered HTTP {status}")),
            stdout: Vec::new(),
            stderr: String::from_utf8_lossy(&body).into_owned(),
        },
    }
}

/// reqwest's error text without the URL it repeats (shown once already).
fn without_url(text: &str) -> String {
    text.split(" for url (").next().unwrap_or(text).to_string()
}

/// `value` with `$NAME` and `${NAME}` replaced by the variable's value when `allowed` lists it,
/// else by nothing.
pub fn expand_allowed(
    value: &str,
    allowed: &[String],
    env: &(dyn Fn(&str) -> Option<String> + Send + Sync),
) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        if allowed.iter().any(|allowed| allowed == name)
            && let Some(found) = env(name)
        {
            out.push_str(&found);
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::expand_allowed;

    #[test]
    fn only_allowed_variables_expand() {
        let env = |name: &str| Some(format!("<{name}>"));
        let allowed = vec!["TOKEN".to_string()];
        assert_eq!(
            expand_allowed("Bearer $TOKEN", &allowed, &env),
            "Bearer <TOKEN>"
        );
        assert_eq!(
            expand_allowed("Bearer ${TOKEN}!", &allowed, &env),
            "Bearer <TOKEN>!"
        );
        assert_eq!(expand_allowed("k=${AWS_SECRET}", &allowed, &env), "k=");
        assert_eq!(expand_allowed("$HOME/x", &allowed, &env), "/x");
        assert_eq!(expand_allowed("costs $ 5", &allowed, &env), "costs $ 5");
    }
}
