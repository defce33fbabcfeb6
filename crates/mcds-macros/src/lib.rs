//! `#[blocking_and_async(vis)]`: one definition of a structure method, two
//! APIs. Use it through `mcds_core::blocking_and_async`, whose
//! documentation is the reference; this crate only holds the macro
//! (a proc-macro crate can export nothing else).

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use syn::{
    Attribute, FnArg, Ident, ImplItemFn, Pat, PatIdent, Visibility, parse_macro_input,
    spanned::Spanned,
};

/// Write a method once, as `async fn x_io(.., io: Io, ..)`, and get the
/// blocking `x` and the async `x_async` with the visibility given in the
/// attribute. See `mcds_core::blocking_and_async`.
#[proc_macro_attribute]
pub fn blocking_and_async(attr: TokenStream, item: TokenStream) -> TokenStream {
    let vis = parse_macro_input!(attr as Visibility);
    let func = parse_macro_input!(item as ImplItemFn);
    expand(vis, func)
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}

fn expand(vis: Visibility, func: ImplItemFn) -> syn::Result<TokenStream2> {
    let sig = &func.sig;
    let name = sig.ident.to_string();
    let Some(base) = name.strip_suffix("_io") else {
        return Err(syn::Error::new(
            sig.ident.span(),
            "#[blocking_and_async] goes on an `async fn <name>_io`: it makes `<name>` and `<name>_async`",
        ));
    };
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.span(),
            "#[blocking_and_async] needs an `async fn`",
        ));
    }
    let io_name = &sig.ident;
    let blocking_name = Ident::new(base, sig.ident.span());
    let async_name = format_ident!("{}_async", base, span = sig.ident.span());

    // The wrappers' parameters: all but `io`, each a plain name (forwarded).
    let mut params = Vec::new();
    let mut blocking_args = Vec::new();
    let mut async_args = Vec::new();
    let mut has_self = false;
    let mut has_io = false;
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => {
                has_self = true;
                params.push(quote!(#r));
            }
            FnArg::Typed(t) => {
                let Pat::Ident(PatIdent {
                    ident,
                    subpat: None,
                    ..
                }) = &*t.pat
                else {
                    return Err(syn::Error::new(
                        t.pat.span(),
                        "#[blocking_and_async] forwards each parameter by name: use a plain name here",
                    ));
                };
                if ident == "io" {
                    has_io = true;
                    blocking_args.push(quote!(::mcds_core::Io::Blocking));
                    async_args.push(quote!(::mcds_core::Io::Async));
                    continue;
                }
                let ty = &t.ty;
                let attrs = &t.attrs;
                params.push(quote!(#(#attrs)* #ident: #ty));
                blocking_args.push(quote!(#ident));
                async_args.push(quote!(#ident));
            }
        }
    }
    if !has_io {
        return Err(syn::Error::new(
            sig.inputs.span(),
            "#[blocking_and_async] needs a parameter `io: Io`, the mode each wrapper passes",
        ));
    }

    let (docs, others): (Vec<&Attribute>, Vec<&Attribute>) =
        func.attrs.iter().partition(|a| a.path().is_ident("doc"));
    let generics = &sig.generics;
    let where_clause = &sig.generics.where_clause;
    let output = &sig.output;
    let target = if has_self { quote!(self) } else { quote!(Self) };
    let call = |args: &[TokenStream2]| {
        if has_self {
            quote!(#target.#io_name(#(#args),*))
        } else {
            quote!(#target::#io_name(#(#args),*))
        }
    };
    let blocking_call = call(&blocking_args);
    let async_call = call(&async_args);
    let async_doc = format!(" [`{base}`](Self::{base}) without blocking the thread.");
    let async_doc = syn::LitStr::new(&async_doc, Span::call_site());

    Ok(quote! {
        #func

        #(#docs)*
        #(#others)*
        #vis fn #blocking_name #generics (#(#params),*) #output #where_clause {
            ::mcds_core::block_on(#blocking_call)
        }

        #[doc = #async_doc]
        #(#others)*
        #vis async fn #async_name #generics (#(#params),*) #output #where_clause {
            #async_call.await
        }
    })
}
