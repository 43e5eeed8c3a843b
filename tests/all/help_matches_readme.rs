//! `--help` and README's command lines cannot drift: every subcommand README shows exists in
//! the binary's help, and every subcommand the help lists appears in README.

use std::collections::BTreeSet;

/// The subcommands `earshot [GROUP] --help` lists (without `help`).
fn help_commands(args: &[&str]) -> BTreeSet<String> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_earshot"))
        .args(args)
        .arg("--help")
        .env("NO_COLOR", "1")
        .output()
        .expect("earshot runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// README's `earshot GROUP SUB|SUB ...` lines in code blocks, as (group, subcommand) pairs; a group with no
/// subcommand (`earshot acp`) is (group, "").
fn readme_commands() -> BTreeSet<(String, String)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let mut pairs = BTreeSet::new();
    let mut in_code = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        let Some(rest) = line.strip_prefix("earshot ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(group) = words
            .next()
            .filter(|g| g.chars().all(|c| c.is_ascii_lowercase()))
        else {
            continue;
        };
        match words.next() {
            Some(subs)
                if subs
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '|' || c == '-') =>
            {
                for sub in subs.split('|') {
                    pairs.insert((group.to_string(), sub.to_string()));
                }
            }
            _ => {
                pairs.insert((group.to_string(), String::new()));
            }
        }
    }
    pairs
}

#[test]
fn every_command_in_the_help_is_in_readme_and_every_one_readme_shows_exists() {
    let readme = readme_commands();
    let groups = help_commands(&[]);
    for group in &groups {
        let subs = help_commands(&[group]);
        if subs.is_empty() {
            assert!(
                readme.iter().any(|(g, _)| g == group),
                "README shows no `earshot {group}` line"
            );
            continue;
        }
        for sub in &subs {
            assert!(
                readme.contains(&(group.clone(), sub.clone())),
                "`earshot {group} {sub}` is in --help but README shows no `earshot {group} {sub}` line"
            );
        }
        for (g, sub) in readme.iter().filter(|(g, s)| g == group && !s.is_empty()) {
            assert!(
                subs.contains(sub),
                "README shows `earshot {g} {sub}`, which `earshot {g} --help` does not list"
            );
        }
    }
    for (group, _) in &readme {
        assert!(
            groups.contains(group),
            "README shows `earshot {group}`, which `earshot --help` does not list"
        );
    }
}
