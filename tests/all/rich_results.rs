//! Images, audio, resource links, embedded resources and structured content reach every consumer
//! with their bytes intact: the embedding API (`ToolOutput::content`), `earshot mcp serve` (the
//! PyPI `mcp` client) and `earshot acp` (the official ACP TypeScript SDK), from a real server
//! (server-everything's `get-tiny-image` and `get-structured-content`), a fixture server with
//! every block type, and an extension. Binary parts over the caps are replaced by a line that
//! says so, and nothing else in the result is lost.

// Its MCP tests are compiled out without the MCP client; what only they use goes with them.
#![cfg_attr(not(feature = "mcp"), allow(dead_code, unused_imports))]

use std::path::Path;

use earshot_host::content::{ContentBlock, ResourceContents};
use earshot_host::{CallError, NonInteractivePrompter};
use serde_json::{Value, json};

use crate::common::{Sandbox, fixture_server, mcp_parts, mcp_python};

fn everything_stdio() -> Value {
    let bin = mcp_parts().join("node_modules/.bin/mcp-server-everything");
    json!({"command": bin.display().to_string(), "args": ["stdio"]})
}

/// server-everything's tiny image, as its source holds it.
fn tiny_image_base64() -> String {
    let source =
        std::fs::read_to_string(mcp_parts().join(
            "node_modules/@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js",
        ))
        .unwrap();
    let start = source.find("MCP_TINY_IMAGE = \"").unwrap() + "MCP_TINY_IMAGE = \"".len();
    let end = start + source[start..].find('"').unwrap();
    source[start..end].to_string()
}

/// A project with server-everything and the all-content fixture behind, every tool allowed.
fn rich_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.user_settings(json!({
        "mcpServers": {
            "everything": everything_stdio(),
            "c": fixture_server("all_content.py", &[]),
        },
        "permissions": {"allow": ["Mcp(everything__*)", "Mcp(c__*)"]},
    }));
    sandbox
}

#[cfg(feature = "mcp")]
#[test]
fn the_embedding_api_gives_every_block_with_its_bytes_and_the_structured_content() {
    let sandbox = rich_sandbox();
    let host = sandbox.host();
    let image = host
        .call("everything__get-tiny-image", "{}", &NonInteractivePrompter)
        .expect("runs");
    let images: Vec<&ContentBlock> = image
        .content
        .iter()
        .filter(|block| matches!(block, ContentBlock::Image(_)))
        .collect();
    let [ContentBlock::Image(media)] = images[..] else {
        panic!("one image in {:?}", image.content);
    };
    assert_eq!(media.mime_type, "image/png");
    assert_eq!(
        media.data_base64,
        tiny_image_base64(),
        "the bytes are intact"
    );
    assert!(
        image.output.contains("[image: image/png"),
        "a text-only reader still learns of it: {}",
        image.output
    );

    let weather = host
        .call(
            "everything__get-structured-content",
            r#"{"location": "Chicago"}"#,
            &NonInteractivePrompter,
        )
        .expect("runs");
    assert!(!weather.is_error, "{}", weather.output);
    assert_eq!(
        weather.structured_content,
        Some(json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}))
    );
    let listed = host.model_tools();
    let tool = listed
        .iter()
        .find(|tool| tool.name == "everything__get-structured-content")
        .unwrap();
    assert_eq!(
        tool.output_schema.as_ref().unwrap()["properties"]["conditions"]["type"],
        "string"
    );

    let all = host
        .call("c__everything", "{}", &NonInteractivePrompter)
        .expect("runs");
    let kinds: Vec<&str> = all
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(resource) => match resource.contents {
                ResourceContents::Text(_) => "resource text",
                ResourceContents::Blob { .. } => "resource blob",
            },
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource text",
            "resource blob"
        ]
    );
    assert_eq!(
        all.content[5].to_mcp_json()["resource"]["blob"],
        "AAECAwQFBgcICQoLDA0ODw==",
        "the blob's bytes 0..16"
    );
    assert_eq!(
        all.structured_content,
        Some(json!({"temperature": 21.5, "unit": "C"}))
    );
}

#[cfg(feature = "mcp")]
#[test]
fn a_part_over_a_cap_is_replaced_by_a_line_and_the_rest_is_kept() {
    let sandbox = rich_sandbox();
    let host = sandbox.host();
    let big = host
        .call("c__big_image", "{}", &NonInteractivePrompter)
        .expect("runs");
    let texts: Vec<String> = big
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.clone(),
            other => panic!("no binary part passes: {other:?}"),
        })
        .collect();
    assert_eq!(texts[0], "before");
    assert!(
        texts[1].contains("6291456 bytes: over the 5 MiB limit for one image"),
        "{texts:?}"
    );
    assert_eq!(texts[2], "after");
    assert!(
        big.output.contains("over the 5 MiB limit"),
        "{}",
        big.output
    );

    let three = host
        .call("c__three_images", "{}", &NonInteractivePrompter)
        .expect("runs");
    assert!(matches!(three.content[0], ContentBlock::Image(_)));
    assert!(matches!(three.content[1], ContentBlock::Image(_)));
    assert!(
        matches!(&three.content[2], ContentBlock::Text(line) if line.contains("over the 10 MiB limit for all of one result")),
        "{:?}",
        three.content[2]
    );

    let huge = host.call("c__huge_image", "{}", &NonInteractivePrompter);
    let Err(CallError::Failed { message, .. }) = huge else {
        panic!("a 20 MB image is refused: {huge:?}");
    };
    assert!(message.contains("sent a message over 16 MiB"), "{message}");
    // The session goes on: the server is restarted for the next call.
    let after = host
        .call("c__fails", "{}", &NonInteractivePrompter)
        .expect("runs");
    assert!(after.output.contains("the thing failed"));
}

/// Runs the Python client's steps against `earshot mcp serve`.
fn serve_client(sandbox: &Sandbox, steps: Value) -> Vec<Value> {
    let output = std::process::Command::new(mcp_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/mcp/clients/serve_client.py"))
        .arg(env!("CARGO_BIN_EXE_earshot"))
        .arg(sandbox.project())
        .arg(sandbox.config())
        .arg(steps.to_string())
        .arg("--no-elicitation")
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

#[cfg(feature = "mcp")]
#[test]
fn mcp_serve_passes_images_structured_content_and_output_schemas_to_its_client() {
    let sandbox = rich_sandbox();
    let out = serve_client(
        &sandbox,
        json!([
            {"op": "list"},
            {"op": "call", "name": "everything__get-tiny-image", "args": {}},
            {"op": "call", "name": "everything__get-structured-content", "args": {"location": "New York"}},
            {"op": "call", "name": "c__everything", "args": {}},
            {"op": "call", "name": "c__big_image", "args": {}},
        ]),
    );
    let schema = &out[0]["output_schemas"]["everything__get-structured-content"];
    assert_eq!(
        schema["properties"]["humidity"]["type"], "number",
        "{}",
        out[0]
    );

    let image = out[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "image")
        .unwrap_or_else(|| panic!("an image block in {}", out[1]));
    assert_eq!(image["mimeType"], "image/png");
    assert_eq!(image["data"], tiny_image_base64());

    assert_eq!(out[2]["is_error"], false, "{}", out[2]);
    assert_eq!(
        out[2]["structured"],
        json!({"temperature": 33, "conditions": "Cloudy", "humidity": 82})
    );

    let types: Vec<&str> = out[3]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
            "resource"
        ]
    );
    assert_eq!(out[3]["content"][3]["uri"], "file:///tmp/report.txt");
    assert_eq!(
        out[3]["content"][5]["resource"]["blob"],
        "AAECAwQFBgcICQoLDA0ODw=="
    );

    let big: Vec<&Value> = out[4]["content"].as_array().unwrap().iter().collect();
    assert_eq!(big.len(), 3, "{}", out[4]);
    assert!(big.iter().all(|block| block["type"] == "text"));
    assert!(
        big[1]["text"]
            .as_str()
            .unwrap()
            .contains("over the 5 MiB limit"),
        "{}",
        out[4]
    );
}

#[cfg(feature = "mcp")]
#[test]
fn acp_sends_the_blocks_as_content_of_the_tool_call_update() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/acp-client");
    assert!(
        dir.join("node_modules/@agentclientprotocol/sdk").exists(),
        "the ACP client is not installed: run `npm ci --prefix fixtures/acp-client` (as .ci/run does)"
    );
    let sandbox = rich_sandbox();
    let run = |prompt: &str| -> Value {
        let output = std::process::Command::new("node")
            .arg(dir.join("drive.mjs"))
            .arg(env!("CARGO_BIN_EXE_earshot"))
            .arg(sandbox.project())
            .arg(sandbox.dir.path().join("never-spawned"))
            .arg(prompt)
            .env("EARSHOT_CONFIG_DIR", sandbox.config())
            .env_remove("RUST_LOG")
            .output()
            .expect("node runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(stdout.trim()).expect("one JSON line")
    };
    let seen = run("/call everything__get-tiny-image {}");
    assert_eq!(
        seen["statuses"],
        json!(["in_progress", "completed"]),
        "{seen}"
    );
    let content = seen["results"][0]["content"].as_array().unwrap();
    let image = content
        .iter()
        .map(|item| &item["content"])
        .find(|block| block["type"] == "image")
        .unwrap_or_else(|| panic!("an image block in {seen}"));
    assert_eq!(image["mimeType"], "image/png");
    assert_eq!(image["data"], tiny_image_base64());

    let seen = run("/call everything__get-structured-content {\"location\": \"Los Angeles\"}");
    assert_eq!(
        seen["results"][0]["rawOutput"]["conditions"], "Sunny / Clear",
        "the structured content is the raw output: {seen}"
    );
}

// Its tool is a TypeScript extension.
#[cfg(feature = "js")]
#[test]
fn an_extension_returns_blocks_and_structured_content_and_a_wrong_block_is_named() {
    let sandbox = Sandbox::new();
    sandbox.write_user_extension(
        "shots.ts",
        r#"
export default {
  tools: [
    {
      name: "shot",
      description: "Returns a picture.",
      inputSchema: { type: "object" },
      readOnly: true,
      execute: () => ({
        output: "here it is",
        content: [
          { type: "image", data: btoa("\x89PNG fake"), mimeType: "image/png" },
          { type: "resource_link", uri: "https://example.test/a.png", name: "a.png" },
        ],
        structuredContent: { width: 1, height: 1 },
      }),
    },
    {
      name: "broken",
      description: "Returns a wrong block.",
      inputSchema: { type: "object" },
      readOnly: true,
      execute: () => ({ output: "x", content: [{ type: "image", data: "not base64!", mimeType: "image/png" }] }),
    },
    {
      name: "huge",
      description: "Returns a 6 MiB image.",
      inputSchema: { type: "object" },
      readOnly: true,
      execute: () => ({ output: "big", content: [{ type: "image", data: "A".repeat(8 << 20), mimeType: "image/png" }] }),
    },
  ],
};
"#,
    );
    sandbox.user_settings(json!({}));
    let host = sandbox.host();
    let shot = host
        .call("shots__shot", "{}", &NonInteractivePrompter)
        .expect("runs");
    assert!(!shot.is_error, "{}", shot.output);
    assert_eq!(shot.content.len(), 3, "{:?}", shot.content);
    assert_eq!(shot.content[0], ContentBlock::Text("here it is".into()));
    assert_eq!(
        shot.content[1].to_mcp_json(),
        json!({"type": "image", "data": "iVBORyBmYWtl", "mimeType": "image/png"})
    );
    assert_eq!(
        shot.content[2].to_mcp_json()["uri"],
        "https://example.test/a.png"
    );
    assert_eq!(
        shot.structured_content,
        Some(json!({"width": 1, "height": 1}))
    );
    assert!(
        shot.output
            .starts_with("here it is\n[image: image/png, 9 bytes]"),
        "{}",
        shot.output
    );

    let broken = host
        .call("shots__broken", "{}", &NonInteractivePrompter)
        .expect("runs");
    assert!(broken.is_error);
    assert!(
        broken
            .output
            .contains("`content[0]` is wrong: the image block's data is not base64"),
        "{}",
        broken.output
    );

    let huge = host
        .call("shots__huge", "{}", &NonInteractivePrompter)
        .expect("runs");
    assert!(!huge.is_error);
    assert!(
        matches!(&huge.content[1], ContentBlock::Text(line) if line.contains("over the 5 MiB limit")),
        "{:?}",
        huge.content.get(1).map(|b| b.summary())
    );
}

/// Answers every ask with "once": the component tools here are not read-only.
struct AllowOnce;
crate::sync_prompter!(AllowOnce);
impl AllowOnce {
    fn answer(&self, _prompt: &earshot_host::PermissionPrompt) -> earshot_host::PromptAnswer {
        earshot_host::PromptAnswer::AllowOnce
    }
}

#[test]
fn a_component_of_contract_0_2_returns_an_image_and_structured_content_within_the_caps() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.config().join("plugins")).unwrap();
    std::fs::copy(
        crate::common::hostile_wasm(),
        sandbox.config().join("plugins/hostile.wasm"),
    )
    .unwrap();
    let host = sandbox.host();
    let picture = host
        .call("hostile__picture", "{}", &AllowOnce)
        .expect("runs");
    assert!(!picture.is_error, "{}", picture.output);
    assert_eq!(picture.content[0], ContentBlock::Text("a picture".into()));
    let ContentBlock::Image(media) = &picture.content[1] else {
        panic!("an image: {:?}", picture.content);
    };
    assert_eq!(
        media.data_base64, "iVBORw0KGgplYXJzaG90",
        "b\"\\x89PNG\\r\\n\\x1a\\nearshot\""
    );
    assert_eq!(media.size, 15);
    assert_eq!(
        picture.content[2].to_mcp_json()["uri"],
        "https://example.test/p.png"
    );
    assert_eq!(
        picture.structured_content,
        Some(json!({"width": 1, "height": 1}))
    );

    let big = host
        .call("hostile__oversize_image", "{}", &AllowOnce)
        .expect("runs");
    assert_eq!(big.content.len(), 2, "{:?}", big.output);
    assert!(
        matches!(&big.content[1], ContentBlock::Text(line) if line.contains("6291456 bytes: over the 5 MiB limit")),
        "{}",
        big.output
    );

    for (tool, expected) in [
        (
            "hostile__bad_base64",
            "content[0]: the image block's data is not base64",
        ),
        (
            "hostile__bad_structured",
            "its structured content is not a JSON object",
        ),
    ] {
        let refused = host.call(tool, "{}", &AllowOnce).expect("runs");
        assert!(refused.is_error, "{tool}");
        assert!(
            refused.output.contains(&format!(
                "{tool} returned a result earshot cannot use: {expected}"
            )),
            "{}",
            refused.output
        );
    }
    // The component answers the next call as before.
    let echo = host
        .call("hostile__echo", r#"{"a":1}"#, &AllowOnce)
        .expect("runs");
    assert_eq!(echo.output, r#"{"a":1}"#);
}
