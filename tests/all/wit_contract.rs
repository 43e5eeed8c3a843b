//! The WIT contract is frozen per released version: `wit/since_vX.Y.Z/` holds the files of
//! version X.Y.Z exactly. While `wit/` still declares that version, the two must match, so a change
//! to the contract without a new version number fails here instead of breaking third parties'
//! components.

use std::path::PathBuf;

fn wit_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../wit")
}

/// The version `wit/types.wit` declares (`package earshot:plugin@X.Y.Z;`).
fn current_version() -> String {
    let text = std::fs::read_to_string(wit_dir().join("types.wit")).expect("types.wit");
    text.lines()
        .find_map(|line| line.trim().strip_prefix("package earshot:plugin@"))
        .and_then(|rest| rest.strip_suffix(';'))
        .expect("a package line")
        .to_string()
}

fn wit_files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("a folder")
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".wit"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_current_contract_matches_its_frozen_copy() {
    let version = current_version();
    let frozen = wit_dir().join(format!("since_v{version}"));
    assert!(
        frozen.is_dir(),
        "wit/ declares {version} but wit/since_v{version}/ does not exist: freeze it"
    );
    let names = wit_files(&wit_dir());
    assert_eq!(
        names,
        wit_files(&frozen),
        "the files of wit/ and wit/since_v{version}/ differ"
    );
    for name in names {
        let current = std::fs::read_to_string(wit_dir().join(&name)).unwrap();
        let released = std::fs::read_to_string(frozen.join(&name)).unwrap();
        assert_eq!(
            current, released,
            "wit/{name} changed after {version} was frozen: give the change a new version"
        );
    }
}

#[test]
fn every_released_contract_stays_frozen_beside_the_current_one() {
    // 0.1.0 components keep loading under 0.2.0: the host binds both, so 0.1.0 must stay as released.
    let released = wit_dir().join("since_v0.1.0");
    for name in ["types.wit", "mcp-output.wit", "schema-validator.wit"] {
        let text = std::fs::read_to_string(released.join(name)).expect("a frozen file");
        assert!(
            text.starts_with("package earshot:plugin@0.1.0;"),
            "wit/since_v0.1.0/{name} no longer declares 0.1.0"
        );
    }
    let types = std::fs::read_to_string(released.join("types.wit")).unwrap();
    assert!(
        !types.contains("content-block"),
        "0.1.0's tool-output gained 0.2.0's fields"
    );
    assert_eq!(current_version(), "0.2.0");
}
