//! The guest SDK's example component (fixtures/components/hello-tool) works end to end, and the
//! compiled-component cache is used, verified, and repaired.

use crate::common::{TIGHT, hello_wasm, load_tool, temp_cache};
use earshot_host::sandbox::{CacheOutcome, SandboxEngine, ToolComponent};

#[test]
fn the_example_lists_and_runs_its_tool() {
    let hello = load_tool("hello", hello_wasm(), TIGHT);
    let tools = hello.tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "greet");
    assert_eq!(tools[0].description, "Greets someone by name.");
    assert!(tools[0].read_only);
    let schema: serde_json::Value =
        serde_json::from_str(&tools[0].input_schema).expect("schema is JSON");
    assert_eq!(schema["required"], serde_json::json!(["name"]));

    let output = hello
        .call("greet", r#"{"name":"Ada"}"#)
        .expect("greet runs");
    assert_eq!(output.output, "Hello, Ada!");
    assert!(!output.is_error);
    assert_eq!(output.title.as_deref(), Some("greeting"));

    let unknown = hello
        .call("wave", "{}")
        .expect("unknown tool is an error output, not a trap");
    assert!(unknown.is_error);
    assert_eq!(unknown.output, "hello has no tool named \"wave\"");
}

#[test]
fn a_second_load_comes_from_the_cache_and_a_damaged_entry_is_recompiled() {
    let engine = SandboxEngine::shared();
    let bytes = std::fs::read(hello_wasm()).expect("built component");
    let (dir, cache) = temp_cache();

    let first = ToolComponent::load(&engine, &cache, "hello", &bytes, TIGHT).expect("first load");
    assert_eq!(first.readiness(), CacheOutcome::Compiled);
    let second = ToolComponent::load(&engine, &cache, "hello", &bytes, TIGHT).expect("second load");
    assert_eq!(second.readiness(), CacheOutcome::Hit);

    // Damage the cached code: the digest check must catch it and the component must still work.
    let entry = find_cwasm(dir.path()).expect("a cached .cwasm");
    let mut damaged = std::fs::read(&entry).expect("read entry");
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0xff;
    std::fs::write(&entry, damaged).expect("write damaged entry");
    let third = ToolComponent::load(&engine, &cache, "hello", &bytes, TIGHT).expect("third load");
    assert_eq!(third.readiness(), CacheOutcome::Compiled);
    assert_eq!(
        third
            .call("greet", r#"{"name":"Bo"}"#)
            .expect("runs")
            .output,
        "Hello, Bo!"
    );

    // And the repaired entry is a hit again.
    let fourth = ToolComponent::load(&engine, &cache, "hello", &bytes, TIGHT).expect("fourth load");
    assert_eq!(fourth.readiness(), CacheOutcome::Hit);
}

#[test]
fn an_entry_rewritten_with_a_plain_digest_or_copied_from_another_component_is_not_run() {
    let engine = SandboxEngine::shared();
    let hello = std::fs::read(hello_wasm()).expect("built component");
    let (dir, cache) = temp_cache();
    ToolComponent::load(&engine, &cache, "hello", &hello, TIGHT).expect("first load");
    let entry = find_cwasm(dir.path()).expect("a cached .cwasm");
    let digest_file = entry.with_extension("blake3");
    // The host's own validator component is another valid entry beside it.
    earshot_host::sandbox::SchemaValidator::new(&engine, &cache).expect("the validator loads");
    let other_entry = std::fs::read_dir(entry.parent().unwrap())
        .unwrap()
        .map(|found| found.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "cwasm") && *path != entry)
        .expect("the other entry");

    // Someone who can write the cache but not read the key puts the other component's code in
    // hello's place, with its plain BLAKE3 (the old format) or SHA-256 recomputed, or with the
    // other entry's own valid digest file.
    let code = std::fs::read(&other_entry).unwrap();
    let forgeries = [
        blake3::hash(&code).to_hex().to_string(),
        {
            use sha2::Digest;
            hex::encode(sha2::Sha256::digest(&code))
        },
        std::fs::read_to_string(other_entry.with_extension("blake3")).unwrap(),
    ];
    for forged in forgeries {
        std::fs::write(&entry, &code).unwrap();
        std::fs::write(&digest_file, &forged).unwrap();
        let loaded = ToolComponent::load(&engine, &cache, "hello", &hello, TIGHT).expect("loads");
        assert_eq!(
            loaded.readiness(),
            CacheOutcome::Compiled,
            "refused and rebuilt"
        );
        assert_eq!(loaded.tools()[0].name, "greet", "hello's own code runs");
        let again = ToolComponent::load(&engine, &cache, "hello", &hello, TIGHT).expect("loads");
        assert_eq!(
            again.readiness(),
            CacheOutcome::Hit,
            "the rebuilt entry verifies"
        );
    }
    // An entry made under another user's key does not verify under this one.
    let stranger = earshot_host::sandbox::ComponentCache::in_dir(
        dir.path().join("components"),
        earshot_host::trust::CacheKey::ephemeral(),
    );
    let loaded = ToolComponent::load(&engine, &stranger, "hello", &hello, TIGHT).expect("loads");
    assert_eq!(loaded.readiness(), CacheOutcome::Compiled);
}

fn find_cwasm(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = find_cwasm(&path) {
                return Some(found);
            }
        } else if path.extension().is_some_and(|ext| ext == "cwasm") {
            return Some(path);
        }
    }
    None
}
