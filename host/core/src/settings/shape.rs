//! The keys earshot reads permissions from, checked for typos. A misspelt key is not ignored: it
//! might have held a deny rule, so it is reported and suspends every allow rule.

use serde_json::Value;

/// The keys under `permissions` that earshot or its other tools read.
pub const PERMISSION_KEYS: &[&str] = &[
    "allow",
    "deny",
    "ask",
    "defaultMode",
    "additionalDirectories",
    "disableBypassPermissionsMode",
];

/// What is wrong with the permission keys of one settings file: one line per problem.
pub fn misspelt_keys(settings: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let Some(root) = settings.as_object() else {
        return found;
    };
    for key in root.keys() {
        if key != "permissions"
            && (normalised(key) == "permission"
                || edit_distance(&normalised(key), "permission") <= 2)
        {
            found.push(format!(
                "unknown key \"{}\" (did you mean \"permissions\"?)",
                shown(key)
            ));
        }
    }
    for key in root.keys() {
        if key != "hooks" && is_near_hooks(key) {
            found.push(format!(
                "unknown key \"{}\" (did you mean \"hooks\"?)",
                shown(key)
            ));
        }
    }
    match root.get("permissions") {
        None => {}
        Some(Value::Object(permissions)) => {
            for key in permissions.keys() {
                if PERMISSION_KEYS.contains(&key.as_str()) {
                    continue;
                }
                let prefix: String = normalised(key).chars().take(3).collect();
                let hint = PERMISSION_KEYS
                    .iter()
                    .find(|known| !prefix.is_empty() && normalised(known).starts_with(&prefix))
                    .map(|known| format!(" (did you mean \"{known}\"?)"))
                    .unwrap_or_else(|| format!(" (known keys: {})", PERMISSION_KEYS.join(", ")));
                found.push(format!("unknown key \"permissions.{}\"{hint}", shown(key)));
            }
        }
        Some(_) => found.push(
            "\"permissions\" must be an object with \"allow\", \"deny\" and \"ask\" lists".into(),
        ),
    }
    found
}

/// Whether a top-level key reads as `hooks` but is not (`Hooks`, `hook`, `hoooks`): the user's
/// guard could be under it.
pub(crate) fn is_near_hooks(key: &str) -> bool {
    let key = normalised(key);
    key == "hook" || edit_distance(&key, "hook") <= 1
}

/// What is wrong with `extensions.env` (the environment variables extensions may see) in one
/// settings file: a key that reads as `env` but is not, or a value that is not a list of names.
/// Either way extensions see less, never more; the line says what they see.
pub fn extension_env_problems(settings: &Value) -> Vec<String> {
    let Some(Value::Object(extensions)) = settings.get("extensions") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for key in extensions.keys() {
        if key != "env" && normalised(key).trim_end_matches("var") == "env" {
            found.push(format!(
                "unknown key \"extensions.{}\" (did you mean \"env\"?); it is ignored, so it narrows nothing",
                shown(key)
            ));
        }
    }
    match extensions.get("env") {
        None => {}
        Some(Value::Array(names)) if names.iter().all(Value::is_string) => {}
        Some(_) => found.push(
            "\"extensions.env\" must be a list of variable names ([\"GITHUB_TOKEN\", ...]); as written, extensions see no environment variables".into(),
        ),
    }
    found
}

/// Lower case, letters and digits only, one trailing `s` dropped: `Permissions_` → `permission`.
fn normalised(key: &str) -> String {
    let lower: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    lower.strip_suffix('s').map(str::to_string).unwrap_or(lower)
}

/// Levenshtein distance, for short keys: `permisions`, `premissions` and `permssions` are all
/// within 2 of `permissions`.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// A key made safe to show: control characters dropped, at most 40 characters.
fn shown(key: &str) -> String {
    key.chars().filter(|c| !c.is_control()).take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::misspelt_keys;
    use serde_json::json;

    #[test]
    fn typos_are_found_and_known_keys_pass() {
        assert!(
            misspelt_keys(&json!({"permissions": {"allow": [], "deny": [], "ask": []}})).is_empty()
        );
        assert_eq!(
            misspelt_keys(&json!({"permissions": {"Deny": []}})).len(),
            1
        );
        assert!(
            misspelt_keys(&json!({"permissions": {"denied": []}}))[0]
                .contains("did you mean \"deny\"")
        );
        assert_eq!(misspelt_keys(&json!({"permissions": []})).len(), 1);
        assert_eq!(misspelt_keys(&json!({"permission": {"deny": []}})).len(), 1);
        assert_eq!(
            misspelt_keys(&json!({"Permissions": {}, "permissions": {}})).len(),
            1
        );
        assert!(misspelt_keys(&json!({"mcpServers": {}, "trust": {}, "mcp": {}})).is_empty());
        assert!(misspelt_keys(&json!({"hooks": {}, "disableAllHooks": true})).is_empty());
        for typo in ["Hooks", "hook", "HOOK", "hoooks", "hooks_"] {
            assert!(
                misspelt_keys(&json!({typo: {}}))[0].contains("did you mean \"hooks\""),
                "{typo}"
            );
        }
        use super::extension_env_problems as env;
        assert!(env(&json!({"extensions": {"env": ["A"]}})).is_empty());
        assert!(env(&json!({"extensions": {"Env": ["A"]}}))[0].contains("did you mean \"env\""));
        assert!(env(&json!({"extensions": {"ENV_VARS": ["A"]}}))[0].contains("ignored"));
        assert!(env(&json!({"extensions": {"env": "A"}}))[0].contains("see no environment"));
        assert!(env(&json!({"extensions": {"env": [1]}}))[0].contains("list of variable names"));
        for typo in ["permisions", "premissions", "permssions", "Permisions"] {
            assert_eq!(
                misspelt_keys(&json!({typo: {"deny": []}})).len(),
                1,
                "{typo}"
            );
        }
    }
}
