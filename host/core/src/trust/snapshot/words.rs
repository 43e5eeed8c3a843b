//! A trusted project command's words that name project files, rewritten to the snapshot.
//!
//! Each word (and each piece of it between `=`, `:`, `,`, `;`, whitespace and quotes, as the
//! digest reads it) that names a file or link the snapshot holds becomes that file's snapshot
//! path; a folder is rewritten only where an interpreter loads code from it (`node .`,
//! `python3 pkgdir`, a `PYTHONPATH` or `NODE_PATH` entry), so a folder handed to a program as
//! data (`--root .`) stays the project. The working directory is not a word: it stays the
//! project. A shell script's words are read as the shell would for the forms the digest
//! resolves (quotes, `$EARSHOT_PROJECT_DIR`, `$CLAUDE_PROJECT_DIR`, `$PWD`, `$(pwd)`, with or
//! without braces and a `:-` default); a word with any other expansion, a backslash or a glob is
//! left as written, as is the target of an output redirection.
//!
//! Python is started with `PYTHONSAFEPATH=1`, so no Python in the command puts its working
//! directory (the project) or a script's folder first on `sys.path`, and `PYTHONPATH` names
//! instead where the digest looked: the snapshot folder of each named file, the snapshot's copy
//! of the start directory for `-m`, then the entry's own `PYTHONPATH`, rewritten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Snapshot, lexically_normal};

/// How trusted project code starts: its program, arguments and own variables, with the words
/// that named project files rewritten to the snapshot and Python kept to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its own variables (the entry's `env` rewritten, `PYTHONSAFEPATH`, `PYTHONPATH`); the
    /// inherited short list is added by whoever spawns it.
    pub env: BTreeMap<String, String>,
}

/// The variables that hold module search paths: their folders are rewritten too.
const MODULE_PATH_VARIABLES: &[&str] = &["PYTHONPATH", "NODE_PATH"];

/// The separators the digest splits a word's pieces on.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '=' | ':' | ',' | ';' | '"' | '\'')
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Interpreter {
    Python,
    Node,
}

/// The interpreter `program` is, by its file name.
fn interpreter(program: &str) -> Option<Interpreter> {
    let name = Path::new(program).file_name()?.to_str()?;
    if matches!(name, "node" | "nodejs" | "bun") {
        return Some(Interpreter::Node);
    }
    let version = name.strip_prefix("python")?;
    version
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.')
        .then_some(Interpreter::Python)
}

/// The index of the script or folder an interpreter runs among `args` (its first operand), when
/// it runs one (not `-c`, `-m`, `-e`).
fn operand(interpreter: Interpreter, args: &[String]) -> Option<usize> {
    let mut skip = false;
    for (index, arg) in args.iter().enumerate() {
        if skip {
            skip = false;
            continue;
        }
        match interpreter {
            Interpreter::Python => {
                if (arg.starts_with("-m") || arg.starts_with("-c")) && !arg.starts_with("--") {
                    return None;
                }
                if matches!(arg.as_str(), "-W" | "-X") {
                    skip = true;
                    continue;
                }
            }
            Interpreter::Node => {
                if matches!(arg.as_str(), "-e" | "--eval" | "-p" | "--print") {
                    return None;
                }
                if matches!(
                    arg.as_str(),
                    "-r" | "--require"
                        | "--import"
                        | "--loader"
                        | "--experimental-loader"
                        | "-C"
                        | "--conditions"
                        | "--env-file"
                        | "--input-type"
                ) {
                    skip = true;
                    continue;
                }
            }
        }
        if arg == "-" {
            return None;
        }
        if arg.starts_with('-') {
            continue;
        }
        return Some(index);
    }
    None
}

/// Rewrites words against one snapshot, collecting where Python should look.
struct Rewriter<'a> {
    snapshot: Option<&'a Snapshot>,
    /// The project root as the words may spell it (canonical, and as given).
    roots: Vec<PathBuf>,
    /// Where relative words start.
    dir: PathBuf,
    /// The folders Python looks in, in order.
    python_paths: Vec<String>,
    /// Whether a word asked Python for a module (`-m`).
    module: bool,
}

impl<'a> Rewriter<'a> {
    fn new(snapshot: Option<&'a Snapshot>, project: &Path, dir: &Path) -> Rewriter<'a> {
        let mut roots = vec![project.to_path_buf()];
        if let Some(snapshot) = snapshot
            && snapshot.project() != project
        {
            roots.insert(0, snapshot.project().to_path_buf());
        }
        if let Ok(canonical) = project.canonicalize()
            && !roots.contains(&canonical)
        {
            roots.push(canonical);
        }
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Rewriter {
            snapshot,
            roots,
            dir,
            python_paths: Vec::new(),
            module: false,
        }
    }

    /// `path` relative to the project, when it is inside it.
    fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        self.roots
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
    }

    /// Where `piece` (relative to the start directory) is in the snapshot, when it holds it.
    fn in_snapshot(&self, piece: &str, folders: bool) -> Option<PathBuf> {
        let snapshot = self.snapshot?;
        if piece.is_empty() || (piece.starts_with('-') && !piece.contains('/')) {
            return None;
        }
        let absolute = lexically_normal(&self.dir.join(piece));
        snapshot.holds(self.relative(&absolute)?, folders)
    }

    fn add_python_path(&mut self, folder: &Path) {
        let folder = folder.display().to_string();
        if !self.python_paths.contains(&folder) {
            self.python_paths.push(folder);
        }
    }

    /// Notes a rewritten path: its folder (or itself, a folder) is where Python would look.
    fn note(&mut self, path: &Path) {
        if path.is_dir() {
            self.add_python_path(path);
        } else if let Some(parent) = path.parent() {
            self.add_python_path(parent);
        }
    }

    /// One piece, rewritten when the snapshot holds what it names.
    fn piece(&mut self, piece: &str, folders: bool) -> String {
        if piece == "-m" {
            self.module = true;
        }
        match self.in_snapshot(piece, folders) {
            Some(path) => {
                self.note(&path);
                path.display().to_string()
            }
            None => piece.to_string(),
        }
    }

    /// One word: whole when it names what the snapshot holds, else piece by piece.
    fn word(&mut self, word: &str, folders: bool) -> String {
        if let Some(path) = self.in_snapshot(word, folders) {
            self.note(&path);
            return path.display().to_string();
        }
        let mut out = String::with_capacity(word.len());
        let mut start = 0;
        for (at, c) in word.char_indices() {
            if is_separator(c) {
                let piece = self.piece(&word[start..at], folders);
                out.push_str(&piece);
                out.push(c);
                start = at + c.len_utf8();
            }
        }
        let piece = self.piece(&word[start..], folders);
        out.push_str(&piece);
        out
    }

    /// Python's script outside the snapshot keeps its folder on the path (the safe path would
    /// take it off).
    fn python_script_folder(&mut self, operand: &str) {
        let path = lexically_normal(&self.dir.join(operand));
        if path.is_dir() {
            self.add_python_path(&path);
        } else if let Some(parent) = path.parent() {
            self.add_python_path(parent);
        }
    }

    /// The variables: `env` rewritten, `PYTHONSAFEPATH=1`, and `PYTHONPATH` with where the
    /// digest looked first.
    fn variables(&mut self, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (name, value) in env {
            if name == "PYTHONPATH" {
                continue;
            }
            let folders = MODULE_PATH_VARIABLES.contains(&name.as_str());
            out.insert(name.clone(), self.word(value, folders));
        }
        if self.module {
            // `-m` looked in the start directory: its copy, when it is in the project.
            let dir = self.dir.clone();
            match self.relative(&dir).map(Path::to_path_buf) {
                Some(relative) => {
                    if let Some(snapshot) = self.snapshot {
                        let copy = snapshot.path_of(&relative);
                        if copy.is_dir() {
                            self.add_python_path(&copy);
                        }
                    }
                }
                None => self.add_python_path(&dir),
            }
        }
        let mut paths = self.python_paths.clone();
        if let Some(own) = env.get("PYTHONPATH") {
            let own = self.word(own, true);
            paths.extend(own.split(':').filter(|p| !p.is_empty()).map(str::to_string));
        }
        if !paths.is_empty() {
            out.insert("PYTHONPATH".into(), paths.join(":"));
        }
        out.insert("PYTHONSAFEPATH".into(), "1".into());
        out
    }
}

/// How a trusted command in exec form starts (`program`, `args` and its own `env`, relative
/// words starting in `dir`), from `snapshot` when there is one (see the module doc).
pub fn exec_launch(
    snapshot: Option<&Snapshot>,
    project: &Path,
    dir: &Path,
    program: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
) -> Launch {
    let mut rewriter = Rewriter::new(snapshot, project, dir);
    let interpreter = interpreter(program);
    let operand = interpreter.and_then(|interpreter| operand(interpreter, args));
    let program_word = rewriter.word(program, false);
    let mut rewritten = Vec::with_capacity(args.len());
    for (index, arg) in args.iter().enumerate() {
        let is_operand = operand == Some(index);
        let word = rewriter.word(arg, is_operand);
        if is_operand && interpreter == Some(Interpreter::Python) && word == *arg {
            rewriter.python_script_folder(arg);
        }
        rewritten.push(word);
    }
    let env = rewriter.variables(env);
    Launch {
        program: program_word,
        args: rewritten,
        env,
    }
}

/// One word of a shell script: where it is, and its value when the digest can resolve it.
struct ShellWord {
    start: usize,
    end: usize,
    value: Option<String>,
    /// The first word of a simple command (after any `NAME=value` words).
    command: bool,
    /// The target of an output redirection (`>`, `>>`): never rewritten.
    written: bool,
}

/// The project-dir forms a shell word may use: the variable names that are the project.
fn project_variable(name: &str) -> bool {
    matches!(name, "EARSHOT_PROJECT_DIR" | "CLAUDE_PROJECT_DIR" | "PWD")
}

/// Reads `script`'s words (see the module doc), with `project` for the forms that name it.
fn shell_words(script: &str, project: &str) -> Vec<ShellWord> {
    let chars: Vec<(usize, char)> = script.char_indices().collect();
    let at = |index: usize| chars.get(index).map_or(script.len(), |(at, _)| *at);
    let mut words = Vec::new();
    let mut index = 0;
    let mut command = true;
    let mut written = false;
    while index < chars.len() {
        let c = chars[index].1;
        if c == '\n' || matches!(c, ';' | '|' | '&' | '(' | ')') {
            command = true;
            written = false;
            index += 1;
            continue;
        }
        if c.is_whitespace() || c == '<' {
            index += 1;
            continue;
        }
        if c == '>' {
            written = true;
            index += 1;
            continue;
        }
        if c == '#' {
            while index < chars.len() && chars[index].1 != '\n' {
                index += 1;
            }
            continue;
        }
        let start = at(index);
        let mut value = Some(String::new());
        let push = |value: &mut Option<String>, text: &str| {
            if let Some(value) = value {
                value.push_str(text);
            }
        };
        while index < chars.len() {
            let c = chars[index].1;
            if c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>') {
                break;
            }
            match c {
                '\'' => {
                    index += 1;
                    let begin = index;
                    while index < chars.len() && chars[index].1 != '\'' {
                        index += 1;
                    }
                    if index >= chars.len() {
                        value = None;
                    } else {
                        push(&mut value, &script[at(begin)..at(index)]);
                        index += 1;
                    }
                }
                '"' => {
                    index += 1;
                    loop {
                        let Some(&(_, inner)) = chars.get(index) else {
                            value = None;
                            break;
                        };
                        match inner {
                            '"' => {
                                index += 1;
                                break;
                            }
                            '\\' => {
                                value = None;
                                index += 2;
                            }
                            '$' => {
                                index = dollar(script, &chars, index, project, &mut value);
                            }
                            '`' => {
                                index = backtick(script, &chars, index, project, &mut value);
                            }
                            other => {
                                let mut buffer = [0u8; 4];
                                push(&mut value, other.encode_utf8(&mut buffer));
                                index += 1;
                            }
                        }
                    }
                }
                '\\' => {
                    value = None;
                    index += 2;
                }
                '$' => index = dollar(script, &chars, index, project, &mut value),
                '`' => index = backtick(script, &chars, index, project, &mut value),
                '*' | '?' | '[' => {
                    value = None;
                    index += 1;
                }
                '~' if at(index) == start => {
                    value = None;
                    index += 1;
                }
                other => {
                    let mut buffer = [0u8; 4];
                    push(&mut value, other.encode_utf8(&mut buffer));
                    index += 1;
                }
            }
        }
        let end = at(index.min(chars.len()));
        let assignment = value.as_deref().is_some_and(|value| {
            value
                .split_once('=')
                .is_some_and(|(name, _)| !name.is_empty() && !name.contains('/'))
        });
        words.push(ShellWord {
            start,
            end,
            value,
            command: command && !assignment,
            written,
        });
        command = command && assignment;
        written = false;
    }
    words
}

/// Reads a `$` expansion at `index`; returns the index after it. A project-dir form appends
/// `project`; anything else makes the word unresolvable.
fn dollar(
    script: &str,
    chars: &[(usize, char)],
    index: usize,
    project: &str,
    value: &mut Option<String>,
) -> usize {
    let at = |index: usize| chars.get(index).map_or(script.len(), |(at, _)| *at);
    let resolved = |value: &mut Option<String>, known: bool| {
        if known {
            if let Some(value) = value {
                value.push_str(project);
            }
        } else {
            *value = None;
        }
    };
    match chars.get(index + 1).map(|(_, c)| *c) {
        Some('{') => {
            let mut end = index + 2;
            while end < chars.len() && chars[end].1 != '}' {
                end += 1;
            }
            let inner = &script[at(index + 2)..at(end)];
            let name = inner.split_once(":-").map_or(inner, |(name, _)| name);
            resolved(value, end < chars.len() && project_variable(name));
            end + 1
        }
        Some('(') => {
            let mut depth = 0usize;
            let mut end = index + 1;
            while end < chars.len() {
                match chars[end].1 {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
            let inner = &script[at(index + 2)..at(end)];
            resolved(value, end < chars.len() && inner.trim() == "pwd");
            end + 1
        }
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            let mut end = index + 1;
            while end < chars.len() && (chars[end].1.is_ascii_alphanumeric() || chars[end].1 == '_')
            {
                end += 1;
            }
            resolved(value, project_variable(&script[at(index + 1)..at(end)]));
            end
        }
        _ => {
            *value = None;
            index + 2
        }
    }
}

/// Reads a backtick substitution at `index`: `` `pwd` `` is the project, anything else makes the
/// word unresolvable.
fn backtick(
    script: &str,
    chars: &[(usize, char)],
    index: usize,
    project: &str,
    value: &mut Option<String>,
) -> usize {
    let at = |index: usize| chars.get(index).map_or(script.len(), |(at, _)| *at);
    let mut end = index + 1;
    while end < chars.len() && chars[end].1 != '`' {
        end += 1;
    }
    if end < chars.len() && script[at(index + 1)..at(end)].trim() == "pwd" {
        if let Some(value) = value {
            value.push_str(project);
        }
    } else {
        *value = None;
    }
    end + 1
}

/// `text` as one single-quoted shell word.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// How a trusted shell-string command starts (`script`, run in `project`), from `snapshot` when
/// there is one: the script with its words that named project files rewritten (single-quoted),
/// and its variables (see the module doc).
pub fn shell_launch(
    snapshot: Option<&Snapshot>,
    project: &Path,
    script: &str,
) -> (String, BTreeMap<String, String>) {
    let mut rewriter = Rewriter::new(snapshot, project, project);
    let words = shell_words(script, &project.display().to_string());
    let mut out = String::with_capacity(script.len());
    let mut copied = 0;
    let mut after_interpreter = None;
    // After a `cd`, a relative word names a file of another folder: only absolute ones are
    // rewritten.
    let mut moved = false;
    for word in &words {
        let Some(value) = &word.value else {
            after_interpreter = None;
            continue;
        };
        if word.command && matches!(value.as_str(), "cd" | "pushd" | "popd") {
            moved = true;
        }
        if word.written || (moved && !value.starts_with('/')) {
            after_interpreter = None;
            continue;
        }
        let option = value.starts_with('-');
        let folders = after_interpreter.is_some() && !option;
        let rewritten = rewriter.word(value, folders);
        match after_interpreter {
            Some(Interpreter::Python) if !option && rewritten == *value => {
                rewriter.python_script_folder(value);
                after_interpreter = None;
            }
            Some(_) if !option => after_interpreter = None,
            Some(Interpreter::Python)
                if (value.starts_with("-m") || value.starts_with("-c"))
                    && !value.starts_with("--") =>
            {
                after_interpreter = None;
            }
            Some(Interpreter::Node)
                if matches!(value.as_str(), "-e" | "--eval" | "-p" | "--print") =>
            {
                after_interpreter = None;
            }
            _ => {}
        }
        if word.command {
            after_interpreter = interpreter(value);
        }
        if rewritten != *value {
            out.push_str(&script[copied..word.start]);
            out.push_str(&single_quoted(&rewritten));
            copied = word.end;
        }
    }
    out.push_str(&script[copied..]);
    let env = rewriter.variables(&BTreeMap::new());
    (out, env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::add_named_project_files;
    use crate::trust::Manifest;

    struct Fixture {
        _dir: tempfile::TempDir,
        root: PathBuf,
        snapshot: Snapshot,
    }

    fn fixture(words: &[&str]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        for (file, text) in [
            (".earshot/hooks/g.sh", "echo g\n"),
            (".earshot/hooks/check.py", "import util\n"),
            (".earshot/hooks/util.py", "X = 1\n"),
            ("pkg/__init__.py", ""),
            ("pkg/__main__.py", "print(1)\n"),
            ("srv/index.js", "1\n"),
            ("json.py", "raise SystemExit\n"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = root.canonicalize().unwrap();
        let mut manifest = Manifest::new();
        add_named_project_files(
            words.iter().copied(),
            &root,
            &root,
            &mut Vec::new(),
            &mut manifest,
        )
        .unwrap();
        let snapshot = Snapshot::take(&dir.path().join("cache"), "d", &root, &manifest)
            .unwrap()
            .unwrap();
        Fixture {
            _dir: dir,
            root,
            snapshot,
        }
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| word.to_string()).collect()
    }

    #[test]
    fn a_named_script_runs_from_the_snapshot_with_its_folder_on_the_path() {
        let f = fixture(&["python3", ".earshot/hooks/check.py"]);
        let launch = exec_launch(
            Some(&f.snapshot),
            &f.root,
            &f.root,
            "python3",
            &strings(&[".earshot/hooks/check.py", "--root", "."]),
            &BTreeMap::new(),
        );
        let copy = f.snapshot.dir().join(".earshot/hooks/check.py");
        assert_eq!(launch.program, "python3");
        assert_eq!(
            launch.args,
            [copy.display().to_string(), "--root".into(), ".".into()]
        );
        assert_eq!(launch.env["PYTHONSAFEPATH"], "1");
        assert_eq!(
            launch.env["PYTHONPATH"],
            f.snapshot
                .dir()
                .join(".earshot/hooks")
                .display()
                .to_string()
        );
    }

    #[test]
    fn a_module_runs_from_the_snapshot_of_the_start_directory() {
        let f = fixture(&["python3", "-m", "pkg"]);
        let launch = exec_launch(
            Some(&f.snapshot),
            &f.root,
            &f.root,
            "python3",
            &strings(&["-m", "pkg"]),
            &BTreeMap::from([("PYTHONPATH".to_string(), "pkg".to_string())]),
        );
        assert_eq!(launch.args, ["-m", "pkg"]);
        let snap = f.snapshot.dir().display().to_string();
        assert_eq!(launch.env["PYTHONPATH"], format!("{snap}:{snap}/pkg"));
        assert!(!f.snapshot.dir().join("json.py").exists(), "not hashed");
    }

    #[test]
    fn node_runs_its_folder_from_the_snapshot_and_data_folders_stay() {
        let f = fixture(&["node", "srv"]);
        let launch = exec_launch(
            Some(&f.snapshot),
            &f.root,
            &f.root,
            "node",
            &strings(&["--require=./srv/index.js", "srv", "srv"]),
            &BTreeMap::new(),
        );
        let snap = f.snapshot.dir().display().to_string();
        assert_eq!(
            launch.args,
            [
                format!("--require={snap}/srv/index.js"),
                format!("{snap}/srv"),
                "srv".to_string()
            ]
        );
    }

    #[test]
    fn shell_words_in_every_project_dir_form_are_rewritten() {
        let f = fixture(&[".earshot/hooks/g.sh"]);
        let copy = f.snapshot.dir().join(".earshot/hooks/g.sh");
        let quoted = single_quoted(&copy.display().to_string());
        for script in [
            "sh .earshot/hooks/g.sh",
            "sh \"$PWD/.earshot/hooks/g.sh\"",
            "sh \"${EARSHOT_PROJECT_DIR:-.}/.earshot/hooks/g.sh\"",
            "sh \"$(pwd)/.earshot/hooks/g.sh\"",
            "sh `pwd`/.earshot/hooks/g.sh",
            "sh \"$CLAUDE_PROJECT_DIR\"/.earshot/hooks/g.sh",
            "sh ${CLAUDE_PROJECT_DIR}/'.earshot/hooks/g.sh'",
        ] {
            let (rewritten, _) = shell_launch(Some(&f.snapshot), &f.root, script);
            assert_eq!(rewritten, format!("sh {quoted}"), "{script}");
        }
        for script in [
            "sh \"$HOME/.earshot/hooks/g.sh\"",
            "sh .earshot/hooks/g\\.sh",
            "sh .earshot/hooks/*.sh",
            "echo x > .earshot/hooks/g.sh",
            "cd .earshot && sh .earshot/hooks/g.sh",
        ] {
            let (rewritten, _) = shell_launch(Some(&f.snapshot), &f.root, script);
            assert_eq!(rewritten, script, "left as written");
        }
        let (rewritten, env) = shell_launch(
            Some(&f.snapshot),
            &f.root,
            "FOO=1 python3 -m pkg; sh .earshot/hooks/g.sh | cat",
        );
        assert_eq!(
            rewritten,
            format!("FOO=1 python3 -m pkg; sh {quoted} | cat")
        );
        assert_eq!(env["PYTHONSAFEPATH"], "1");
    }

    #[test]
    fn without_a_snapshot_only_the_safe_path_is_added() {
        let dir = tempfile::tempdir().unwrap();
        let launch = exec_launch(
            None,
            dir.path(),
            dir.path(),
            "echo",
            &strings(&["hi"]),
            &BTreeMap::from([("A".to_string(), "b".to_string())]),
        );
        assert_eq!(launch.args, ["hi"]);
        assert_eq!(
            launch.env,
            BTreeMap::from([
                ("A".to_string(), "b".to_string()),
                ("PYTHONSAFEPATH".to_string(), "1".to_string())
            ])
        );
    }
}
