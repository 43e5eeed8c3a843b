//! The host's schema-validator component.
//!
//! Implements the `schema-validator` world of `wit/` with the `jsonschema` crate. It runs inside
//! a wasm sandbox with no capabilities: a remote `$ref` resolves only against the documents the
//! host hands in, never over the network or the filesystem.

use std::collections::HashMap;

use earshot_guest_sdk::bindings::schema_validator::exports::earshot::plugin::validation::{
    Guest, GuestValidator, RemoteSchema, SchemaError, ValidationError, ValidationOutcome, Validator,
};
use jsonschema::{Retrieve, Uri};
use serde_json::Value;

/// Serves `$ref` targets from the documents handed to `compile`, and nothing else.
struct HandedInRemotes(HashMap<String, Value>);

impl Retrieve for HandedInRemotes {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let wanted = uri.as_str();
        let without_fragment = wanted.split('#').next().unwrap_or(wanted);
        self.0
            .get(without_fragment)
            .cloned()
            .ok_or_else(|| format!("{wanted} is not available: this validator never fetches schemas; hand the document in with the schema").into())
    }
}

/// A compiled schema, kept in the sandbox between calls.
struct CompiledValidator(jsonschema::Validator);

impl GuestValidator for CompiledValidator {
    fn compile(schema_json: String, remotes: Vec<RemoteSchema>) -> Result<Validator, SchemaError> {
        let schema: Value = serde_json::from_str(&schema_json)
            .map_err(|error| SchemaError::NotJson(error.to_string()))?;
        let mut documents = HashMap::with_capacity(remotes.len());
        for remote in remotes {
            let document: Value = serde_json::from_str(&remote.schema_json).map_err(|error| {
                SchemaError::NotJson(format!("remote schema {}: {error}", remote.uri))
            })?;
            documents.insert(remote.uri, document);
        }
        let validator = jsonschema::options()
            .with_retriever(HandedInRemotes(documents))
            .build(&schema)
            .map_err(|error| SchemaError::InvalidSchema(describe_schema_error(&error)))?;
        Ok(Validator::new(CompiledValidator(validator)))
    }

    fn check(schema_json: String) -> Result<(), SchemaError> {
        let schema: Value = serde_json::from_str(&schema_json)
            .map_err(|error| SchemaError::NotJson(error.to_string()))?;
        // `validate_for` keeps one meta-schema validator per draft; `build` (and `meta::validate`)
        // make a new one on every call on wasm targets (about 2 ms here), which is why a host
        // checks first and compiles on first use.
        jsonschema::meta::validate_for::<jsonschema::json::SerdeJson>(&schema)
            .map_err(|error| SchemaError::InvalidSchema(describe_schema_error(&error)))
    }

    fn validate(&self, instance_json: String) -> ValidationOutcome {
        let instance: Value = match serde_json::from_str(&instance_json) {
            Ok(instance) => instance,
            Err(error) => return ValidationOutcome::NotJson(error.to_string()),
        };
        // Almost every call is valid: `is_valid` answers without building the error iterators
        // (boxed, one per keyword), which costs the same again; only an invalid input pays for
        // the errors it reports.
        if self.0.is_valid(&instance) {
            return ValidationOutcome::Valid;
        }
        let errors: Vec<ValidationError> = self
            .0
            .iter_errors(&instance)
            .map(|error| ValidationError {
                instance_path: error.instance_path().as_str().to_string(),
                schema_path: error.schema_path().as_str().to_string(),
                message: error.to_string(),
            })
            .collect();
        if errors.is_empty() {
            // `is_valid` and `iter_errors` disagreeing would be a jsonschema bug; the input is
            // refused rather than let through.
            ValidationOutcome::Invalid(vec![ValidationError {
                instance_path: String::new(),
                schema_path: String::new(),
                message: "the validator could not say why this input is invalid".to_string(),
            }])
        } else {
            ValidationOutcome::Invalid(errors)
        }
    }
}

/// One line for a schema that failed its meta-schema or could not be resolved.
fn describe_schema_error(error: &jsonschema::ValidationError<'_>) -> String {
    let at = error.instance_path().as_str();
    if at.is_empty() {
        error.to_string()
    } else {
        format!("{error} (at {at})")
    }
}

struct Component;

impl Guest for Component {
    type Validator = CompiledValidator;
}

earshot_guest_sdk::bindings::schema_validator::export_schema_validator!(Component);
