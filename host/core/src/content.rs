//! What a tool result holds besides its text: images, audio, resource links, embedded resources
//! and structured content, as MCP defines content blocks, with the caps every source shares.
//!
//! MCP results are checked inside the mcp-output sandbox; blocks from components and extensions
//! are checked here by the same rules ([`ContentLimits`]), so a client behind `mcp serve`, ACP or
//! the embedding API gets the same shape whatever kind of tool produced it.

use serde_json::{Map, Value, json};

/// One block of a tool's result, as MCP defines content blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text for the model (control characters removed).
    Text(String),
    /// An image: a screenshot, a chart.
    Image(Media),
    /// An audio clip.
    Audio(Media),
    /// A link to a resource the client may fetch itself.
    ResourceLink(ResourceLink),
    /// A resource whose contents travel in the result.
    Resource(EmbeddedResource),
}

/// The bytes of an image or an audio clip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    /// The declared MIME type (`image/png`); empty when the tool declared none.
    pub mime_type: String,
    /// The bytes, base64-encoded exactly as the tool sent them (checked to be base64).
    pub data_base64: String,
    /// The decoded size in bytes.
    pub size: u64,
}

/// A link to a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// A short name.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What the resource is.
    pub description: Option<String>,
    /// The resource's MIME type, when known.
    pub mime_type: Option<String>,
}

/// A resource carried in the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// The contents' MIME type, when known.
    pub mime_type: Option<String>,
    /// The contents.
    pub contents: ResourceContents,
}

/// What an embedded resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Binary contents, base64-encoded.
    Blob {
        /// The bytes, base64-encoded as sent.
        data_base64: String,
        /// The decoded size in bytes.
        size: u64,
    },
}

/// The caps on the binary parts of one result, the same for every kind of tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentLimits {
    /// The most decoded bytes of one image, audio clip or blob; a larger one is replaced by a
    /// text block saying what was left out.
    pub max_attachment_bytes: u64,
    /// The most decoded bytes of all of one result's binary parts together; the parts past it
    /// are replaced the same way.
    pub max_total_attachment_bytes: u64,
}

impl Default for ContentLimits {
    /// 5 MiB a part (the largest image the common model APIs accept) and 10 MiB a result.
    fn default() -> Self {
        ContentLimits {
            max_attachment_bytes: 5 << 20,
            max_total_attachment_bytes: 10 << 20,
        }
    }
}

impl ContentBlock {
    /// The block with every text a model or a client may read passed through `rewrite`: its
    /// text, a resource's URI and text, a link's URI, name, title, description and MIME type.
    /// Binary data (base64) is left as it is.
    pub fn map_text(self, rewrite: &dyn Fn(&str) -> String) -> ContentBlock {
        let some = |text: Option<String>| text.map(|text| rewrite(&text));
        match self {
            ContentBlock::Text(text) => ContentBlock::Text(rewrite(&text)),
            ContentBlock::Image(media) => ContentBlock::Image(Media {
                mime_type: rewrite(&media.mime_type),
                ..media
            }),
            ContentBlock::Audio(media) => ContentBlock::Audio(Media {
                mime_type: rewrite(&media.mime_type),
                ..media
            }),
            ContentBlock::ResourceLink(link) => ContentBlock::ResourceLink(ResourceLink {
                uri: rewrite(&link.uri),
                name: rewrite(&link.name),
                title: some(link.title),
                description: some(link.description),
                mime_type: some(link.mime_type),
            }),
            ContentBlock::Resource(resource) => ContentBlock::Resource(EmbeddedResource {
                uri: rewrite(&resource.uri),
                mime_type: some(resource.mime_type),
                contents: match resource.contents {
                    ResourceContents::Text(text) => ResourceContents::Text(rewrite(&text)),
                    blob => blob,
                },
            }),
        }
    }

    /// The block as an MCP content block (`{"type": "image", "data": …, "mimeType": …}`), what
    /// `mcp serve` sends its client and `--json` prints.
    pub fn to_mcp_json(&self) -> Value {
        match self {
            ContentBlock::Text(text) => json!({ "type": "text", "text": text }),
            ContentBlock::Image(media) => media_json("image", media),
            ContentBlock::Audio(media) => media_json("audio", media),
            ContentBlock::ResourceLink(link) => {
                let mut block = Map::new();
                block.insert("type".into(), "resource_link".into());
                block.insert("uri".into(), link.uri.clone().into());
                block.insert("name".into(), link.name.clone().into());
                insert_some(&mut block, "title", &link.title);
                insert_some(&mut block, "description", &link.description);
                insert_some(&mut block, "mimeType", &link.mime_type);
                Value::Object(block)
            }
            ContentBlock::Resource(resource) => {
                let mut contents = Map::new();
                contents.insert("uri".into(), resource.uri.clone().into());
                insert_some(&mut contents, "mimeType", &resource.mime_type);
                match &resource.contents {
                    ResourceContents::Text(text) => {
                        contents.insert("text".into(), text.clone().into());
                    }
                    ResourceContents::Blob { data_base64, .. } => {
                        contents.insert("blob".into(), data_base64.clone().into());
                    }
                }
                json!({ "type": "resource", "resource": contents })
            }
        }
    }

    /// The decoded size of the block's binary data (0 for text and links).
    pub fn binary_size(&self) -> u64 {
        match self {
            ContentBlock::Image(media) | ContentBlock::Audio(media) => media.size,
            ContentBlock::Resource(EmbeddedResource {
                contents: ResourceContents::Blob { size, .. },
                ..
            }) => *size,
            _ => 0,
        }
    }

    /// The one line a text-only reader sees in place of the block (`[image: image/png, 4033
    /// bytes]`), the same line the mcp-output sandbox writes into `output`; `None` for text.
    pub fn summary(&self) -> Option<String> {
        let shown = |mime: &str| {
            if mime.is_empty() {
                "no MIME type".to_string()
            } else {
                mime.to_string()
            }
        };
        match self {
            ContentBlock::Text(_) => None,
            ContentBlock::Image(media) => Some(format!(
                "[image: {}, {} bytes]",
                shown(&media.mime_type),
                media.size
            )),
            ContentBlock::Audio(media) => Some(format!(
                "[audio: {}, {} bytes]",
                shown(&media.mime_type),
                media.size
            )),
            ContentBlock::ResourceLink(link) => Some(format!(
                "[resource link: {} <{}>]",
                link.title.as_deref().unwrap_or(&link.name),
                link.uri
            )),
            ContentBlock::Resource(resource) => match &resource.contents {
                ResourceContents::Text(text) => {
                    Some(format!("[resource {}]\n{text}", resource.uri))
                }
                ResourceContents::Blob { size, .. } => Some(format!(
                    "[resource {}: {}, {size} bytes]",
                    resource.uri,
                    shown(resource.mime_type.as_deref().unwrap_or(""))
                )),
            },
        }
    }
}

fn media_json(kind: &str, media: &Media) -> Value {
    json!({ "type": kind, "data": media.data_base64, "mimeType": media.mime_type })
}

fn insert_some(object: &mut Map<String, Value>, key: &str, value: &Option<String>) {
    if let Some(value) = value {
        object.insert(key.into(), value.clone().into());
    }
}

impl serde::Serialize for ContentBlock {
    /// Serialised as the MCP content block it is.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_mcp_json().serialize(serializer)
    }
}

impl ContentBlock {
    /// Reads one MCP-shaped content block (`{"type": "image", "data": …, "mimeType": …}`), as an
    /// extension returns it in `content`. Binary data must be base64; the error says what is
    /// wrong with the block, for the author.
    pub fn from_mcp_json(block: &Value) -> Result<ContentBlock, String> {
        let Value::Object(block) = block else {
            return Err("a content block must be an object".into());
        };
        let text = |object: &Map<String, Value>, key: &str| {
            object.get(key).and_then(Value::as_str).map(str::to_string)
        };
        let required = |object: &Map<String, Value>, key: &str, kind: &str| {
            text(object, key).ok_or_else(|| format!("a {kind} block needs a \"{key}\" string"))
        };
        let base64 = |data: String, kind: &str| match base64_decoded_len(&data) {
            Some(size) => Ok((data, size)),
            None => Err(format!("the {kind} block's data is not base64 (use btoa)")),
        };
        let kind = text(block, "type").unwrap_or_default();
        match kind.as_str() {
            "text" => Ok(ContentBlock::Text(required(block, "text", "text")?)),
            "image" | "audio" => {
                let (data_base64, size) = base64(required(block, "data", &kind)?, &kind)?;
                let media = Media {
                    mime_type: required(block, "mimeType", &kind)?,
                    data_base64,
                    size,
                };
                Ok(if kind == "image" {
                    ContentBlock::Image(media)
                } else {
                    ContentBlock::Audio(media)
                })
            }
            "resource_link" => {
                let uri = required(block, "uri", "resource_link")?;
                Ok(ContentBlock::ResourceLink(ResourceLink {
                    name: text(block, "name").unwrap_or_else(|| uri.clone()),
                    uri,
                    title: text(block, "title"),
                    description: text(block, "description"),
                    mime_type: text(block, "mimeType"),
                }))
            }
            "resource" => {
                let Some(Value::Object(resource)) = block.get("resource") else {
                    return Err("a resource block needs a \"resource\" object".into());
                };
                let uri = required(resource, "uri", "resource")?;
                let contents = match (text(resource, "text"), text(resource, "blob")) {
                    (Some(text), None) => ResourceContents::Text(text),
                    (None, Some(blob)) => {
                        let (data_base64, size) = base64(blob, "resource")?;
                        ResourceContents::Blob { data_base64, size }
                    }
                    _ => {
                        return Err(
                            "a resource block's resource needs either \"text\" or \"blob\"".into(),
                        );
                    }
                };
                Ok(ContentBlock::Resource(EmbeddedResource {
                    uri,
                    mime_type: text(resource, "mimeType"),
                    contents,
                }))
            }
            "" => Err("a content block needs a \"type\"".into()),
            other => Err(format!(
                "\"{}\" is not a content type (text, image, audio, resource_link, resource)",
                other.chars().take(40).collect::<String>()
            )),
        }
    }
}

/// The decoded length of standard base64 (whitespace ignored), or `None` when it is not base64.
pub fn base64_decoded_len(data: &str) -> Option<u64> {
    let mut symbols = 0u64;
    let mut padding = 0u64;
    for byte in data.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' if padding == 0 => symbols += 1,
            b'=' => padding += 1,
            b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => return None,
        }
    }
    let total = symbols + padding;
    if !total.is_multiple_of(4) || padding > 2 {
        return None;
    }
    Some(total / 4 * 3 - padding)
}

/// The line that replaces a binary part over a cap.
pub fn over_cap_line(kind: &str, mime: &str, size: u64, cap: u64, whole: bool) -> String {
    let mime = if mime.is_empty() {
        "no MIME type"
    } else {
        mime
    };
    let cap = if cap > 0 && cap.is_multiple_of(1 << 20) {
        format!("{} MiB", cap >> 20)
    } else {
        format!("{cap}-byte")
    };
    let limit = if whole {
        format!("the {cap} limit for all of one result's images, audio and blobs")
    } else {
        format!("the {cap} limit for one image, audio clip or blob")
    };
    format!("[{kind}: {mime}, {size} bytes: over {limit}; left out]")
}

/// Applies [`ContentLimits`] to blocks a component or an extension returned, in order: text is
/// cleaned of control characters, binary data must be base64, and a part over a cap becomes the
/// text line saying so.
pub fn admit_blocks(blocks: Vec<ContentBlock>, limits: ContentLimits) -> Vec<ContentBlock> {
    let mut total = 0u64;
    let mut kept = Vec::with_capacity(blocks.len());
    for block in blocks {
        let (kind, mime) = match &block {
            ContentBlock::Text(text) => {
                kept.push(ContentBlock::Text(earshot_terminal_text::strip_controls(
                    text,
                )));
                continue;
            }
            ContentBlock::Image(media) => ("image", media.mime_type.clone()),
            ContentBlock::Audio(media) => ("audio", media.mime_type.clone()),
            ContentBlock::ResourceLink(_) => {
                kept.push(block);
                continue;
            }
            ContentBlock::Resource(resource) => match &resource.contents {
                ResourceContents::Text(text) => {
                    let mut resource = resource.clone();
                    resource.contents =
                        ResourceContents::Text(earshot_terminal_text::strip_controls(text));
                    kept.push(ContentBlock::Resource(resource));
                    continue;
                }
                ResourceContents::Blob { .. } => {
                    ("resource", resource.mime_type.clone().unwrap_or_default())
                }
            },
        };
        let size = block.binary_size();
        if size > limits.max_attachment_bytes {
            kept.push(ContentBlock::Text(over_cap_line(
                kind,
                &mime,
                size,
                limits.max_attachment_bytes,
                false,
            )));
        } else if total + size > limits.max_total_attachment_bytes {
            kept.push(ContentBlock::Text(over_cap_line(
                kind,
                &mime,
                size,
                limits.max_total_attachment_bytes,
                true,
            )));
        } else {
            total += size;
            kept.push(block);
        }
    }
    kept
}

/// Every string in `value` (object keys included) passed through `rewrite`, at any depth: the
/// walk keeps its own stack, so a deeply nested value costs no thread stack.
pub fn map_strings(value: &mut Value, rewrite: &dyn Fn(&str) -> String) {
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => {
                let rewritten = rewrite(text);
                if rewritten != *text {
                    *text = rewritten;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(object) => {
                if object.keys().any(|key| rewrite(key) != *key) {
                    let old = std::mem::take(object);
                    *object = old
                        .into_iter()
                        .map(|(key, value)| (rewrite(&key), value))
                        .collect();
                }
                stack.extend(object.values_mut());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(size_bytes: usize) -> ContentBlock {
        let data = "A".repeat(size_bytes.div_ceil(3) * 4);
        let size = base64_decoded_len(&data).unwrap();
        ContentBlock::Image(Media {
            mime_type: "image/png".into(),
            data_base64: data,
            size,
        })
    }

    #[test]
    fn a_part_over_its_cap_is_replaced_by_a_line_saying_so() {
        let limits = ContentLimits {
            max_attachment_bytes: 30,
            max_total_attachment_bytes: 45,
        };
        let kept = admit_blocks(vec![image(60), image(24), image(24)], limits);
        assert!(
            matches!(&kept[0], ContentBlock::Text(t) if t.contains("60 bytes: over the 30-byte limit for one"))
        );
        assert!(matches!(&kept[1], ContentBlock::Image(_)));
        assert!(matches!(&kept[2], ContentBlock::Text(t) if t.contains("for all of one result")));
    }

    #[test]
    fn blocks_serialise_as_mcp_content_blocks() {
        let block = image(3);
        assert_eq!(
            serde_json::to_value(&block).unwrap(),
            json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" })
        );
        assert_eq!(base64_decoded_len("AAA="), Some(2));
        assert_eq!(base64_decoded_len("AA*A"), None);
    }
}
