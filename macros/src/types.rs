//! What a field's Rust type is to a schema: a string, an integer (with its range), a boolean,
//! a date, a text answer, picks of a choice, a `Choices` enum, or something no schema here
//! can express (with what to write instead).

use syn::{GenericArgument, PathArguments, Type};

/// A field's type, seen through an `Option`.
pub struct FieldType {
    /// Whether it is an `Option<…>` (not required).
    pub optional: bool,
    /// The type inside.
    pub inner: Type,
    /// What it is.
    pub kind: Kind,
}

/// The scalar kinds the derives understand.
pub enum Kind {
    /// `&str`.
    Str,
    /// An integer type, with its range.
    Int(i64, i64),
    /// `bool`.
    Bool,
    /// `Date`.
    Date,
    /// `f64` (a form's `number`).
    Float,
    /// `Text<'a>`.
    Text,
    /// `Picks<E>` of this enum.
    Picks(Box<Type>),
    /// `Pick<N>`: one of at most `N` options offered at run time.
    Pick(Box<syn::Expr>),
    /// Any other path: a `Choices` enum (the trait bound says so if it is not).
    Choice,
    /// Not expressible; the hint says what to write instead.
    Unsupported(&'static str),
}

impl Kind {
    /// Whether a value of this kind is a JSON string, number or boolean.
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Kind::Picks(_) | Kind::Pick(_) | Kind::Unsupported(_))
    }
}

/// What `ty` is.
pub fn classify(ty: &Type) -> FieldType {
    if let Some(inner) = generic_of(ty, "Option") {
        return FieldType {
            optional: true,
            kind: kind(&inner),
            inner,
        };
    }
    FieldType {
        optional: false,
        kind: kind(ty),
        inner: ty.clone(),
    }
}

/// The one type argument of `ty` if it is the path `wrapper<T>`.
fn generic_of(ty: &Type, wrapper: &str) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    match a.args.first()? {
        GenericArgument::Type(t) if a.args.len() == 1 => Some(t.clone()),
        _ => None,
    }
}

/// The one const argument of a path type (`Pick<N>`, `Pick<{ N }>`).
pub fn const_of(ty: &Type) -> Option<syn::Expr> {
    let Type::Path(p) = ty else { return None };
    let PathArguments::AngleBracketed(a) = &p.path.segments.last()?.arguments else {
        return None;
    };
    match a.args.first()? {
        GenericArgument::Const(e) => Some(e.clone()),
        // A constant's name parses as a type.
        GenericArgument::Type(Type::Path(t)) => Some(syn::Expr::Path(syn::ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: t.path.clone(),
        })),
        _ => None,
    }
}

fn kind(ty: &Type) -> Kind {
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) if p.path.is_ident("str") => Kind::Str,
            _ => Kind::Unsupported("a reference to anything but `str`"),
        },
        Type::Group(g) => kind(&g.elem),
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return Kind::Unsupported("an empty path");
            };
            match last.ident.to_string().as_str() {
                "u8" => Kind::Int(0, u8::MAX.into()),
                "u16" => Kind::Int(0, u16::MAX.into()),
                "u32" => Kind::Int(0, u32::MAX.into()),
                "u64" => Kind::Int(0, i64::MAX),
                "i8" => Kind::Int(i8::MIN.into(), i8::MAX.into()),
                "i16" => Kind::Int(i16::MIN.into(), i16::MAX.into()),
                "i32" => Kind::Int(i32::MIN.into(), i32::MAX.into()),
                "i64" => Kind::Int(i64::MIN, i64::MAX),
                "bool" => Kind::Bool,
                "Date" => Kind::Date,
                "Text" => Kind::Text,
                "Pick" => match const_of(ty) {
                    Some(n) => Kind::Pick(Box::new(n)),
                    None => Kind::Unsupported("`Pick` without its bound (`Pick<N>`)"),
                },
                "Picks" => match generic_of(ty, "Picks") {
                    Some(e) => Kind::Picks(Box::new(e)),
                    None => Kind::Unsupported("`Picks` without its enum"),
                },
                "String" => Kind::Unsupported("an owned `String` (it needs a heap)"),
                "Vec" => Kind::Unsupported("a `Vec` (a list needs a heap)"),
                "f64" => Kind::Float,
                "f32" => Kind::Unsupported("an `f32` (a number field is `f64`)"),
                "usize" | "isize" | "u128" | "i128" => {
                    Kind::Unsupported("an integer of this width")
                }
                "char" => Kind::Unsupported("a `char`"),
                _ => Kind::Choice,
            }
        }
        Type::Array(_) | Type::Slice(_) => Kind::Unsupported("an array"),
        Type::Tuple(_) => Kind::Unsupported("a tuple"),
        _ => Kind::Unsupported("this type"),
    }
}
