//! `#[derive(Args)]`: a struct of tool arguments to its `inputSchema` (one compile-time
//! string), the engine's argument table, the `Mcp-Param-*` headers and a zero-copy read.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Lifetime};

use crate::attrs::{self, docs, each, Bound};
use crate::json;
use crate::types::{classify, const_of, Kind};

/// One argument as declared.
struct Arg {
    name: String,
    ident: Ident,
    required: bool,
    ty: syn::Type,
    kind: Kind,
    max_len: Option<Bound>,
    min: Option<Bound>,
    max: Option<Bound>,
    date: bool,
    header: Option<String>,
    doc: Option<String>,
    /// `heapless::String<N>` under `#[args(serde)]`: its `N` (bytes).
    owned: Option<syn::Expr>,
}

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let k = crate::krate::krate();
    let (mut open, mut serde) = (false, false);
    each(&input.attrs, "args", |key, m| {
        match key {
            "open" => open = true,
            "serde" => serde = true,
            _ => return Err(attrs::unknown(m, "`open` and `serde`")),
        }
        Ok(())
    })?;
    if serde {
        serde_container(&input)?;
    }
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(n) => n.named.iter().collect(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(_) => {
                return Err(err(&input, "arguments have names: use named fields"))
            }
        },
        _ => {
            return Err(err(
                &input,
                "`#[derive(Args)]` goes on a struct of named fields",
            ))
        }
    };
    let args = fields
        .into_iter()
        .map(|f| read_arg(f, serde))
        .collect::<syn::Result<Vec<_>>>()?;
    let (impl_lt, ty_lt) = lifetime(&input.generics, &input)?;
    let name = &input.ident;
    let schema = schema(&args, open);
    let table = args.iter().map(arg_row);
    let names = args.iter().map(|a| &a.name);
    let headers = args.iter().filter_map(|a| {
        let (arg, h) = (&a.name, a.header.as_ref()?);
        Some(quote!(__p::ParamHeader { argument: #arg, header: #h }))
    });
    let room = |a: &Arg| match &a.max_len {
        Some(n) => {
            let n = n.as_type("usize");
            quote!(#n * __p::UTF8_MAX)
        }
        None if a.date => quote!(10),
        None => quote!(__p::MAX_STR),
    };
    let scratch = args.iter().map(|a| match a.kind {
        // serde-json-core decodes escapes for an owned string only, into at most its `N`.
        _ if serde => match &a.owned {
            Some(n) => quote!(+ (#n as usize)),
            None => quote!(),
        },
        Kind::Str => {
            let r = room(a);
            quote!(+ #r)
        }
        _ => quote!(),
    });
    let n = args.len();
    let slots: Vec<Ident> = (0..n).map(|i| quote::format_ident!("__a{i}")).collect();
    let inits = args.iter().zip(&slots).map(|(a, s)| {
        let (id, ty) = (&a.ident, &a.ty);
        if let Kind::Str = a.kind {
            let r = room(a);
            return if a.required {
                quote!(#id: __p::text(#s, scratch, #r)?.ok_or(#k::typed::Unreadable)?)
            } else {
                quote!(#id: __p::text(#s, scratch, #r)?)
            };
        }
        if a.required {
            quote!(#id: __p::required::<#ty>(#s, scratch)?)
        } else {
            let inner = &classify(ty).inner;
            quote!(#id: __p::optional::<#inner>(#s, scratch)?)
        }
    });
    let body = if serde {
        quote!(__p::serde_read(sent, scratch))
    } else if n == 0 {
        quote!(let _ = (sent, scratch); __p::Ok(#name {}))
    } else {
        quote! {
            let mut found = [__p::None; #n];
            __p::find(sent, <Self as #k::typed::Args<#impl_lt>>::ARGS, &mut found)?;
            let [#(#slots),*] = found;
            __p::Ok(#name { #(#inits),* })
        }
    };
    let generics = if ty_lt { quote!(<#impl_lt>) } else { quote!() };
    Ok(quote! {
        const _: () = {
            use #k::typed::__private as __p;
            impl<#impl_lt> #k::typed::Args<#impl_lt> for #name #generics {
                const SCHEMA: &'static str = #schema;
                const ARGS: &'static [__p::Arg] = &[#(#table),*];
                const NAMES: &'static [&'static str] = &[#(#names),*];
                const HEADERS: &'static [__p::ParamHeader] = &[#(#headers),*];
                const OPEN: bool = #open;
                const SCRATCH: usize = 0 #(#scratch)*;
                fn read(
                    sent: __p::Option<__p::Value<#impl_lt>>,
                    scratch: &mut #k::typed::Scratch<#impl_lt>,
                ) -> __p::Result<Self, #k::typed::Unreadable> {
                    #body
                }
            }
        };
    })
}

fn err(t: impl quote::ToTokens, msg: &str) -> syn::Error {
    syn::Error::new_spanned(t, msg)
}

/// The impl's lifetime (the struct's one, or a fresh one) and whether the struct has it.
pub fn lifetime(g: &Generics, at: &DeriveInput) -> syn::Result<(Lifetime, bool)> {
    let lts: Vec<_> = g.lifetimes().collect();
    if g.type_params().next().is_some() || g.const_params().next().is_some() || lts.len() > 1 {
        return Err(err(
            at,
            "only one lifetime parameter (what the strings borrow) is allowed here",
        ));
    }
    Ok(match lts.first() {
        Some(l) => (l.lifetime.clone(), true),
        None => (Lifetime::new("'__s", proc_macro2::Span::call_site()), false),
    })
}

fn read_arg(f: &syn::Field, serde: bool) -> syn::Result<Arg> {
    let ident = f.ident.clone().expect("named field");
    let mut t = classify(&f.ty);
    // `heapless::String<N>`, which serde-json-core fills: a string of at most `N`.
    let owned = match &t.inner {
        syn::Type::Path(p)
            if serde && p.path.segments.last().is_some_and(|s| s.ident == "String") =>
        {
            const_of(&t.inner)
        }
        _ => None,
    };
    if owned.is_some() {
        t.kind = Kind::Str;
    }
    let mut a = Arg {
        name: ident.to_string().trim_start_matches("r#").to_string(),
        ident,
        required: !t.optional,
        ty: f.ty.clone(),
        kind: t.kind,
        min: None,
        max: None,
        date: false,
        header: None,
        doc: docs(&f.attrs),
        max_len: owned.as_ref().map(|n| match attrs::int_of(n) {
            Ok(n) => Bound::Lit(n),
            Err(_) => Bound::Const(n.clone()),
        }),
        owned,
    };
    each(&f.attrs, "arg", |key, m| {
        match key {
            "max_len" => a.max_len = Some(attrs::bound(m)?),
            "min" => a.min = Some(attrs::bound(m)?),
            "max" => a.max = Some(attrs::bound(m)?),
            "header" => a.header = Some(attrs::string(m)?),
            "format" => match attrs::string(m)?.as_str() {
                "date" => a.date = true,
                _ => {
                    return Err(m.error("an argument's format is \"date\" (or use the `Date` type)"))
                }
            },
            _ => {
                return Err(attrs::unknown(
                    m,
                    "`max_len`, `min`, `max`, `format` and `header`",
                ))
            }
        }
        Ok(())
    })?;
    if serde {
        serde_field(&mut a, f);
    }
    check_arg(&a, f)?;
    Ok(a)
}

/// Under `#[args(serde)]`, what serde reads differently from the field itself: a field's
/// `#[serde(rename = "…")]` is the argument's name, `#[serde(default…)]` makes it optional.
/// (Anything else in the attribute is serde's to check.)
fn serde_field(a: &mut Arg, f: &syn::Field) {
    for attr in f.attrs.iter().filter(|at| at.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|m| {
            if m.path.is_ident("rename") && m.input.peek(syn::Token![=]) {
                a.name = attrs::string(&m)?;
            } else if m.path.is_ident("default") {
                a.required = false;
            }
            if m.input.peek(syn::Token![=]) {
                m.value()?.parse::<syn::Expr>()?;
            } else if m.input.peek(syn::token::Paren) {
                m.parse_nested_meta(|n| {
                    if n.input.peek(syn::Token![=]) {
                        n.value()?.parse::<syn::Expr>()?;
                    }
                    Ok(())
                })?;
            }
            Ok(())
        });
    }
}

/// Under `#[args(serde)]`, container attributes that would make serde read other names or
/// defaults than the schema declares.
fn serde_container(input: &DeriveInput) -> syn::Result<()> {
    for attr in input.attrs.iter().filter(|at| at.path().is_ident("serde")) {
        let mut bad = None;
        let _ = attr.parse_nested_meta(|m| {
            if m.path.is_ident("rename_all") || m.path.is_ident("default") {
                bad = Some(m.path.clone());
            }
            if m.input.peek(syn::Token![=]) {
                m.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        });
        if let Some(p) = bad {
            return Err(err(
                p,
                "under `#[args(serde)]` the schema names and requires each field as declared: \
                 write `#[serde(rename = \"…\")]` or `#[serde(default)]` on the field instead",
            ));
        }
    }
    Ok(())
}

fn check_arg(a: &Arg, f: &syn::Field) -> syn::Result<()> {
    let ty = &f.ty;
    if let Some(h) = &a.header {
        if !a.kind.is_scalar() {
            return Err(err(
                ty,
                "`#[arg(header)]` mirrors a string, number or boolean argument into an \
                 `Mcp-Param-*` header: this argument is not one (SEP-2243); drop the header",
            ));
        }
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(err(
                ty,
                "a header name is letters, digits and `-` (it follows `Mcp-Param-`)",
            ));
        }
    }
    match &a.kind {
        Kind::Unsupported(what) => {
            return Err(err(
                ty,
                &format!(
                    "a tool argument cannot be {what}: use `&str`, an integer (u8 to i64), \
                     `bool`, `Date` or a `#[derive(Choices)]` enum, in an `Option` when not required"
                ),
            ))
        }
        Kind::Text => return Err(err(ty, "a string argument is `&'a str` (borrowed from the call)")),
        Kind::Float => {
            return Err(err(
                ty,
                "an argument is a whole number here (`u8` to `i64`): fractions are a form field (`f64`)",
            ))
        }
        Kind::Picks(_) => return Err(err(ty, "an argument picks one option: use the enum itself")),
        Kind::Pick(_) => {
            return Err(err(
                ty,
                "an argument's options are declared: use a `#[derive(Choices)]` enum (`Pick<N>` is a form field)",
            ))
        }
        _ => {}
    }
    let is_int = matches!(a.kind, Kind::Int(..));
    if (a.min.is_some() || a.max.is_some()) && !is_int {
        return Err(err(ty, "`min` and `max` bound an integer argument"));
    }
    if (a.max_len.is_some() || a.date) && !matches!(a.kind, Kind::Str) {
        return Err(err(ty, "`max_len` and `format` apply to a `&str` argument"));
    }
    if let Kind::Int(lo, hi) = a.kind {
        let lit = |b: &Option<Bound>, or: i64| b.as_ref().map_or(Some(or), Bound::lit);
        let (Some(min), Some(max)) = (lit(&a.min, lo), lit(&a.max, hi)) else {
            return Ok(()); // a constant's range is checked where the table is built
        };
        if min < lo || max > hi || min > max {
            return Err(err(ty, "the bounds do not fit the type (or min > max)"));
        }
        if a.min.is_none() && lo < i32::MIN.into() || a.max.is_none() && hi > i32::MAX.into() {
            return Err(err(
                ty,
                "give this integer's `min` and `max` (the checks take 32-bit bounds)",
            ));
        }
        if min < i32::MIN.into() || max > i32::MAX.into() {
            return Err(err(ty, "an argument's bounds are 32-bit"));
        }
    }
    Ok(())
}

/// The integer bounds an argument is checked and described with, as `i64` expressions.
fn bounds(a: &Arg) -> (TokenStream, TokenStream) {
    let Kind::Int(lo, hi) = a.kind else {
        return (quote!(0), quote!(0));
    };
    let at = |b: &Option<Bound>, or: i64| match b {
        Some(b) => b.as_type("i64"),
        None => quote!(#or),
    };
    (at(&a.min, lo), at(&a.max, hi))
}

fn arg_row(a: &Arg) -> TokenStream {
    let k = crate::krate::krate();
    let (name, required) = (&a.name, a.required);
    let kind = match &a.kind {
        Kind::Str => {
            let max = match &a.max_len {
                Some(n) => {
                    let n = n.as_type("u16");
                    quote!(__p::Some(#n))
                }
                None => quote!(__p::None),
            };
            let format = if a.date {
                quote!(__p::Some(__p::TextFormat::Date))
            } else {
                quote!(__p::None)
            };
            quote!(__p::ArgKind::Text(#max, #format))
        }
        Kind::Date => quote!(__p::ArgKind::Text(
            __p::None,
            __p::Some(__p::TextFormat::Date)
        )),
        Kind::Int(lo_ty, hi_ty) => {
            let (lo, hi) = bounds(a);
            quote!(__p::ArgKind::Integer({
                const LO: i64 = #lo;
                const HI: i64 = #hi;
                const _: () = assert!(
                    #lo_ty <= LO && LO <= HI && HI <= #hi_ty,
                    "an argument's bounds fit its type (and min <= max)"
                );
                const _: () = assert!(
                    LO >= i32::MIN as i64 && HI <= i32::MAX as i64,
                    "an argument's bounds are 32-bit"
                );
                LO as i32
            }, #hi as i32))
        }
        Kind::Bool => quote!(__p::ArgKind::Boolean),
        _ => {
            let inner = &classify(&a.ty).inner;
            quote!(__p::ArgKind::Choice(<#inner as #k::typed::Choices>::OPTIONS))
        }
    };
    quote!(__p::Arg { name: #name, required: #required, kind: #kind })
}

/// A number into the schema: a literal's digits into `text`, a constant's as a piece of its
/// own (its digits written by the compiler).
fn number(text: &mut String, pieces: &mut Vec<TokenStream>, n: &Bound) {
    match n {
        Bound::Lit(n) => text.push_str(&n.to_string()),
        Bound::Const(_) => {
            pieces.push(quote!(#text));
            text.clear();
            let v = n.as_type("i64");
            pieces.push(quote!({
                const DIGITS: [u8; __p::decimal_len(#v)] = __p::decimal(#v);
                __p::as_str(&DIGITS)
            }));
        }
    }
}

/// The schema: literal pieces, and each `Choices` enum's `oneOf` between them.
fn schema(args: &[Arg], open: bool) -> TokenStream {
    let k = crate::krate::krate();
    let mut pieces: Vec<TokenStream> = Vec::new();
    let mut text = String::from(r#"{"type":"object","properties":{"#);
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&json::string(&a.name));
        text.push_str(":{");
        match &a.kind {
            Kind::Str => {
                text.push_str(r#""type":"string""#);
                if let Some(n) = &a.max_len {
                    text.push_str(r#","maxLength":"#);
                    number(&mut text, &mut pieces, n);
                }
                if a.date {
                    text.push_str(r#","format":"date""#);
                }
            }
            Kind::Date => text.push_str(r#""type":"string","format":"date""#),
            Kind::Int(lo, hi) => {
                text.push_str(r#""type":"integer","minimum":"#);
                number(
                    &mut text,
                    &mut pieces,
                    a.min.as_ref().unwrap_or(&Bound::Lit(*lo)),
                );
                text.push_str(r#","maximum":"#);
                number(
                    &mut text,
                    &mut pieces,
                    a.max.as_ref().unwrap_or(&Bound::Lit(*hi)),
                );
            }
            Kind::Bool => text.push_str(r#""type":"boolean""#),
            _ => {
                text.push_str(r#""type":"string","#);
                pieces.push(quote!(#text));
                let inner = &classify(&a.ty).inner;
                pieces.push(quote!(<#inner as #k::typed::Choices>::ONE_OF));
                text = String::new();
            }
        }
        if let Some(h) = &a.header {
            text.push_str(&format!(r#","x-mcp-header":{}"#, json::string(h)));
        }
        if let Some(d) = &a.doc {
            text.push_str(&format!(r#","description":{}"#, json::string(d)));
        }
        text.push('}');
    }
    text.push('}');
    let required: Vec<_> = args
        .iter()
        .filter(|a| a.required)
        .map(|a| json::string(&a.name))
        .collect();
    if !required.is_empty() {
        text.push_str(&format!(r#","required":[{}]"#, required.join(",")));
    }
    if !open {
        text.push_str(r#","additionalProperties":false"#);
    }
    text.push('}');
    if pieces.is_empty() {
        return quote!(#text);
    }
    pieces.push(quote!(#text));
    quote!({
        const PIECES: &[&str] = &[#(#pieces),*];
        const BYTES: [u8; __p::total_len(PIECES)] = __p::join(PIECES);
        __p::as_str(&BYTES)
    })
}
