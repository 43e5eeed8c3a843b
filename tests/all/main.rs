//! Every integration test in one binary (as wasmtime's `tests/all`), so wasmtime, Boa, oxc and rmcp
//! are linked once. Each module is one area; `common` holds what they share.

mod acp;
mod acp_stdio;
mod common;
mod components;
#[cfg(all(feature = "js", feature = "mcp"))]
mod embedding;
#[cfg(feature = "js")]
mod extension_additions;
#[cfg(feature = "js")]
mod extension_engine;
#[cfg(feature = "js")]
mod extension_everyday;
#[cfg(feature = "js")]
mod extension_imports;
#[cfg(feature = "js")]
mod extension_limits;
#[cfg(feature = "js")]
mod extension_native_stack;
#[cfg(feature = "js")]
mod extension_session;
#[cfg(feature = "js")]
mod extension_strings;
#[cfg(feature = "js")]
mod extensions;
mod first_day_cli;
mod gate;
mod gate_actions;
mod guest_sdk_example;
mod help_matches_readme;
mod hooks;
mod hooks_consumers;
#[cfg(feature = "js")]
mod hooks_hostile;
#[cfg(feature = "mcp")]
mod hooks_results;
#[cfg(feature = "js")]
mod hooks_trust;
mod hostile_guests;
mod hostile_repository;
mod jco_host;
mod local_ignore;
#[cfg(feature = "mcp")]
mod mcp_conformance;
#[cfg(feature = "mcp")]
mod mcp_elicitation;
#[cfg(feature = "mcp")]
mod mcp_notifications;
#[cfg(feature = "mcp")]
mod mcp_oauth;
mod mcp_output;
#[cfg(feature = "mcp")]
mod mcp_prompts;
#[cfg(feature = "mcp")]
mod mcp_real_servers;
#[cfg(feature = "mcp")]
mod mcp_redaction;
#[cfg(feature = "mcp")]
mod mcp_resources;
#[cfg(feature = "mcp")]
mod mcp_serve;
#[cfg(feature = "mcp")]
mod mcp_servers;
#[cfg(feature = "mcp")]
mod mcp_session;
#[cfg(not(feature = "js"))]
mod no_js_runtime;
#[cfg(not(feature = "mcp"))]
mod no_mcp_client;
mod properties_mcp_output;
mod properties_rules;
mod properties_server_digest;
mod properties_settings;
mod python_guest;
mod rich_results;
mod schema_validator;
mod schema_validator_suite;
mod server_digest;
mod settings;
#[cfg(feature = "js")]
mod settings_guards;
mod skills;
mod skills_consumers;
mod skills_hostile;
mod slash_commands;
mod tools_call_cli;
mod trust;
mod trust_snapshot;
#[cfg(feature = "js")]
mod web_crypto;
#[cfg(feature = "js")]
mod web_platform;
mod wit_contract;
