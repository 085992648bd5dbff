//! The path the generated code names redmark-core by, as the crate being compiled depends on
//! it: `redmark-core` itself, or the shell crate `redmark` (which re-exports it as `core`).

use proc_macro2::TokenStream;
use quote::quote;

/// `::redmark_core`, or `::redmark::core` in a crate that depends on `redmark` only.
pub fn krate() -> TokenStream {
    quote!(::redmark_core)
}
