//! On error: the user's function as written, plus a stub descriptor so that code naming the tool
//! (`.tool::<name>()`) adds no error of its own (thiserror's `fallback`).

use super::descriptor::Struct;
use super::info::Info;
use crate::model::{Annotations, Fallback, TaskSupport};
use crate::paths::Rt;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::ext::IdentExt;

/// The item, and the stub when one can be declared.
#[derive(Debug)]
pub struct Stub<'a>(pub &'a Fallback);

impl ToTokens for Stub<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let fallback = self.0;
        fallback.item.to_tokens(tokens);
        if !fallback.declare {
            return;
        }
        Struct {
            item: &fallback.item,
        }
        .to_tokens(tokens);
        let Some(runtime) = &fallback.runtime else {
            return;
        };
        let import = Rt::import(runtime);
        let ident = &fallback.item.sig.ident;
        let name = ident.unraw().to_string();
        let info = Info {
            name: &name,
            title: None,
            description: None,
            task_support: TaskSupport::Forbidden,
            ttl_ms: None,
            poll_interval_ms: None,
            annotations: Annotations::default(),
            defer_task: false,
            durable: false,
            promote_after_ms: None,
            ui: None,
            scopes: &[],
        };
        tokens.extend(quote! {
            const _: () = {
                #import
                #[automatically_derived]
                impl #Rt::Tool for #ident {
                    const INFO: #Rt::ToolInfo = #info;
                    fn describe(_: &mut #Rt::ParamsBuilder) {}
                    fn output_schema() -> #Rt::Option<#Rt::serde_json::Value> {
                        #Rt::None
                    }
                    fn call(
                        _: #Rt::ToolContext,
                        _: #Rt::Arguments,
                    ) -> #Rt::Result<#Rt::ToolFuture, #Rt::ArgumentError> {
                        ::core::unreachable!("`#[tool]` reported a compile error for this function")
                    }
                }
            };
        });
    }
}
