//! Stage 3 for `#[resource]`: the user's function, a struct named after it, and `impl Resource`
//! inside a `const _` block; each parameter's and the return type's bounds checked once, in a
//! `const` spanned at the user's type.

use super::model::{Param, ResourceSpec};
use crate::complete::Completer;
use crate::model::Fallback;
use crate::paths::{Rt, generated, local, output_const, param_const};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

/// `#[doc] #[allow] <vis> struct <fn name> {}`: the type `.resource::<name>()` names (type
/// namespace only, so the function stays callable).
struct Struct<'a> {
    item: &'a syn::ItemFn,
}

impl ToTokens for Struct<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let vis = &self.item.vis;
        let ident = &self.item.sig.ident;
        let doc = format!(
            " MCP resource descriptor for [`{}`](fn@{ident}).",
            ident.unraw()
        );
        tokens.extend(quote! {
            #[doc = #doc]
            #[allow(non_camel_case_types)]
            #vis struct #ident {}
        });
    }
}

/// The user's function, then its descriptor.
pub fn emit(spec: &ResourceSpec) -> TokenStream {
    let mut item = spec.item.clone();
    item.attrs
        .push(syn::parse_quote!(#[allow(clippy::unused_async)]));
    let mut out = item.to_token_stream();
    Descriptor(spec).to_tokens(&mut out);
    out
}

struct Descriptor<'a>(&'a ResourceSpec);

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
        let output = output_const();
        let out_ty = &spec.output;
        let output_check = quote_spanned! {out_ty.span()=>
            const #output: #Rt::ResourceOutput<#out_ty> = #Rt::resource_output::<#out_ty>();
        };
        let impl_ = ImplResource(spec);
        tokens.extend(quote! {
            #struct_
            #[allow(non_upper_case_globals, unused_qualifications)]
            const _: () = {
                #import
                #(#params)*
                #output_check
                #impl_
            };
        });
    }
}

/// `const __mcp_tasks_argN: ResourceParam<T> = resource_var::<T>();` (or `resource_injected`)
/// at the type's span.
struct ParamCheck<'a>(usize, &'a Param);

impl ToTokens for ParamCheck<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let name = param_const(self.0);
        let ty = &self.1.ty;
        let resolve = if self.1.var {
            quote_spanned!(ty.span()=> #Rt::resource_var::<#ty>())
        } else {
            quote_spanned!(ty.span()=> #Rt::resource_injected::<#ty, _>())
        };
        tokens.extend(quote_spanned! {ty.span()=>
            const #name: #Rt::ResourceParam<#ty> = #resolve;
        });
    }
}

/// `Some(value)` / `None` through the facade.
struct Opt<T>(Option<T>);

impl<T: ToTokens> ToTokens for Opt<T> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match &self.0 {
            Some(value) => quote!(#Rt::Some(#value)),
            None => quote!(#Rt::None),
        });
    }
}

/// The `ResourceInfo` constant.
struct Info<'a> {
    uri: &'a str,
    template: bool,
    name: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    mime_type: Option<&'a str>,
    size: Option<u64>,
    scopes: &'a [String],
}

impl ToTokens for Info<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let Info {
            uri,
            template,
            name,
            ..
        } = self;
        let (title, description, mime_type) =
            (Opt(self.title), Opt(self.description), Opt(self.mime_type));
        let size = Opt(self.size.map(proc_macro2::Literal::u64_suffixed));
        let scopes = self.scopes;
        tokens.extend(quote! {
            #Rt::ResourceInfo {
                uri: #uri,
                template: #template,
                name: #name,
                title: #title,
                description: #description,
                mime_type: #mime_type,
                size: #size,
                scopes: &[#(#scopes),*],
            }
        });
    }
}

struct ImplResource<'a>(&'a ResourceSpec);

impl ToTokens for ImplResource<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let spec = self.0;
        let ident = &spec.item.sig.ident;
        let info = Info {
            uri: &spec.uri,
            template: spec.template,
            name: &spec.name,
            title: spec.title.as_deref(),
            description: spec.description.as_deref(),
            mime_type: spec.mime_type.as_deref(),
            size: spec.size,
            scopes: &spec.scopes,
        };
        let used = !spec.params.is_empty();
        let params = local("params", used);
        let describes = (0..spec.params.len()).map(|i| {
            let check = param_const(i);
            quote!((#check.describe)(#params);)
        });
        let (ctx, request) = (
            local("ctx", used),
            syn::Ident::new("request", Span::mixed_site()),
        );
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
                quote!(let #local = (#check.extract)(&#ctx, &#request, #name)?;)
            });
        let output = output_const();
        let run = quote_spanned! {ident.span()=>
            #Rt::run_resource(#ident(#(#locals),*), #output, #request, <Self as #Rt::Resource>::INFO.mime_type)
        };
        let list = spec.list.as_ref().map(|path| {
            let ctx = syn::Ident::new("ctx", Span::mixed_site());
            quote_spanned! {path.span()=>
                fn list(#ctx: #Rt::ToolContext) -> #Rt::Option<#Rt::ListFuture> {
                    #Rt::run_list(#path(#ctx))
                }
            }
        });
        let completers: Vec<_> = spec
            .params
            .iter()
            .filter_map(|p| {
                let (complete, _) = p.complete.as_ref()?;
                let (name, completer) = (&p.name, Completer(complete));
                Some(quote!((#name, #completer)))
            })
            .collect();
        let completers = (!completers.is_empty()).then(|| {
            quote! {
                const COMPLETERS: &'static [(&'static str, #Rt::Completer)] = &[#(#completers),*];
            }
        });
        tokens.extend(quote! {
            #[automatically_derived]
            impl #Rt::Resource for #ident {
                const INFO: #Rt::ResourceInfo = #info;
                #completers
                fn describe(#params: &mut #Rt::ParamsBuilder) {
                    #(#describes)*
                }
                fn read(
                    #ctx: #Rt::ToolContext,
                    #request: #Rt::ResourceRequest,
                ) -> #Rt::Result<#Rt::ResourceFuture, #Rt::RpcError> {
                    #(#extracts)*
                    #Rt::Ok(#run)
                }
                #list
            }
        });
    }
}

/// On error: the user's function as written, plus a stub descriptor so that
/// `.resource::<name>()` adds no error of its own.
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
        let info = Info {
            uri: "",
            template: false,
            name: "",
            title: None,
            description: None,
            mime_type: None,
            size: None,
            scopes: &[],
        };
        tokens.extend(quote! {
            const _: () = {
                #import
                #[automatically_derived]
                impl #Rt::Resource for #ident {
                    const INFO: #Rt::ResourceInfo = #info;
                    fn describe(_: &mut #Rt::ParamsBuilder) {}
                    fn read(
                        _: #Rt::ToolContext,
                        _: #Rt::ResourceRequest,
                    ) -> #Rt::Result<#Rt::ResourceFuture, #Rt::RpcError> {
                        ::core::unreachable!("`#[resource]` reported a compile error for this function")
                    }
                }
            };
        });
    }
}
