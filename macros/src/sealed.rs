//! `#[derive(Sealed)]`: a struct to a fixed-size encoding (its fields one after another, each
//! in its own fixed size), for the state a tool seals in `requestState`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, Index, Member};

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let k = crate::krate::krate();
    let Data::Struct(s) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "`#[derive(Sealed)]` goes on a struct (its fields are encoded one after another)",
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "sealed state owns its values: no lifetimes or generics",
        ));
    }
    let name = &input.ident;
    let members: Vec<Member> = s
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.ident {
            Some(id) => Member::Named(id.clone()),
            None => Member::Unnamed(Index::from(i)),
        })
        .collect();
    let types: Vec<_> = s.fields.iter().map(|f| &f.ty).collect();
    let build = match &s.fields {
        Fields::Unit => quote!(#name),
        _ => quote!(#name { #(#members: __p::take_at::<#types>(bytes, &mut at)?),* }),
    };
    Ok(quote! {
        const _: () = {
            use #k::typed::__private as __p;
            impl #k::typed::Sealed for #name {
                const SIZE: usize = 0 #(+ <#types as #k::typed::Sealed>::SIZE)*;
                fn put(&self, out: &mut [u8]) {
                    let mut at = 0;
                    #(__p::put_at(&self.#members, out, &mut at);)*
                    let _ = (out, at);
                }
                #[allow(unused_mut, unused_variables)]
                fn take(bytes: &[u8]) -> __p::Option<Self> {
                    let mut at = 0;
                    __p::Some(#build)
                }
            }
        };
    })
}
