//! `Deserialize`: visitors as serde's derive writes them for JSON (a map of fields, a string or a
//! single-entry map for an externally tagged enum); internally tagged and untagged enums, and
//! flattened fields, go through a `serde_json` value.

use crate::Header;
use crate::parse::{Attrs, Body, Error, Field, Fields, Item, Variant};

const OK: &str = "::core::result::Result::Ok";
const ERR: &str = "::core::result::Result::Err";

pub(crate) fn expand(item: &Item) -> Result<String, Error> {
    let Header { decl, ty, bounds } = Header::new(item, Some("'de"), "::serde::Deserialize<'de>");
    let name = &item.name;
    if let Some(field) = item.fields().find(|f| f.borrows_static()) {
        return Err(Error::at(
            field.span,
            format!(
                "field `{}` borrows `'static` data, which no input outlives: derive only Serialize",
                field.ident
            ),
        ));
    }
    let body = match &item.body {
        Body::Struct(Fields::Unit) => {
            format!("<() as ::serde::Deserialize>::deserialize(__deserializer)?; {OK}({name})")
        }
        Body::Struct(Fields::Named(fields)) if item.attrs.transparent => {
            let [field] = fields.as_slice() else {
                return Err(Error::from("`transparent` needs exactly one field"));
            };
            format!(
                "{OK}({name} {{ {}: <{} as ::serde::Deserialize>::deserialize(__deserializer)? }})",
                field.ident,
                field.ty()
            )
        }
        Body::Struct(Fields::Named(fields)) => {
            let visitor = visitor(item, "__Visitor", &format!("struct {name}"), {
                map_fields(name, fields, item.attrs.rename_all.as_deref())
            });
            format!(
                "{visitor} ::serde::Deserializer::deserialize_map(__deserializer, {})",
                new("__Visitor")
            )
        }
        Body::Struct(Fields::Tuple(fields)) if fields.len() == 1 => format!(
            "{OK}({name}(<{} as ::serde::Deserialize>::deserialize(__deserializer)?))",
            fields[0].ty()
        ),
        Body::Struct(Fields::Tuple(fields)) => tuple_struct(item, fields),
        Body::Enum(variants) => {
            let rename_all = item.attrs.rename_all.as_deref();
            let keys: Vec<String> = variants.iter().map(|v| v.key(rename_all)).collect();
            let list: String = keys.iter().map(|k| format!("{k:?},")).collect();
            let variants_const = format!("const __VARIANTS: &[&str] = &[{list}];");
            let body = if let Some(tag) = &item.attrs.tag {
                internally_tagged(item, tag, &keys)?
            } else if item.attrs.untagged {
                untagged(item)?
            } else {
                externally_tagged(item, &keys)?
            };
            format!("{variants_const} {body}")
        }
    };
    Ok(format!(
        "#[automatically_derived]
         impl{decl} ::serde::Deserialize<'de> for {ty} {bounds} {{
             fn deserialize<__D>(__deserializer: __D) -> ::core::result::Result<Self, __D::Error>
             where __D: ::serde::Deserializer<'de> {{ {body} }}
         }}"
    ))
}

fn new(visitor: &str) -> String {
    format!("{visitor} {{ __marker: ::core::marker::PhantomData }}")
}

/// A visitor struct named `visitor` producing the item's type, with `methods`, and `expecting`
/// for the errors.
fn visitor(item: &Item, visitor: &str, expecting: &str, methods: String) -> String {
    let Header { decl, ty, bounds } = Header::new(item, Some("'de"), "::serde::Deserialize<'de>");
    let params: String = item
        .params
        .iter()
        .map(|p| format!(", {} {}", p.name, p.bounds))
        .collect();
    let names: String = item
        .params
        .iter()
        .map(|p| format!(", {}", p.name))
        .collect();
    format!(
        "struct {visitor}<'de{params}> {{
             __marker: ::core::marker::PhantomData<({ty}, &'de ())>,
         }}
         impl{decl} ::serde::de::Visitor<'de> for {visitor}<'de{names}> {bounds} {{
             type Value = {ty};
             fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{
                 __f.write_str({expecting:?})
             }}
             {}
         }}",
        methods
    )
}

/// `visit_map` building `ctor { ... }` from the fields: unknown keys are skipped (or kept for
/// the flattened fields), a repeated key is an error, a missing one takes its default, `None`
/// for an `Option`, or is an error.
fn map_fields(ctor: &str, fields: &[Field], rename_all: Option<&str>) -> String {
    let flatten = fields.iter().any(|f| f.attrs.flatten);
    let read: Vec<(usize, &Field)> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.attrs.skip && !f.attrs.flatten)
        .collect();
    let variants: String = read.iter().map(|(i, _)| format!("__f{i},")).collect();
    let other = if flatten {
        "__other(::std::string::String)"
    } else {
        "__ignore"
    };
    let arms: String = read
        .iter()
        .map(|(i, f)| format!("{:?} => __Field::__f{i},", f.key(rename_all)))
        .collect();
    let unknown = if flatten {
        "__Field::__other(::std::borrow::ToOwned::to_owned(__v))"
    } else {
        "__Field::__ignore"
    };
    let mut code = format!(
        "enum __Field {{ {variants} {other} }}
         impl<'de> ::serde::Deserialize<'de> for __Field {{
             fn deserialize<__D>(__d: __D) -> ::core::result::Result<Self, __D::Error>
             where __D: ::serde::Deserializer<'de> {{
                 struct __FieldVisitor;
                 impl<'de> ::serde::de::Visitor<'de> for __FieldVisitor {{
                     type Value = __Field;
                     fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>)
                         -> ::core::fmt::Result {{ __f.write_str(\"a field name\") }}
                     fn visit_str<__E>(self, __v: &str) -> ::core::result::Result<__Field, __E>
                     where __E: ::serde::de::Error {{
                         {OK}(match __v {{ {arms} _ => {unknown} }})
                     }}
                 }}
                 ::serde::Deserializer::deserialize_identifier(__d, __FieldVisitor)
             }}
         }}"
    );
    for (i, field) in &read {
        let ty = field.ty();
        code.push_str(&format!(
            "let mut __v{i}: ::core::option::Option<{ty}> = ::core::option::Option::None;"
        ));
        if let Some(with) = &field.attrs.with {
            code.push_str(&format!(
                "struct __DeWith{i}({ty});
                 impl<'de> ::serde::Deserialize<'de> for __DeWith{i} {{
                     fn deserialize<__D2>(__d: __D2) -> ::core::result::Result<Self, __D2::Error>
                     where __D2: ::serde::Deserializer<'de> {{
                         {with}::deserialize(__d).map(__DeWith{i})
                     }}
                 }}"
            ));
        }
    }
    if flatten {
        code.push_str("let mut __rest = ::serde_json::Map::new();");
    }
    let mut arms = String::new();
    for (i, field) in &read {
        let key = field.key(rename_all);
        let value = match &field.attrs.with {
            Some(_) => format!("::serde::de::MapAccess::next_value::<__DeWith{i}>(&mut __map)?.0"),
            None => format!(
                "::serde::de::MapAccess::next_value::<{}>(&mut __map)?",
                field.ty()
            ),
        };
        arms.push_str(&format!(
            "__Field::__f{i} => {{
                 if ::core::option::Option::is_some(&__v{i}) {{
                     return {ERR}(<__A::Error as ::serde::de::Error>::duplicate_field({key:?}));
                 }}
                 __v{i} = ::core::option::Option::Some({value});
             }}"
        ));
    }
    if flatten {
        arms.push_str(
            "__Field::__other(__k) => {
                 let __x = ::serde::de::MapAccess::next_value::<::serde_json::Value>(&mut __map)?;
                 __rest.insert(__k, __x);
             }",
        );
    } else {
        arms.push_str(
            "__Field::__ignore => {
                 ::serde::de::MapAccess::next_value::<::serde::de::IgnoredAny>(&mut __map)?;
             }",
        );
    }
    code.push_str(&format!(
        "while let ::core::option::Option::Some(__key) =
             ::serde::de::MapAccess::next_key::<__Field>(&mut __map)? {{
             match __key {{ {arms} }}
         }}"
    ));
    let last_flatten = fields.iter().rposition(|f| f.attrs.flatten);
    let mut built = String::new();
    for (i, field) in fields.iter().enumerate() {
        let ty = field.ty();
        let value = if field.attrs.skip {
            default_value(&field.attrs)
        } else if field.attrs.flatten {
            let rest = if Some(i) == last_flatten {
                "__rest"
            } else {
                "::core::clone::Clone::clone(&__rest)"
            };
            match field.option_inner() {
                // As serde: `Some` when the entries make one, else `None`.
                Some(inner) => format!(
                    "<{inner} as ::serde::Deserialize>::deserialize(\
                     ::serde_json::Value::Object({rest})).ok()"
                ),
                None => format!(
                    "<{ty} as ::serde::Deserialize>::deserialize(\
                     ::serde_json::Value::Object({rest}))\
                     .map_err(<__A::Error as ::serde::de::Error>::custom)?"
                ),
            }
        } else {
            let missing = match &field.attrs.default {
                Some(_) => default_value(&field.attrs),
                None if field.attrs.with.is_none() && field.option_inner().is_some() => {
                    "::core::option::Option::None".to_owned()
                }
                None => format!(
                    "return {ERR}(<__A::Error as ::serde::de::Error>::missing_field({:?}))",
                    field.key(rename_all)
                ),
            };
            format!(
                "match __v{i} {{
                     ::core::option::Option::Some(__x) => __x,
                     ::core::option::Option::None => {missing},
                 }}"
            )
        };
        code.push_str(&format!("let __r{i}: {ty} = {value};"));
        built.push_str(&format!("{}: __r{i},", field.ident));
    }
    format!(
        "fn visit_map<__A>(self, mut __map: __A) -> ::core::result::Result<Self::Value, __A::Error>
         where __A: ::serde::de::MapAccess<'de> {{
             {code}
             {OK}({ctor} {{ {built} }})
         }}"
    )
}

/// A field's value when the input leaves it out and it says `default` or `default = "path"`, or
/// when it is skipped.
fn default_value(attrs: &Attrs) -> String {
    match &attrs.default {
        Some(Some(path)) => format!("{path}()"),
        _ => "::core::default::Default::default()".to_owned(),
    }
}

fn tuple_struct(item: &Item, fields: &[Field]) -> String {
    let name = &item.name;
    let count = fields.len();
    let expecting = format!("tuple struct {name}");
    let visitor = visitor(item, "__Visitor", &expecting, {
        let mut code = String::new();
        let mut built = String::new();
        for (i, field) in fields.iter().enumerate() {
            let ty = field.ty();
            let missing = match &field.attrs.default {
                Some(_) => default_value(&field.attrs),
                None => format!(
                    "return {ERR}(<__A::Error as ::serde::de::Error>::invalid_length(\
                     {i}, &{:?}))",
                    format!("tuple struct {name} with {count} elements")
                ),
            };
            code.push_str(&format!(
                "let __r{i}: {ty} = match ::serde::de::SeqAccess::next_element::<{ty}>(&mut __seq)? {{
                     ::core::option::Option::Some(__x) => __x,
                     ::core::option::Option::None => {missing},
                 }};"
            ));
            built.push_str(&format!("__r{i},"));
        }
        format!(
            "fn visit_seq<__A>(self, mut __seq: __A)
                 -> ::core::result::Result<Self::Value, __A::Error>
             where __A: ::serde::de::SeqAccess<'de> {{ {code} {OK}({name}({built})) }}"
        )
    });
    format!(
        "{visitor} ::serde::Deserializer::deserialize_tuple_struct(\
         __deserializer, {name:?}, {count}, {})",
        new("__Visitor")
    )
}

/// The visitor of a struct variant's fields (its definition, and the value to pass).
fn variant_visitor(
    item: &Item,
    index: usize,
    variant: &Variant,
    fields: &[Field],
) -> (String, String) {
    let (name, v) = (&item.name, &variant.name);
    let visitor_name = format!("__Visitor{index}");
    let rename_all = variant.attrs.rename_all.as_deref();
    let visitor = visitor(
        item,
        &visitor_name,
        &format!("struct variant {name}::{v}"),
        map_fields(&format!("{name}::{v}"), fields, rename_all),
    );
    (visitor, new(&visitor_name))
}

/// `{"tag": "variant", ...fields}`: the object is read whole, its tag taken out, and the rest
/// read as the variant's fields.
fn internally_tagged(item: &Item, tag: &str, keys: &[String]) -> Result<String, Error> {
    let name = &item.name;
    let Body::Enum(variants) = &item.body else {
        unreachable!("an enum")
    };
    let mut arms = String::new();
    for (index, (variant, key)) in variants.iter().zip(keys).enumerate() {
        let v = &variant.name;
        let arm = match &variant.fields {
            Fields::Unit => format!("{OK}({name}::{v})"),
            Fields::Named(fields) => {
                let (visitor, value) = variant_visitor(item, index, variant, fields);
                format!(
                    "{{ {visitor}
                       ::serde::Deserializer::deserialize_map(\
                           ::serde_json::Value::Object(__obj), {value})
                       .map_err(<__D::Error as ::serde::de::Error>::custom) }}"
                )
            }
            Fields::Tuple(_) => {
                return Err(Error::at(
                    variant.span,
                    format!("variant `{v}`: an internally tagged enum takes no tuple variant"),
                ));
            }
        };
        arms.push_str(&format!("{key:?} => {arm},"));
    }
    Ok(format!(
        "let mut __obj = <::serde_json::Map<::std::string::String, ::serde_json::Value>
             as ::serde::Deserialize>::deserialize(__deserializer)?;
         let __tag = match __obj.remove({tag:?}) {{
             ::core::option::Option::Some(::serde_json::Value::String(__s)) => __s,
             ::core::option::Option::Some(_) => return {ERR}(
                 <__D::Error as ::serde::de::Error>::custom({:?})),
             ::core::option::Option::None => return {ERR}(
                 <__D::Error as ::serde::de::Error>::missing_field({tag:?})),
         }};
         match __tag.as_str() {{
             {arms}
             _ => {ERR}(<__D::Error as ::serde::de::Error>::unknown_variant(&__tag, __VARIANTS)),
         }}",
        format!("the tag `{tag}` of {name} must be a string")
    ))
}

/// The first variant, in declaration order, that the value makes.
fn untagged(item: &Item) -> Result<String, Error> {
    let name = &item.name;
    let Body::Enum(variants) = &item.body else {
        unreachable!("an enum")
    };
    let mut code = "let __value = <::serde_json::Value as ::serde::Deserialize>::deserialize(\
                    __deserializer)?;"
        .to_owned();
    for (index, variant) in variants.iter().enumerate() {
        let v = &variant.name;
        code.push_str(&match &variant.fields {
            Fields::Unit => format!("if __value.is_null() {{ return {OK}({name}::{v}); }}"),
            Fields::Tuple(fields) if fields.len() == 1 => format!(
                "if let {OK}(__x) = <{} as ::serde::Deserialize>::deserialize(&__value) {{
                     return {OK}({name}::{v}(__x));
                 }}",
                fields[0].ty()
            ),
            Fields::Named(fields) => {
                let (visitor, value) = variant_visitor(item, index, variant, fields);
                format!(
                    "{{ {visitor}
                       if let {OK}(__x) = ::serde::Deserializer::deserialize_map(&__value, {value}) {{
                           return {OK}(__x);
                       }} }}"
                )
            }
            Fields::Tuple(_) => {
                return Err(Error::at(variant.span, format!(
                    "variant `{v}`: tuple variants of more than one field are not supported"
                )));
            }
        });
    }
    code.push_str(&format!(
        "{ERR}(<__D::Error as ::serde::de::Error>::custom({:?}))",
        format!("data did not match any variant of untagged enum {name}")
    ));
    Ok(code)
}

/// `"variant"` for a unit variant, `{"variant": value}` for a newtype one.
fn externally_tagged(item: &Item, keys: &[String]) -> Result<String, Error> {
    let name = &item.name;
    let Body::Enum(variants) = &item.body else {
        unreachable!("an enum")
    };
    let mut names = String::new();
    let mut from_str = String::new();
    let mut from_key = String::new();
    let mut from_map = String::new();
    for (index, (variant, key)) in variants.iter().zip(keys).enumerate() {
        let v = &variant.name;
        names.push_str(&format!("__v{index},"));
        from_key.push_str(&format!("{key:?} => __Variant::__v{index},"));
        match &variant.fields {
            Fields::Unit => {
                from_str.push_str(&format!("{key:?} => {OK}({name}::{v}),"));
                from_map.push_str(&format!(
                    "__Variant::__v{index} => {{
                         ::serde::de::MapAccess::next_value::<()>(&mut __map)?;
                         {name}::{v}
                     }}"
                ));
            }
            Fields::Tuple(fields) if fields.len() == 1 => from_map.push_str(&format!(
                "__Variant::__v{index} => {name}::{v}(
                     ::serde::de::MapAccess::next_value::<{}>(&mut __map)?),",
                fields[0].ty()
            )),
            _ => {
                return Err(Error::at(
                    variant.span,
                    format!(
                        "variant `{v}`: an externally tagged enum takes only unit and newtype variants"
                    ),
                ));
            }
        }
    }
    let visitor = visitor(item, "__Visitor", &format!("enum {name}"), {
        format!(
            "fn visit_str<__E>(self, __v: &str) -> ::core::result::Result<Self::Value, __E>
             where __E: ::serde::de::Error {{
                 match __v {{
                     {from_str}
                     _ => {ERR}(__E::unknown_variant(__v, __VARIANTS)),
                 }}
             }}
             fn visit_map<__A>(self, mut __map: __A)
                 -> ::core::result::Result<Self::Value, __A::Error>
             where __A: ::serde::de::MapAccess<'de> {{
                 enum __Variant {{ {names} }}
                 impl<'de> ::serde::Deserialize<'de> for __Variant {{
                     fn deserialize<__D>(__d: __D) -> ::core::result::Result<Self, __D::Error>
                     where __D: ::serde::Deserializer<'de> {{
                         struct __KeyVisitor;
                         impl<'de> ::serde::de::Visitor<'de> for __KeyVisitor {{
                             type Value = __Variant;
                             fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>)
                                 -> ::core::fmt::Result {{ __f.write_str(\"a variant name\") }}
                             fn visit_str<__E>(self, __v: &str)
                                 -> ::core::result::Result<__Variant, __E>
                             where __E: ::serde::de::Error {{
                                 {OK}(match __v {{
                                     {from_key}
                                     _ => return {ERR}(__E::unknown_variant(__v, __VARIANTS)),
                                 }})
                             }}
                         }}
                         ::serde::Deserializer::deserialize_identifier(__d, __KeyVisitor)
                     }}
                 }}
                 let __variant = match ::serde::de::MapAccess::next_key::<__Variant>(&mut __map)? {{
                     ::core::option::Option::Some(__k) => __k,
                     ::core::option::Option::None => return {ERR}(
                         <__A::Error as ::serde::de::Error>::invalid_length(0, &self)),
                 }};
                 let __out = match __variant {{ {from_map} }};
                 if ::serde::de::MapAccess::next_key::<::serde::de::IgnoredAny>(&mut __map)?
                     .is_some() {{
                     return {ERR}(<__A::Error as ::serde::de::Error>::invalid_length(2, &self));
                 }}
                 {OK}(__out)
             }}"
        )
    });
    Ok(format!(
        "{visitor} ::serde::Deserializer::deserialize_any(__deserializer, {})",
        new("__Visitor")
    ))
}
