//! JavaScript errors as one line for the user, located in the original `.ts` file.
//!
//! Boa reports positions in the stripped JavaScript (`at fn (path:line:col)`); each frame in one
//! of the extension's files is mapped back through oxc's source map.

use std::path::Path;

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
    let (headline, frame) = locate_frame(error, loader, context);
    (
        headline,
        frame.map(|(file, line, column)| format!("{file}:{line}:{column}")),
    )
}

/// Why an extension did not load, naming its own file at most once, since the failure is headed
/// by that file's path: `file:line:col: {what}: Error: message` when it was thrown in that file
/// (so the heading's path is that location's), `{what}: Error: message (at lib/x.ts:3:9)` when
/// in a helper (named from the extension's folder), and `{what}: Error: message` when no frame is
/// known.
pub fn describe_load_error(
    what: &str,
    error: &JsError,
    loader: &ConfinedLoader,
    context: &mut Context,
) -> String {
    let (headline, frame) = locate_frame(error, loader, context);
    let told = if what.is_empty() {
        headline
    } else {
        format!("{what}: {headline}")
    };
    match frame {
        Some((file, line, column)) if loader.is_entry(Path::new(&file)) => {
            format!("{file}:{line}:{column}: {told}")
        }
        Some((file, line, column)) => format!(
            "{told} (at {}:{line}:{column})",
            loader.shown(Path::new(&file))
        ),
        None => told,
    }
}

/// [`locate_error`], with the place as (file, line, column).
fn locate_frame(
    error: &JsError,
    loader: &ConfinedLoader,
    context: &mut Context,
) -> (String, Option<(String, u32, u32)>) {
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
    // The rendering may hold other lines (a cause) and no frame: the `stack` property then.
    if first_original_frame(&stack, loader).is_none()
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

/// How many causes of a cause are told (`cause` may be a cycle).
const MAX_CAUSES: usize = 4;

/// What a thrown value says: `Name: message` for an Error, else the value itself; an error's
/// `cause` follows on the same line (`TypeError: fetch failed; cause: Error: connect
/// ECONNREFUSED 127.0.0.1:8799`), as Node prints it below the stack.
fn describe_thrown(value: &JsValue, context: &mut Context) -> String {
    let mut told = one_thrown(value, context);
    let mut current = value.clone();
    for _ in 0..MAX_CAUSES {
        let Some(object) = current.as_object() else {
            break;
        };
        if !object
            .has_own_property(js_string!("cause"), context)
            .unwrap_or(false)
        {
            break;
        }
        let Ok(cause) = object.get(js_string!("cause"), context) else {
            break;
        };
        told.push_str("; cause: ");
        told.push_str(&one_thrown(&cause, context));
        current = cause;
    }
    told
}

/// One thrown value, without its cause.
fn one_thrown(value: &JsValue, context: &mut Context) -> String {
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
fn first_original_frame(stack: &str, loader: &ConfinedLoader) -> Option<(String, u32, u32)> {
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
            return Some((file.to_string(), line, column));
        }
    }
    None
}
