//! Every skill and command of a session, and who gets which name.
//!
//! The user's item beats the project's on a clash (unlike Gemini CLI, where the workspace wins);
//! a trusted project item the user's shadows stays reachable as `/project:name`. Within one
//! owner a skill beats a command of the same name (as in Claude Code), and earshot's own command
//! names are reserved. An untrusted project item has no name at all: it is invisible to the
//! model and to `/` until `earshot skills|commands trust NAME`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::settings::Settings;
use crate::trust::TrustJudge;

use super::discovery::{Root, home_dir, roots, walk};
use super::item::{ItemKind, ItemOrigin, LoadedItem, Problem, load_command, load_skill};
use super::names::{PROJECT_PREFIX, is_reserved};

/// One `/name` the user can type, as a client lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SlashEntry {
    /// What to type after `/` (`git:commit`, `project:deploy`).
    pub name: String,
    /// The item's description (its frontmatter's; empty when none).
    pub description: String,
    /// Its `argument-hint`, when it has one.
    pub argument_hint: Option<String>,
    /// Skill or command.
    pub kind: ItemKind,
    /// Whose it is.
    pub origin: ItemOrigin,
}

/// Every skill and command found for a session, loaded or not.
#[derive(Debug, Clone, Default)]
pub struct Library {
    items: Vec<LoadedItem>,
    problems: Vec<Problem>,
    /// The skill each name means for the model (active and winning its name).
    skills: BTreeMap<String, usize>,
    /// What each `/name` means.
    slash: BTreeMap<String, usize>,
}

/// The most skills or commands loaded from one root.
pub const MAX_ITEMS_PER_ROOT: usize = 2_000;

/// The most bytes one load reads across every skill and command: past it, the rest are left
/// out with a problem line.
pub const MAX_BYTES_PER_LOAD: u64 = 64 << 20;

impl Library {
    /// Finds and loads every skill and command for `settings` (the user's under its config dir
    /// and `$HOME/.agents/skills`, the project's under its root).
    pub fn load(settings: &Settings) -> Library {
        let home = home_dir();
        Library::load_from(settings, &roots(settings, home.as_deref()))
    }

    /// As [`Library::load`], from the given roots (in order of precedence).
    pub fn load_from(settings: &Settings, roots: &[Root]) -> Library {
        let mut library = Library::default();
        let project_root = settings
            .project
            .as_ref()
            .map(|project| project.root.as_path());
        let judge = TrustJudge::new(settings);
        // Bytes read by this load, refused items' included.
        let spent = std::cell::Cell::new(0);
        for root in roots {
            library.load_root(&judge, &spent, root, project_root);
        }
        library.assign_names();
        for problem in library
            .problems
            .iter_mut()
            .filter(|problem| problem.kind.is_none())
        {
            problem.kind = library
                .items
                .iter()
                .find(|item| item.file == problem.path)
                .map(|item| item.kind);
        }
        library
    }

    fn load_root(
        &mut self,
        judge: &TrustJudge<'_>,
        spent: &std::cell::Cell<u64>,
        root: &Root,
        project_root: Option<&Path>,
    ) {
        let found = walk(root, project_root);
        let of_kind = |mut problem: Problem| {
            problem.kind = Some(root.kind);
            problem
        };
        self.problems
            .extend(found.problems.into_iter().map(of_kind));
        for (index, path) in found.paths.iter().enumerate() {
            // Untrusted items are read and hashed at every start: a clone of thousands of
            // oversized files must not make every session slow.
            if index >= MAX_ITEMS_PER_ROOT || spent.get() > MAX_BYTES_PER_LOAD {
                self.problems.push(of_kind(Problem::new(
                    &root.path,
                    None,
                    &format!(
                        "{} more were not loaded: past {MAX_ITEMS_PER_ROOT} items in one folder or {} MiB read in all",
                        found.paths.len() - index,
                        MAX_BYTES_PER_LOAD >> 20
                    ),
                )));
                break;
            }
            let path = path.clone();
            let loaded = match root.kind {
                ItemKind::Skill => {
                    load_skill(judge, spent, &path, root.origin).map(|(item, _)| item)
                }
                ItemKind::Command => {
                    load_command(judge, spent, &root.path, &path, root.origin).map(|(item, _)| item)
                }
            };
            match loaded {
                Ok(item) => self.items.push(item),
                Err(problem) => self.problems.push(of_kind(problem)),
            }
        }
    }

    /// Gives each active item its names, in order of precedence: the user's skills, the user's
    /// commands, then the project's.
    fn assign_names(&mut self) {
        let mut order: Vec<usize> = (0..self.items.len()).collect();
        order.sort_by_key(|&index| {
            let item = &self.items[index];
            (item.origin, item.kind == ItemKind::Command)
        });
        for index in order {
            let item = &self.items[index];
            if !item.is_active() {
                continue;
            }
            if item.kind == ItemKind::Skill {
                match self.skills.get(&item.name) {
                    None => {
                        self.skills.insert(item.name.clone(), index);
                    }
                    Some(&winner) if self.items[winner].origin == item.origin => {
                        self.problems.push(Problem::new(
                            &item.file,
                            None,
                            &format!(
                                "skill \"{}\" is also at {}, which is used instead",
                                item.name,
                                self.items[winner].file.display()
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
            if !item.user_invocable() {
                continue;
            }
            if is_reserved(&item.name) {
                self.problems.push(Problem::new(
                    &item.file,
                    None,
                    &format!(
                        "/{} is one of earshot's own commands (or namespaces); rename this {} to use it",
                        item.name,
                        item.kind.as_str()
                    ),
                ));
                continue;
            }
            match self.slash.get(&item.name) {
                None => {
                    self.slash.insert(item.name.clone(), index);
                }
                Some(&winner) => {
                    let winner = &self.items[winner];
                    if item.origin == ItemOrigin::Project && winner.origin == ItemOrigin::User {
                        let shadowed = format!("{PROJECT_PREFIX}{}", item.name);
                        self.slash.entry(shadowed).or_insert(index);
                    } else {
                        self.problems.push(Problem::new(
                            &item.file,
                            None,
                            &format!(
                                "/{} is also {} at {}, which is used instead",
                                item.name,
                                winner.kind.as_str(),
                                winner.file.display()
                            ),
                        ));
                    }
                }
            }
        }
    }

    /// Every item found that parsed, active or not, in the order found.
    pub fn items(&self) -> &[LoadedItem] {
        &self.items
    }

    /// What was found but not loaded (or not given a name), each at `file:line`.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The problems found looking for `kind` (and those of either kind), each line once.
    pub fn problems_of(&self, kind: ItemKind) -> Vec<&Problem> {
        let mut seen = std::collections::BTreeSet::new();
        self.problems
            .iter()
            .filter(|problem| problem.kind.is_none_or(|of| of == kind))
            .filter(|problem| seen.insert(problem.to_string()))
            .collect()
    }

    /// The skill the model means by `name`: active, and winning its name.
    pub fn skill(&self, name: &str) -> Option<&LoadedItem> {
        self.skills.get(name).map(|&index| &self.items[index])
    }

    /// The skills the model may load (active, winning their names, without
    /// `disable-model-invocation`), by name.
    pub fn model_skills(&self) -> impl Iterator<Item = &LoadedItem> {
        self.skills
            .values()
            .map(|&index| &self.items[index])
            .filter(|item| item.model_invocable())
    }

    /// What `/name` means (`name` with or without its `/`).
    pub fn slash(&self, name: &str) -> Option<&LoadedItem> {
        let name = name.strip_prefix('/').unwrap_or(name);
        self.slash.get(name).map(|&index| &self.items[index])
    }

    /// Every `/name` the user can type, sorted by name.
    pub fn slash_entries(&self) -> Vec<SlashEntry> {
        self.slash
            .iter()
            .map(|(name, &index)| {
                let item = &self.items[index];
                SlashEntry {
                    name: name.clone(),
                    description: super::catalogue::sanitised_line(item.description(), 1_024),
                    argument_hint: item
                        .frontmatter
                        .argument_hint
                        .as_deref()
                        .map(|hint| super::catalogue::sanitised_line(hint, 200)),
                    kind: item.kind,
                    origin: item.origin,
                }
            })
            .collect()
    }

    /// Every item of `kind` named `name` (the user's and the project's, active or not), for
    /// `show` and `trust`.
    pub fn named(&self, kind: ItemKind, name: &str) -> Vec<&LoadedItem> {
        let name = name.strip_prefix('/').unwrap_or(name);
        let (name, project_only) = match name.strip_prefix(PROJECT_PREFIX) {
            Some(rest) => (rest, true),
            None => (name, false),
        };
        self.items
            .iter()
            .filter(|item| {
                item.kind == kind
                    && item.name == name
                    && (!project_only || item.origin == ItemOrigin::Project)
            })
            .collect()
    }
}
