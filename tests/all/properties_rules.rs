//! Property tests for the rule parser and the settings loader: arbitrary input never panics,
//! never runs past its deadline, and a file that cannot grant (the checked-in one, or a local
//! file earshot did not sign) never yields an allow.

use earshot_host::gate::{DecidedBy, Effect, Gate, ToolRequest, parse_rule};
use earshot_host::names::{SourceKind, ToolId};
use earshot_host::settings::{ProjectPaths, Settings};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Words a settings file is made of, right and wrong, so generated files reach deep paths.
const KEYS: &[&str] = &[
    "permissions",
    "permission",
    "Permissions",
    "allow",
    "deny",
    "Deny",
    "denied",
    "ask",
    "mcpServers",
    "trust",
    "mcp",
    "plugins",
    "extensions",
    "defaultMode",
    "project",
    "signature",
];

fn rule_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        (
            prop::sample::select(vec![
                "Mcp",
                "Extension",
                "Plugin",
                "MCP",
                "Mpc",
                "Bash",
                "Read",
                ""
            ]),
            "[a-z_*?\\[\\]{},/\\-\u{1b}\u{7}\u{202e} ]{0,24}",
            prop::bool::ANY,
        )
            .prop_map(|(keyword, pattern, closed)| {
                format!("{keyword}({pattern}{}", if closed { ")" } else { "" })
            }),
        Just("Mcp(*)".to_string()),
        Just("Plugin(*)".to_string()),
        Just("Extension(*)".to_string()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        rule_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..6).prop_map(
                |entries| Value::Object(
                    entries
                        .into_iter()
                        .map(|(key, value)| (key.to_string(), value))
                        .collect()
                )
            ),
        ]
    })
}

/// The text of a settings file: generated JSON, JSON with a byte flipped, or anything at all.
fn file_text() -> impl Strategy<Value = String> {
    prop_oneof![
        json_value().prop_map(|value| json!({"permissions": value}).to_string()),
        json_value().prop_map(|value| value.to_string()),
        (json_value(), any::<usize>(), any::<char>()).prop_map(|(value, at, c)| {
            let mut text = value.to_string();
            let at = text
                .char_indices()
                .map(|(index, _)| index)
                .nth(at % text.chars().count().max(1))
                .unwrap_or(0);
            text.insert(at, c);
            text
        }),
        any::<String>(),
    ]
}

fn tools() -> Vec<ToolId> {
    vec![
        ToolId::mcp("github", "delete_repo").unwrap(),
        ToolId::mcp("x", "y").unwrap(),
        ToolId::new(SourceKind::Extension, "jira", "close").unwrap(),
        ToolId::new(SourceKind::Plugin, "hello", "greet").unwrap(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_rule_parser_never_panics_and_accepts_only_clean_patterns(text in rule_text()) {
        if let Ok((_, pattern)) = parse_rule(&text) {
            prop_assert!(!pattern.is_empty());
            prop_assert!(!pattern.chars().any(|c| c.is_control() || c.is_whitespace()));
            prop_assert!(text.starts_with("Mcp(") || text.starts_with("Extension(") || text.starts_with("Plugin("));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn files_that_cannot_grant_never_yield_an_allow(project in file_text(), local in file_text()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let config = dir.path().join("config");
        std::fs::create_dir_all(root.join(".earshot")).unwrap();
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(root.join(".earshot/settings.json"), &project).unwrap();
        // Whatever the local file says, earshot did not write it: it cannot grant either.
        std::fs::write(root.join(".earshot/settings.local.json"), &local).unwrap();
        let settings = Settings::load(
            Some(&config),
            Some(ProjectPaths::new(root.canonicalize().unwrap())),
        );
        let gate = Gate::from_settings(&settings);
        for tool in tools() {
            for read_only in [false, true] {
                let decision = gate.decide(&ToolRequest { tool: &tool, read_only, title: None, detail: None });
                if decision.effect == Effect::Allow {
                    prop_assert_eq!(&decision.decided_by, &DecidedBy::ReadOnly, "{:?}", decision);
                    prop_assert!(read_only && tool.kind() != SourceKind::Mcp);
                }
            }
        }
    }
}
