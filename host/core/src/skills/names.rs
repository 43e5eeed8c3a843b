//! What a skill or command may be called. Names are trust keys, rule targets (`Skill(name)`)
//! and what the user types after `/`, so they are plain ASCII: the Agent Skills reference
//! validator lets look-alike letters of other scripts through, and `dep1oy` must never pass for
//! `deploy` on a terminal.

/// The most characters a name (or one segment of a command's name) may have.
pub const MAX_NAME_CHARS: usize = 64;

/// earshot's own slash commands (and its CLI's nouns): no skill or command file can take them,
/// so `/help` is always earshot's, as in Claude Code and unlike opencode.
pub const RESERVED_NAMES: &[&str] = &[
    "acp",
    "call",
    "clear",
    "commands",
    "compact",
    "config",
    "exit",
    "extensions",
    "help",
    "hooks",
    "init",
    "login",
    "logout",
    "mcp",
    "model",
    "permissions",
    "plugins",
    "project",
    "quit",
    "resume",
    "skills",
    "status",
    "tools",
    "trust",
];

/// The namespace the project's item takes when the user's own has its name (`/project:deploy`).
pub const PROJECT_PREFIX: &str = "project:";

/// Checks one name (a skill's, or one segment of a command's path): 1–64 ASCII lowercase
/// letters, digits and single hyphens, neither first nor last.
///
/// # Errors
/// A phrase saying what is wrong, for a `file:line` problem.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "the name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "the name \"{}\" may hold only a-z, 0-9 and single hyphens (found {})",
            shown(name),
            describe_char(bad)
        ));
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(format!(
            "the name \"{name}\" may not start or end with a hyphen or hold two in a row"
        ));
    }
    Ok(())
}

/// Whether `/name` is earshot's own (`help`, `mcp`, …); also the first segment of a command
/// name (`/project:x` is the namespace of shadowed project items, `/mcp:x` looks like a prompt).
pub fn is_reserved(name: &str) -> bool {
    let first = name.split(':').next().unwrap_or(name);
    RESERVED_NAMES.contains(&name)
        || first == "project"
        || first == "mcp"
        || name.starts_with("mcp__")
}

/// A name made safe to quote in a message: control characters dropped, at most 80 characters.
pub fn shown(name: &str) -> String {
    crate::gate::sanitise_for_terminal(name, 80)
}

fn describe_char(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("'{c}'")
    } else {
        format!("U+{:04X}", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_and_look_alikes_do_not() {
        for good in ["deploy", "pdf-tools", "a", "x1-2y"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Deploy",
            "-x",
            "x-",
            "a--b",
            "a_b",
            "dеploy",
            "a b",
            "../x",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(check_name("dеploy").unwrap_err().contains("U+0435"));
    }

    #[test]
    fn built_in_names_and_namespaces_are_reserved() {
        assert!(is_reserved("help"));
        assert!(is_reserved("project:deploy"));
        assert!(is_reserved("mcp__github__review"));
        assert!(!is_reserved("deploy"));
        assert!(!is_reserved("git:commit"));
    }
}
