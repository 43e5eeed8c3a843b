//! What every command needs: the user config dir, the project, and the settings layers.

use std::path::Path;

use earshot_host::gate::{Gate, rule_warnings};
use earshot_host::paths::user_config_dir;
use earshot_host::settings::{ProjectPaths, Settings, find_project_root};

use super::output;

/// The loaded settings for this run.
pub(crate) struct Context {
    pub settings: Settings,
    /// Whether there is a project here: `--project` was given, or a folder on the way up holds
    /// `.earshot/` or `.git`. Otherwise the project is the working directory by default only,
    /// and a command that would create `.earshot/` in it refuses.
    pub project_found: bool,
}

impl Context {
    /// Finds the project (from `--project` or the working directory) and loads every layer,
    /// reporting settings problems, and deny or ask rules that can match no tool, on stderr.
    pub fn new(project: Option<&Path>) -> Result<Context, String> {
        let config_dir = user_config_dir();
        let root = match project {
            Some(dir) => {
                if !dir.is_dir() {
                    return Err(format!("--project {}: not a directory", dir.display()));
                }
                dir.canonicalize()
                    .map_err(|error| format!("--project {}: {error}", dir.display()))?
            }
            None => {
                let cwd = std::env::current_dir()
                    .map_err(|error| format!("cannot read the working directory: {error}"))?;
                find_project_root(&cwd, config_dir.as_deref())
            }
        };
        let user_config = config_dir
            .as_deref()
            .and_then(|dir| dir.canonicalize().ok());
        let project_found = project.is_some()
            || root.join(".git").exists()
            || (root.join(".earshot").is_dir()
                && root.join(".earshot").canonicalize().ok() != user_config);
        let settings = Settings::load(config_dir.as_deref(), Some(ProjectPaths::new(root)));
        for problem in &settings.problems {
            output::warning_line(&problem.to_string());
        }
        for warning in rule_warnings(&settings, &Context::env) {
            output::warning_line(&warning);
        }
        Ok(Context {
            settings,
            project_found,
        })
    }

    /// Refuses a command that would write into the project (`.earshot/` in it) when there is
    /// none here, rather than creating `.earshot/` in whatever folder this runs in.
    pub fn require_project(&self, what: &str) -> Result<(), super::Failure> {
        if self.project_found {
            return Ok(());
        }
        let here = self
            .settings
            .project
            .as_ref()
            .map(|project| project.root.display().to_string())
            .unwrap_or_default();
        Err(super::Failure::new(format!(
            "{here} is not inside a project (no .earshot/ or .git on the way up), so {what} would create .earshot/ here; nothing was written"
        ))
        .hint("run it inside the project, or pass --project DIR (or -s user for your own settings)"))
    }

    /// The gate over the rules of every layer.
    pub fn gate(&self) -> Gate {
        Gate::from_settings(&self.settings)
    }

    /// Environment lookup for `${VAR}` expansion.
    pub fn env(name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}
