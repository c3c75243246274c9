//! Small readers and builders over wacore-binary's owned `Node`.
use std::time::{SystemTime, UNIX_EPOCH};

use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::{Node, NodeContent};

/// The server's own JID, the `from` of its IQs and replies.
pub const SERVER: &str = "s.whatsapp.net";

pub fn attr(node: &Node, key: &str) -> Option<String> {
    node.attrs.get(key).map(|v| v.as_str().into_owned())
}

pub fn bytes(node: &Node) -> Option<&[u8]> {
    match &node.content {
        Some(NodeContent::Bytes(b)) => Some(b),
        Some(NodeContent::String(s)) => Some(s.as_bytes()),
        _ => None,
    }
}

/// A node's content as text.
pub fn text(node: &Node) -> Option<String> {
    bytes(node).map(|b| String::from_utf8_lossy(b).into_owned())
}

pub fn children(node: &Node) -> &[Node] {
    node.children().unwrap_or(&[])
}

pub fn child<'n>(node: &'n Node, tag: &str) -> Option<&'n Node> {
    node.get_optional_child(tag)
}

pub fn child_bytes<'n>(node: &'n Node, tag: &str) -> Option<&'n [u8]> {
    child(node, tag).and_then(bytes)
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A node built from a dynamic tag, attributes and children.
pub fn element(tag: &str, attrs: &[(&'static str, String)], kids: Vec<Node>) -> Node {
    let mut b = NodeBuilder::new_dynamic(tag.to_string());
    for (k, v) in attrs {
        b = b.attr(k, v.clone());
    }
    if !kids.is_empty() {
        b = b.children(kids);
    }
    b.build()
}

pub fn leaf_bytes(tag: &'static str, content: impl Into<Vec<u8>>) -> Node {
    NodeBuilder::new(tag).bytes(content).build()
}

/// `<iq type="result" id from=server>children</iq>`
pub fn iq_result(id: &str, kids: Vec<Node>) -> Node {
    element(
        "iq",
        &[
            ("type", "result".into()),
            ("id", id.into()),
            ("from", SERVER.into()),
        ],
        kids,
    )
}

/// `<iq type="error" id from=server><error code text/></iq>`
pub fn iq_error(id: &str, code: u16, text: &str) -> Node {
    let error = element(
        "error",
        &[("code", code.to_string()), ("text", text.into())],
        vec![],
    );
    element(
        "iq",
        &[
            ("type", "error".into()),
            ("id", id.into()),
            ("from", SERVER.into()),
        ],
        vec![error],
    )
}

/// A stream error: `<stream:error code>` with an optional child (`conflict type`).
pub fn stream_error(code: Option<u16>, conflict: Option<&str>) -> Node {
    let mut attrs = Vec::new();
    if let Some(code) = code {
        attrs.push(("code", code.to_string()));
    }
    let kids = conflict
        .map(|t| vec![element("conflict", &[("type", t.into())], vec![])])
        .unwrap_or_default();
    element("stream:error", &attrs, kids)
}
