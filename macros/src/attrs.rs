//! Attribute reading shared by the derives: doc comments, and `key = value` / flag lists.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Lit, LitStr, UnOp};

/// The doc comment, its lines trimmed and joined with one space (`None`: no doc comment).
pub fn docs(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &a.meta {
            if let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
            {
                let line = s.value();
                let line = line.trim();
                if !line.is_empty() {
                    lines.push(line.to_string());
                }
            }
        }
    }
    (!lines.is_empty()).then(|| lines.join(" "))
}

/// Runs `each` on every item of every `#[name(…)]` attribute, with the item's key (`""` for
/// a path that is not one identifier).
pub fn each(
    attrs: &[Attribute],
    name: &str,
    mut each: impl FnMut(&str, &ParseNestedMeta) -> syn::Result<()>,
) -> syn::Result<()> {
    for a in attrs.iter().filter(|a| a.path().is_ident(name)) {
        if let syn::Meta::Path(_) = a.meta {
            continue; // `#[tool]`: nothing said
        }
        a.parse_nested_meta(|m| {
            let key = m.path.get_ident().map(|i| i.to_string());
            each(key.as_deref().unwrap_or_default(), &m)
        })?;
    }
    Ok(())
}

/// `= "text"`.
pub fn string(m: &ParseNestedMeta) -> syn::Result<String> {
    Ok(m.value()?.parse::<LitStr>()?.value())
}

/// A bound as written: an integer literal (known to the derive), or a constant's name or any
/// constant expression (known to the compiler: the schema takes its digits in a constant).
pub enum Bound {
    /// `= 64`, `= -5`.
    Lit(i64),
    /// `= MAX_ROOM_HINT`.
    Const(Expr),
}

impl Bound {
    /// The literal, if it is one.
    pub fn lit(&self) -> Option<i64> {
        match self {
            Bound::Lit(n) => Some(*n),
            Bound::Const(_) => None,
        }
    }

    /// Its value as an expression of type `ty` (`i64`, `u32`…), checked to be an integer.
    pub fn as_type(&self, ty: &str) -> proc_macro2::TokenStream {
        let ty: syn::Type = syn::parse_str(ty).expect("a type");
        match self {
            Bound::Lit(n) => quote::quote!((#n as #ty)),
            Bound::Const(e) => quote::quote!((__p::bound(#e) as #ty)),
        }
    }
}

/// `= N`, `= -N` or `= CONSTANT`.
pub fn bound(m: &ParseNestedMeta) -> syn::Result<Bound> {
    let e: Expr = m.value()?.parse()?;
    Ok(match int_of(&e) {
        Ok(n) => Bound::Lit(n),
        Err(_) => Bound::Const(e),
    })
}

/// An integer literal, possibly negated.
pub fn int_of(e: &Expr) -> syn::Result<i64> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse(),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => Ok(-int_of(expr)?),
        Expr::Group(g) => int_of(&g.expr),
        _ => Err(syn::Error::new_spanned(
            e,
            "expected an integer literal (the schema is written at compile time)",
        )),
    }
}

/// The error for an item the attribute does not take.
pub fn unknown(m: &ParseNestedMeta, takes: &str) -> syn::Error {
    m.error(format!("unknown item: this attribute takes {takes}"))
}
