//! The `ToolProvider` trait: the whole `tool-provider` world in one trait and one macro.

use crate::Value;
use crate::bindings::tool_provider::earshot::plugin::log::{Level, log as host_log};
use crate::bindings::tool_provider::earshot::plugin::types::{
    ContentBlock, EmbeddedResource, Media, ResourceContents, ResourceLink, ToolOutput, ToolSpec,
};

/// A tool a component contributes: its name, what it does, its input schema, and whether it
/// only reads.
#[derive(Debug, Clone)]
pub struct Tool {
    name: String,
    description: String,
    input_schema: Value,
    read_only: bool,
}

impl Tool {
    /// A tool that takes any JSON object and is not read-only; refine it with the builder methods.
    ///
    /// `name` must be non-empty `[A-Za-z0-9_-]`, without `__`, not starting or ending with `_`;
    /// the host rejects anything else at load.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Tool {
            name: name.into(),
            description: description.into(),
            input_schema: serde_json::json!({ "type": "object" }),
            read_only: false,
        }
    }

    /// Sets the JSON Schema of the tool's input (draft 2020-12 unless `$schema` says otherwise).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Marks the tool as read-only, so the host runs it without asking the user.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }
}

/// What a tool call returns to the model.
#[derive(Debug, Clone)]
pub struct Output {
    /// The text the model sees.
    pub output: String,
    /// True when the call failed.
    pub is_error: bool,
    /// A short title the host may show the user.
    pub title: Option<String>,
    /// Blocks that follow `output` (images, audio, resource links, embedded resources, more
    /// text). The host caps binary parts at 5 MiB each and 10 MiB a result. (Contract 0.2.0.)
    pub content: Vec<ContentBlock>,
    /// A JSON object for clients that read results as data (MCP's `structuredContent`).
    /// (Contract 0.2.0.)
    pub structured: Option<Value>,
}

impl Output {
    /// A successful result.
    pub fn text(output: impl Into<String>) -> Self {
        Output {
            output: output.into(),
            is_error: false,
            title: None,
            content: Vec::new(),
            structured: None,
        }
    }

    /// A failed result; `message` tells the model what went wrong.
    pub fn error(message: impl Into<String>) -> Self {
        Output {
            output: message.into(),
            is_error: true,
            title: None,
            content: Vec::new(),
            structured: None,
        }
    }

    /// Adds a title for the user's display.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an image (`mime_type` such as `image/png`) after the text.
    pub fn image(self, mime_type: impl Into<String>, bytes: &[u8]) -> Self {
        let media = media(mime_type, bytes);
        self.block(ContentBlock::Image(media))
    }

    /// Adds an audio clip (`mime_type` such as `audio/wav`) after the text.
    pub fn audio(self, mime_type: impl Into<String>, bytes: &[u8]) -> Self {
        let media = media(mime_type, bytes);
        self.block(ContentBlock::Audio(media))
    }

    /// Adds a link to a resource the client may fetch itself.
    pub fn resource_link(self, uri: impl Into<String>, name: impl Into<String>) -> Self {
        self.block(ContentBlock::ResourceLink(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
        }))
    }

    /// Adds a resource whose text travels in the result.
    pub fn resource_text(
        self,
        uri: impl Into<String>,
        mime_type: Option<String>,
        text: impl Into<String>,
    ) -> Self {
        self.block(ContentBlock::Resource(EmbeddedResource {
            uri: uri.into(),
            mime_type,
            contents: ResourceContents::Text(text.into()),
        }))
    }

    /// Adds any content block, as the contract defines it.
    pub fn block(mut self, block: ContentBlock) -> Self {
        self.content.push(block);
        self
    }

    /// Sets the structured result: a JSON object (anything else makes the call an error).
    pub fn structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }
}

fn media(mime_type: impl Into<String>, bytes: &[u8]) -> Media {
    use base64::Engine as _;
    Media {
        mime_type: mime_type.into(),
        data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

/// Implement this for a type and pass it to [`export_tool_provider!`](crate::export_tool_provider)
/// to make a tool component. Both methods have defaults, so a component overrides only what it has.
pub trait ToolProvider {
    /// The tools this component contributes. Called once, after loading.
    fn tools() -> Vec<Tool> {
        Vec::new()
    }

    /// Runs the tool `name` with `input`, which the host has already validated against the tool's
    /// input schema. `Err(message)` becomes an error result carrying `message`.
    fn call(name: &str, input: Value) -> Result<Output, String> {
        let _ = input;
        Err(format!(
            "tool \"{name}\" is not implemented by this component"
        ))
    }
}

/// Writes to the host's log (shown with `earshot -v`), never to the user's terminal.
pub mod log {
    use super::{Level, host_log};

    /// Logs at debug level.
    pub fn debug(message: &str) {
        host_log(Level::Debug, message);
    }
    /// Logs at info level.
    pub fn info(message: &str) {
        host_log(Level::Info, message);
    }
    /// Logs at warn level.
    pub fn warn(message: &str) {
        host_log(Level::Warn, message);
    }
    /// Logs at error level.
    pub fn error(message: &str) {
        host_log(Level::Error, message);
    }
}

#[doc(hidden)]
pub fn list_tools<P: ToolProvider>() -> Vec<ToolSpec> {
    P::tools()
        .into_iter()
        .map(|tool| ToolSpec {
            name: tool.name,
            description: tool.description,
            input_schema: tool.input_schema.to_string(),
            read_only: tool.read_only,
        })
        .collect()
}

#[doc(hidden)]
pub fn call_tool<P: ToolProvider>(name: &str, input_json: &str) -> ToolOutput {
    let result = match serde_json::from_str::<Value>(input_json) {
        Ok(input) => P::call(name, input),
        Err(error) => Err(format!("input is not JSON: {error}")),
    };
    let output = result.unwrap_or_else(Output::error);
    ToolOutput {
        output: output.output,
        is_error: output.is_error,
        title: output.title,
        content: output.content,
        structured_content: output.structured.map(|value| value.to_string()),
    }
}

/// Exports a [`ToolProvider`] implementation as the component's `tool-provider` world.
///
/// Use it once per component, at the crate root: `earshot_guest_sdk::export_tool_provider!(MyTools);`
#[macro_export]
macro_rules! export_tool_provider {
    ($provider:ty) => {
        #[doc(hidden)]
        struct __EarshotToolProviderExport;

        impl $crate::bindings::tool_provider::exports::earshot::plugin::tools::Guest
            for __EarshotToolProviderExport
        {
            fn list_tools()
            -> ::std::vec::Vec<$crate::bindings::tool_provider::earshot::plugin::types::ToolSpec>
            {
                $crate::__private::list_tools::<$provider>()
            }

            fn call_tool(
                name: ::std::string::String,
                input_json: ::std::string::String,
            ) -> $crate::bindings::tool_provider::earshot::plugin::types::ToolOutput {
                $crate::__private::call_tool::<$provider>(&name, &input_json)
            }
        }

        $crate::bindings::tool_provider::__export_tool_provider_world!(__EarshotToolProviderExport);
    };
}
