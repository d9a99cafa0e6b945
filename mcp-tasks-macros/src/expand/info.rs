//! The `ToolInfo` constant: plain data.

use crate::model::{Annotations, TaskSupport, Ui};
use crate::paths::Rt;
use proc_macro2::{Literal, TokenStream};
use quote::{ToTokens, format_ident, quote};

/// `__mcp_tasks::ToolInfo { .. }`.
#[derive(Debug)]
pub struct Info<'a> {
    pub name: &'a str,
    pub title: Option<&'a str>,
    pub description: Option<&'a str>,
    pub task_support: TaskSupport,
    pub ttl_ms: Option<u64>,
    pub poll_interval_ms: Option<u64>,
    pub annotations: Annotations,
    pub defer_task: bool,
    pub durable: bool,
    pub promote_after_ms: Option<u64>,
    pub ui: Option<&'a Ui>,
    pub scopes: &'a [String],
}

impl ToTokens for Info<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let name = self.name;
        let title = Opt(self.title);
        let description = Opt(self.description);
        let task_support = format_ident!("{}", self.task_support.variant());
        let ttl = Opt(self.ttl_ms.map(Millis));
        let poll_interval = Opt(self.poll_interval_ms.map(Millis));
        let defer_task = self.defer_task;
        let durable = self.durable;
        let promote_after = Opt(self.promote_after_ms.map(Millis));
        let ui = Opt(self.ui.map(UiTokens));
        let scopes = self.scopes;
        let a = &self.annotations;
        let (read_only, destructive) = (Opt(a.read_only), Opt(a.destructive));
        let (idempotent, open_world) = (Opt(a.idempotent), Opt(a.open_world));
        tokens.extend(quote! {
            #Rt::ToolInfo {
                name: #name,
                title: #title,
                description: #description,
                task_support: #Rt::TaskSupport::#task_support,
                ttl: #ttl,
                poll_interval: #poll_interval,
                defer_task: #defer_task,
                durable: #durable,
                promote_after: #promote_after,
                ui: #ui,
                scopes: &[#(#scopes),*],
                annotations: #Rt::ToolAnnotations {
                    title: #title,
                    read_only_hint: #read_only,
                    destructive_hint: #destructive,
                    idempotent_hint: #idempotent,
                    open_world_hint: #open_world,
                },
            }
        });
    }
}

/// `__mcp_tasks::ToolUi { .. }`.
#[derive(Debug, Clone, Copy)]
struct UiTokens<'a>(&'a Ui);

impl ToTokens for UiTokens<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let uri = &self.0.resource_uri;
        let visibility = format_ident!(
            "{}",
            self.0.visibility.map_or("ModelAndApp", |v| v.variant())
        );
        tokens.extend(quote! {
            #Rt::ToolUi {
                resource_uri: #uri,
                visibility: #Rt::UiVisibility::#visibility,
            }
        });
    }
}

/// `__mcp_tasks::Some(value)` or `__mcp_tasks::None`.
#[derive(Debug, Clone, Copy)]
pub struct Opt<T>(pub Option<T>);

impl<T: ToTokens> ToTokens for Opt<T> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match &self.0 {
            Some(value) => quote!(#Rt::Some(#value)),
            None => quote!(#Rt::None),
        });
    }
}

/// `__mcp_tasks::millis(N)`.
#[derive(Debug, Clone, Copy)]
pub struct Millis(pub u64);

impl ToTokens for Millis {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let ms = Literal::u64_unsuffixed(self.0);
        tokens.extend(quote!(#Rt::millis(#ms)));
    }
}
