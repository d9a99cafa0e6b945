//! The descriptor: a braced struct named after the function (type namespace only, so the
//! function stays callable), and `impl Tool` for it inside a `const _` block. Each parameter's and
//! the return type's bounds are checked once, in a `const` spanned at the user's type.

use super::info::Info;
use crate::model::{Param, ToolSpec};
use crate::paths::{Rt, generated, local, output_const, param_const};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

/// Everything emitted after the user's function.
#[derive(Debug)]
pub struct Descriptor<'a>(pub &'a ToolSpec);

impl ToTokens for Descriptor<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let spec = self.0;
        let import = Rt::import(&spec.runtime);
        let struct_ = Struct { item: &spec.item };
        let params = spec
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| ParamCheck(i, p));
        let output = OutputCheck(&spec.output);
        let impl_ = ImplTool(spec);
        tokens.extend(quote! {
            #struct_
            #[allow(non_upper_case_globals, unused_qualifications)]
            const _: () = {
                #import
                #(#params)*
                #output
                #impl_
            };
        });
    }
}

/// `#[doc] #[allow] <vis> struct <fn name> {}`; also the stub emitted on error.
#[derive(Debug)]
pub struct Struct<'a> {
    pub item: &'a syn::ItemFn,
}

impl ToTokens for Struct<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let vis = &self.item.vis;
        let ident = &self.item.sig.ident;
        let doc = format!(
            " MCP tool descriptor for [`{}`](fn@{ident}).",
            ident.unraw()
        );
        tokens.extend(quote! {
            #[doc = #doc]
            #[allow(non_camel_case_types)]
            #vis struct #ident {}
        });
    }
}

/// `const __mcp_tasks_argN: Param<T> = param::<T, _>();` at the type's span.
struct ParamCheck<'a>(usize, &'a Param);

impl ToTokens for ParamCheck<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let name = param_const(self.0);
        let ty = &self.1.ty;
        tokens.extend(quote_spanned! {ty.span()=>
            const #name: #Rt::Param<#ty> = #Rt::param::<#ty, _>();
        });
    }
}

/// `const __mcp_tasks_output: Output<T> = output::<T, _>();` at the return type's span.
struct OutputCheck<'a>(&'a syn::Type);

impl ToTokens for OutputCheck<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let name = output_const();
        let ty = self.0;
        tokens.extend(quote_spanned! {ty.span()=>
            const #name: #Rt::Output<#ty> = #Rt::output::<#ty, _>();
        });
    }
}

/// `impl Tool`: the info constant and three one-line-per-parameter functions.
struct ImplTool<'a>(&'a ToolSpec);

impl ToTokens for ImplTool<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let spec = self.0;
        let ident = spec.ident();
        let info = Info {
            name: &spec.name,
            title: spec.title.as_deref(),
            description: spec.description.as_deref(),
            task_support: spec.task_support,
            ttl_ms: spec.ttl_ms,
            poll_interval_ms: spec.poll_interval_ms,
            annotations: spec.annotations,
            defer_task: spec.defer_task,
            durable: spec.durable,
            promote_after_ms: spec.promote_after_ms,
            ui: spec.ui.as_ref(),
            scopes: &spec.scopes,
        };
        let describe = Describe(&spec.params);
        let call = Call(spec);
        let output = output_const();
        tokens.extend(quote! {
            #[automatically_derived]
            impl #Rt::Tool for #ident {
                const INFO: #Rt::ToolInfo = #info;
                #describe
                fn output_schema() -> #Rt::Option<#Rt::serde_json::Value> {
                    (#output.schema)()
                }
                #call
            }
        });
    }
}

/// `fn describe`: one line per parameter.
struct Describe<'a>(&'a [Param]);

impl ToTokens for Describe<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let params = local("params", !self.0.is_empty());
        let lines = self.0.iter().enumerate().map(|(i, p)| {
            let (name, doc) = (&p.name, super::info::Opt(p.doc.as_deref()));
            let check = param_const(i);
            quote!((#check.describe)(#params, #name, #doc);)
        });
        tokens.extend(quote! {
            fn describe(#params: &mut #Rt::ParamsBuilder) {
                #(#lines)*
            }
        });
    }
}

/// `fn call`: extract each parameter, then run the user's function.
struct Call<'a>(&'a ToolSpec);

impl ToTokens for Call<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let spec = self.0;
        let used = !spec.params.is_empty();
        let (ctx, args) = (local("ctx", used), local("args", used));
        let mutability = used.then(|| quote!(mut));
        let locals: Vec<_> = (0..spec.params.len())
            .map(|i| generated(&format!("a{i}")))
            .collect();
        let extracts = spec
            .params
            .iter()
            .zip(&locals)
            .enumerate()
            .map(|(i, (p, local))| {
                let (check, name) = (param_const(i), &p.name);
                quote!(let #local = (#check.extract)(&#ctx, &mut #args, #name)?;)
            });
        // At the function's name: a future that is not `Send` is reported there.
        let ident = spec.ident();
        let output = output_const();
        let run = quote_spanned! {ident.span()=>
            #Rt::run_tool(#ident(#(#locals),*), #output)
        };
        tokens.extend(quote! {
            fn call(
                #ctx: #Rt::ToolContext,
                #mutability #args: #Rt::Arguments,
            ) -> #Rt::Result<#Rt::ToolFuture, #Rt::ArgumentError> {
                #(#extracts)*
                #Rt::Ok(#run)
            }
        });
    }
}
