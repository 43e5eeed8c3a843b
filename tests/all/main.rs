//! Every integration test in one binary (as wasmtime's `tests/all`), so wasmtime, Boa, oxc and rmcp
//! are linked once. Each module is one area; `common` holds what they share.

mod acp;
mod acp_stdio;
mod common;
mod components;
mod embedding;
mod extension_engine;
mod extension_native_stack;
mod extension_session;
mod extension_strings;
mod extensions;
mod gate;
mod guest_sdk_example;
mod hostile_guests;
mod hostile_repository;
mod jco_host;
mod mcp_conformance;
mod mcp_elicitation;
mod mcp_notifications;
mod mcp_oauth;
mod mcp_output;
mod mcp_prompts;
mod mcp_real_servers;
mod mcp_resources;
mod mcp_serve;
mod mcp_servers;
mod mcp_session;
mod properties_mcp_output;
mod properties_rules;
mod python_guest;
mod schema_validator;
mod schema_validator_suite;
mod settings;
mod trust;
mod web_platform;
mod wit_contract;
