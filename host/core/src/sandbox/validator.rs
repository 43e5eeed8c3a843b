//! The schema-validator sandbox: JSON Schema validation in a capability-free component.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use wasmtime::component::ResourceAny;

use super::bindings::schema_validator::SchemaValidator as ValidatorWorld;
use super::bindings::schema_validator::exports::earshot::plugin::validation::{
    RemoteSchema, SchemaError as WitSchemaError, ValidationOutcome,
};
use super::cache::ComponentCache;
use super::engine::SandboxEngine;
use super::limits::SandboxLimits;
use super::runner::Runner;
use crate::sandbox_error::SandboxError;

/// The validator component, built from `host/guests/schema-validator` during the build.
const VALIDATOR_WASM: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/earshot_schema_validator.wasm"));

/// The same, compiled to native code at build time (see `host/core/build.rs`; the
/// `precompiled-guests` feature, on by default).
#[cfg(feature = "precompiled-guests")]
const VALIDATOR_CWASM: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/earshot_schema_validator.cwasm"));

/// What is tried before compiling on a cache miss: the build-time code, when the build made it.
#[cfg(feature = "precompiled-guests")]
const PRECOMPILED: Option<&[u8]> = Some(VALIDATOR_CWASM);
#[cfg(not(feature = "precompiled-guests"))]
const PRECOMPILED: Option<&[u8]> = None;

/// The component's name in errors.
pub const VALIDATOR_COMPONENT: &str = "schema-validator";

/// Why a schema could not be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema text is not JSON.
    #[error("the schema is not JSON: {0}")]
    NotJson(String),
    /// The schema is JSON but not a valid JSON Schema (or a `$ref` cannot be resolved).
    #[error("the schema is not a valid JSON Schema: {0}")]
    Invalid(String),
    /// The sandbox failed.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// One reason an instance does not match its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationIssue {
    /// JSON Pointer into the instance.
    pub instance_path: String,
    /// JSON Pointer to the failing schema keyword.
    pub schema_path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ValidationIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.instance_path.is_empty() {
            "input"
        } else {
            &self.instance_path
        };
        write!(f, "{at}: {} (schema {})", self.message, self.schema_path)
    }
}

/// The verdict on one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The instance matches.
    Valid,
    /// The instance does not match, for these reasons.
    Invalid(Vec<ValidationIssue>),
    /// The instance is not JSON.
    NotJson(String),
}

impl Verdict {
    /// True for [`Verdict::Valid`].
    pub fn is_valid(&self) -> bool {
        matches!(self, Verdict::Valid)
    }
}

/// A schema document that a `$ref` may point at (the validator never fetches anything).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The URI a `$ref` names it by.
    pub uri: String,
    /// The document, as JSON text.
    pub schema_json: String,
}

/// What the host remembers of a compiled schema, so that it can be compiled again in a fresh
/// store after a trap.
struct Entry {
    schema_json: String,
    remotes: Vec<Remote>,
    compiled_in: Option<(u64, ResourceAny)>,
}

struct Inner {
    runner: Loading,
    entries: HashMap<u64, Entry>,
    next_id: u64,
}

/// The validator's runner, or what loading it takes: a session whose plugins declare no schema
/// never maps the component's code (about 13 MB) into memory.
enum Loading {
    Deferred {
        engine: SandboxEngine,
        cache: ComponentCache,
        limits: SandboxLimits,
    },
    Loaded(Runner<ValidatorWorld>),
}

impl Loading {
    /// The runner, loaded now if it was deferred.
    fn runner(&mut self) -> Result<&mut Runner<ValidatorWorld>, SandboxError> {
        if let Loading::Deferred {
            engine,
            cache,
            limits,
        } = self
        {
            *self = Loading::Loaded(load_runner(engine, cache, *limits)?);
        }
        match self {
            Loading::Loaded(runner) => Ok(runner),
            Loading::Deferred { .. } => unreachable!("loaded just above"),
        }
    }

    /// The runner's generation, `None` before it is loaded (no schema can live in it then).
    fn generation(&self) -> Option<u64> {
        match self {
            Loading::Loaded(runner) => Some(runner.generation()),
            Loading::Deferred { .. } => None,
        }
    }
}

/// Loads the validator component (from `cache` when possible) and instantiates it.
fn load_runner(
    engine: &SandboxEngine,
    cache: &ComponentCache,
    limits: SandboxLimits,
) -> Result<Runner<ValidatorWorld>, SandboxError> {
    let started = std::time::Instant::now();
    let (component, outcome) = cache.load_with_precompiled(
        engine,
        VALIDATOR_COMPONENT,
        VALIDATOR_WASM,
        env!("EARSHOT_GUEST_EARSHOT_SCHEMA_VALIDATOR_SHA256"),
        PRECOMPILED,
    )?;
    let loaded = started.elapsed();
    let mut runner =
        Runner::<ValidatorWorld>::new(engine, VALIDATOR_COMPONENT, &component, limits)?;
    let linked = started.elapsed();
    runner.ensure_live()?;
    tracing::debug!(
        ?outcome,
        load_ms = loaded.as_secs_f64() * 1e3,
        link_ms = (linked - loaded).as_secs_f64() * 1e3,
        instantiate_ms = (started.elapsed() - linked).as_secs_f64() * 1e3,
        "validator ready"
    );
    Ok(runner)
}

/// Validates JSON against JSON Schemas inside the validator component.
///
/// A schema is compiled once ([`SchemaValidator::compile`]) and kept inside the sandbox; each
/// [`SchemaValidator::validate`] then costs microseconds. If the component ever traps, the next
/// call gets a fresh store and the schemas it needs are compiled again transparently.
#[derive(Clone)]
pub struct SchemaValidator {
    inner: Arc<Mutex<Inner>>,
}

/// A schema compiled by a [`SchemaValidator`]. Dropping it frees it inside the sandbox.
#[derive(Debug)]
pub struct CompiledSchema {
    id: u64,
    owner: Weak<Mutex<Inner>>,
}

impl SchemaValidator {
    /// Loads the validator component (from `cache` when possible) with default limits.
    ///
    /// # Errors
    /// A [`SandboxError`] if the embedded component cannot be compiled or instantiated.
    pub fn new(engine: &SandboxEngine, cache: &ComponentCache) -> Result<Self, SandboxError> {
        Self::with_limits(engine, cache, SandboxLimits::VALIDATOR)
    }

    /// Loads the validator component with explicit limits.
    ///
    /// # Errors
    /// As [`SchemaValidator::new`].
    pub fn with_limits(
        engine: &SandboxEngine,
        cache: &ComponentCache,
        limits: SandboxLimits,
    ) -> Result<Self, SandboxError> {
        Ok(Self::from_loading(Loading::Loaded(load_runner(
            engine, cache, limits,
        )?)))
    }

    /// A validator that loads its component at its first use instead of now, with default
    /// limits: what a session holds, so that one whose plugins declare no schema (or that has no
    /// plugin) never maps the component's code. A component that cannot load fails that first
    /// use with [`SchemaError::Sandbox`] instead of this call.
    pub fn deferred(engine: &SandboxEngine, cache: &ComponentCache) -> Self {
        Self::from_loading(Loading::Deferred {
            engine: engine.clone(),
            cache: cache.clone(),
            limits: SandboxLimits::VALIDATOR,
        })
    }

    fn from_loading(runner: Loading) -> Self {
        SchemaValidator {
            inner: Arc::new(Mutex::new(Inner {
                runner,
                entries: HashMap::new(),
                next_id: 0,
            })),
        }
    }

    /// Compiles `schema_json` (draft 2020-12 unless its `$schema` says otherwise), checking it
    /// against its meta-schema.
    ///
    /// # Errors
    /// [`SchemaError::NotJson`] or [`SchemaError::Invalid`] with the reason; a sandbox failure.
    pub fn compile(&self, schema_json: &str) -> Result<CompiledSchema, SchemaError> {
        self.compile_with_remotes(schema_json, &[])
    }

    /// Compiles `schema_json`, resolving remote `$ref`s only against `remotes`.
    ///
    /// # Errors
    /// As [`SchemaValidator::compile`].
    pub fn compile_with_remotes(
        &self,
        schema_json: &str,
        remotes: &[Remote],
    ) -> Result<CompiledSchema, SchemaError> {
        let mut inner = self.inner.lock();
        let mut entry = Entry {
            schema_json: schema_json.to_string(),
            remotes: remotes.to_vec(),
            compiled_in: None,
        };
        let runner = inner.runner.runner()?;
        let resource = compile_in_sandbox(runner, &entry)?;
        entry.compiled_in = Some((runner.generation(), resource));
        Ok(self.keep(&mut inner, entry))
    }

    /// Keeps `entry` under a new id and hands out the handle that frees it when dropped.
    fn keep(&self, inner: &mut Inner, entry: Entry) -> CompiledSchema {
        let id = inner.next_id;
        inner.next_id += 1;
        inner.entries.insert(id, entry);
        CompiledSchema {
            id,
            owner: Arc::downgrade(&self.inner),
        }
    }

    /// Checks `schema_json` against its meta-schema now and compiles it on its first validation.
    /// Loaders use this for many tools at once: a check costs microseconds where a compile costs
    /// milliseconds in the sandbox, and most tools of a session are never called. A `$ref` that
    /// cannot be resolved shows up at the first validation instead of here.
    ///
    /// # Errors
    /// [`SchemaError::NotJson`] or [`SchemaError::Invalid`] when the schema fails its
    /// meta-schema; [`SchemaError::Sandbox`] when the sandbox fails.
    pub fn prepare(&self, schema_json: &str) -> Result<CompiledSchema, SchemaError> {
        let mut inner = self.inner.lock();
        let checked = inner.runner.runner()?.call(|world, store| {
            world
                .earshot_plugin_validation()
                .validator()
                .call_check(store, schema_json)
        })?;
        checked.map_err(SchemaError::from)?;
        let entry = Entry {
            schema_json: schema_json.to_string(),
            remotes: Vec::new(),
            compiled_in: None,
        };
        Ok(self.keep(&mut inner, entry))
    }

    /// Validates `instance_json` against `schema`.
    ///
    /// # Errors
    /// A sandbox failure (the validator trapped or ran out of time or memory), or — only if the
    /// schema was compiled before a trap — the schema failing to compile again.
    ///
    /// # Panics
    /// If `schema` was compiled by a different `SchemaValidator`.
    pub fn validate(
        &self,
        schema: &CompiledSchema,
        instance_json: &str,
    ) -> Result<Verdict, SchemaError> {
        assert!(
            Weak::ptr_eq(&schema.owner, &Arc::downgrade(&self.inner)),
            "a CompiledSchema is used only with the SchemaValidator that compiled it"
        );
        let mut inner = self.inner.lock();
        let Inner {
            runner, entries, ..
        } = &mut *inner;
        let entry = entries
            .get_mut(&schema.id)
            .expect("a live CompiledSchema has an entry");
        let runner = runner.runner()?;
        let generation = runner.ensure_live()?;
        let resource = match entry.compiled_in {
            Some((made_in, resource)) if made_in == generation => resource,
            _ => {
                let resource = compile_in_sandbox(runner, entry)?;
                entry.compiled_in = Some((runner.generation(), resource));
                resource
            }
        };
        let outcome = runner.call(|world, store| {
            world.earshot_plugin_validation().validator().call_validate(
                store,
                resource,
                instance_json,
            )
        })?;
        Ok(match outcome {
            ValidationOutcome::Valid => Verdict::Valid,
            ValidationOutcome::NotJson(reason) => Verdict::NotJson(reason),
            ValidationOutcome::Invalid(errors) => Verdict::Invalid(
                errors
                    .into_iter()
                    .map(|e| ValidationIssue {
                        instance_path: e.instance_path,
                        schema_path: e.schema_path,
                        message: e.message,
                    })
                    .collect(),
            ),
        })
    }

    /// Compiles `schema_json`, validates `instance_json` once, and frees the schema.
    ///
    /// # Errors
    /// As [`SchemaValidator::compile`] and [`SchemaValidator::validate`].
    pub fn validate_once(
        &self,
        schema_json: &str,
        instance_json: &str,
    ) -> Result<Verdict, SchemaError> {
        let schema = self.compile(schema_json)?;
        self.validate(&schema, instance_json)
    }
}

fn compile_in_sandbox(
    runner: &mut Runner<ValidatorWorld>,
    entry: &Entry,
) -> Result<ResourceAny, SchemaError> {
    let remotes: Vec<RemoteSchema> = entry
        .remotes
        .iter()
        .map(|remote| RemoteSchema {
            uri: remote.uri.clone(),
            schema_json: remote.schema_json.clone(),
        })
        .collect();
    let compiled = runner.call(|world, store| {
        world.earshot_plugin_validation().validator().call_compile(
            store,
            &entry.schema_json,
            &remotes,
        )
    })?;
    compiled.map_err(SchemaError::from)
}

impl From<WitSchemaError> for SchemaError {
    fn from(error: WitSchemaError) -> SchemaError {
        match error {
            WitSchemaError::NotJson(reason) => SchemaError::NotJson(reason),
            WitSchemaError::InvalidSchema(reason) => SchemaError::Invalid(reason),
        }
    }
}

impl Drop for CompiledSchema {
    fn drop(&mut self) {
        let Some(owner) = self.owner.upgrade() else {
            return;
        };
        let mut inner = owner.lock();
        let Some(entry) = inner.entries.remove(&self.id) else {
            return;
        };
        if let Some((made_in, resource)) = entry.compiled_in
            && Some(made_in) == inner.runner.generation()
            && let Ok(runner) = inner.runner.runner()
        {
            // A failure here only means the store is already gone; nothing is left to free.
            let _ = runner.call(|_, store| resource.resource_drop(store));
        }
    }
}
