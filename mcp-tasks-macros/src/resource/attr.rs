//! `#[resource(...)]`, parsed declaratively with darling: unknown and duplicate keys (with
//! did-you-mean suggestions) are reported on the key.

use crate::diag::Diagnostics;
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::SpannedValue;
use proc_macro2::TokenStream;

/// Everything `#[resource(...)]` accepts. Field names are the attribute keys.
#[derive(Debug, Default, FromMeta)]
pub struct ResourceAttr {
    /// `uri = "notes://{title}"`: a fixed URI, or an RFC 6570 template.
    pub uri: Option<syn::LitStr>,
    /// `name = "..."`: the resource's name (the function's name by default).
    pub name: Option<syn::LitStr>,
    /// `title = "..."`.
    pub title: Option<syn::LitStr>,
    /// `description = "..."`: overrides the doc comment.
    pub description: Option<syn::LitStr>,
    /// `mime_type = "text/markdown"`.
    pub mime_type: Option<syn::LitStr>,
    /// `size = 1024`: bytes, fixed resources only.
    pub size: Option<SpannedValue<u64>>,
    /// `list = "path::to::fn"`: a template's enumeration of its concrete resources.
    pub list: Option<SpannedValue<syn::Path>>,
    /// `scope = "notes write"`: the OAuth scopes a caller's token must grant.
    pub scope: Option<syn::LitStr>,
    /// `crate = "path"`: where the runtime is.
    #[darling(rename = "crate")]
    pub krate: Option<syn::Path>,
}

/// Parses the attribute's arguments; problems go to `diag`.
pub fn parse(args: TokenStream, diag: &mut Diagnostics) -> Option<ResourceAttr> {
    if args.is_empty() {
        return Some(ResourceAttr::default());
    }
    let items = diag.handle(NestedMeta::parse_meta_list(args).map_err(Into::into))?;
    diag.handle(ResourceAttr::from_list(&items))
}
