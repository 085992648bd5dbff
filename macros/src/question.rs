//! `#[derive(Question)]`: a struct of form fields to its field table (the `requestedSchema`,
//! the answer's checks and red mark) and the decode of an accepted answer.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Expr, Fields, Lit};

use crate::args::lifetime;
use crate::attrs::{self, docs, each, Bound};
use crate::json;
use crate::types::{classify, Kind};

/// What `#[field(…)]` says.
#[derive(Default)]
struct FieldAttrs {
    title: Option<String>,
    default: Option<Expr>,
    min: Option<i64>,
    max: Option<i64>,
    min_expr: Option<Expr>,
    max_expr: Option<Expr>,
    min_len: Option<Bound>,
    max_len: Option<Bound>,
    format: Option<String>,
    min_items: Option<Bound>,
    max_items: Option<Bound>,
}

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let k = crate::krate::krate();
    let mut key = json::snake(&input.ident.to_string());
    let mut stand_in = None;
    each(&input.attrs, "question", |item, m| match item {
        "key" => {
            key = attrs::string(m)?;
            Ok(())
        }
        "stand_in" => {
            stand_in = Some(attrs::string(m)?);
            Ok(())
        }
        _ => Err(attrs::unknown(m, "`key` and `stand_in`")),
    })?;
    let fields: Vec<_> = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(n) => n.named.iter().collect(),
            _ => {
                return Err(err(
                    &input,
                    "a question's fields have names: use named fields",
                ))
            }
        },
        _ => {
            return Err(err(
                &input,
                "`#[derive(Question)]` goes on a struct of named fields",
            ))
        }
    };
    if stand_in.is_some() && fields.len() != 1 {
        return Err(err(
            &input,
            "an argument stands in for a question of one field: `stand_in` names the argument \
             that takes that field's answer",
        ));
    }
    let stand_in = match stand_in {
        Some(arg) => quote!(__p::Some(#arg)),
        None => quote!(__p::None),
    };
    let (lt, has_lt) = lifetime(&input.generics, &input)?;
    let mut rows = Vec::new();
    let mut live = Vec::new();
    let mut inits = Vec::new();
    let mut offers = None;
    for f in &fields {
        let (row, init, pick) = field(f)?;
        live.push(match &pick {
            Some(_) => quote!(__p::Field {
                kind: __p::FieldKind::Choice { options: offer, default: __p::None },
                ..#row
            }),
            None => row.clone(),
        });
        if let Some(n) = pick {
            if offers.is_some() {
                return Err(err(
                    f,
                    "a question offers one run-time choice (`Pick<N>`) at most",
                ));
            }
            offers = Some(n);
        }
        rows.push(row);
        inits.push(init);
    }
    let offers = match offers {
        None => quote! {
            const OFFERS: usize = 0;
            type Offered<'__o> = #k::typed::Offer<'__o, 0>;
        },
        Some(n) => quote! {
            const OFFERS: usize = #n;
            type Offered<'__o> = #k::typed::Offer<'__o, { #n }>;
            fn with_fields<R>(
                offer: &[__p::Choice<'_>],
                f: impl FnOnce(&[__p::Field<'_>]) -> R,
            ) -> R {
                f(&[#(#live),*])
            }
        },
    };
    let name = &input.ident;
    let generics = if has_lt { quote!(<#lt>) } else { quote!() };
    Ok(quote! {
        const _: () = {
            use #k::typed::__private as __p;
            impl<#lt> #k::typed::Question<#lt> for #name #generics {
                const KEY: &'static str = #key;
                const FIELDS: &'static [__p::Field<'static>] = &[#(#rows),*];
                const STAND_IN: __p::Option<&'static str> = #stand_in;
                #offers
                fn decode(
                    content: __p::Value<#lt>,
                    offer: &[__p::Choice<'_>],
                ) -> __p::Option<Self> {
                    let _ = offer;
                    __p::Some(#name { #(#inits),* })
                }
            }
        };
    })
}

fn err(t: impl quote::ToTokens, msg: &str) -> syn::Error {
    syn::Error::new_spanned(t, msg)
}

/// An integer bound: a literal, or a constant's value (checked to be an integer).
fn opt_int(lit: Option<i64>, e: &Option<Expr>) -> TokenStream {
    match (lit, e) {
        (Some(n), _) => quote!(__p::Some(#n)),
        (None, Some(e)) => quote!(__p::Some(__p::bound(#e) as i64)),
        (None, None) => quote!(__p::None),
    }
}

fn opt_u32(v: &Option<Bound>) -> TokenStream {
    match v {
        Some(n) => {
            let n = n.as_type("u32");
            quote!(__p::Some(#n))
        }
        None => quote!(__p::None),
    }
}

/// A default as the field's kind keeps it.
fn opt_default(v: &Option<Expr>) -> TokenStream {
    match v {
        Some(e) => quote!(__p::Some(#e)),
        None => quote!(__p::None),
    }
}

/// One field's row in the table, its line in the decode, and its bound if it is a run-time
/// choice.
fn field(f: &syn::Field) -> syn::Result<(TokenStream, TokenStream, Option<syn::Expr>)> {
    let k = crate::krate::krate();
    let ident = f.ident.clone().expect("named field");
    let name = ident.to_string().trim_start_matches("r#").to_string();
    let t = classify(&f.ty);
    let mut a = FieldAttrs::default();
    each(&f.attrs, "field", |key, m| {
        match key {
            "title" => a.title = Some(attrs::string(m)?),
            "default" => a.default = Some(m.value()?.parse()?),
            "min" => {
                let e: Expr = m.value()?.parse()?;
                a.min = attrs::int_of(&e).ok();
                a.min_expr = Some(e);
            }
            "max" => {
                let e: Expr = m.value()?.parse()?;
                a.max = attrs::int_of(&e).ok();
                a.max_expr = Some(e);
            }
            "min_len" => a.min_len = Some(attrs::bound(m)?),
            "max_len" => a.max_len = Some(attrs::bound(m)?),
            "min_items" => a.min_items = Some(attrs::bound(m)?),
            "max_items" => a.max_items = Some(attrs::bound(m)?),
            "format" => a.format = Some(attrs::string(m)?),
            _ => {
                return Err(attrs::unknown(
                    m,
                    "`title`, `default`, `min`, `max`, `min_len`, `max_len`, `format`, \
                     `min_items` and `max_items`",
                ))
            }
        }
        Ok(())
    })?;
    let ty = &f.ty;
    let wrong = |what: &str| {
        Err(err(
            ty,
            &format!("{what} does not apply to this field's type"),
        ))
    };
    let is = |k: fn(&Kind) -> bool| k(&t.kind);
    if (a.min_expr.is_some() || a.max_expr.is_some())
        && !is(|k| matches!(k, Kind::Int(..) | Kind::Float))
    {
        return wrong("`min`/`max`");
    }
    if (a.min_len.is_some() || a.max_len.is_some() || a.format.is_some())
        && !is(|k| matches!(k, Kind::Text))
    {
        return wrong("`min_len`/`max_len`/`format`");
    }
    if (a.min_items.is_some() || a.max_items.is_some()) && !is(|k| matches!(k, Kind::Picks(_))) {
        return wrong("`min_items`/`max_items`");
    }
    let kind = match &t.kind {
        Kind::Bool => {
            let d = opt_default(&a.default);
            quote!(__p::FieldKind::Boolean { default: #d })
        }
        Kind::Int(..) => {
            let (min, max) = (opt_int(a.min, &a.min_expr), opt_int(a.max, &a.max_expr));
            let d = opt_default(&a.default);
            quote!(__p::FieldKind::Integer { min: #min, max: #max, default: #d })
        }
        Kind::Float => {
            let f = |e: &Option<Expr>| match e {
                Some(e) => quote!(__p::Some((#e) as f64)),
                None => quote!(__p::None),
            };
            let (min, max, d) = (f(&a.min_expr), f(&a.max_expr), f(&a.default));
            quote!(__p::FieldKind::Shaped(&#k::typed::NumberField {
                min: #min,
                max: #max,
                default: #d,
            }))
        }
        Kind::Text | Kind::Date => {
            let format =
                match (a.format.as_deref(), &t.kind) {
                    (_, Kind::Date) | (Some("date"), _) => quote!(__p::Some(__p::TextFormat::Date)),
                    (Some("email"), _) => quote!(__p::Some(__p::TextFormat::Email)),
                    (Some("uri"), _) => quote!(__p::Some(__p::TextFormat::Uri)),
                    (Some("date-time"), _) => quote!(__p::Some(__p::TextFormat::DateTime)),
                    (Some(_), _) => return Err(err(
                        ty,
                        "a text field's format is \"email\", \"uri\", \"date\" or \"date-time\"",
                    )),
                    (None, _) => quote!(__p::None),
                };
            let (lo, hi) = (opt_u32(&a.min_len), opt_u32(&a.max_len));
            let d = opt_default(&a.default);
            quote!(__p::FieldKind::Text { min_len: #lo, max_len: #hi, format: #format, default: #d })
        }
        Kind::Choice => {
            let inner = &t.inner;
            let d = choice_default(&a.default, inner)?;
            quote!(__p::FieldKind::Choice {
                options: <#inner as #k::typed::Choices>::OPTIONS,
                default: #d,
            })
        }
        Kind::Picks(e) => {
            let (lo, hi) = (opt_u32(&a.min_items), opt_u32(&a.max_items));
            let d = match &a.default {
                Some(Expr::Array(arr)) => {
                    let vals = arr
                        .elems
                        .iter()
                        .map(|v| choice_value(v, e))
                        .collect::<syn::Result<Vec<_>>>()?;
                    quote!(&[#(#vals),*])
                }
                Some(other) => {
                    return Err(err(
                        other,
                        "a multi-select's default is a list: `[Enum::A, Enum::B]`",
                    ))
                }
                None => quote!(&[]),
            };
            quote!(__p::FieldKind::Shaped(&#k::typed::PicksField {
                options: <#e as #k::typed::Choices>::OPTIONS,
                min_items: #lo,
                max_items: #hi,
                default: #d,
            }))
        }
        Kind::Pick(_) => {
            if a.default.is_some() {
                return Err(err(ty, "a run-time choice has no default"));
            }
            quote!(__p::FieldKind::Choice {
                options: &[],
                default: __p::None
            })
        }
        Kind::Str => {
            return Err(err(
                ty,
                "a text answer is `Text<'a>` (it borrows the answer, decoded as it is read)",
            ))
        }
        Kind::Unsupported(what) => {
            return Err(err(
                ty,
                &format!(
                    "a form field cannot be {what}: a form is a flat object of primitives \
                     (`bool`, an integer, `f64`, `Text<'a>`, `Date`, a `#[derive(Choices)]` enum \
                     or `Picks<E>` of one), in an `Option` when not required"
                ),
            ))
        }
    };
    let title = a.title.unwrap_or_else(|| name.clone());
    let desc = match docs(&f.attrs) {
        Some(d) => quote!(__p::Some(#d)),
        None => quote!(__p::None),
    };
    let required = !t.optional;
    let row = quote!(__p::Field { name: #name, title: #title, description: #desc, required: #required, kind: #kind });
    let inner = &t.inner;
    let read = match &t.kind {
        Kind::Pick(n) => quote!(__p::pick::<{ #n }>(content, #name, offer)),
        _ => quote!(__p::field::<#inner>(content, #name)),
    };
    let init = if required {
        quote!(#ident: #read??)
    } else {
        quote!(#ident: #read?)
    };
    let pick = match t.kind {
        Kind::Pick(n) => Some(*n),
        _ => None,
    };
    Ok((row, init, pick))
}

/// A `Choices` default (`Enum::Variant`) as its value.
fn choice_default(d: &Option<Expr>, e: &syn::Type) -> syn::Result<TokenStream> {
    match d {
        Some(v) => {
            let v = choice_value(v, e)?;
            Ok(quote!(__p::Some(#v)))
        }
        None => Ok(quote!(__p::None)),
    }
}

fn choice_value(v: &Expr, e: &syn::Type) -> syn::Result<TokenStream> {
    let k = crate::krate::krate();
    if let Expr::Lit(l) = v {
        if let Lit::Str(_) = l.lit {
            return Err(err(v, "name the option as its variant: `Enum::Variant`"));
        }
    }
    Ok(quote!(<#e as #k::typed::Choices>::OPTIONS[#v as usize].value))
}
