//! Property tests of a project server's trust digest over random package layouts: files, links
//! between them (inside the project), `__pycache__` folders with compiled files, and now and
//! then a link out of the project. Whatever the layout, a same-length change to any file the
//! interpreter could load changes the digest, a link out of the project is refused, and an
//! unchanged layout keeps its digest.

use std::collections::BTreeMap;
use std::path::Path;

use earshot_host::mcp::{DigestError, ServerDefinition, Transport, server_digest};
use earshot_host::trust::TrustKey;
use proptest::prelude::*;

/// One entry of a generated layout under `pkg/`.
#[derive(Debug, Clone)]
enum Entry {
    /// A file with these bytes.
    File(Vec<u8>),
    /// A link to the file at this index of the layout.
    LinkTo(usize),
    /// A link to a file outside the project.
    LinkOut,
}

fn layout() -> impl Strategy<Value = Vec<(String, Entry)>> {
    let folder = prop::sample::select(vec!["", "sub/", "sub/deep/", "__pycache__/", "other/"]);
    let name = prop::sample::select(vec![
        "__init__.py",
        "srv.py",
        "util.py",
        "data.json",
        "srv.cpython-311.pyc",
        "notes.txt",
    ]);
    let entry = prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 1..64).prop_map(Entry::File),
        2 => (0usize..16).prop_map(Entry::LinkTo),
        1 => Just(Entry::LinkOut),
    ];
    prop::collection::vec((folder, name, entry), 1..16).prop_map(|entries| {
        let mut unique = BTreeMap::new();
        for (folder, name, entry) in entries {
            unique.insert(format!("{folder}{name}"), entry);
        }
        unique.into_iter().collect()
    })
}

fn definition() -> ServerDefinition {
    ServerDefinition {
        transport: Transport::Stdio {
            command: "python3".into(),
            args: vec!["-m".into(), "pkg.srv".into()],
            env: Default::default(),
            cwd: None,
        },
        timeout_ms: None,
        call_timeout_ms: None,
    }
}

/// Writes the layout under `root/pkg`; returns the files (relative paths) that are regular files.
fn write_layout(root: &Path, outside: &Path, layout: &[(String, Entry)]) -> Vec<String> {
    let mut files = Vec::new();
    for (path, entry) in layout {
        let full = root.join("pkg").join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        match entry {
            Entry::File(bytes) => {
                std::fs::write(&full, bytes).unwrap();
                files.push(path.clone());
            }
            Entry::LinkOut => std::os::unix::fs::symlink(outside, &full).unwrap(),
            Entry::LinkTo(_) => {}
        }
    }
    for (path, entry) in layout {
        if let Entry::LinkTo(index) = entry {
            let full = root.join("pkg").join(path);
            let (target, _) = &layout[index % layout.len()];
            std::os::unix::fs::symlink(root.join("pkg").join(target), &full).unwrap();
        }
    }
    files
}

/// Whether Python could load `path` (relative to `pkg/`): anything outside `__pycache__`, and a
/// compiled file there only when its source exists and it is not a checked hash-based or stale
/// one. The generated `.pyc` bytes are random, so the header decides.
fn could_load(root: &Path, path: &str) -> bool {
    let Some(name) = path.strip_prefix("__pycache__/") else {
        return true;
    };
    let Some(stem) = name.strip_suffix(".pyc") else {
        return true;
    };
    let module = stem.split('.').next().unwrap();
    let pkg = root.join("pkg");
    let Ok(source) = std::fs::metadata(pkg.join(format!("{module}.py"))) else {
        return false;
    };
    let bytes = std::fs::read(pkg.join(path)).unwrap();
    if bytes.len() < 16 {
        return true;
    }
    let flags = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
    match flags & 0b11 {
        0 => {
            let mtime = source
                .modified()
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs() as u32;
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()) == mtime
                && u32::from_le_bytes(bytes[12..16].try_into().unwrap()) == source.len() as u32
        }
        0b11 => false,
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_loadable_change_lapses_and_a_link_out_is_refused(layout in layout(), pick in any::<usize>(), flip in any::<u8>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(&root).unwrap();
        let root = root.canonicalize().unwrap();
        let outside = dir.path().join("outside.py");
        std::fs::write(&outside, "# outside\n").unwrap();
        let key = TrustKey::load_or_create(&dir.path().join("config")).unwrap();
        let files = write_layout(&root, &outside, &layout);
        let first = server_digest(&key, &definition(), &root, Some(&root));
        let links_out = layout.iter().any(|(_, entry)| matches!(entry, Entry::LinkOut));
        if links_out {
            let refused = matches!(first, Err(DigestError::LinkOutOfProject { .. }));
            prop_assert!(refused, "{first:?}");
            return Ok(());
        }
        let first = first.unwrap();
        let again = server_digest(&key, &definition(), &root, Some(&root)).unwrap();
        prop_assert_eq!(&first, &again, "an unchanged layout keeps its digest");
        let loadable: Vec<&String> = files.iter().filter(|path| could_load(&root, path)).collect();
        if loadable.is_empty() {
            return Ok(());
        }
        let changed = loadable[pick % loadable.len()];
        let full = root.join("pkg").join(changed);
        let mut bytes = std::fs::read(&full).unwrap();
        let at = pick % bytes.len();
        // Keep a .pyc's header as it is, so the change does not decide whether Python loads it.
        let at = if changed.ends_with(".pyc") && bytes.len() > 16 { 16 + at % (bytes.len() - 16) } else { at };
        bytes[at] ^= flip | 1;
        std::fs::write(&full, &bytes).unwrap();
        if !could_load(&root, changed) {
            return Ok(());
        }
        let after = server_digest(&key, &definition(), &root, Some(&root)).unwrap();
        prop_assert_ne!(first.value, after.value, "{} changed", changed);
    }
}

/// The script a shell word is tried in: `.earshot/hooks/g.sh` named by `word`.
fn shell_definition(word: &str) -> ServerDefinition {
    ServerDefinition {
        transport: Transport::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), format!("cat {word} >/dev/null")],
            env: Default::default(),
            cwd: None,
        },
        timeout_ms: None,
        call_timeout_ms: None,
    }
}

/// What `/bin/sh` itself makes of `word` in `root`, as the arguments of a command, with the
/// project variables a hook gets and `HOME` at `root/home`: the real answer the digest guesses.
fn shell_expands(root: &Path, word: &str) -> Vec<String> {
    let output = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("printf '%s\\n' {word}"))
        .current_dir(root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", root.join("home"))
        .env("EARSHOT_PROJECT_DIR", root)
        .env("CLAUDE_PROJECT_DIR", root)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(String::from)
        .collect()
}

/// A way of writing `.earshot/hooks/g.sh` as one shell word: a prefix for the folder it starts
/// from (the project-dir forms earshot knows, and others it does not), each character plain,
/// escaped, quoted or globbed, and the whole maybe in double quotes.
fn shell_word() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec![
        "",
        "./",
        "$PWD/",
        "${PWD}/",
        "\"$PWD\"/",
        "$EARSHOT_PROJECT_DIR/",
        "${EARSHOT_PROJECT_DIR}/",
        "${EARSHOT_PROJECT_DIR:-.}/",
        "\"${CLAUDE_PROJECT_DIR:-.}\"/",
        "$CLAUDE_PROJECT_DIR/",
        "\"$(pwd)\"/",
        "`pwd`/",
        "$HOME/../",
        "~/../",
        "$X/",
        "${X:-.}/",
        "$(echo .)/",
        "`echo .`/",
        "home/../",
        "$(pwd)/home/../",
    ]);
    let styles = prop::collection::vec(0u8..16, ".earshot/hooks/g.sh".len());
    (prefix, styles, any::<bool>()).prop_map(|(prefix, styles, wrap)| {
        let mut word = String::new();
        for (c, style) in ".earshot/hooks/g.sh".chars().zip(styles) {
            match style {
                0..=8 => word.push(c),
                9 => {
                    word.push('\\');
                    word.push(c);
                }
                10 => word.push_str(&format!("'{c}'")),
                11 => word.push_str(&format!("\"{c}\"")),
                12 => word.push('?'),
                13 => word.push('*'),
                14 => word.push_str(&format!("[{c}]")),
                _ => word.push_str(&format!("${{Y:-{c}}}")),
            }
        }
        let word = format!("{prefix}{word}");
        if wrap && !word.contains('"') {
            format!("\"{word}\"")
        } else {
            word
        }
    })
}

fn shell_project() -> (tempfile::TempDir, std::path::PathBuf, TrustKey) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join(".earshot/hooks")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::write(root.join(".earshot/hooks/g.sh"), "echo trusted\n").unwrap();
    let root = root.canonicalize().unwrap();
    let key = TrustKey::load_or_create(&dir.path().join("config")).unwrap();
    (dir, root, key)
}

/// Whether changing `g.sh` (same length) changes the digest of `word`'s script, and whether it
/// is partial.
fn binds_or_partial(root: &Path, key: &TrustKey, word: &str) -> (bool, Option<String>) {
    let script = root.join(".earshot/hooks/g.sh");
    std::fs::write(&script, "echo trusted\n").unwrap();
    let before = server_digest(key, &shell_definition(word), root, Some(root)).unwrap();
    std::fs::write(&script, "echo pwned!!\n").unwrap();
    let after = server_digest(key, &shell_definition(word), root, Some(root)).unwrap();
    std::fs::write(&script, "echo trusted\n").unwrap();
    (before.value != after.value, before.partial)
}

#[test]
fn the_project_dir_forms_earshot_knows_bind_the_script_without_being_partial() {
    let (_dir, root, key) = shell_project();
    for word in [
        ".earshot/hooks/g.sh",
        "\"$PWD/.earshot/hooks/g.sh\"",
        "\"${EARSHOT_PROJECT_DIR:-.}/.earshot/hooks/g.sh\"",
        "\"$(pwd)/.earshot/hooks/g.sh\"",
        "\"$CLAUDE_PROJECT_DIR\"/.earshot/hooks/g.sh",
        "${CLAUDE_PROJECT_DIR}/'.earshot/hooks/g.sh'",
        "`pwd`/.earshot/hooks/g.sh",
    ] {
        let (binds, partial) = binds_or_partial(&root, &key, word);
        assert!(
            binds && partial.is_none(),
            "{word}: binds {binds}, {partial:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Whatever the form, a word the shell expands to the script either binds the script (a
    /// change to it changes the digest) or makes the digest partial: never the definition alone.
    #[test]
    fn every_shell_word_that_names_the_script_binds_it_or_is_partial(word in shell_word()) {
        let (_dir, root, key) = shell_project();
        let target = root.join(".earshot/hooks/g.sh");
        let names_it = shell_expands(&root, &word)
            .iter()
            .any(|expanded| root.join(expanded).canonicalize().ok().as_ref() == Some(&target));
        let (binds, partial) = binds_or_partial(&root, &key, &word);
        if names_it {
            prop_assert!(binds || partial.is_some(), "{word} names the script, but the digest binds only the definition");
        }
        if partial.is_some() {
            // The refusal names the word (or the part of it) that could not be resolved.
            let why = partial.unwrap();
            prop_assert!(why.contains("shell word"), "{word}: {why}");
        }
    }
}
