//! What a hook or server definition may hold: no control, bidi or invisible character anywhere
//! in it (the class `!` lines of skills and commands refuse: C0 and C1 controls and
//! [`crate::skills::catalogue::is_hidden`]), except newline and tab (a multi-line script, an
//! argument that is a message). Each can make the reviewed text differ from what
//! runs: `check\u{200b}.py` looks like `check.py` beside it, U+202E reverses what follows. Such a
//! definition is refused with one line naming the field and showing the character as
//! `⟦U+XXXX⟧`, never stripped.

use serde_json::Value;

use crate::skills::catalogue::{is_hidden, visible};

/// The most characters of a refused value shown.
const SHOWN_CHARS: usize = 120;

/// Whether `c` is refused in a definition: a control character other than newline and tab
/// (a multi-line script or message is legitimate, and is shown with its line breaks marked), or
/// a hidden one.
pub(crate) fn is_refused(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_hidden(c)
}

/// `text` with every refused character, newline and tab as `⟦U+XXXX⟧`: one line that shows
/// everything it holds.
pub(crate) fn shown(text: &str) -> String {
    visible(text)
        .replace('\n', "⟦U+000A⟧")
        .replace('\t', "⟦U+0009⟧")
}

/// Why `definition` (a hook handler or a server entry, as written) is refused, or `None` when no
/// key or string in it holds a refused character. `extra` is more text that belongs to it (a
/// hook's matcher), checked first as `"matcher"`.
///
/// # Errors
/// One line: the field, the first refused character as `⟦U+XXXX⟧`, the value made visible.
pub(crate) fn refuse_hidden(definition: &Value, extra: &[(&str, &str)]) -> Result<(), String> {
    for (field, text) in extra {
        check(&format!("\"{field}\""), text)?;
    }
    walk(definition, "")
}

fn walk(value: &Value, at: &str) -> Result<(), String> {
    match value {
        Value::String(text) => check(if at.is_empty() { "the value" } else { at }, text),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(index, item)| walk(item, &format!("{at}[{index}]"))),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            let field = if at.is_empty() {
                format!("\"{}\"", shown(key))
            } else {
                format!("{at}.\"{}\"", shown(key))
            };
            check(&format!("the key {field}"), key)?;
            walk(item, &field)
        }),
        _ => Ok(()),
    }
}

fn check(field: &str, text: &str) -> Result<(), String> {
    let Some(found) = text.chars().find(|&c| is_refused(c)) else {
        return Ok(());
    };
    let mut value: String = text.chars().take(SHOWN_CHARS).collect();
    if text.chars().count() > SHOWN_CHARS {
        value.push('…');
    }
    Err(format!(
        "{field} holds ⟦U+{:04X}⟧, a control, bidi or invisible character that would make what is reviewed differ from what runs (\"{}\"); write it without that character",
        found as u32,
        shown(&value)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_hidden_or_control_character_is_named_and_shown() {
        for c in [
            '\u{200b}', '\u{202e}', '\u{2066}', '\u{7}', '\u{1b}', '\u{85}', '\u{feff}',
        ] {
            let definition = json!({"command": "python3", "args": [format!("check{c}.py")]});
            let why = refuse_hidden(&definition, &[]).unwrap_err();
            let marker = format!("⟦U+{:04X}⟧", c as u32);
            assert!(why.starts_with("\"args\"[0] holds "), "{why}");
            assert!(why.contains(&format!("\"check{marker}.py\"")), "{why}");
            assert!(
                !why.contains(c),
                "the character itself is never shown: {why}"
            );
            assert_eq!(why.lines().count(), 1);
        }
        let why = refuse_hidden(&json!({"env": {"A\u{200b}": "x"}}), &[]).unwrap_err();
        assert!(why.starts_with("the key \"env\".\"A⟦U+200B⟧\""), "{why}");
        let why = refuse_hidden(&json!({}), &[("matcher", "Bash\u{202e}")]).unwrap_err();
        assert!(why.starts_with("\"matcher\" holds ⟦U+202E⟧"), "{why}");
        assert!(
            refuse_hidden(
                &json!({"command": "python3 check.py", "args": ["é", "日本", "a\nb\tc"], "timeout": 3}),
                &[]
            )
            .is_ok()
        );
        // A refused value is shown on one line, its line breaks marked.
        let why = refuse_hidden(&json!({"command": "a\nb\u{200b}"}), &[]).unwrap_err();
        assert!(why.contains("(\"a⟦U+000A⟧b⟦U+200B⟧\")"), "{why}");
    }
}
