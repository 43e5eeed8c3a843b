//! Elicitation on a terminal: the server's form, field by field, each pre-filled with its
//! default (Enter keeps it), checked as it is typed, then accept, decline or cancel. Everything
//! the server wrote is sanitised before it is shown, and the header says it is the server
//! asking, not earshot.

use parking_lot::Mutex;
use std::io::{BufRead, Write};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::elicitation::{
    Choice, ElicitationAnswer, ElicitationField, ElicitationRequest, Elicitor, FieldKind,
};
use crate::gate::{TerminalIo, sanitise_for_terminal, stdio_terminal};
use crate::runner::BoxFuture;

/// Tries per field before the form is cancelled.
const TRIES: usize = 3;

/// Answers elicitations on a terminal.
#[derive(Clone)]
pub struct TerminalElicitor {
    io: TerminalIo,
}

impl TerminalElicitor {
    /// An elicitor on this process's stdin and stderr: the one terminal the permission prompter
    /// uses too, so a form and a permission prompt never read each other's lines.
    pub fn stdio() -> TerminalElicitor {
        TerminalElicitor {
            io: stdio_terminal(),
        }
    }

    /// An elicitor reading answers from `input` and writing the form to `output`.
    pub fn new(input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> TerminalElicitor {
        TerminalElicitor {
            io: Arc::new(Mutex::new((input, output))),
        }
    }
}

impl Elicitor for TerminalElicitor {
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        let io = self.io.clone();
        let request = request.clone();
        Box::pin(async move {
            let asked = tokio::task::spawn_blocking(move || {
                let mut io = io.lock();
                let (input, output) = &mut *io;
                fill_in(&request, input.as_mut(), output.as_mut())
            });
            asked.await.unwrap_or(ElicitationAnswer::Cancel)
        })
    }
}

/// The whole form, then the decision; input that ends cancels.
fn fill_in(
    request: &ElicitationRequest,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> ElicitationAnswer {
    let _ = writeln!(
        output,
        "\nserver \"{}\" asks for input (the server is asking, not earshot):\n  {}",
        one_line(&request.server, 80),
        one_line(&request.message, 500)
    );
    let mut answer = Map::new();
    for field in &request.fields {
        match ask_field(field, input, output) {
            Some(Some(value)) => {
                answer.insert(field.name.clone(), value);
            }
            Some(None) => {}
            None => return ElicitationAnswer::Cancel,
        }
    }
    // Keys unlike the permission prompt's ([o]nce, [a]lways, [d]eny): a habit formed there never
    // sends a form, and nothing typed here is ever a permission answer.
    loop {
        let _ = write!(
            output,
            "send these answers to server \"{}\"? type send, decline or cancel: ",
            one_line(&request.server, 80)
        );
        let _ = output.flush();
        match read_line(input)
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("send") => return ElicitationAnswer::Accept(answer),
            Some("decline") => return ElicitationAnswer::Decline,
            Some("cancel") | None => return ElicitationAnswer::Cancel,
            Some(_) => {}
        }
    }
}

/// One field: `Some(Some(value))`, `Some(None)` for an optional field left empty, `None` when
/// input ended or the tries ran out.
fn ask_field(
    field: &ElicitationField,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Option<Option<Value>> {
    let label = field.title.as_deref().unwrap_or(&field.name);
    let mut line = format!("  {}", one_line(label, 200));
    if let Some(description) = &field.description {
        line.push_str(&format!(" — {}", one_line(description, 200)));
    }
    line.push_str(&format!(" ({}", describe(&field.kind)));
    if field.required {
        line.push_str(", required");
    }
    line.push(')');
    if let Some(default) = &field.default {
        line.push_str(&format!(" [{}]", one_line(&show(default), 200)));
    }
    for _ in 0..TRIES {
        let _ = write!(output, "{line}: ");
        let _ = output.flush();
        let typed = read_line(input)?;
        if typed.is_empty() {
            match (&field.default, field.required) {
                (Some(default), _) => return Some(Some(default.clone())),
                (None, false) => return Some(None),
                (None, true) => {
                    let _ = writeln!(output, "    this one is required");
                    continue;
                }
            }
        }
        match parse(&field.kind, &typed).and_then(|value| {
            field.kind.check(&value)?;
            Ok(value)
        }) {
            Ok(value) => return Some(Some(value)),
            Err(why) => {
                let _ = writeln!(output, "    {why}");
            }
        }
    }
    None
}

/// What a field takes, in a few words.
fn describe(kind: &FieldKind) -> String {
    let labels = |options: &[Choice]| {
        options
            .iter()
            .enumerate()
            .map(|(index, option)| format!("{} {}", index + 1, one_line(&option.label, 200)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match kind {
        FieldKind::Text { format, .. } => match format {
            Some(format) => format!("text, {}", one_line(format, 200)),
            None => "text".into(),
        },
        FieldKind::Number { .. } => "number".into(),
        FieldKind::Integer { .. } => "whole number".into(),
        FieldKind::Boolean => "yes/no".into(),
        FieldKind::Choice(options) => format!("one of: {}", labels(options)),
        FieldKind::Choices { options, .. } => {
            format!("some of, comma-separated: {}", labels(options))
        }
    }
}

/// A default as the user would type it.
fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// What the user typed, as a value of `kind` (checked against the kind's bounds afterwards).
fn parse(kind: &FieldKind, typed: &str) -> Result<Value, String> {
    match kind {
        FieldKind::Text { .. } => Ok(Value::String(typed.to_string())),
        FieldKind::Number { .. } => typed
            .parse::<f64>()
            .ok()
            .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
            .ok_or_else(|| "type a number".into()),
        FieldKind::Integer { .. } => typed
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "type a whole number".into()),
        FieldKind::Boolean => match typed.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("type yes or no".into()),
        },
        FieldKind::Choice(options) => choose(options, typed).map(Value::String),
        FieldKind::Choices { options, .. } => typed
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| choose(options, item).map(Value::String))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
    }
}

/// The choice the user meant: its number, its value or its label.
fn choose(options: &[Choice], typed: &str) -> Result<String, String> {
    if let Ok(number) = typed.parse::<usize>()
        && let Some(option) = number.checked_sub(1).and_then(|index| options.get(index))
    {
        return Ok(option.value.clone());
    }
    options
        .iter()
        .find(|option| option.value == typed || option.label == typed)
        .or_else(|| {
            options.iter().find(|option| {
                option.value.eq_ignore_ascii_case(typed) || option.label.eq_ignore_ascii_case(typed)
            })
        })
        .map(|option| option.value.clone())
        .ok_or_else(|| format!("\"{}\" is not one of the choices", one_line(typed, 200)))
}

/// A server's text as one line of at most `max` characters, without control characters or
/// escape sequences (so it cannot draw a fake prompt of earshot's).
fn one_line(text: &str, max: usize) -> String {
    sanitise_for_terminal(text, max)
}

/// One line without its line ending; `None` at the end of input.
fn read_line(input: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\r', '\n']).trim().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> ElicitationRequest {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name"},
            "age": {"type": "integer", "default": 30, "minimum": 0, "maximum": 150},
            "pet": {"type": "string", "enum": ["cat", "dog"], "enumNames": ["Cats", "Dogs"]},
            "ok": {"type": "boolean", "default": true}
        }, "required": ["name"]});
        ElicitationRequest::from_schema("every", "Tell me \u{1b}[2Jabout you", &schema).unwrap()
    }

    fn run(typed: &str) -> (ElicitationAnswer, String) {
        let mut input = std::io::Cursor::new(typed.as_bytes().to_vec());
        let mut output = Vec::new();
        let answer = fill_in(&form(), &mut input, &mut output);
        (answer, String::from_utf8(output).unwrap())
    }

    #[test]
    fn defaults_are_kept_bad_input_is_asked_again_and_escapes_are_never_shown() {
        let (answer, shown) = run("\nAda\n200\n\nDogs\n\nsend\n");
        assert_eq!(
            answer,
            ElicitationAnswer::Accept(
                json!({"name": "Ada", "age": 30, "pet": "dog", "ok": true})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        assert!(
            shown.contains("server \"every\" asks for input (the server is asking, not earshot)")
        );
        assert!(shown.contains("this one is required"), "{shown}");
        assert!(shown.contains("between 0 and 150"), "{shown}");
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(
            shown.contains("Tell me about you"),
            "one line, escapes removed: {shown:?}"
        );
    }

    #[test]
    fn decline_cancel_and_the_end_of_input() {
        assert_eq!(run("Ada\n\n\n\ndecline\n").0, ElicitationAnswer::Decline);
        assert_eq!(run("Ada\n\n\n\ncancel\n").0, ElicitationAnswer::Cancel);
        // A permission prompt's keys mean nothing here: asked again, then input ends.
        assert_eq!(run("Ada\n\n\n\na\no\ny\n").0, ElicitationAnswer::Cancel);
        assert_eq!(run("Ada\n").0, ElicitationAnswer::Cancel);
    }
}
