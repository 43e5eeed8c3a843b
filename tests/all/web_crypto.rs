//! `crypto.subtle` beyond digest (issue 34): fixtures/web/subtle_cases.js runs in an extension and
//! in Node 22, and every case (RFC vectors, exports, round trips, each error's name) must answer
//! the same; Ed25519 and ECDSA keys generated on one side, and RSA-PSS signatures made on one
//! side, verify on the other.

use std::path::PathBuf;

use crate::common::{Sandbox, host_with_json_tool, node_json, node22};
use earshot_host::gate::NonInteractivePrompter;

fn cases_source() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/web/subtle_cases.js");
    std::fs::read_to_string(path).unwrap()
}

/// The cases as an extension runs them, given `input`.
fn in_extension(input: &serde_json::Value) -> serde_json::Value {
    let sandbox = Sandbox::new();
    let host = host_with_json_tool(&sandbox, "web", &cases_source(), "subtleCases(input)");
    let output = host
        .call("web__run", &input.to_string(), &NonInteractivePrompter)
        .expect("the cases run");
    serde_json::from_str(&output.output).expect("the tool returns JSON")
}

fn case<'a>(result: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    result["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|case| case[0] == name)
        .map(|case| &case[1])
        .unwrap_or_else(|| panic!("no case {name}"))
}

#[test]
fn subtle_crypto_answers_as_node_22_and_the_rfc_vectors() {
    let earshot = in_extension(&serde_json::json!({}));
    // Known vectors, checked on our side whatever Node says.
    let expect = [
        (
            "hmac rfc4231 #0 SHA-256",
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
        ),
        (
            "hmac rfc4231 #1 SHA-512",
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
        ),
        (
            "pbkdf2 SHA-1 \"password\" 4096 20",
            "4b007901b765489abead49d926f721d065a429c1",
        ),
        (
            "pbkdf2 SHA-1 \"pass\\u0000word\" 4096 16",
            "56fa6aa75548099dcc37d7f03425e0c3",
        ),
        (
            "hkdf rfc5869 #0 SHA-256",
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
        ),
        (
            "hkdf rfc5869 #2 SHA-256",
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
        ),
        (
            "aes-gcm nist test case 2",
            "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf",
        ),
    ];
    for (name, hex) in expect {
        let got = case(&earshot, name);
        let got = got.as_str().or_else(|| got[0].as_str()).unwrap_or_default();
        assert_eq!(got, hex, "{name}");
    }
    assert!(
        case(&earshot, "aes-gcm nist test case 4")[0]
            .as_str()
            .unwrap()
            .ends_with("5bc94fbc3221a5db94fae95ae7121a47"),
        "GCM test case 4's tag"
    );
    assert_eq!(
        case(&earshot, "ed25519 rfc8032 #1")[0],
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
    );
    // Each error by the name WebCrypto gives it.
    for (name, error) in [
        ("unknown algorithm", "NotSupportedError"),
        ("no algorithm name", "TypeError"),
        ("usage the algorithm lacks", "SyntaxError"),
        ("empty usages secret key", "SyntaxError"),
        ("bad aes key length", "DataError"),
        ("jwk wrong kty", "DataError"),
        ("wrong usage", "InvalidAccessError"),
        ("spki export of a secret key", "NotSupportedError"),
        ("gcm tag failure", "OperationError"),
        ("data not a buffer", "TypeError"),
        ("ecdsa unknown curve", "NotSupportedError"),
        ("ecdsa point on another curve", "DataError"),
        ("ecdsa spki of another curve", "DataError"),
        ("ecdsa jwk d of another key", "DataError"),
        ("ecdsa sign with the public key", "InvalidAccessError"),
        ("ecdsa pkcs8 export of a public key", "NotSupportedError"),
        ("rsa raw import", "NotSupportedError"),
        ("rsa jwk wrong alg", "DataError"),
        ("rsa pss salt too long", "OperationError"),
        (
            "rsa key used as the other rsa algorithm",
            "InvalidAccessError",
        ),
    ] {
        assert_eq!(
            case(&earshot, &format!("error: {name}"))[0],
            error,
            "{name}"
        );
    }
    // Signatures Node made with the fixed keys verify here, and a tampered message does not.
    for curve in ["P-256", "P-384"] {
        let fixed = case(&earshot, &format!("ecdsa {curve} fixed key"));
        assert_eq!(
            (&fixed[7], &fixed[8], &fixed[9], &fixed[10]),
            (&true.into(), &false.into(), &false.into(), &true.into()),
            "{curve}: {fixed}"
        );
    }
    let pss = case(&earshot, "rsa-pss fixed key");
    assert_eq!(
        (&pss[2], &pss[3], &pss[4]),
        (&true.into(), &true.into(), &false.into()),
        "{pss}"
    );
    let pkcs1 = case(&earshot, "rsassa-pkcs1-v1_5 fixed key SHA-256");
    assert_eq!(
        (&pkcs1[1], &pkcs1[2], &pkcs1[3]),
        (&true.into(), &false.into(), &false.into())
    );
    assert_eq!(earshot["exportError"], "InvalidAccessError");
    assert_eq!(earshot["cryptoKeyThrows"], true);

    let Some(node) = node22() else { return };
    let sandbox = Sandbox::new();
    let run_node = |input: &serde_json::Value| {
        node_json(
            &node,
            sandbox.dir.path(),
            &format!(
                "{}\nprocess.stdout.write(JSON.stringify(await subtleCases({input})));\n",
                cases_source()
            ),
        )
    };
    // Each side verifies the other's freshly generated Ed25519 signature.
    let theirs = run_node(&serde_json::json!({ "peer": earshot["peer"] }));
    let ours = in_extension(&serde_json::json!({ "peer": theirs["peer"] }));
    assert_eq!(case(&theirs, "ed25519 verifies the peer's signature"), true);
    assert_eq!(case(&ours, "ed25519 verifies the peer's signature"), true);
    let all_verify = serde_json::json!([true, true, true]);
    for side in [&theirs, &ours] {
        assert_eq!(
            case(side, "ecdsa and rsa-pss verify the peer's signatures"),
            &all_verify
        );
    }
    let (ours, theirs) = (
        ours["cases"].as_array().unwrap(),
        theirs["cases"].as_array().unwrap(),
    );
    assert!(theirs.len() >= 120, "{} cases", theirs.len());
    assert_eq!(ours.len(), theirs.len(), "the same cases ran");
    let differing: Vec<String> = ours
        .iter()
        .zip(theirs)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("{}\n    earshot {}\n    node    {}", a[0], a[1], b[1]))
        .collect();
    eprintln!(
        "{} of {} SubtleCrypto cases answer as Node 22",
        ours.len() - differing.len(),
        ours.len()
    );
    assert!(
        differing.is_empty(),
        "{} cases differ from Node 22:\n{}",
        differing.len(),
        differing.join("\n")
    );
}

/// Node 22 imports an RSA JWK whose `dp`, `dq` or `qi` is not the key's own (and would sign with
/// the inconsistent key); earshot refuses it as a `DataError`, naming the member.
#[test]
fn an_rsa_jwk_whose_crt_members_disagree_with_its_primes_is_refused() {
    let sandbox = Sandbox::new();
    let prelude = "async function crt() {\n\
        const s = crypto.subtle;\n\
        const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };\n\
        const pair = await s.generateKey({ ...algorithm, modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['sign', 'verify']);\n\
        const jwk = await s.exportKey('jwk', pair.privateKey);\n\
        const outcome = (j) => s.importKey('jwk', j, algorithm, true, ['sign']).then(() => 'imported', (e) => `${e.name}: ${e.message}`);\n\
        return [await outcome(jwk), await outcome({ ...jwk, dp: jwk.dq }), await outcome({ ...jwk, qi: jwk.dp })];\n\
      }";
    let host = host_with_json_tool(&sandbox, "crt", prelude, "crt()");
    let output = host
        .call("crt__run", "{}", &NonInteractivePrompter)
        .expect("the tool runs");
    let results: serde_json::Value = serde_json::from_str(&output.output).unwrap();
    assert_eq!(
        results,
        serde_json::json!([
            "imported",
            "DataError: Invalid JWK \"dp\": not the key's own",
            "DataError: Invalid JWK \"qi\": not the key's own"
        ])
    );
}
