//! The module loader of one extension: relative imports of files beside it, stripped the same
//! way, confined to the extension's own folder. Bare and `node:` specifiers are refused, and so
//! is any path that leaves the folder.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use boa_engine::module::{ModuleLoader, ModuleRequest, Referrer};
use boa_engine::{Context, JsNativeError, JsResult, Module, Source};

use super::strip::{PositionMap, StripError, StrippedModule, strip_types};
use crate::sources::{import_candidates, typescript_twin};

/// Why an extension's own file did not become a module.
pub enum EntryFailure {
    /// oxc refused its TypeScript (syntax error, or syntax Boa cannot run).
    Strip(StripError),
    /// Boa refused the stripped module, or the file could not be read.
    Js(boa_engine::JsError),
}

/// Loads an extension's entry file and the files it imports, and remembers how to map each
/// one's positions back to its original text.
pub struct ConfinedLoader {
    root: PathBuf,
    /// The extension's own file, once [`ConfinedLoader::load_entry`] has read it.
    entry: RefCell<Option<PathBuf>>,
    /// The bytes of every file the extension may run, by canonical path, read once when its trust
    /// was checked; `None` reads from disk (benchmarks and tests of the loader alone).
    snapshot: Option<HashMap<PathBuf, Vec<u8>>>,
    /// Files of the snapshot already stripped (by canonical path), when their trust check parsed
    /// them: they are not parsed by oxc again.
    stripped: RefCell<HashMap<PathBuf, StrippedModule>>,
    modules: RefCell<HashMap<PathBuf, Module>>,
    positions: RefCell<HashMap<String, PositionMap>>,
}

impl ConfinedLoader {
    /// A loader for files under `root` (the extension's folder, canonical), read from disk.
    pub fn new(root: PathBuf) -> ConfinedLoader {
        ConfinedLoader {
            root,
            entry: RefCell::new(None),
            snapshot: None,
            stripped: RefCell::new(HashMap::new()),
            modules: RefCell::new(HashMap::new()),
            positions: RefCell::new(HashMap::new()),
        }
    }

    /// A loader that runs only the files of `snapshot` (by canonical path): a file the trust
    /// check did not read is refused, and a file changed on disk since runs as it was read.
    /// `stripped` holds the files of the snapshot already stripped, by canonical path.
    pub fn from_snapshot(
        root: PathBuf,
        snapshot: HashMap<PathBuf, Vec<u8>>,
        stripped: HashMap<PathBuf, StrippedModule>,
    ) -> ConfinedLoader {
        ConfinedLoader {
            root,
            entry: RefCell::new(None),
            snapshot: Some(snapshot),
            stripped: RefCell::new(stripped),
            modules: RefCell::new(HashMap::new()),
            positions: RefCell::new(HashMap::new()),
        }
    }

    /// Reads, strips and parses the extension's own file.
    ///
    /// # Errors
    /// An [`EntryFailure`]: its TypeScript is refused at file:line:col, or Boa rejects it.
    pub fn load_entry(&self, path: &Path, context: &mut Context) -> Result<Module, EntryFailure> {
        *self.entry.borrow_mut() = Some(path.to_path_buf());
        let text = self.read(path).map_err(|message| {
            EntryFailure::Js(JsNativeError::error().with_message(message).into())
        })?;
        let stripped = self.strip(path, &text).map_err(EntryFailure::Strip)?;
        self.parse_stripped(path, stripped, context)
            .map_err(EntryFailure::Js)
    }

    /// Reads, strips and parses `path` as a module (or returns the one already parsed).
    ///
    /// # Errors
    /// A `SyntaxError` naming the original file:line:col, or an error reading the file.
    pub fn load_file(&self, path: &Path, context: &mut Context) -> JsResult<Module> {
        if let Some(module) = self.modules.borrow().get(path) {
            return Ok(module.clone());
        }
        let text = self
            .read(path)
            .map_err(|message| JsNativeError::error().with_message(message))?;
        let stripped = self.strip(path, &text).map_err(|error| {
            let location = &error.location;
            JsNativeError::syntax().with_message(format!(
                "{}:{}:{}: {}",
                self.shown(Path::new(&location.file)),
                location.line,
                location.column,
                error.message
            ))
        })?;
        self.parse_stripped(path, stripped, context)
    }

    /// `text` (the file at `path`) stripped: as its trust check left it, else by oxc now.
    fn strip(&self, path: &Path, text: &str) -> Result<StrippedModule, StripError> {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        match self.stripped.borrow_mut().remove(&canonical) {
            Some(stripped) => Ok(stripped),
            None => strip_types(path, text),
        }
    }

    fn parse_stripped(
        &self,
        path: &Path,
        stripped: StrippedModule,
        context: &mut Context,
    ) -> JsResult<Module> {
        let module = Module::parse(
            Source::from_bytes(stripped.code.as_bytes()).with_path(path),
            None,
            context,
        )?;
        self.positions
            .borrow_mut()
            .insert(path.display().to_string(), stripped.positions);
        self.modules
            .borrow_mut()
            .insert(path.to_path_buf(), module.clone());
        Ok(module)
    }

    /// The text of `path`: from the snapshot when there is one (refusing what it does not hold),
    /// else from disk.
    fn read(&self, path: &Path) -> Result<String, String> {
        match &self.snapshot {
            None => std::fs::read_to_string(path)
                .map_err(|error| format!("cannot read {}: {error}", self.shown(path))),
            Some(files) => {
                let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
                let bytes = files.get(&canonical).ok_or_else(|| {
                    format!(
                        "{} is not part of what was trusted (only files the extension imports by a \
                         literal path are); import it with a plain relative path",
                        self.shown(path)
                    )
                })?;
                String::from_utf8(bytes.clone())
                    .map_err(|_| format!("{} is not UTF-8 text", self.shown(path)))
            }
        }
    }

    /// The original position of a generated 1-based (line, column) in `file`.
    pub fn original_position(&self, file: &str, line: u32, column: u32) -> Option<(u32, u32)> {
        self.positions.borrow().get(file)?.original(line, column)
    }

    /// The file a specifier imported from `referrer` names, if the extension may import it.
    fn resolve(&self, specifier: &str, referrer: Option<&Path>) -> Result<PathBuf, String> {
        let is_relative = specifier.starts_with("./") || specifier.starts_with("../");
        if specifier.starts_with("node:") || !is_relative {
            return Err(format!(
                "import \"{specifier}\" is not supported: extensions can import only relative \
                 files beside them (\"./helper.ts\"); bare and node: specifiers do not resolve"
            ));
        }
        let base = referrer
            .and_then(Path::parent)
            .map_or_else(|| self.root.clone(), Path::to_path_buf);
        let joined = normalise(&base.join(specifier));
        if !joined.starts_with(&self.root) {
            return Err(format!(
                "import \"{specifier}\" leaves the extension's folder ({}); only files inside it can be imported",
                self.root.display()
            ));
        }
        let shown = |path: &Path| self.shown(path);
        for candidate in import_candidates(&joined) {
            if candidate.is_file() {
                // A symbolic link must not lead out of the folder either.
                let real = candidate
                    .canonicalize()
                    .map_err(|error| format!("cannot open \"{specifier}\": {error}"))?;
                if !real.starts_with(&self.root) {
                    return Err(format!(
                        "import \"{specifier}\" is refused: {} is a link to {}, outside the \
                         extension's folder; copy the file into the folder instead",
                        shown(&candidate),
                        real.display()
                    ));
                }
                return Ok(candidate);
            }
        }
        Err(match typescript_twin(&joined) {
            Some(twin) => format!(
                "import \"{specifier}\": no such file {} nor its TypeScript twin {}",
                shown(&joined),
                shown(&twin)
            ),
            None => format!("import \"{specifier}\": no such file {}", shown(&joined)),
        })
    }

    /// `path` as a load failure names it: relative to the extension's folder (the failure is
    /// already headed by the extension's own path), or whole when it is outside.
    pub fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).map_or_else(
            |_| path.display().to_string(),
            |relative| relative.display().to_string(),
        )
    }

    /// Whether `path` is the extension's own file (the one [`ConfinedLoader::load_entry`] read).
    pub fn is_entry(&self, path: &Path) -> bool {
        self.entry.borrow().as_deref() == Some(path)
    }
}

/// `a/./b/../c` to `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl ModuleLoader for ConfinedLoader {
    async fn load_imported_module(
        self: Rc<Self>,
        referrer: Referrer,
        request: ModuleRequest,
        context: &RefCell<&mut Context>,
    ) -> JsResult<Module> {
        // Boa's parser recurses in Rust once per level of nesting: an `import()` made deep in a
        // native recursion parses only with a parse's worth of stack left, as `eval` does.
        if context
            .borrow()
            .native_stack_remaining()
            .is_some_and(|left| left < crate::sources::parse_guard::PARSE_STACK_BYTES)
        {
            return Err(JsNativeError::range()
                .with_message("Maximum call stack size exceeded")
                .into());
        }
        let specifier = request.specifier().to_std_string_escaped();
        let path = self
            .resolve(&specifier, referrer.path())
            .map_err(|message| {
                // The failure is headed by the extension's own path: name only another importer.
                let from = referrer
                    .path()
                    .filter(|path| !self.is_entry(path))
                    .map_or_else(String::new, |path| format!("{}: ", self.shown(path)));
                JsNativeError::typ().with_message(format!("{from}{message}"))
            })?;
        self.load_file(&path, &mut context.borrow_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalising_removes_dots_without_the_file_system() {
        assert_eq!(
            normalise(Path::new("/a/ext/./lib/../../x.ts")),
            PathBuf::from("/a/x.ts")
        );
    }

    #[test]
    fn bare_node_and_escaping_specifiers_are_refused() {
        let loader = ConfinedLoader::new(PathBuf::from("/nowhere/ext"));
        let entry = Path::new("/nowhere/ext/main.ts");
        for (specifier, expected) in [
            ("lodash", "bare and node:"),
            ("node:fs", "bare and node:"),
            ("../secret.ts", "leaves the extension's folder"),
        ] {
            let error = loader.resolve(specifier, Some(entry)).unwrap_err();
            assert!(error.contains(expected), "{specifier}: {error}");
        }
    }
}
