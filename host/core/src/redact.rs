//! Secrets kept out of everything earshot writes, the way CI systems mask them: every value a
//! `${VAR}` in a server definition expanded to is remembered here ([`remember`], called by
//! `mcp::expand`), and every line that leaves the process through the CLI's output, its logs,
//! `earshot mcp serve` and `earshot acp` passes through [`redact`], which writes `${VAR}` where the value was. Redaction is by value, so a secret is masked wherever it turns up: a state, a
//! warning, an error built from an expanded URL or command, reqwest's own error text, JSON.

use parking_lot::RwLock;
use std::borrow::Cow;

use serde_json::Value;

/// Values shorter than this are not masked (`${PORT:-80}` would mask every `80`).
pub const MIN_SECRET_CHARS: usize = 4;

/// Variables whose values are not secrets and would garble every path if masked.
const NOT_SECRETS: &[&str] = &[crate::mcp::PROJECT_DIR_VARIABLE, "PWD"];

/// The forms to replace, longest first, each with what replaces it.
static SECRETS: RwLock<Vec<(String, String)>> = RwLock::new(Vec::new());

/// Remembers that `${name}` expanded to `value`: from now on `value` (as written, JSON-escaped,
/// and percent-encoded as a URL carries it) is written as `${name}` in everything earshot
/// outputs. Values under [`MIN_SECRET_CHARS`] characters and the project directory are not.
pub fn remember(name: &str, value: &str) {
    if value.chars().count() < MIN_SECRET_CHARS || NOT_SECRETS.contains(&name) {
        return;
    }
    let shown = format!("${{{name}}}");
    let mut forms = vec![value.to_string()];
    let escaped = serde_json::to_string(value).expect("a string serialises");
    forms.push(escaped[1..escaped.len() - 1].to_string());
    forms.push(percent_encoded(value));
    forms.extend(url_forms(value));
    let mut secrets = SECRETS.write();
    for form in forms {
        if form.chars().count() >= MIN_SECRET_CHARS
            && !secrets.iter().any(|(known, _)| *known == form)
        {
            secrets.push((form, shown.clone()));
        }
    }
    secrets.sort_by_key(|(form, _)| std::cmp::Reverse(form.len()));
}

/// `value` as the `url` crate (reqwest's URLs) writes it in a path, a query, a fragment, a user
/// name and a password, each of which encodes a different set of characters.
fn url_forms(value: &str) -> Vec<String> {
    let Ok(base) = url::Url::parse("http://h/") else {
        return Vec::new();
    };
    let mut forms = Vec::new();
    let mut url = base.clone();
    url.set_path(value);
    forms.push(url.path().trim_start_matches('/').to_string());
    let mut url = base.clone();
    url.set_query(Some(value));
    forms.extend(url.query().map(str::to_string));
    let mut url = base.clone();
    url.set_fragment(Some(value));
    forms.extend(url.fragment().map(str::to_string));
    let mut url = base.clone();
    if url.set_username(value).is_ok() {
        forms.push(url.username().to_string());
    }
    let mut url = base;
    if url.set_password(Some(value)).is_ok() {
        forms.extend(url.password().map(str::to_string));
    }
    let form_encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    forms.push(form_encoded);
    forms
}

/// `value` with every byte outside the URL-unreserved set written `%XX`.
fn percent_encoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// What a shortened text is cut with (`stderr_tail::shorten` and the terminal's sanitiser).
const CUT: char = '…';

/// `text` with every remembered secret replaced by the `${VAR}` it came from; a secret cut in
/// two by a shortened text (its start just before `…`, or its end just after) is replaced too.
pub fn redact(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read();
    let whole = secrets.iter().any(|(form, _)| text.contains(form.as_str()));
    if secrets.is_empty() || (!whole && !text.contains(CUT)) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for (form, shown) in secrets.iter() {
        if out.contains(form.as_str()) {
            out = out.replace(form.as_str(), shown);
        }
    }
    if out.contains(CUT) {
        out = redact_cut(&out, &secrets);
    }
    if out == text {
        return Cow::Borrowed(text);
    }
    Cow::Owned(out)
}

/// `text` with the longest start of a secret (at least [`MIN_SECRET_CHARS`]) that ends at a
/// `…`, and the longest end of one that starts right after it, replaced.
fn redact_cut(text: &str, secrets: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pieces = text.split(CUT).peekable();
    let mut after_cut = false;
    while let Some(piece) = pieces.next() {
        let mut piece = piece.to_string();
        if after_cut && let Some((cut, shown)) = longest_end_at_start(&piece, secrets) {
            piece = format!("{shown}{}", &piece[cut..]);
        }
        let before_cut = pieces.peek().is_some();
        if before_cut && let Some((cut, shown)) = longest_start_at_end(&piece, secrets) {
            piece = format!("{}{shown}", &piece[..cut]);
        }
        out.push_str(&piece);
        if before_cut {
            out.push(CUT);
        }
        after_cut = true;
    }
    out
}

/// Where the longest start of a secret that ends `piece` begins, and its replacement.
fn longest_start_at_end<'a>(
    piece: &str,
    secrets: &'a [(String, String)],
) -> Option<(usize, &'a str)> {
    let mut best: Option<(usize, &str)> = None;
    for (form, shown) in secrets {
        let from = piece.len().saturating_sub(form.len());
        for (at, _) in piece.char_indices().filter(|(at, _)| *at >= from) {
            let tail = &piece[at..];
            if tail.chars().count() >= MIN_SECRET_CHARS && form.starts_with(tail) {
                if best.is_none_or(|(known, _)| at < known) {
                    best = Some((at, shown));
                }
                break;
            }
        }
    }
    best
}

/// Where the longest end of a secret that starts `piece` ends, and its replacement.
fn longest_end_at_start<'a>(
    piece: &str,
    secrets: &'a [(String, String)],
) -> Option<(usize, &'a str)> {
    let mut best: Option<(usize, &str)> = None;
    for (form, shown) in secrets {
        let ends: Vec<usize> = piece
            .char_indices()
            .map(|(at, c)| at + c.len_utf8())
            .take_while(|end| *end <= form.len())
            .collect();
        for &end in ends.iter().rev() {
            let head = &piece[..end];
            if head.chars().count() >= MIN_SECRET_CHARS && form.ends_with(head) {
                if best.is_none_or(|(known, _)| end > known) {
                    best = Some((end, shown));
                }
                break;
            }
        }
    }
    best
}

/// `value` with [`redact`] applied to every string in it, keys included.
pub fn redact_json(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(redact(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| (redact(key).into_owned(), redact_json(item)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A writer that passes every complete line through [`redact`] (a secret is never split across
/// two writes of one line), for logs and protocol streams. What is left without a newline is
/// written at flush.
pub struct RedactingWriter<W: std::io::Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: std::io::Write> RedactingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> RedactingWriter<W> {
        RedactingWriter {
            inner,
            pending: Vec::new(),
        }
    }

    fn write_lines(&mut self, all: bool) -> std::io::Result<()> {
        let end = if all {
            self.pending.len()
        } else {
            match self.pending.iter().rposition(|&byte| byte == b'\n') {
                Some(at) => at + 1,
                None => return Ok(()),
            }
        };
        let lines: Vec<u8> = self.pending.drain(..end).collect();
        let text = String::from_utf8_lossy(&lines);
        self.inner.write_all(redact(&text).as_bytes())
    }
}

impl<W: std::io::Write> std::io::Write for RedactingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        self.write_lines(false)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.write_lines(true)?;
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

/// The async twin of [`RedactingWriter`], for a protocol stream (`earshot mcp serve`'s stdout):
/// complete lines are redacted and written on; a line is never split, and a write waits while the
/// previous lines are still being written.
pub struct RedactingAsyncWriter<W> {
    inner: W,
    pending: Vec<u8>,
    out: Vec<u8>,
    written: usize,
}

impl<W> RedactingAsyncWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> RedactingAsyncWriter<W> {
        RedactingAsyncWriter {
            inner,
            pending: Vec::new(),
            out: Vec::new(),
            written: 0,
        }
    }

    fn move_lines(&mut self, all: bool) {
        let end = if all {
            self.pending.len()
        } else {
            match self.pending.iter().rposition(|&byte| byte == b'\n') {
                Some(at) => at + 1,
                None => return,
            }
        };
        let lines: Vec<u8> = self.pending.drain(..end).collect();
        let text = String::from_utf8_lossy(&lines);
        self.out.extend_from_slice(redact(&text).as_bytes());
    }
}

impl<W: tokio::io::AsyncWrite + Unpin> RedactingAsyncWriter<W> {
    fn poll_drain(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        while self.written < self.out.len() {
            match std::pin::Pin::new(&mut self.inner).poll_write(context, &self.out[self.written..])
            {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(count)) => self.written += count,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.out.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for RedactingAsyncWriter<W> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.poll_drain(context))?;
        this.pending.extend_from_slice(bytes);
        this.move_lines(false);
        if let std::task::Poll::Ready(Err(error)) = this.poll_drain(context) {
            return std::task::Poll::Ready(Err(error));
        }
        std::task::Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        this.move_lines(true);
        std::task::ready!(this.poll_drain(context))?;
        std::pin::Pin::new(&mut this.inner).poll_flush(context)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        this.move_lines(true);
        std::task::ready!(this.poll_drain(context))?;
        std::pin::Pin::new(&mut this.inner).poll_shutdown(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_a_remembered_value_is_masked_and_short_values_are_not() {
        remember("EARSHOT_UNIT_TOKEN", "s3cr\"et value");
        remember("EARSHOT_UNIT_PORT", "80");
        assert_eq!(
            redact("at http://h/?k=s3cr%22et%20value: s3cr\"et value on 80"),
            "at http://h/?k=${EARSHOT_UNIT_TOKEN}: ${EARSHOT_UNIT_TOKEN} on 80"
        );
        assert_eq!(
            redact("cut: s3cr\"et v… and …et value here"),
            "cut: ${EARSHOT_UNIT_TOKEN}… and …${EARSHOT_UNIT_TOKEN} here"
        );
        assert_eq!(redact("…lue"), "…lue", "shorter than a secret is kept");

        remember("EARSHOT_UNIT_URL_KEY", "p@ss w0rd!$&'=/?#x");
        for set in [
            &(|url: &mut url::Url| url.set_query(Some("p@ss w0rd!$&'=/?#x")))
                as &dyn Fn(&mut url::Url),
            &|url| url.set_path("p@ss w0rd!$&'=/?#x"),
            &|url| url.set_fragment(Some("p@ss w0rd!$&'=/?#x")),
            &|url| url.set_password(Some("p@ss w0rd!$&'=/?#x")).unwrap(),
            &|url| url.set_username("p@ss w0rd!$&'=/?#x").unwrap(),
        ] {
            let mut url = url::Url::parse("http://h/").unwrap();
            set(&mut url);
            let shown = redact(url.as_str()).into_owned();
            assert!(
                shown.contains("${EARSHOT_UNIT_URL_KEY}"),
                "{url} became {shown}"
            );
        }
        let json = serde_json::json!({"reason": "s3cr\"et value"});
        assert_eq!(
            redact_json(&json),
            serde_json::json!({"reason": "${EARSHOT_UNIT_TOKEN}"})
        );
        let mut out = Vec::new();
        {
            let mut writer = RedactingWriter::new(&mut out);
            std::io::Write::write_all(&mut writer, b"one s3cr\"et").unwrap();
            std::io::Write::write_all(&mut writer, b" value\ntwo").unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "one ${EARSHOT_UNIT_TOKEN}\ntwo"
        );
    }
}
