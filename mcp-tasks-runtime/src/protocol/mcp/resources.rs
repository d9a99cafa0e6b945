//! Resources as a client reads their listing: `resources/templates/list` (the entries of
//! `resources/list` are [`ListedResource`](crate::resource::ListedResource), which a template's
//! `list` function also returns).

use serde_json::{Map, Value};

/// A resource template as `resources/templates/list` shows it: a family of resources whose URIs
/// fill in an RFC 6570 template.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedResourceTemplate {
    /// The URI template, e.g. `notes://{title}`.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What its resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of its resources, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The other keys, as sent (`annotations`, `icons`, `_meta`, ...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}
