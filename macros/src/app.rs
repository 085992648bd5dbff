//! `#[app]`: an `impl App` whose `#[tool]` methods are the tools, each declared once (name,
//! title, description, annotations, its argument type), to the tool enum, the tool table and
//! the dispatch that reads a call's arguments into the tool's type.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{Attribute, FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, LitStr, Type};

use crate::attrs::{self, docs, each};
use crate::krate::krate;

/// What `#[tool(…)]` says about one tool.
#[derive(Default)]
struct Tool {
    name: Option<String>,
    title: Option<String>,
    schema: Option<syn::Expr>,
    /// The tool's `_meta` in `tools/list`: an expression of a raw JSON object (`&'static str`).
    meta: Option<syn::Expr>,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    answers_need_state: bool,
    salient_all: bool,
    salient: Option<Vec<String>>,
}

/// What `#[app(…)]` says: the tool enum's name.
pub fn parse_options(args: TokenStream) -> syn::Result<Option<Ident>> {
    let mut name = None;
    let parser = syn::meta::parser(|m| {
        if m.path.is_ident("tools") {
            name = Some(m.value()?.parse()?);
            Ok(())
        } else {
            Err(m.error("`#[app]` takes `tools = EnumName` (the tool enum it writes)"))
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    Ok(name)
}

fn tool_attrs(attrs: &[Attribute]) -> syn::Result<Tool> {
    let mut t = Tool::default();
    each(attrs, "tool", |key, m| {
        match key {
            "name" => t.name = Some(attrs::string(m)?),
            "title" => t.title = Some(attrs::string(m)?),
            "schema" => t.schema = Some(m.value()?.parse()?),
            "meta" => t.meta = Some(m.value()?.parse()?),
            "read_only" => t.read_only = true,
            "destructive" => t.destructive = true,
            "idempotent" => t.idempotent = true,
            "answers_need_state" => t.answers_need_state = true,
            "salient" if m.input.peek(syn::Token![=]) => {
                let all: Ident = m.value()?.parse()?;
                if all != "all" {
                    return Err(m.error("`salient = all`, or `salient(\"a\", \"b\")`"));
                }
                t.salient_all = true;
            }
            "salient" => {
                let content;
                syn::parenthesized!(content in m.input);
                let lits = content
                    .parse_terminated(<LitStr as syn::parse::Parse>::parse, syn::Token![,])?;
                t.salient = Some(lits.iter().map(LitStr::value).collect());
            }
            _ => {
                return Err(attrs::unknown(
                    m,
                    "`name`, `title`, `schema`, `meta`, `read_only`, `destructive`, `idempotent`, \
                     `answers_need_state` and `salient`",
                ))
            }
        }
        Ok(())
    })?;
    if t.salient_all && t.salient.is_some() {
        return Err(syn::Error::new(
            Span::call_site(),
            "one `salient` per tool: `all`, or a list",
        ));
    }
    Ok(t)
}

/// Every lifetime in a type replaced by one (`'static` for its constants, `'_` for its read).
struct Lifetimes(syn::Lifetime);

impl VisitMut for Lifetimes {
    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        *l = self.0.clone();
    }
}

/// `Call` and `Reply` written without their lifetimes get them (`'_`): an `async fn` may not
/// leave them implicit, and a tool's signature reads better without.
struct FillIn;

impl VisitMut for FillIn {
    fn visit_type_path_mut(&mut self, p: &mut syn::TypePath) {
        if let Some(last) = p.path.segments.last_mut() {
            let n = match last.ident.to_string().as_str() {
                "Call" => 1,
                "Reply" => 2,
                _ => 0,
            };
            if n > 0 && last.arguments.is_none() {
                let lts = (0..n).map(|_| quote!('_));
                last.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<#(#lts),*>));
            }
        }
        syn::visit_mut::visit_type_path_mut(self, p);
    }
}

fn with_lifetime(ty: &Type, lt: &str) -> Type {
    let mut ty = ty.clone();
    Lifetimes(syn::Lifetime::new(lt, Span::call_site())).visit_type_mut(&mut ty);
    ty
}

/// The argument type of a tool method: its first parameter after the receiver.
fn args_type(f: &ImplItemFn) -> syn::Result<Type> {
    let mut inputs = f.sig.inputs.iter();
    let shape =
        "a tool is `fn name(&mut self, args: MyArgs, call: &Call, reply: Reply) -> Replied`: \
                 its first parameter after `self` is its arguments, a `#[derive(Args)]` struct \
                 (`NoArgs` for none)";
    let err = || syn::Error::new_spanned(&f.sig, shape);
    match inputs.next() {
        Some(FnArg::Receiver(_)) => {}
        _ => return Err(err()),
    }
    let ty = match inputs.next() {
        Some(FnArg::Typed(p)) => (*p.ty).clone(),
        _ => return Err(err()),
    };
    if f.sig.inputs.len() != 4 {
        return Err(err());
    }
    if let Type::Reference(_) = ty {
        return Err(err());
    }
    Ok(ty)
}

/// `book_room` as `BookRoom`.
fn camel(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

pub fn expand(options: Option<Ident>, mut item: ItemImpl) -> syn::Result<TokenStream> {
    let k = krate();
    let self_ty = &item.self_ty;
    let self_name = match &**self_ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    };
    let Some(self_name) = self_name else {
        return Err(syn::Error::new_spanned(
            self_ty,
            "`#[app]` goes on `impl App for YourType`",
        ));
    };
    if item.trait_.is_none() {
        return Err(syn::Error::new_spanned(
            &item.self_ty,
            "`#[app]` goes on `impl App for YourType` (its `#[tool]` methods are the tools)",
        ));
    }
    let enum_name = options.unwrap_or_else(|| format_ident!("{}Tool", self_name));
    let has_info = item
        .items
        .iter()
        .any(|i| matches!(i, ImplItem::Fn(f) if f.sig.ident == "info"));
    let info = if has_info {
        quote!()
    } else {
        quote! {
            /// The crate's name and version (`Cargo.toml`), as `#[app]` writes them.
            fn info(&self) -> #k::engine::ServerInfo {
                #k::engine::ServerInfo {
                    name: ::core::env!("CARGO_PKG_NAME"),
                    version: ::core::env!("CARGO_PKG_VERSION"),
                    instructions: ::core::option::Option::None,
                }
            }
        }
    };
    let mut kept = Vec::new();
    let mut methods = Vec::new();
    let mut variants = Vec::new();
    let mut entries = Vec::new();
    let mut arms = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for it in std::mem::take(&mut item.items) {
        let ImplItem::Fn(mut f) = it else {
            kept.push(it);
            continue;
        };
        if !f.attrs.iter().any(|a| a.path().is_ident("tool")) {
            kept.push(ImplItem::Fn(f));
            continue;
        }
        let t = tool_attrs(&f.attrs)?;
        f.attrs.retain(|a| !a.path().is_ident("tool"));
        let cfgs: Vec<&Attribute> = f
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .collect();
        let cfgs = quote!(#(#cfgs)*);
        let method = f.sig.ident.clone();
        let tool_name = t.name.clone().unwrap_or_else(|| method.to_string());
        if names.contains(&tool_name) {
            return Err(syn::Error::new_spanned(&f.sig, "two tools with one name"));
        }
        names.push(tool_name.clone());
        let Some(description) = docs(&f.attrs) else {
            return Err(syn::Error::new_spanned(
                &f.sig,
                "a tool needs a description for the model: write a doc comment on the method",
            ));
        };
        let args = args_type(&f)?;
        let variant = format_ident!("{}", camel(&method.to_string()));
        let title = t.title.clone().unwrap_or_else(|| tool_name.clone());
        let stat = with_lifetime(&args, "'static");
        let tr = quote!(<#stat as #k::typed::Args<'static>>);
        let schema = match &t.schema {
            Some(s) => quote!(#s),
            None => quote!(#tr::SCHEMA),
        };
        let meta = match &t.meta {
            Some(m) => quote!(__p::Some(#m)),
            None => quote!(__p::None),
        };
        let salient = match (&t.salient, t.salient_all) {
            (Some(list), _) => quote!(__p::Some(&[#(#list),*])),
            (None, true) => quote!(__p::Some(#tr::NAMES)),
            (None, false) => quote!(__p::None),
        };
        let (ro, de, idem, ans) = (
            t.read_only,
            t.destructive,
            t.idempotent,
            t.answers_need_state,
        );
        variants.push(quote!(#[doc = #description] #cfgs #variant));
        entries.push(quote!(#cfgs __p::ToolEntry {
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
                param_headers: #tr::HEADERS,
                meta: #meta,
            },
            tool: #enum_name::#variant,
        }));
        let read = with_lifetime(&args, "'_");
        let run = if f.sig.asyncness.is_some() {
            quote!(Self::#method(self, args, call, reply).await)
        } else {
            quote!(Self::#method(self, args, call, reply))
        };
        arms.push(quote!(#cfgs #enum_name::#variant => {
            const SCRATCH: usize = #tr::SCRATCH;
            let mut scratch = [0u8; SCRATCH];
            let args = match call.read_args::<#read>(&mut scratch) {
                __p::Ok(a) => a,
                __p::Err(e) => return __p::Ok(reply.fail(&e)),
            };
            #run
        }));
        for input in f.sig.inputs.iter_mut().skip(2) {
            FillIn.visit_fn_arg_mut(input);
        }
        methods.push(f);
    }
    let (impl_g, _, where_c) = item.generics.split_for_impl();
    let doc = format!("The tools of [`{self_name}`], one variant a tool (written by `#[app]`).");
    let vis = quote!(pub);
    item.items = kept;
    let attrs = &item.attrs;
    let trait_path = &item.trait_.as_ref().expect("checked").1;
    let kept = &item.items;
    let unsafety = &item.unsafety;
    Ok(quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #vis enum #enum_name { #(#variants),* }

        const _: () = {
            use #k::typed::__private as __p;
            impl #k::typed::Tools for #enum_name {
                const TOOLS: &'static [__p::ToolEntry<Self>] = &[#(#entries),*];
            }
        };

        impl #impl_g #self_ty #where_c {
            #(#methods)*
        }

        #(#attrs)*
        #unsafety impl #impl_g #trait_path for #self_ty #where_c {
            type Tool = #enum_name;

            #info

            fn tools(&self) -> &[#k::engine::ToolEntry<#enum_name>] {
                <#enum_name as #k::typed::Tools>::TOOLS
            }

            async fn call_tool(
                &mut self,
                tool: #enum_name,
                call: &#k::engine::Call<'_>,
                reply: #k::engine::Reply<'_, '_>,
            ) -> #k::engine::Replied {
                use #k::typed::__private as __p;
                match tool { #(#arms)* }
            }

            #(#kept)*
        }
    })
}
