//! The environment a stdio server starts with: a short list of inherited variables plus what its
//! entry names, so that a server never sees the user's tokens unless its entry passes them.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Variables a stdio server inherits from earshot's own environment (besides every `LC_*`).
pub const INHERITED_VARIABLES: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "TZ", "SHELL",
];

/// Whether `name` is passed through from earshot's environment.
pub fn is_inherited(name: &str) -> bool {
    INHERITED_VARIABLES.contains(&name) || name.starts_with("LC_")
}

/// The child's whole environment: the inherited variables found in `parent`, then the entry's own
/// `env` (which wins over an inherited value of the same name).
pub fn minimal_environment(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    entry_env: &BTreeMap<String, String>,
) -> BTreeMap<OsString, OsString> {
    let mut environment: BTreeMap<OsString, OsString> = parent
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(is_inherited))
        .collect();
    // Python neither writes nor needs compiled files beside a server's sources: a trust digest
    // counts a `__pycache__` file Python would load, so one written by the server's own run would
    // lapse its trust (the entry's own `env` can still set this).
    environment.insert("PYTHONDONTWRITEBYTECODE".into(), "1".into());
    for (name, value) in entry_env {
        environment.insert(name.into(), value.into());
    }
    environment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_short_list_and_the_entry_env_reach_the_child() {
        let parent = [
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "secret"),
            ("LC_ALL", "C"),
            ("HOME", "/home/u"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let entry = BTreeMap::from([("API_KEY".to_string(), "k".to_string())]);
        let env = minimal_environment(parent, &entry);
        let names: Vec<_> = env.keys().map(|k| k.to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "API_KEY",
                "HOME",
                "LC_ALL",
                "PATH",
                "PYTHONDONTWRITEBYTECODE"
            ]
        );
    }
}
