//! Property tests for the settings parser: a key repeated in one object, at any depth, is always
//! refused (it would silently drop the first one's rules), and without a repeat the result is
//! exactly serde_json's.

use earshot_host::settings::{StrictJsonError, from_str_refusing_duplicates};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "permissions",
            "deny",
            "allow",
            "ask",
            "mcpServers",
            "env",
            "trust"
        ])
        .prop_map(str::to_string),
        "[a-zA-Z_\\-\u{e9}\n\"\\\\]{0,6}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        "[a-z\u{e9}\n\"\\\\]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A settings file: an object at the top.
fn settings() -> impl Strategy<Value = Value> {
    prop::collection::vec((key(), value()), 0..6)
        .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>()))
}

/// The paths (child positions) of every object in `value`.
fn objects(value: &Value, at: &mut Vec<usize>, into: &mut Vec<Vec<usize>>) {
    match value {
        Value::Object(map) => {
            into.push(at.clone());
            for (index, child) in map.values().enumerate() {
                at.push(index);
                objects(child, at, into);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                at.push(index);
                objects(child, at, into);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The text of `value`, with the object at `target` holding one more entry whose key repeats
/// one of its own (or, in an empty object, two equal keys), inserted at `position`.
fn render(value: &Value, target: Option<&[usize]>, pick: usize, extra: &Value) -> String {
    let text = |value: &Value| serde_json::to_string(value).unwrap();
    match value {
        Value::Object(map) => {
            let mut entries: Vec<String> = map
                .iter()
                .enumerate()
                .map(|(index, (key, child))| {
                    let below = target
                        .filter(|path| path.first() == Some(&index))
                        .map(|path| &path[1..]);
                    format!(
                        "{}:{}",
                        text(&Value::from(key.clone())),
                        render(child, below, pick, extra)
                    )
                })
                .collect();
            if target == Some(&[]) {
                let repeated = map
                    .keys()
                    .nth(pick % map.len().max(1))
                    .cloned()
                    .unwrap_or_else(|| "deny".into());
                let entry = format!("{}:{}", text(&Value::from(repeated.clone())), text(extra));
                if map.is_empty() {
                    entries.push(entry.clone());
                }
                entries.insert(pick % (entries.len() + 1), entry);
            }
            format!("{{{}}}", entries.join(",\n"))
        }
        Value::Array(items) => {
            let rendered: Vec<String> = items
                .iter()
                .enumerate()
                .map(|(index, child)| {
                    let below = target
                        .filter(|path| path.first() == Some(&index))
                        .map(|path| &path[1..]);
                    render(child, below, pick, extra)
                })
                .collect();
            format!("[{}]", rendered.join(","))
        }
        scalar => text(scalar),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn without_a_repeated_key_the_parse_is_serde_jsons(settings in settings(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&settings).unwrap()
        } else {
            render(&settings, None, 0, &Value::Null)
        };
        let ours = from_str_refusing_duplicates(&text);
        let theirs: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(ours, Ok(theirs));
    }

    #[test]
    fn a_repeated_key_at_any_depth_is_always_refused(
        settings in settings(),
        which in any::<usize>(),
        pick in any::<usize>(),
        extra in value(),
    ) {
        let mut found = Vec::new();
        objects(&settings, &mut Vec::new(), &mut found);
        let target = &found[which % found.len()];
        let text = render(&settings, Some(target), pick, &extra);
        // serde_json itself takes it and keeps the last: the hazard this guards against.
        prop_assert!(serde_json::from_str::<Value>(&text).is_ok());
        match from_str_refusing_duplicates(&text) {
            Err(StrictJsonError::DuplicateKey { line, column, .. }) => {
                prop_assert!(line >= 1 && column >= 1);
            }
            other => prop_assert!(false, "not refused: {:?}\n{}", other, text),
        }
    }
}
