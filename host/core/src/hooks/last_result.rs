//! Each hook's last result (`ok`, `blocked`, `failed: …`), kept in the user's config dir so that
//! `earshot hooks list` can show it after the session that ran the hook ended.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Where the results are kept.
fn results_file(config_dir: &Path) -> PathBuf {
    config_dir.join("cache").join("hooks-last.json")
}

/// The key of one hook's result: its layer and name, and for a project's hook the project (two
/// projects' hooks of one name are two hooks).
pub fn result_key(layer: crate::settings::Layer, name: &str, project: Option<&Path>) -> String {
    match (layer, project) {
        (crate::settings::Layer::User, _) | (_, None) => format!("{}:{name}", layer.as_str()),
        (_, Some(project)) => format!("{}:{}:{name}", project.display(), layer.as_str()),
    }
}

/// Every recorded last result, by [`result_key`] (`user:lint`, `/path/to/project:project:audit`):
/// `(seconds since the epoch, summary)`.
pub fn last_results(config_dir: &Path) -> BTreeMap<String, (u64, String)> {
    let Ok(text) = std::fs::read_to_string(results_file(config_dir)) else {
        return BTreeMap::new();
    };
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text) else {
        return BTreeMap::new();
    };
    map.into_iter()
        .filter_map(|(key, value)| {
            Some((
                key,
                (
                    value.get("at")?.as_u64()?,
                    value.get("result")?.as_str()?.to_string(),
                ),
            ))
        })
        .collect()
}

/// Records `results` (key, summary) as the latest, best effort: a failure to write costs only
/// the `hooks list` column.
pub fn record(config_dir: &Path, results: Vec<(String, String)>) {
    static WRITING: Mutex<()> = Mutex::new(());
    let _one_writer = WRITING.lock();
    let path = results_file(config_dir);
    let mut map: serde_json::Map<String, Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default();
    for (key, result) in results {
        map.insert(key, json!({"at": now, "result": result}));
    }
    let Some(folder) = path.parent() else {
        return;
    };
    if std::fs::create_dir_all(folder).is_err() {
        return;
    }
    if let Ok(mut file) = tempfile::NamedTempFile::new_in(folder)
        && std::io::Write::write_all(&mut file, Value::Object(map).to_string().as_bytes()).is_ok()
    {
        let _ = file.persist(&path);
    }
}
