//! `Serialize`: a struct with named fields, or an enum's struct variant, is written as a map of
//! its fields (serde_json writes the same for a map as for a struct).

use crate::Header;
use crate::parse::{Body, Error, Field, Fields, Item};

pub(crate) fn expand(item: &Item) -> Result<String, Error> {
    let Header { decl, ty, bounds } = Header::new(item, None, "::serde::Serialize");
    let body = match &item.body {
        Body::Struct(fields) => struct_body(item, fields)?,
        Body::Enum(variants) => {
            let mut arms = String::new();
            for (index, variant) in variants.iter().enumerate() {
                let key = variant.key(item.attrs.rename_all.as_deref());
                let name = &variant.name;
                let rename_all = variant.attrs.rename_all.as_deref();
                let arm = match (&variant.fields, &item.attrs) {
                    (Fields::Unit, attrs) if attrs.untagged => {
                        format!(
                            "Self::{name} => ::serde::Serializer::serialize_unit(__serializer),"
                        )
                    }
                    (Fields::Unit, attrs) if attrs.tag.is_some() => {
                        let map =
                            map_body(&[], rename_all, Some((attrs.tag.as_deref(), key.as_str())));
                        format!("Self::{name} => {{ {map} }}")
                    }
                    (Fields::Unit, _) => format!(
                        "Self::{name} => ::serde::Serializer::serialize_unit_variant(\
                         __serializer, {:?}, {index}, {key:?}),",
                        item.name
                    ),
                    (Fields::Tuple(f), attrs) if f.len() == 1 && attrs.untagged => format!(
                        "Self::{name}(__f0) => ::serde::Serialize::serialize(__f0, __serializer),"
                    ),
                    (Fields::Tuple(f), attrs) if f.len() == 1 && attrs.tag.is_none() => format!(
                        "Self::{name}(__f0) => ::serde::Serializer::serialize_newtype_variant(\
                         __serializer, {:?}, {index}, {key:?}, __f0),",
                        item.name
                    ),
                    (Fields::Named(fields), attrs) if attrs.untagged || attrs.tag.is_some() => {
                        let tag = attrs.tag.as_deref().map(|tag| (Some(tag), key.as_str()));
                        let map = map_body(fields, rename_all, tag);
                        format!("Self::{name} {{ {} .. }} => {{ {map} }}", bindings(fields))
                    }
                    _ => {
                        return Err(Error::at(
                            variant.span,
                            format!(
                                "variant `{name}`: no tuple variant of more than one field, no struct \
                             variant in an externally tagged enum, no newtype variant in an \
                             internally tagged one"
                            ),
                        ));
                    }
                };
                arms.push_str(&arm);
            }
            format!("match self {{ {arms} }}")
        }
    };
    let entries = match &item.body {
        Body::Struct(Fields::Named(fields)) if !item.attrs.transparent => {
            entries_method(item, fields)
        }
        _ => String::new(),
    };
    Ok(format!(
        "{entries}
         #[automatically_derived]
         impl{decl} ::serde::Serialize for {ty} {bounds} {{
             fn serialize<__S>(&self, __serializer: __S)
                 -> ::core::result::Result<__S::Ok, __S::Error>
             where __S: ::serde::Serializer {{ {body} }}
         }}"
    ))
}

fn struct_body(item: &Item, fields: &Fields) -> Result<String, Error> {
    let name = &item.name;
    let shown: Vec<&Field> = match fields {
        Fields::Named(f) | Fields::Tuple(f) => f.iter().filter(|f| !f.attrs.skip).collect(),
        Fields::Unit => Vec::new(),
    };
    if item.attrs.transparent && shown.len() != 1 {
        return Err(Error::from("`transparent` needs exactly one field"));
    }
    Ok(match fields {
        Fields::Unit => {
            format!("::serde::Serializer::serialize_unit_struct(__serializer, {name:?})")
        }
        Fields::Named(_) if item.attrs.transparent => format!(
            "::serde::Serialize::serialize(&self.{}, __serializer)",
            shown[0].ident
        ),
        Fields::Named(_) => "let mut __map = ::serde::Serializer::serialize_map(\
                             __serializer, ::core::option::Option::None)?;
                             self.__wire_entries(&mut __map)?;
                             ::serde::ser::SerializeMap::end(__map)"
            .to_owned(),
        // A newtype struct is its field on the wire (serde_json writes no wrapper either).
        Fields::Tuple(fields) if fields.len() == 1 || item.attrs.transparent => format!(
            "::serde::Serialize::serialize(&self.{}, __serializer)",
            shown[0].ident
        ),
        Fields::Tuple(_) => {
            let mut body = format!(
                "use ::serde::ser::SerializeTupleStruct as _;
                 let mut __t = ::serde::Serializer::serialize_tuple_struct(\
                 __serializer, {name:?}, {})?;",
                shown.len()
            );
            for field in &shown {
                body.push_str(&format!("__t.serialize_field(&self.{})?;", field.ident));
            }
            body.push_str("__t.end()");
            body
        }
    })
}

/// `a: __f0, b: __f1,` for the fields written (a skipped field is left to `..`).
fn bindings(fields: &[Field]) -> String {
    fields
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.attrs.skip)
        .map(|(i, f)| format!("{}: __f{i},", f.ident))
        .collect()
}

/// The fields bound as `__f0`, `__f1`, ... (references) written as one map, after the tag entry
/// of an internally tagged variant.
fn map_body(
    fields: &[Field],
    rename_all: Option<&str>,
    tag: Option<(Option<&str>, &str)>,
) -> String {
    let mut body = String::from(
        "let mut __map = ::serde::Serializer::serialize_map(\
         __serializer, ::core::option::Option::None)?;
         let __m = &mut __map;",
    );
    if let Some((Some(tag), value)) = tag {
        body.push_str(&format!(
            "::serde::ser::SerializeMap::serialize_entry(__m, {tag:?}, {value:?})?;"
        ));
    }
    body.push_str(&entries(fields, rename_all));
    body.push_str("::serde::ser::SerializeMap::end(__map)");
    body
}

/// A struct's fields, bound as `__f0`, `__f1`, ..., written into the map `__m` (a `&mut`).
fn entries(fields: &[Field], rename_all: Option<&str>) -> String {
    let mut body = String::new();
    for (i, field) in fields.iter().enumerate() {
        if field.attrs.skip {
            continue;
        }
        let key = field.key(rename_all);
        let write = if field.attrs.flatten && field.is_map() {
            format!(
                "for (__k, __v) in __f{i} {{
                     ::serde::ser::SerializeMap::serialize_entry(__m, __k, __v)?;
                 }}"
            )
        } else if field.attrs.flatten {
            // A struct's entries, in its order: the struct derived this crate's `Serialize`,
            // which gives it `__wire_entries`.
            match field.option_inner() {
                Some(inner) => format!(
                    "if let ::core::option::Option::Some(__x) = __f{i} {{
                         <{inner}>::__wire_entries(__x, __m)?;
                     }}"
                ),
                None => format!("<{}>::__wire_entries(__f{i}, __m)?;", field.ty()),
            }
        } else if let Some(with) = &field.attrs.with {
            let ty = field.ty();
            format!(
                "struct __With<'__w>(&'__w {ty});
                 impl ::serde::Serialize for __With<'_> {{
                     fn serialize<__S2>(&self, __s: __S2)
                         -> ::core::result::Result<__S2::Ok, __S2::Error>
                     where __S2: ::serde::Serializer {{ {with}::serialize(self.0, __s) }}
                 }}
                 ::serde::ser::SerializeMap::serialize_entry(__m, {key:?}, &__With(__f{i}))?;"
            )
        } else {
            format!("::serde::ser::SerializeMap::serialize_entry(__m, {key:?}, __f{i})?;")
        };
        match &field.attrs.skip_serializing_if {
            Some(path) => body.push_str(&format!("if !{path}(__f{i}) {{ {write} }}")),
            None => body.push_str(&format!("{{ {write} }}")),
        }
    }
    body
}

/// `__wire_entries`: a struct's fields as entries of a map being written, for its own
/// `Serialize` and for a struct that flattens it.
fn entries_method(item: &Item, fields: &[Field]) -> String {
    let Header { decl, ty, bounds } = Header::new(item, None, "::serde::Serialize");
    format!(
        "#[automatically_derived]
         impl{decl} {ty} {bounds} {{
             #[doc(hidden)]
             pub fn __wire_entries<__M: ::serde::ser::SerializeMap>(&self, __m: &mut __M)
                 -> ::core::result::Result<(), __M::Error> {{
                 let {} {{ {} .. }} = self;
                 {}
                 ::core::result::Result::Ok(())
             }}
         }}",
        item.name,
        bindings(fields),
        entries(fields, item.attrs.rename_all.as_deref())
    )
}
