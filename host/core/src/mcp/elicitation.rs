//! Elicitation (form mode): a server asking the user for data during a call. The request is
//! read from the server's untrusted schema into fields of a few known kinds, answered by the
//! session's [`Elicitor`] (a terminal, an editor, an embedder's UI; declined when there is none),
//! and the answer is checked against those fields before it goes back.
//!
//! An elicitation grants nothing: it is data for the server, never a permission answer, and the
//! gate never sees it.

use parking_lot::RwLock;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::runner::BoxFuture;

/// The most fields read from one request.
const MAX_FIELDS: usize = 64;

/// The most choices read for one field.
const MAX_CHOICES: usize = 256;

/// What a server asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server asking (its name in settings): it is the server speaking, not earshot.
    pub server: String,
    /// The server's message (untrusted text: sanitise before showing it).
    pub message: String,
    /// The fields, in the server's order.
    pub fields: Vec<ElicitationField>,
    /// The requested schema as the server sent it, for an elicitor that passes the form on to
    /// another client (`earshot mcp serve`); the answer is checked against `fields` either way.
    pub schema: Value,
}

/// One field of the form.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationField {
    /// The key in the answer.
    pub name: String,
    /// A label, when the server gives one.
    pub title: Option<String>,
    /// What it is for, when the server says.
    pub description: Option<String>,
    /// What kind of value it takes.
    pub kind: FieldKind,
    /// The server's default (already checked to fit `kind`).
    pub default: Option<Value>,
    /// Whether the answer must have it.
    pub required: bool,
}

/// The kinds of value a field takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A string, with an optional `format` (email, uri, date, date-time) and length bounds.
    Text {
        /// `format`, as the server wrote it.
        format: Option<String>,
        /// `minLength`.
        min_length: Option<u64>,
        /// `maxLength`.
        max_length: Option<u64>,
    },
    /// A number within optional bounds.
    Number {
        /// `minimum`.
        minimum: Option<f64>,
        /// `maximum`.
        maximum: Option<f64>,
    },
    /// A whole number within optional bounds.
    Integer {
        /// `minimum`.
        minimum: Option<f64>,
        /// `maximum`.
        maximum: Option<f64>,
    },
    /// true or false.
    Boolean,
    /// One of a list of values.
    Choice(Vec<Choice>),
    /// Some of a list of values.
    Choices {
        /// The values to choose from.
        options: Vec<Choice>,
        /// `minItems`.
        min_items: Option<u64>,
        /// `maxItems`.
        max_items: Option<u64>,
    },
}

/// One value of a choice, with its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The value sent back.
    pub value: String,
    /// What to show (the value when the server gives no label).
    pub label: String,
}

/// How the user answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Send these values.
    Accept(Map<String, Value>),
    /// Refuse to give them; the operation may go on.
    Decline,
    /// Stop the whole operation.
    Cancel,
}

/// Answers elicitations for a session: the terminal, an editor's dialog, an embedder's UI.
pub trait Elicitor: Send + Sync {
    /// Answers one request.
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer>;
}

/// Declines every elicitation: a session with no one to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeclineElicitations;

impl Elicitor for DeclineElicitations {
    fn elicit<'a>(&'a self, _request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        Box::pin(std::future::ready(ElicitationAnswer::Decline))
    }
}

/// The session's elicitor, shared by every connection and replaceable while they run.
#[derive(Clone)]
pub struct ElicitorSlot(Arc<RwLock<Arc<dyn Elicitor>>>);

impl Default for ElicitorSlot {
    fn default() -> Self {
        ElicitorSlot(Arc::new(RwLock::new(Arc::new(DeclineElicitations))))
    }
}

impl ElicitorSlot {
    /// Answers from now on with `elicitor`.
    pub fn set(&self, elicitor: Arc<dyn Elicitor>) {
        *self.0.write() = elicitor;
    }

    /// The elicitor in force.
    pub fn current(&self) -> Arc<dyn Elicitor> {
        self.0.read().clone()
    }
}

impl ElicitationRequest {
    /// The request of `server` with `message` and `schema` (the `requestedSchema` as JSON).
    ///
    /// # Errors
    /// Why the schema is not a form earshot can show (a nested object, an unknown type).
    pub fn from_schema(server: &str, message: &str, schema: &Value) -> Result<Self, String> {
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .ok_or("the requested schema has no properties")?;
        if properties.len() > MAX_FIELDS {
            return Err(format!(
                "the form has {} fields, more than the {MAX_FIELDS} earshot shows",
                properties.len()
            ));
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = properties
            .iter()
            .map(|(name, property)| field(name, property, required.contains(&name.as_str())))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(ElicitationRequest {
            server: server.to_string(),
            message: message.to_string(),
            fields,
            schema: schema.clone(),
        })
    }

    /// Every field that has a default, with it: what accepting the form untouched sends.
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|field| Some((field.name.clone(), field.default.clone()?)))
            .collect()
    }

    /// `answer` checked against the fields: unknown keys dropped, every value of its field's kind,
    /// every required field present.
    ///
    /// # Errors
    /// The first problem, naming the field.
    pub fn check(&self, answer: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        let mut checked = Map::new();
        for field in &self.fields {
            match answer.get(&field.name) {
                Some(value) => {
                    field
                        .kind
                        .check(value)
                        .map_err(|why| format!("{}: {why}", field.name))?;
                    checked.insert(field.name.clone(), value.clone());
                }
                None if field.required => return Err(format!("{} is required", field.name)),
                None => {}
            }
        }
        Ok(checked)
    }
}

impl FieldKind {
    /// Whether `value` is a value of this kind.
    ///
    /// # Errors
    /// Why not, in a few words.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match self {
            FieldKind::Text {
                min_length,
                max_length,
                ..
            } => {
                let text = value.as_str().ok_or("expected text")?;
                let length = text.chars().count() as u64;
                if min_length.is_some_and(|min| length < min) {
                    return Err(format!("at least {} characters", min_length.unwrap_or(0)));
                }
                if max_length.is_some_and(|max| length > max) {
                    return Err(format!("at most {} characters", max_length.unwrap_or(0)));
                }
                Ok(())
            }
            FieldKind::Number { minimum, maximum } => in_range(
                value.as_f64().ok_or("expected a number")?,
                *minimum,
                *maximum,
            ),
            FieldKind::Integer { minimum, maximum } => {
                let number = value
                    .as_i64()
                    .map(|n| n as f64)
                    .ok_or("expected a whole number")?;
                in_range(number, *minimum, *maximum)
            }
            FieldKind::Boolean => value
                .as_bool()
                .map(|_| ())
                .ok_or("expected true or false".into()),
            FieldKind::Choice(options) => {
                let text = value.as_str().ok_or("expected one of the choices")?;
                if options.iter().any(|option| option.value == text) {
                    Ok(())
                } else {
                    Err(format!("\"{text}\" is not one of the choices"))
                }
            }
            FieldKind::Choices {
                options,
                min_items,
                max_items,
            } => {
                let items = value.as_array().ok_or("expected a list of choices")?;
                for item in items {
                    FieldKind::Choice(options.clone()).check(item)?;
                }
                let count = items.len() as u64;
                if min_items.is_some_and(|min| count < min) {
                    return Err(format!("choose at least {}", min_items.unwrap_or(0)));
                }
                if max_items.is_some_and(|max| count > max) {
                    return Err(format!("choose at most {}", max_items.unwrap_or(0)));
                }
                Ok(())
            }
        }
    }
}

fn in_range(number: f64, minimum: Option<f64>, maximum: Option<f64>) -> Result<(), String> {
    if minimum.is_some_and(|min| number < min) || maximum.is_some_and(|max| number > max) {
        let bound = |b: Option<f64>| b.map_or("…".to_string(), |b| b.to_string());
        return Err(format!("between {} and {}", bound(minimum), bound(maximum)));
    }
    Ok(())
}

/// One property of the requested schema as a field.
fn field(name: &str, property: &Value, required: bool) -> Result<ElicitationField, String> {
    let text = |key: &str| {
        property
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let number = |key: &str| property.get(key).and_then(Value::as_f64);
    let count = |key: &str| property.get(key).and_then(Value::as_u64);
    let kind = match property.get("type").and_then(Value::as_str) {
        Some("string") => match choices_of(property) {
            Some(options) => FieldKind::Choice(options),
            None => FieldKind::Text {
                format: text("format"),
                min_length: count("minLength"),
                max_length: count("maxLength"),
            },
        },
        Some("number") => FieldKind::Number {
            minimum: number("minimum"),
            maximum: number("maximum"),
        },
        Some("integer") => FieldKind::Integer {
            minimum: number("minimum"),
            maximum: number("maximum"),
        },
        Some("boolean") => FieldKind::Boolean,
        Some("array") => {
            let options = property
                .get("items")
                .and_then(choices_of)
                .ok_or_else(|| format!("field \"{name}\" is a list without choices"))?;
            FieldKind::Choices {
                options,
                min_items: count("minItems"),
                max_items: count("maxItems"),
            }
        }
        other => {
            return Err(format!(
                "field \"{name}\" has a type earshot cannot ask for ({})",
                other.unwrap_or("none")
            ));
        }
    };
    // A default that does not fit its field is ignored, never sent back.
    let default = property
        .get("default")
        .filter(|default| kind.check(default).is_ok())
        .cloned();
    Ok(ElicitationField {
        name: name.to_string(),
        title: text("title"),
        description: text("description"),
        kind,
        default,
        required,
    })
}

/// The choices of `enum` (with `enumNames` as labels), `oneOf` or `anyOf` (`const` and `title`).
fn choices_of(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let labels = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .take(MAX_CHOICES)
                .enumerate()
                .filter_map(|(index, value)| {
                    let value = value.as_str()?.to_string();
                    let label = labels
                        .and_then(|labels| labels.get(index))
                        .and_then(Value::as_str)
                        .map_or_else(|| value.clone(), str::to_string);
                    Some(Choice { value, label })
                })
                .collect(),
        );
    }
    let listed = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        listed
            .iter()
            .take(MAX_CHOICES)
            .filter_map(|option| {
                let value = option.get("const")?.as_str()?.to_string();
                let label = option
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_string);
                Some(Choice { value, label })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fit_their_fields_and_answers_are_checked() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30, "minimum": 0},
            "bad": {"type": "integer", "default": "thirty"},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "fish": {"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}]}, "maxItems": 1},
            "ok": {"type": "boolean", "default": true}
        }, "required": ["name"]});
        let request = ElicitationRequest::from_schema("s", "m", &schema).unwrap();
        let defaults = request.defaults();
        assert_eq!(
            Value::Object(defaults.clone()),
            json!({"name": "John Doe", "age": 30, "status": "active", "ok": true})
        );
        assert!(request.check(&defaults).is_ok());
        let mut answer = defaults;
        answer.insert("status".into(), json!("gone"));
        assert_eq!(
            request.check(&answer).unwrap_err(),
            "status: \"gone\" is not one of the choices"
        );
        assert_eq!(request.check(&Map::new()).unwrap_err(), "name is required");
        let nested = json!({"type": "object", "properties": {"x": {"type": "object"}}});
        assert!(ElicitationRequest::from_schema("s", "m", &nested).is_err());
    }
}
