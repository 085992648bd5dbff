//! `#[derive(Tools)]`: an app's tool enum to its tool table, one declaration per tool (name,
//! title, description, annotations, arguments), so the table and the handlers cannot drift.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Expr, Fields, LitStr, Type};

use crate::attrs::{self, docs, each};

/// What `#[tool(…)]` says about one tool.
#[derive(Default)]
struct Tool {
    name: Option<String>,
    title: Option<String>,
    args: Option<Type>,
    schema: Option<Expr>,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    answers_need_state: bool,
    salient_all: bool,
    salient: Option<Vec<String>>,
}

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let Data::Enum(e) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "`#[derive(Tools)]` goes on an enum with one unit variant per tool",
        ));
    };
    let name = &input.ident;
    let mut entries = Vec::new();
    let mut arms_args = Vec::new();
    let mut arms_open = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for v in &e.variants {
        if !matches!(v.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(v, "a tool is a unit variant"));
        }
        let mut t = Tool::default();
        each(&v.attrs, "tool", |key, m| {
            match key {
                "name" => t.name = Some(attrs::string(m)?),
                "title" => t.title = Some(attrs::string(m)?),
                "args" => t.args = Some(m.value()?.parse()?),
                "schema" => t.schema = Some(m.value()?.parse()?),
                "read_only" => t.read_only = true,
                "destructive" => t.destructive = true,
                "idempotent" => t.idempotent = true,
                "answers_need_state" => t.answers_need_state = true,
                "salient" if m.input.peek(syn::Token![=]) => {
                    let all: syn::Ident = m.value()?.parse()?;
                    if all != "all" {
                        return Err(m.error("`salient = all`, or `salient(\"a\", \"b\")`"));
                    }
                    t.salient_all = true;
                }
                "salient" => {
                    let mut list = Vec::new();
                    let content;
                    syn::parenthesized!(content in m.input);
                    let lits = content
                        .parse_terminated(<LitStr as syn::parse::Parse>::parse, syn::Token![,])?;
                    list.extend(lits.iter().map(LitStr::value));
                    t.salient = Some(list);
                }
                _ => {
                    return Err(attrs::unknown(
                        m,
                        "`name`, `title`, `args`, `schema`, `read_only`, `destructive`, \
                         `idempotent`, `answers_need_state` and `salient`",
                    ))
                }
            }
            Ok(())
        })?;
        let ident = &v.ident;
        let Some(tool_name) = t.name.clone() else {
            return Err(syn::Error::new_spanned(
                v,
                "a tool needs `#[tool(name = \"…\")]`",
            ));
        };
        if names.contains(&tool_name) {
            return Err(syn::Error::new_spanned(v, "two tools with one name"));
        }
        names.push(tool_name.clone());
        let title = t.title.clone().unwrap_or_else(|| tool_name.clone());
        let Some(description) = docs(&v.attrs) else {
            return Err(syn::Error::new_spanned(
                v,
                "a tool needs a description for the model: write a doc comment on the variant",
            ));
        };
        let (schema, args, headers, open, names_const) = match (&t.args, &t.schema) {
            (Some(a), None) => {
                let tr = quote!(<#a as ::redmark_core::typed::Args<'static>>);
                (
                    quote!(#tr::SCHEMA),
                    quote!(#tr::ARGS),
                    quote!(#tr::HEADERS),
                    quote!(#tr::OPEN),
                    Some(quote!(#tr::NAMES)),
                )
            }
            (None, Some(s)) => (quote!(#s), quote!(&[]), quote!(&[]), quote!(true), None),
            _ => {
                return Err(syn::Error::new_spanned(
                    v,
                    "a tool takes `args = Type` (a `#[derive(Args)]` struct) or `schema = CONST` (a raw schema)",
                ))
            }
        };
        let salient = match (&t.salient, t.salient_all, names_const) {
            (Some(list), false, _) => quote!(__p::Some(&[#(#list),*])),
            (None, true, Some(n)) => quote!(__p::Some(#n)),
            (None, true, None) => {
                return Err(syn::Error::new_spanned(
                    v,
                    "`salient = all` needs `args = Type`",
                ))
            }
            (None, false, _) => quote!(__p::None),
            (Some(_), true, _) => unreachable!("one salient per tool"),
        };
        let (ro, de, idem, ans) = (
            t.read_only,
            t.destructive,
            t.idempotent,
            t.answers_need_state,
        );
        entries.push(quote!(__p::ToolEntry {
            info: __p::ToolInfo {
                name: #tool_name,
                title: #title,
                description: #description,
                input_schema: #schema,
                read_only: #ro,
                destructive: #de,
                idempotent: #idem,
                salient: #salient,
                answers_need_state: #ans,
                param_headers: #headers,
            },
            tool: #name::#ident,
        }));
        arms_args.push(quote!(#name::#ident => #args));
        arms_open.push(quote!(#name::#ident => #open));
    }
    Ok(quote! {
        const _: () = {
            use ::redmark_core::typed::__private as __p;
            impl ::redmark_core::typed::Tools for #name {
                const TOOLS: &'static [__p::ToolEntry<Self>] = &[#(#entries),*];
                fn args(self) -> &'static [__p::Arg] {
                    match self { #(#arms_args),* }
                }
                fn open(self) -> bool {
                    match self { #(#arms_open),* }
                }
            }
        };
    })
}
