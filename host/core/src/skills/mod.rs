//! Skills and slash commands: Markdown a user or a repository wrote, which reaches the model as
//! text and grants nothing.
//!
//! * A **skill** is a folder holding `SKILL.md` (the open Agent Skills format). The model sees
//!   its name and description in a catalogue ([`Catalogue`]) and loads its body through the
//!   host's one `skill` tool, gated as `Skill(name)`; the user can type it as `/name`.
//! * A **slash command** is a Markdown file under `commands/` (`git/commit.md` is
//!   `/git:commit`), invoked by the user only. Its text is expanded once ([`expand`]): arguments
//!   go in as data, `@path` includes a project file gated as `Read(path)`, and `` !`cmd` `` runs
//!   a shell command gated as `Bash(cmd)` with the arguments as positional parameters.
//!
//! Both are found under fixed roots only ([`discovery`]), parsed strictly ([`frontmatter`]), and
//! a project's are inert until `earshot skills|commands trust NAME` records the digest of every
//! file they consist of ([`admission`]). `allowed-tools` is shown as what an item asks for,
//! never applied: every action still goes through the one gate.

pub mod admission;
pub mod arguments;
pub mod catalogue;
pub mod discovery;
pub mod expand;
pub mod folder;
pub mod frontmatter;
pub mod item;
pub mod library;
pub mod names;
mod shell;
pub mod tool;

pub use admission::{trust_item, untrust_item};
pub use catalogue::{Catalogue, CatalogueEntry, DEFAULT_BUDGET, budget};
pub use expand::{ExpandError, Expansion, expand_command, skill_denied};
pub use item::{ItemKind, ItemOrigin, LoadedItem, Problem};
pub use library::{Library, SlashEntry};
pub use tool::SKILL_TOOL_NAME;
