//! Stage 3 for `#[prompt]`: the descriptor (a braced struct named after the function) and
//! `impl Prompt` for it in a `const _` block; each parameter's and the return type's bounds are
//! checked once, in a `const` at the user's type. Cannot fail.

use super::model::{Param, PromptSpec};
use crate::complete::Completer;
use crate::paths::{Rt, generated, local, output_const, param_const};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

/// The user's function (with `#[allow(clippy::unused_async)]`), then its descriptor.
pub fn emit(spec: &PromptSpec) -> TokenStream {
    let mut item = spec.item.clone();
    item.attrs
        .push(syn::parse_quote!(#[allow(clippy::unused_async)]));
    let mut out = item.to_token_stream();
    Descriptor(spec).to_tokens(&mut out);
    out
}

/// On error: the function as written, the descriptor type, and a stub `impl Prompt` (when the
/// runtime path is known), so that `.prompt::<name>()` adds no error of its own.
pub fn fallback(item: &syn::ItemFn, runtime: Option<&syn::Path>) -> TokenStream {
    let mut out = item.to_token_stream();
    if item.sig.receiver().is_some() {
        return out;
    }
    out.extend(strukt(item));
    let Some(runtime) = runtime else { return out };
    let import = Rt::import(runtime);
    let ident = &item.sig.ident;
    let info = Info {
        name: &ident.unraw().to_string(),
        title: None,
        description: None,
        scopes: &[],
    };
    out.extend(quote! {
        const _: () = {
            #import
            #[automatically_derived]
            impl #Rt::Prompt for #ident {
                const INFO: #Rt::PromptInfo = #info;
                fn describe(_: &mut #Rt::PromptBuilder) {}
                fn get(
                    _: #Rt::ToolContext,
                    _: #Rt::PromptArguments,
                ) -> #Rt::Result<#Rt::PromptFuture, #Rt::ArgumentError> {
                    ::core::unreachable!("`#[prompt]` reported a compile error for this function")
                }
            }
        };
    });
    out
}

fn strukt(item: &syn::ItemFn) -> TokenStream {
    let vis = &item.vis;
    let ident = &item.sig.ident;
    let doc = format!(
        " MCP prompt descriptor for [`{}`](fn@{ident}).",
        ident.unraw()
    );
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}
    }
}

struct Descriptor<'a>(&'a PromptSpec);

impl ToTokens for Descriptor<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let spec = self.0;
        let import = Rt::import(&spec.runtime);
        let strukt = strukt(&spec.item);
        let checks = spec
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| ParamCheck(i, p));
        let output = {
            let (name, ty) = (output_const(), &spec.output);
            quote_spanned! {ty.span()=>
                const #name: #Rt::PromptOutput<#ty> = #Rt::prompt_output::<#ty, _>();
            }
        };
        let impl_ = ImplPrompt(spec);
        tokens.extend(quote! {
            #strukt
            #[allow(non_upper_case_globals, unused_qualifications)]
            const _: () = {
                #import
                #(#checks)*
                #output
                #impl_
            };
        });
    }
}

/// `const __mcp_tasks_argN: PromptArg<T> = prompt_arg::<T, _>();` at the type's span, and for a
/// completed parameter `const _: () = completable::<T>();` there too.
struct ParamCheck<'a>(usize, &'a Param);

impl ToTokens for ParamCheck<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let name = param_const(self.0);
        let ty = &self.1.ty;
        tokens.extend(quote_spanned! {ty.span()=>
            const #name: #Rt::PromptArg<#ty> = #Rt::prompt_arg::<#ty, _>();
        });
        if self.1.complete.is_some() {
            tokens.extend(quote_spanned! {ty.span()=>
                const _: () = #Rt::completable::<#ty>();
            });
        }
    }
}

/// `__mcp_tasks::PromptInfo { .. }`.
struct Info<'a> {
    name: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    scopes: &'a [String],
}

fn opt(value: Option<&str>) -> TokenStream {
    match value {
        Some(v) => quote!(#Rt::Some(#v)),
        None => quote!(#Rt::None),
    }
}

impl ToTokens for Info<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let name = self.name;
        let (title, description) = (opt(self.title), opt(self.description));
        let scopes = self.scopes;
        tokens.extend(quote! {
            #Rt::PromptInfo {
                name: #name,
                title: #title,
                description: #description,
                scopes: &[#(#scopes),*],
            }
        });
    }
}

/// `impl Prompt`: the info constant, `describe` and `get`.
struct ImplPrompt<'a>(&'a PromptSpec);

impl ToTokens for ImplPrompt<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let spec = self.0;
        let ident = &spec.item.sig.ident;
        let info = Info {
            name: &spec.name,
            title: spec.title.as_deref(),
            description: spec.description.as_deref(),
            scopes: &spec.scopes,
        };
        let describe = Describe(&spec.params);
        let get = Get(spec);
        tokens.extend(quote! {
            #[automatically_derived]
            impl #Rt::Prompt for #ident {
                const INFO: #Rt::PromptInfo = #info;
                #describe
                #get
            }
        });
    }
}

/// `fn describe`: one line per parameter, one per completion.
struct Describe<'a>(&'a [Param]);

impl ToTokens for Describe<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let prompt = local("prompt", !self.0.is_empty());
        let lines = self.0.iter().enumerate().map(|(i, p)| {
            let (name, doc, check) = (&p.name, opt(p.doc.as_deref()), param_const(i));
            let complete = p.complete.as_ref().map(|(c, _)| {
                let completer = Completer(c);
                quote!(#prompt.complete(#name, #completer);)
            });
            quote! {
                (#check.describe)(#prompt, #name, #doc);
                #complete
            }
        });
        tokens.extend(quote! {
            fn describe(#prompt: &mut #Rt::PromptBuilder) {
                #(#lines)*
            }
        });
    }
}

/// `fn get`: extract each parameter, then run the user's function.
struct Get<'a>(&'a PromptSpec);

impl ToTokens for Get<'_> {
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
        let ident = &spec.item.sig.ident;
        let output = output_const();
        let run = quote_spanned! {ident.span()=>
            #Rt::run_prompt(#ident(#(#locals),*), #output)
        };
        tokens.extend(quote! {
            fn get(
                #ctx: #Rt::ToolContext,
                #mutability #args: #Rt::PromptArguments,
            ) -> #Rt::Result<#Rt::PromptFuture, #Rt::ArgumentError> {
                #(#extracts)*
                #Rt::Ok(#run)
            }
        });
    }
}
