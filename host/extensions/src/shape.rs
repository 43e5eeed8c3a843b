//! The structural contract of an extension's default export, checked on load:
//! `{ tools: [{ name, description, inputSchema, readOnly?, execute }] }`. Every violation is
//! named precisely (tool index or name, field, what was found).

use boa_engine::object::builtins::JsFunction;
use boa_engine::{Context, JsObject, JsValue, js_string};

use crate::names::check_tool_name;
use crate::to_json::{JsonBudget, to_json};

/// The most bytes of one tool's `inputSchema` as JSON text (deeper than
/// [`crate::to_json::MAX_DEPTH`] levels is refused too).
pub const MAX_SCHEMA_BYTES: usize = 1 << 20;

/// The most tools one extension may contribute (a `tools.length` of 2^32 - 1 must not make the
/// host walk four billion entries).
pub const MAX_TOOLS: u32 = 256;

/// A tool as the host registers it (everything but the function, which stays on its thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    /// Its name within the extension.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input schema, as JSON text (compiled by the host in the validator sandbox).
    pub input_schema: String,
    /// The extension's read-only claim (honoured for extensions).
    pub read_only: bool,
    /// Whether it has a `describe(input)` that writes the permission prompt's title and detail.
    pub describes: bool,
}

/// A tool that passed the shape check: its description, and the object and function to call.
pub struct CheckedTool {
    /// What the host registers.
    pub spec: ToolSpec,
    /// The tool object (`this` of `execute`).
    pub object: JsObject,
    /// Its `execute`.
    pub execute: JsFunction,
    /// Its optional `describe(input)`: the title and detail a permission prompt shows.
    pub describe: Option<JsFunction>,
}

/// How a value is described in a report: its type, and the value itself when short.
pub fn describe_value(value: &JsValue, context: &mut Context) -> String {
    if value.is_undefined() {
        return "undefined".into();
    }
    if value.is_null() {
        return "null".into();
    }
    if let Some(object) = value.as_object() {
        if object.is_callable() {
            return "a function".into();
        }
        if object.is_array() {
            return "an array".into();
        }
        if value.as_promise().is_some() {
            return "a promise".into();
        }
        return "an object".into();
    }
    let kind = value.type_of();
    let shown = value
        .to_string(context)
        .map(|s| s.to_std_string_escaped())
        .unwrap_or_default();
    let shown: String = shown.chars().take(40).collect();
    match kind {
        "string" => format!("a string (\"{shown}\")"),
        "number" => format!("a number ({shown})"),
        "boolean" => format!("a boolean ({shown})"),
        other => format!("a {other}"),
    }
}

/// Checks the module's default export. Returns the tools, or every violation found.
///
/// # Errors
/// One line per violation.
pub fn check_default_export(
    default: &JsValue,
    context: &mut Context,
) -> Result<Vec<CheckedTool>, Vec<String>> {
    if default.is_undefined() {
        return Err(vec![
            "it has no default export; write `export default { tools: [...] }`".into(),
        ]);
    }
    let Some(object) = default
        .as_object()
        .filter(|o| !o.is_callable() && !o.is_array())
    else {
        return Err(vec![format!(
            "its default export is {}, not an object with a `tools` array",
            describe_value(default, context)
        )]);
    };
    let tools = object.get(js_string!("tools"), context).unwrap_or_default();
    let Some(list) = tools.as_object().filter(|o| o.is_array()) else {
        return Err(vec![format!(
            "its default export has no `tools` array (`tools` is {})",
            describe_value(&tools, context)
        )]);
    };
    let length = list
        .get(js_string!("length"), context)
        .ok()
        .and_then(|v| v.as_number())
        .unwrap_or(0.0);
    if length > f64::from(MAX_TOOLS) {
        return Err(vec![format!(
            "its `tools` array has {length} entries; an extension may have at most {MAX_TOOLS}"
        )]);
    }
    let length = length as u32;
    let mut problems = Vec::new();
    let mut checked: Vec<CheckedTool> = Vec::new();
    for index in 0..length {
        let item = list.get(index, context).unwrap_or_default();
        match check_tool(index, &item, context) {
            Ok(tool) => {
                if checked.iter().any(|t| t.spec.name == tool.spec.name) {
                    problems.push(format!(
                        "tool {index} (\"{}\"): the name is used by an earlier tool",
                        tool.spec.name
                    ));
                } else {
                    checked.push(tool);
                }
            }
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok(checked)
    } else {
        Err(problems)
    }
}

fn check_tool(
    index: u32,
    item: &JsValue,
    context: &mut Context,
) -> Result<CheckedTool, Vec<String>> {
    let Some(object) = item
        .as_object()
        .filter(|o| !o.is_callable() && !o.is_array())
    else {
        return Err(vec![format!(
            "tool {index}: is {}, not an object",
            describe_value(item, context)
        )]);
    };
    let field = |name: &str, context: &mut Context| -> JsValue {
        object.get(js_string!(name), context).unwrap_or_default()
    };
    let mut problems = Vec::new();
    let name_value = field("name", context);
    let name = name_value.as_string().map(|s| s.to_std_string_escaped());
    let label = match &name {
        Some(name) => format!("tool {index} (\"{name}\")"),
        None => format!("tool {index}"),
    };
    match &name {
        None => problems.push(format!(
            "{label}: `name` must be a string, found {}",
            describe_value(&name_value, context)
        )),
        Some(name) => {
            if let Err(error) = check_tool_name(name) {
                problems.push(format!("{label}: invalid `name`: {error}"));
            }
        }
    }
    let description_value = field("description", context);
    let description = description_value
        .as_string()
        .map(|s| s.to_std_string_escaped());
    if description.is_none() {
        problems.push(format!(
            "{label}: `description` must be a string, found {}",
            describe_value(&description_value, context)
        ));
    }
    let schema_value = field("inputSchema", context);
    let schema = if schema_value
        .as_object()
        .is_some_and(|o| !o.is_callable() && !o.is_array())
    {
        let mut budget = JsonBudget::new(MAX_SCHEMA_BYTES);
        match to_json(&schema_value, &mut budget, context) {
            Ok(Some(json)) => Some(json.to_string()),
            Ok(None) => {
                problems.push(format!("{label}: `inputSchema` cannot be turned into JSON"));
                None
            }
            Err(error) => {
                problems.push(format!(
                    "{label}: `inputSchema` cannot be turned into JSON: it {error}"
                ));
                None
            }
        }
    } else {
        problems.push(format!(
            "{label}: `inputSchema` must be an object (a JSON Schema), found {}",
            describe_value(&schema_value, context)
        ));
        None
    };
    let read_only_value = field("readOnly", context);
    let read_only = if read_only_value.is_undefined() {
        false
    } else if let Some(flag) = read_only_value.as_boolean() {
        flag
    } else {
        problems.push(format!(
            "{label}: `readOnly` must be a boolean when present, found {}",
            describe_value(&read_only_value, context)
        ));
        false
    };
    let execute_value = field("execute", context);
    let execute = execute_value
        .as_object()
        .and_then(|o| JsFunction::from_object(o.clone()));
    if execute.is_none() {
        problems.push(format!(
            "{label}: `execute` must be a function, found {}",
            describe_value(&execute_value, context)
        ));
    }
    let describer = field("describe", context);
    let describe = if describer.is_undefined() {
        None
    } else {
        let function = describer
            .as_object()
            .and_then(|o| JsFunction::from_object(o.clone()));
        if function.is_none() {
            problems.push(format!(
                "{label}: `describe` must be a function when present, found {}",
                describe_value(&describer, context)
            ));
        }
        function
    };
    match (name, description, schema, execute) {
        (Some(name), Some(description), Some(input_schema), Some(execute))
            if problems.is_empty() =>
        {
            Ok(CheckedTool {
                spec: ToolSpec {
                    name,
                    description,
                    input_schema,
                    read_only,
                    describes: describe.is_some(),
                },
                object: object.clone(),
                execute,
                describe,
            })
        }
        _ => Err(problems),
    }
}
