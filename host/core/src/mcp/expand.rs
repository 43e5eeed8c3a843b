//! `${VAR}` and `${VAR:-default}` in server definitions.

/// An unset variable with no default.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("${{{name}}} is not set and has no default (write ${{{name}:-default}} to give one)")]
pub struct ExpandError {
    /// The variable's name.
    pub name: String,
}

/// Replaces `${VAR}` and `${VAR:-default}` in `text` using `lookup`. `$` not followed by `{`, and
/// a `${` with no closing `}`, are kept as written. Every value taken from `lookup` is
/// remembered as a secret ([`crate::redact::remember`]), so it never appears in what earshot
/// writes.
///
/// # Errors
/// [`ExpandError`] naming the first variable that is unset and has no default.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (
            lookup(name).filter(|value| !value.is_empty() || default.is_none()),
            default,
        ) {
            (Some(value), _) => {
                crate::redact::remember(name, &value);
                out.push_str(&value);
            }
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(ExpandError {
                    name: name.to_string(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn variables_and_defaults_expand() {
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer s3cret");
        assert_eq!(
            expand("${HOST:-localhost}:${PORT:-80}", &env).unwrap(),
            "localhost:80"
        );
        assert_eq!(expand("${EMPTY:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(
            expand("cost $5 and ${unclosed", &env).unwrap(),
            "cost $5 and ${unclosed"
        );
        assert_eq!(
            expand("${MISSING}", &env),
            Err(ExpandError {
                name: "MISSING".into()
            })
        );
    }
}
