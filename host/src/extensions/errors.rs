//! JavaScript errors as one line for the user, located in the original `.ts` file.
//!
//! Boa reports positions in the stripped JavaScript (`at fn (path:line:col)`); each frame in one
//! of the extension's files is mapped back through oxc's source map.

use boa_engine::{Context, JsError, JsValue, js_string};

use super::module_loader::ConfinedLoader;

/// `Error: message (at /path/file.ts:12:5)`: the error's own text, and the innermost frame in the
/// extension's files, at its original position.
pub fn describe_error(error: &JsError, loader: &ConfinedLoader, context: &mut Context) -> String {
    let (headline, location) = locate_error(error, loader, context);
    match location {
        Some(location) => format!("{headline} (at {location})"),
        None => headline,
    }
}

/// The error's own text (`Error: message`) and, apart, where it was thrown (`file:line:col` in
/// the original source) when the stack names one of the extension's files.
pub fn locate_error(
    error: &JsError,
    loader: &ConfinedLoader,
    context: &mut Context,
) -> (String, Option<String>) {
    let rendered = error.to_string();
    let mut lines = rendered.lines();
    let mut headline = lines
        .next()
        .unwrap_or("an error without a message")
        .to_string();
    if let Some(value) = error.as_opaque() {
        headline = describe_thrown(value, context);
    }
    let frames: Vec<&str> = lines.collect();
    let mut stack = frames.join("\n");
    if stack.is_empty()
        && let Some(object) = error.as_opaque().and_then(JsValue::as_object)
        && let Ok(value) = object.get(js_string!("stack"), context)
        && let Some(text) = value.as_string()
    {
        stack = text.to_std_string_escaped();
    }
    if error.as_engine().is_some() && headline.contains("iteration") {
        headline.push_str(
            " (a loop ran past the loop-iteration limit; `extensions.loopIterationLimit` in settings raises it)",
        );
    }
    (headline, first_original_frame(&stack, loader))
}

/// What a thrown value says: `Name: message` for an Error, else the value itself.
fn describe_thrown(value: &JsValue, context: &mut Context) -> String {
    if let Some(object) = value.as_object() {
        let name = object
            .get(js_string!("name"), context)
            .ok()
            .and_then(|v| v.as_string().map(|s| s.to_std_string_escaped()));
        let message = object
            .get(js_string!("message"), context)
            .ok()
            .and_then(|v| v.as_string().map(|s| s.to_std_string_escaped()));
        if let Some(message) = message {
            return match name {
                Some(name) if !name.is_empty() => format!("{name}: {message}"),
                _ => message,
            };
        }
    }
    value.display().to_string()
}

/// The first `(path:line:col)` frame in one of the loader's files, mapped to its original place.
fn first_original_frame(stack: &str, loader: &ConfinedLoader) -> Option<String> {
    for line in stack.lines() {
        let Some(open) = line.rfind('(') else {
            continue;
        };
        let inside = line[open + 1..].trim_end().trim_end_matches(')');
        let mut parts = inside.rsplitn(3, ':');
        let (Some(column), Some(row), Some(file)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(row), Ok(column)) = (row.parse::<u32>(), column.parse::<u32>()) else {
            continue;
        };
        if let Some((line, column)) = loader.original_position(file, row, column) {
            return Some(format!("{file}:{line}:{column}"));
        }
    }
    None
}
