//! The model's one `skill` tool: `{"name": "pdf-tools"}` returns the skill's `SKILL.md` body,
//! wrapped with its name, source and digest, plus the list of its files;
//! `{"name": "pdf-tools", "file": "references/api.md"}` returns one of those files. The body
//! is returned as written: its `` !`cmd` `` lines reach the model as text and run nothing (they
//! run only when the user types `/name`). What is returned is the bytes whose digest was
//! checked, so a file swapped after trust is never read.

use serde_json::{Value, json};

use super::catalogue::{Catalogue, escaped, without_hidden};
use super::expand::neutralise_labels;
use super::item::{LoadedItem, current_body};

/// The tool's name.
pub const SKILL_TOOL_NAME: &str = "skill";

/// The most bytes of one skill file returned.
pub const FILE_CAP: usize = 256 << 10;

/// What the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRequest {
    /// The skill.
    pub name: String,
    /// One of its files, relative to its folder, when asked.
    pub file: Option<String>,
}

/// The `skill` tool with `input` as hooks match it: as what its gate decides on, `Skill(name)`
/// for the skill its input names (so `skill`, `Skill`, `Skill(deploy)` and `*` all match), or
/// its bare name when the input names none.
pub fn hook_tool(input: &Value) -> crate::hooks::HookTool {
    match input.get("name").and_then(Value::as_str) {
        Some(name) => crate::hooks::HookTool {
            name: SKILL_TOOL_NAME.to_string(),
            keyword: Some("Skill".to_string()),
            target: name.to_string(),
        },
        None => crate::hooks::HookTool {
            name: SKILL_TOOL_NAME.to_string(),
            keyword: None,
            target: SKILL_TOOL_NAME.to_string(),
        },
    }
}

/// The tool's description: the catalogue, so the model knows what each skill is for.
pub fn tool_description(catalogue: &Catalogue) -> String {
    format!(
        "Loads a skill: instructions (and files) for a kind of task. Call it with a skill's name when a task matches its description, before doing the task; call it again with \"file\" to read one of the files it lists. It only returns text.\n{}",
        catalogue.text()
    )
}

/// The tool's input schema: `name` is one of `names`.
pub fn input_schema(names: &[String]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": names, "description": "The skill to load."},
            "file": {"type": "string", "description": "One of the skill's files (as listed when it was loaded), relative to its folder."}
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

/// Reads the tool's input.
///
/// # Errors
/// A phrase saying what is wrong with it.
pub fn parse_request(input_json: &str) -> Result<SkillRequest, String> {
    let input: Value =
        serde_json::from_str(input_json).map_err(|error| format!("it is not JSON: {error}"))?;
    let object = input.as_object().ok_or("it must be a JSON object")?;
    if let Some(key) = object.keys().find(|key| *key != "name" && *key != "file") {
        return Err(format!(
            "unknown field \"{}\"",
            crate::gate::sanitise_for_terminal(key, 40)
        ));
    }
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .ok_or("\"name\" must be a skill's name")?
        .to_string();
    let file = match object.get("file") {
        None | Some(Value::Null) => None,
        Some(Value::String(file)) => Some(file.clone()),
        Some(_) => return Err("\"file\" must be a path".into()),
    };
    Ok(SkillRequest { name, file })
}

/// What the tool returns for `request` of `item` (trusted and model-invocable: the caller
/// checked): the wrapped body and file list, or one file.
///
/// # Errors
/// One line: the skill changed, or the file is not one of its files or not text.
pub fn respond(item: &LoadedItem, request: &SkillRequest) -> Result<String, String> {
    let (body, _, contents) = current_body(item)?;
    let contents = contents.ok_or("not a skill")?;
    let header = format!(
        "name=\"{}\" source=\"{}\" digest=\"{}\"",
        item.name,
        item.origin.as_str(),
        item.digest
    );
    match &request.file {
        None => {
            let mut text = format!(
                "<skill {header}>\n{}\n</skill>\n",
                neutralise_labels(&without_hidden(body.trim_end()))
            );
            if !item.files.is_empty() {
                text.push_str(&format!(
                    "Files of skill \"{}\" (read one with {{\"name\": \"{}\", \"file\": PATH}}):\n",
                    item.name, item.name
                ));
                for file in &item.files {
                    text.push_str(&format!("- {}\n", escaped(file)));
                }
            }
            if !item.frontmatter.allowed_tools.is_empty() {
                text.push_str(&format!(
                    "This skill asks for: {} (nothing is pre-approved; each call is asked for as usual)\n",
                    escaped(&item.frontmatter.allowed_tools.join(", "))
                ));
            }
            Ok(text)
        }
        Some(path) => {
            let path = path.strip_prefix("./").unwrap_or(path);
            if path == "SKILL.md" {
                return respond(
                    item,
                    &SkillRequest {
                        name: request.name.clone(),
                        file: None,
                    },
                );
            }
            let file = contents
                .file(path)
                .filter(|_| item.files.iter().any(|listed| listed == path))
                .ok_or_else(|| {
                    format!(
                        "skill \"{}\" has no file \"{}\"; its files: {}",
                        item.name,
                        crate::gate::sanitise_for_terminal(path, 200),
                        if item.files.is_empty() {
                            "none".to_string()
                        } else {
                            item.files.join(", ")
                        }
                    )
                })?;
            let size = file.bytes.len();
            let mut bytes = &file.bytes[..size.min(FILE_CAP)];
            if size > FILE_CAP {
                bytes = super::folder::whole_characters(bytes);
            }
            let text = std::str::from_utf8(bytes).map_err(|_| {
                format!(
                    "{path} of skill \"{}\" is not UTF-8 text; it cannot be read here",
                    item.name
                )
            })?;
            let mut text = format!(
                "<skill-file {header} path=\"{}\">\n{}\n</skill-file>\n",
                escaped(path),
                neutralise_labels(&without_hidden(text.trim_end()))
            );
            if size > FILE_CAP {
                text.push_str(&format!(
                    "[truncated: the file is {size} bytes; the first {FILE_CAP} are shown]\n"
                ));
            }
            Ok(text)
        }
    }
}
