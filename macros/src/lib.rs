//! Derives for redmark-core (re-exported as `redmark_core::typed`): a tool's arguments, a
//! form's question, its choices, a tool's sealed state and an app's tool table, each declared
//! once as a Rust type and checked at compile time, with no heap in what they generate.

mod app;
mod args;
mod attrs;
mod choices;
mod json;
mod krate;
mod question;
mod sealed;
mod types;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Collects the result of a derive: the generated code or its compile errors (first of all,
/// a crate that has neither `redmark` nor `redmark-core` to name the generated paths by).
fn emit(r: syn::Result<proc_macro2::TokenStream>) -> TokenStream {
    krate::check()
        .and(r)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A tool's arguments: the `inputSchema`, the engine's checks, `Mcp-Param-*` mirroring and a
/// zero-copy read (`redmark_core::typed::Args`). Field attribute
/// `#[arg(max_len = N, min = N, max = N, format = "date", header = "Name")]`, struct
/// attribute `#[args(open)]` (no `additionalProperties: false`); doc comments describe.
#[proc_macro_derive(Args, attributes(arg, args))]
pub fn derive_args(input: TokenStream) -> TokenStream {
    emit(args::derive(parse_macro_input!(input as DeriveInput)))
}

/// A form question: its fields and the decode of an accepted answer
/// (`redmark_core::typed::Question`). Struct attribute `#[question(key = "…", stand_in =
/// "argument")]` (the tool argument a client without forms is told to give instead); field
/// attribute `#[field(title = "…", default = …, min = N, max = N, min_len = N, max_len = N,
/// format = "email", min_items = N, max_items = N)]`; doc comments describe.
#[proc_macro_derive(Question, attributes(question, field))]
pub fn derive_question(input: TokenStream) -> TokenStream {
    emit(question::derive(parse_macro_input!(input as DeriveInput)))
}

/// A unit enum as the options of a select (`redmark_core::typed::Choices`). Variant
/// attribute `#[choice(value = "…", title = "…")]` (value: the variant in snake_case; title:
/// its doc comment).
#[proc_macro_derive(Choices, attributes(choice))]
pub fn derive_choices(input: TokenStream) -> TokenStream {
    emit(choices::derive(parse_macro_input!(input as DeriveInput)))
}

/// A fixed-size encoding of a struct for `requestState` (`redmark_core::typed::Sealed`).
#[proc_macro_derive(Sealed)]
pub fn derive_sealed(input: TokenStream) -> TokenStream {
    emit(sealed::derive(parse_macro_input!(input as DeriveInput)))
}

/// An `impl App for YourType` whose `#[tool]` methods are its tools: writes the tool enum
/// (`#[app(tools = Name)]`, else `YourTypeTool`), the `tools/list` table and `call_tool`, which
/// checks and reads a call's arguments into the method's argument type (scratch and all) and
/// calls the method. A tool method is `fn name(&mut self, args: A, call: &Call, reply: Reply)
/// -> Replied` (or `async fn`, or `&self`), `A` a `#[derive(Args)]` struct; its doc comment
/// is the description. Method attribute `#[tool(name = "…", title = "…", schema = CONST,
/// meta = CONST (the tool's `_meta`, raw JSON), read_only, destructive, idempotent, answers_need_state, salient = all | salient("a", "b"))]`
/// (name: the method's).
#[proc_macro_attribute]
pub fn app(options: TokenStream, item: TokenStream) -> TokenStream {
    let options = match app::parse_options(options.into()) {
        Ok(o) => o,
        Err(e) => return e.into_compile_error().into(),
    };
    emit(app::expand(
        options,
        parse_macro_input!(item as syn::ItemImpl),
    ))
}
