//! Why a `fetch` got no response, as Node 22's `fetch` gives it in `TypeError: fetch failed`'s
//! `cause`: an `Error` whose message names the operation and where (`connect ECONNREFUSED
//! 127.0.0.1:8799`, `getaddrinfo ENOTFOUND example.invalid`) and whose `code` a script can test
//! (`err.cause.code === 'ECONNREFUSED'`), with `errno`, `syscall`, `address`, `port` and
//! `hostname` where Node has them.

use std::error::Error as StdError;
use std::io::ErrorKind;

use boa_engine::{Context, JsError, JsNativeError, JsString, JsValue, js_string};

/// A request that got no response head: what Node's `cause` would say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchFailure {
    /// The cause's message.
    pub message: String,
    /// Node's error code (`ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_CONNECT_TIMEOUT`, ...).
    pub code: Option<&'static str>,
    /// The failing system call (`connect`, `getaddrinfo`).
    pub syscall: Option<&'static str>,
    /// The operating system's error number, negated as libuv reports it.
    pub errno: Option<i32>,
    /// The address connected to.
    pub address: Option<String>,
    /// The port connected to.
    pub port: Option<u16>,
    /// The host name that did not resolve.
    pub hostname: Option<String>,
}

impl FetchFailure {
    /// A failure with only a message (an abort, a refused redirect).
    pub fn plain(message: impl Into<String>) -> FetchFailure {
        FetchFailure {
            message: message.into(),
            ..FetchFailure::default()
        }
    }

    /// No response head within `seconds` (undici's headers timeout).
    pub fn head_timeout(seconds: u64) -> FetchFailure {
        FetchFailure {
            message: format!("Headers Timeout Error (no response within {seconds} s)"),
            code: Some("UND_ERR_HEADERS_TIMEOUT"),
            ..FetchFailure::default()
        }
    }

    /// What reqwest's `error` for a request to `url` means, as Node would say it.
    pub fn from_reqwest(error: &reqwest::Error, url: &str) -> FetchFailure {
        let (host, port) = host_and_port(url);
        let chain = chain(error);
        let fallback = || FetchFailure::plain(format!("{url}: {}", describe_chain(error)));
        if chain.iter().any(|e| e.to_string() == "dns error") {
            let text = describe_chain(error);
            let code = if text.contains("Temporary failure") {
                "EAI_AGAIN"
            } else {
                "ENOTFOUND"
            };
            return FetchFailure {
                message: format!("getaddrinfo {code} {host}"),
                code: Some(code),
                syscall: Some("getaddrinfo"),
                errno: Some(if code == "EAI_AGAIN" { -3001 } else { -3008 }),
                hostname: Some(host),
                ..FetchFailure::default()
            };
        }
        let (address, port) = connected_address(error).unwrap_or((host, port));
        let target = if address.contains(':') {
            format!("[{address}]:{port}")
        } else {
            format!("{address}:{port}")
        };
        if let Some(failure) = tls_failure(&chain) {
            return failure;
        }
        if error.is_timeout() && error.is_connect() {
            return FetchFailure {
                message: format!("Connect Timeout Error (attempted address: {target})"),
                code: Some("UND_ERR_CONNECT_TIMEOUT"),
                ..FetchFailure::default()
            };
        }
        if let Some(io) = chain
            .iter()
            .find_map(|e| e.downcast_ref::<std::io::Error>())
            && let Some(code) = errno_name(io.kind())
        {
            let syscall = if error.is_connect() {
                "connect"
            } else {
                "read"
            };
            return FetchFailure {
                message: if error.is_connect() {
                    // Node writes an IPv6 address here without brackets (`::1:8799`).
                    format!("connect {code} {address}:{port}")
                } else {
                    format!("read {code}")
                },
                code: Some(code),
                syscall: Some(syscall),
                errno: io.raw_os_error().map(|errno| -errno),
                address: error.is_connect().then_some(address),
                port: error.is_connect().then_some(port),
                ..FetchFailure::default()
            };
        }
        if chain.iter().any(|e| {
            e.downcast_ref::<hyper::Error>()
                .is_some_and(|e| e.is_incomplete_message() || e.is_closed())
        }) {
            return FetchFailure {
                message: "other side closed".to_string(),
                code: Some("UND_ERR_SOCKET"),
                ..FetchFailure::default()
            };
        }
        fallback()
    }

    /// The `Error` a script sees as the `cause`.
    pub fn into_js_error(self, context: &mut Context) -> JsError {
        let error = JsNativeError::error()
            .with_message(self.message.clone())
            .into_opaque(context);
        let mut set = |key: JsString, value: JsValue| {
            let _ = error.create_data_property_or_throw(key, value, context);
        };
        if let Some(errno) = self.errno {
            set(js_string!("errno"), errno.into());
        }
        if let Some(code) = self.code {
            set(js_string!("code"), JsString::from(code).into());
        }
        if let Some(syscall) = self.syscall {
            set(js_string!("syscall"), JsString::from(syscall).into());
        }
        if let Some(address) = self.address {
            set(js_string!("address"), JsString::from(address).into());
        }
        if let Some(port) = self.port {
            set(js_string!("port"), port.into());
        }
        if let Some(hostname) = self.hostname {
            set(js_string!("hostname"), JsString::from(hostname).into());
        }
        JsError::from_opaque(error.into())
    }
}

/// The error and every error below it.
fn chain<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut out = vec![error];
    let mut next = error.source();
    while let Some(error) = next {
        out.push(error);
        next = error.source();
    }
    out
}

/// Every message of the chain, joined: `error sending request: tcp connect error: Connection refused`.
fn describe_chain(error: &reqwest::Error) -> String {
    let mut text = String::new();
    for (index, error) in chain(error).into_iter().enumerate() {
        let message = error.to_string();
        if index > 0 {
            if text.ends_with(&message) {
                continue;
            }
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}

/// The URL's host (without IPv6 brackets) and port (the scheme's default when it has none).
fn host_and_port(url: &str) -> (String, u16) {
    match url::Url::parse(url) {
        Ok(parsed) => (
            parsed
                .host_str()
                .unwrap_or_default()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            parsed.port_or_known_default().unwrap_or(0),
        ),
        Err(_) => (String::new(), 0),
    }
}

/// The socket address hyper-util tried, which it shows only in its connect error's `Debug`
/// (`ConnectError("tcp connect error", 127.0.0.1:8799, Os { .. })`).
fn connected_address(error: &reqwest::Error) -> Option<(String, u16)> {
    chain(error).into_iter().find_map(|error| {
        let debug = format!("{error:?}");
        let rest = debug.strip_prefix("ConnectError(")?;
        let after_message = rest.split_once("\", ")?.1;
        let field = after_message.split([',', ')']).next()?.trim();
        let address: std::net::SocketAddr = field.parse().ok()?;
        Some((address.ip().to_string(), address.port()))
    })
}

/// Node's name for an operating system error, for the kinds a connection meets.
fn errno_name(kind: ErrorKind) -> Option<&'static str> {
    Some(match kind {
        ErrorKind::ConnectionRefused => "ECONNREFUSED",
        ErrorKind::ConnectionReset => "ECONNRESET",
        ErrorKind::ConnectionAborted => "ECONNABORTED",
        ErrorKind::TimedOut => "ETIMEDOUT",
        ErrorKind::HostUnreachable => "EHOSTUNREACH",
        ErrorKind::NetworkUnreachable => "ENETUNREACH",
        ErrorKind::AddrNotAvailable => "EADDRNOTAVAIL",
        ErrorKind::BrokenPipe => "EPIPE",
        _ => return None,
    })
}

/// A TLS failure: rustls's own words, with Node's code where one matches.
fn tls_failure(chain: &[&(dyn StdError + 'static)]) -> Option<FetchFailure> {
    // An `io::Error` wraps rustls's error without naming it as its source.
    let tls = chain.iter().find_map(|e| {
        e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()?
                .get_ref()?
                .downcast_ref::<rustls::Error>()
        })
    })?;
    let code = match tls {
        rustls::Error::InvalidCertificate(certificate) => match certificate {
            rustls::CertificateError::UnknownIssuer => Some("UNABLE_TO_VERIFY_LEAF_SIGNATURE"),
            rustls::CertificateError::Expired | rustls::CertificateError::ExpiredContext { .. } => {
                Some("CERT_HAS_EXPIRED")
            }
            rustls::CertificateError::NotValidForName
            | rustls::CertificateError::NotValidForNameContext { .. } => {
                Some("ERR_TLS_CERT_ALTNAME_INVALID")
            }
            rustls::CertificateError::NotValidYet
            | rustls::CertificateError::NotValidYetContext { .. } => Some("CERT_NOT_YET_VALID"),
            rustls::CertificateError::Revoked => Some("CERT_REVOKED"),
            _ => None,
        },
        _ => None,
    };
    Some(FetchFailure {
        message: format!("TLS: {tls}"),
        code,
        ..FetchFailure::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_their_host_and_default_port() {
        assert_eq!(
            host_and_port("https://example.invalid/x"),
            ("example.invalid".to_string(), 443)
        );
        assert_eq!(
            host_and_port("http://[::1]:8799/"),
            ("::1".to_string(), 8799)
        );
    }

    #[test]
    fn os_error_kinds_have_node_names() {
        assert_eq!(
            errno_name(ErrorKind::ConnectionRefused),
            Some("ECONNREFUSED")
        );
        assert_eq!(errno_name(ErrorKind::NotFound), None);
    }
}
