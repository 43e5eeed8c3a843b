//! Extensions within one session (the library, as an embedder uses it): a stuck extension is
//! marked failed and stays failed, while every other extension goes on working.

use std::path::PathBuf;

use crate::common::Sandbox;
use crate::common::TestHost;
use earshot_host::CallError;
use earshot_host::gate::{NonInteractivePrompter, PermissionPrompt, PromptAnswer};

fn host_with(sandbox: &Sandbox, files: &[&str], settings_json: &str) -> TestHost {
    let extensions = sandbox.config().join("extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    for file in files {
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/extensions")
            .join(file);
        std::fs::copy(source, extensions.join(file)).unwrap();
    }
    std::fs::write(sandbox.config().join("settings.json"), settings_json).unwrap();
    sandbox.host()
}

#[test]
fn a_stuck_extension_is_marked_failed_and_the_others_keep_working() {
    let sandbox = Sandbox::new();
    let host = host_with(
        &sandbox,
        &["stuck.ts", "jira.ts"],
        r#"{"extensions": {"callTimeoutSeconds": 1, "loopIterationLimit": 1000000}}"#,
    );
    let started = std::time::Instant::now();
    let first = host
        .call("stuck__spin", "{}", &NonInteractivePrompter)
        .unwrap_err();
    assert!(
        matches!(&first, CallError::Failed { message, .. } if message.contains("stuck in a call to spin")),
        "{first}"
    );
    // The host gave up at its deadline (1 s plus a grace period) while the thread still spins.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));

    let again = host
        .call("stuck__spin", "{}", &NonInteractivePrompter)
        .unwrap_err();
    assert!(
        matches!(&again, CallError::Failed { message, .. } if message.contains("is unavailable") && message.contains("stuck")),
        "{again}"
    );
    let output = host
        .call("jira__ticket", r#"{"key":"OK-1"}"#, &NonInteractivePrompter)
        .expect("the other extension still answers");
    assert_eq!(output.output, "ticket OK-1");
}

#[test]
fn an_extension_keeps_its_state_between_calls_in_a_session() {
    let sandbox = Sandbox::new();
    let host = host_with(
        &sandbox,
        &["writer.ts"],
        r#"{"permissions": {"allow": ["Extension(writer__note)"]}}"#,
    );
    for expected in ["1 notes", "2 notes", "3 notes"] {
        let output = host
            .call("writer__note", r#"{"text":"x"}"#, &NonInteractivePrompter)
            .unwrap();
        assert_eq!(output.output, expected);
        assert_eq!(output.title.as_deref(), Some("Noted"));
    }
}

#[test]
fn a_trusted_extension_runs_the_files_that_were_trusted_even_if_one_changes_while_it_loads() {
    let sandbox = Sandbox::new();
    sandbox.write(
        ".earshot/extensions/slow.ts",
        "await new Promise((resolve) => setTimeout(resolve, 3000));\n\
         const { word } = await import('./lib/word.ts');\n\
         export default { tools: [{ name: 'say', description: 'x', inputSchema: {}, readOnly: true, execute: () => word }] };\n",
    );
    sandbox.write(
        ".earshot/extensions/lib/word.ts",
        "export const word: string = 'trusted';\n",
    );
    let (code, _, err) = sandbox.run(&["extensions", "trust", "slow"]);
    assert_eq!(code, 0, "{err}");
    let project = sandbox.project();
    // The helper is swapped while the extension's top level waits, before it imports the helper.
    let changer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(800));
        std::fs::write(
            project.join(".earshot/extensions/lib/word.ts"),
            "export const word: string = 'swapped';\n",
        )
        .unwrap();
    });
    let host = host_with(&sandbox, &[], "{}");
    changer.join().unwrap();
    let output = host
        .call("slow__say", "{}", &NonInteractivePrompter)
        .expect("loads from what was trusted");
    assert_eq!(output.output, "trusted");
    // The next session sees the change, and the trust has lapsed.
    let again = host_with(&sandbox, &[], "{}");
    assert!(again.registry().find("slow__say").is_none());
}

/// Records what each prompt showed and answers "once".
#[derive(Default)]
struct RecordingPrompter(std::sync::Mutex<Vec<(String, String, String, String)>>);

crate::sync_prompter!(RecordingPrompter);
impl RecordingPrompter {
    fn answer(&self, prompt: &PermissionPrompt) -> PromptAnswer {
        self.0.lock().unwrap().push((
            prompt.rule_name().to_string(),
            prompt.target().to_string(),
            prompt.title().to_string(),
            prompt.detail().to_string(),
        ));
        PromptAnswer::AllowOnce
    }
}

#[test]
fn an_extension_writes_the_prompts_title_and_detail_but_not_its_rule_or_target() {
    let sandbox = Sandbox::new();
    let host = host_with(&sandbox, &["writer.ts", "jira.ts"], "{}");
    let prompter = RecordingPrompter::default();
    let output = host
        .call("writer__note", r#"{"text":"buy milk"}"#, &prompter)
        .expect("allowed once");
    assert_eq!(output.output, "1 notes");
    assert_eq!(
        prompter.0.lock().unwrap().as_slice(),
        [(
            "Extension(writer__note)".to_string(),
            "writer__note".to_string(),
            "Remember a note".to_string(),
            "note: buy milk".to_string(),
        )]
    );
    // A read-only tool is not asked about at all.
    host.call("jira__ticket", r#"{"key":"A-1"}"#, &prompter)
        .expect("runs");
    assert_eq!(prompter.0.lock().unwrap().len(), 1);
}

/// A direct caller of `ExtensionWorker::call` (dispatch validates first, a direct caller need
/// not) that hands in text that is not JSON gets a typed invalid input naming the tool, and the
/// extension answers the next call as before.
#[test]
fn a_direct_caller_handing_in_text_that_is_not_json_gets_invalid_input_and_the_worker_goes_on() {
    use earshot_host::extensions::{AdmittedFiles, ExtensionLimits, ExtensionWorker};
    let sandbox = Sandbox::new();
    sandbox.write_user_extension(
        "mirror.ts",
        "export default { tools: [{ name: 'echo', description: 'Echoes its input', \
         inputSchema: { type: 'object' }, readOnly: true, \
         execute(input: { text: string }): string { return input.text; } }] };\n",
    );
    let file = sandbox.config().join("extensions/mirror.ts");
    let snapshot = earshot_host::sources::extension_snapshot(&file).expect("snapshot");
    let (worker, loaded) = ExtensionWorker::spawn(
        "mirror",
        file,
        AdmittedFiles {
            files: snapshot.files,
            stripped: Default::default(),
        },
        ExtensionLimits::default(),
    )
    .wait(std::time::Instant::now());
    assert_eq!(loaded.expect("mirror loads").len(), 1);
    let runtime = crate::common::runtime();
    match runtime.block_on(worker.call("echo", "{\"text\": oops}")) {
        Err(CallError::InvalidInput { tool, issues }) => {
            assert_eq!(tool, "mirror__echo");
            assert!(
                issues.len() == 1 && issues[0].starts_with("it is not JSON: "),
                "{issues:?}"
            );
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    let output = runtime
        .block_on(worker.call("echo", r#"{"text":"still here"}"#))
        .expect("the next call works");
    assert_eq!(output.output, "still here");
}
