//! `#[derive(Choices)]`: a unit enum to the options of a select (values and titles), for a
//! form field, a multi-select's `Picks` or a tool argument.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::attrs::{self, docs, each};
use crate::json;

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let k = crate::krate::krate();
    let Data::Enum(e) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "`#[derive(Choices)]` goes on a unit enum: its variants are the options",
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "a choice enum takes no generics",
        ));
    }
    let name = &input.ident;
    let mut options = Vec::new();
    let mut all = Vec::new();
    let mut arms = Vec::new();
    let mut one_of = Vec::new();
    for (i, v) in e.variants.iter().enumerate() {
        if !matches!(v.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(
                v,
                "a choice is a unit variant: a form offers a value and a title, not data",
            ));
        }
        if let Some((_, d)) = &v.discriminant {
            return Err(syn::Error::new_spanned(
                d,
                "a choice's index is its position: drop the discriminant",
            ));
        }
        let ident = &v.ident;
        let mut value = json::snake(&ident.to_string());
        let mut title = docs(&v.attrs);
        each(&v.attrs, "choice", |key, m| {
            match key {
                "value" => value = attrs::string(m)?,
                "title" => title = Some(attrs::string(m)?),
                _ => return Err(attrs::unknown(m, "`value` and `title`")),
            }
            Ok(())
        })?;
        let title = title.unwrap_or_else(|| value.clone());
        if options.iter().any(|(v, _): &(String, String)| *v == value) {
            return Err(syn::Error::new_spanned(v, "two options with one value"));
        }
        one_of.push(format!(
            r#"{{"const":{},"title":{}}}"#,
            json::string(&value),
            json::string(&title)
        ));
        all.push(quote!(#name::#ident));
        arms.push(quote!(#name::#ident => #i));
        options.push((value, title));
    }
    if options.is_empty() {
        return Err(syn::Error::new_spanned(
            name,
            "a choice enum needs at least one variant",
        ));
    }
    let one_of = format!(r#""oneOf":[{}]"#, one_of.join(","));
    let rows = options
        .iter()
        .map(|(v, t)| quote!(__p::Choice { value: #v, title: &#t }));
    Ok(quote! {
        const _: () = {
            use #k::typed::__private as __p;
            impl #k::typed::Choices for #name {
                const OPTIONS: &'static [__p::Choice<'static>] = &[#(#rows),*];
                const ALL: &'static [Self] = &[#(#all),*];
                const ONE_OF: &'static str = #one_of;
                fn index(self) -> usize {
                    match self { #(#arms),* }
                }
            }
            impl<'__s> #k::typed::ArgValue<'__s> for #name {
                fn read(
                    v: __p::Value<'__s>,
                    _: &mut #k::typed::Scratch<'__s>,
                ) -> __p::Option<Self> {
                    <Self as #k::typed::Choices>::named(v)
                }
            }
            impl<'__a> #k::typed::FieldValue<'__a> for #name {
                fn decode(v: __p::Value<'__a>) -> __p::Option<Self> {
                    <Self as #k::typed::Choices>::named(v)
                }
            }
        };
    })
}
