//! Where earshot keeps the user's files.

use std::path::PathBuf;

/// The user config dir: `$EARSHOT_CONFIG_DIR`, else `~/.earshot`. `None` when neither is known.
pub fn user_config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("EARSHOT_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::home_dir().map(|home| home.join(".earshot"))
}
