//! The input of `earshot tools call`: JSON given on the command line, `-` for standard input, or
//! `@FILE` for a file (as curl and `gh` take them), at most [`MAX_INPUT_BYTES`], checked to be
//! JSON before anything starts.

use std::io::Read;
use std::path::Path;

use super::{Failure, exit};

/// The largest input accepted from standard input or a file: 16 MiB, the most an MCP server
/// may send in one message.
pub(crate) const MAX_INPUT_BYTES: u64 = 16 << 20;

/// The input `argument` stands for, as JSON text: the argument itself, standard input for `-`,
/// or the contents of the file after `@`.
///
/// # Errors
/// One line naming where the input came from: unreadable, over [`MAX_INPUT_BYTES`], not UTF-8,
/// or not JSON.
pub(crate) fn read_tool_input(argument: &str) -> Result<String, Failure> {
    let (text, origin) = if argument == "-" {
        (
            read_capped(std::io::stdin().lock(), "standard input")?,
            "standard input".to_string(),
        )
    } else if let Some(path) = argument.strip_prefix('@') {
        let origin = format!("input file {path}");
        (read_file(Path::new(path), &origin)?, origin)
    } else {
        (argument.to_string(), "the input".to_string())
    };
    if let Err(error) = serde_json::from_str::<serde_json::Value>(&text) {
        return Err(Failure::new(format!("{origin} is not JSON: {error}")).code(exit::TOOL_ERROR));
    }
    Ok(text)
}

fn read_file(path: &Path, origin: &str) -> Result<String, Failure> {
    let file = std::fs::File::open(path).map_err(|error| {
        Failure::new(format!("cannot read {origin}: {}", io_reason(&error))).code(exit::USAGE)
    })?;
    read_capped(file, origin)
}

/// Reads at most [`MAX_INPUT_BYTES`] (one more tells that there was more).
fn read_capped(reader: impl Read, origin: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| {
            Failure::new(format!("cannot read {origin}: {}", io_reason(&error))).code(exit::USAGE)
        })?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Failure::new(format!(
            "{origin} is over the {} MiB a tool's input may have",
            MAX_INPUT_BYTES >> 20
        ))
        .code(exit::USAGE));
    }
    String::from_utf8(bytes).map_err(|error| {
        Failure::new(format!(
            "{origin} is not JSON: it is not UTF-8 text (byte {})",
            error.utf8_error().valid_up_to()
        ))
        .code(exit::TOOL_ERROR)
    })
}

/// An I/O error as a few words, without the OS error number.
fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "it is a directory".into(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_is_its_own_input() {
        assert_eq!(read_tool_input(r#"{"a":1}"#).unwrap(), r#"{"a":1}"#);
        let failure = read_tool_input("{nope").unwrap_err();
        assert!(
            failure.message.starts_with("the input is not JSON: "),
            "{}",
            failure.message
        );
        assert_eq!(failure.code, exit::TOOL_ERROR);
    }

    #[test]
    fn a_file_is_read_and_named_when_it_cannot_be() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input.json");
        std::fs::write(&path, r#"{"text":"hi"}"#).unwrap();
        let argument = format!("@{}", path.display());
        assert_eq!(read_tool_input(&argument).unwrap(), r#"{"text":"hi"}"#);

        let missing = format!("@{}", dir.path().join("missing.json").display());
        let failure = read_tool_input(&missing).unwrap_err();
        assert!(
            failure.message.contains("missing.json: no such file"),
            "{}",
            failure.message
        );

        std::fs::write(&path, "not json").unwrap();
        let failure = read_tool_input(&argument).unwrap_err();
        assert!(
            failure
                .message
                .starts_with(&format!("input file {} is not JSON", path.display()))
        );
    }

    #[test]
    fn more_than_the_cap_is_refused() {
        let big = vec![b' '; (MAX_INPUT_BYTES + 1) as usize];
        let failure = read_capped(&big[..], "standard input").unwrap_err();
        assert!(
            failure.message.contains("over the 16 MiB"),
            "{}",
            failure.message
        );
    }
}
