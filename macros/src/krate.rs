//! The path the generated code names redmark-core by, as the crate being compiled depends on
//! it: `redmark-core` itself, or the shell crate `redmark` (which re-exports it as `core`).

use proc_macro2::{Span, TokenStream};
use proc_macro_crate::{crate_name, FoundCrate};
use quote::{format_ident, quote};

/// The name the compiled crate gives a dependency, if it has it (`Itself` inside that crate).
fn found(package: &str) -> Option<FoundCrate> {
    crate_name(package).ok()
}

/// `::redmark_core` (renamed as the manifest renames it), or `::redmark::core` in a crate that
/// depends on `redmark` only. With neither, `::redmark_core`: [`check`] reports it.
pub fn krate() -> TokenStream {
    match (found("redmark-core"), found("redmark")) {
        // The core itself (`extern crate self as redmark_core`), its tests and examples.
        (Some(FoundCrate::Itself), _) | (None, None) => quote!(::redmark_core),
        (Some(FoundCrate::Name(n)), _) => {
            let n = format_ident!("{n}");
            quote!(::#n)
        }
        (None, Some(FoundCrate::Itself)) => quote!(crate::core),
        (None, Some(FoundCrate::Name(n))) => {
            let n = format_ident!("{n}");
            quote!(::#n::core)
        }
    }
}

/// An error naming the dependency to add when the crate has neither `redmark` nor
/// `redmark-core` (the generated code would otherwise fail on a path the user never wrote).
pub fn check() -> syn::Result<()> {
    if found("redmark-core").is_some() || found("redmark").is_some() {
        return Ok(());
    }
    Err(syn::Error::new(
        Span::call_site(),
        "redmark's derives need `redmark` (the shell: a server with its transports) or \
         `redmark-core` (the no_std engine) as a dependency of this crate: add one to \
         `[dependencies]` in its Cargo.toml, e.g. `redmark-core = { path = \"…/redmark/core\" }` \
         (docs/writing-a-tool.md)",
    ))
}
