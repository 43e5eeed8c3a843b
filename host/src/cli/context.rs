//! What every command needs: the user config dir, the project, and the settings layers.

use std::path::Path;

use crate::gate::{Gate, rule_warnings};
use crate::paths::user_config_dir;
use crate::settings::{ProjectPaths, Settings, find_project_root};

use super::output;

/// The loaded settings for this run.
pub(crate) struct Context {
    pub settings: Settings,
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
        let settings = Settings::load(config_dir.as_deref(), Some(ProjectPaths::new(root)));
        for problem in &settings.problems {
            output::warning_line(&problem.to_string());
        }
        for warning in rule_warnings(&settings, &Context::env) {
            output::warning_line(&warning);
        }
        Ok(Context { settings })
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
