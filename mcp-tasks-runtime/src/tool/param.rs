use super::{ArgumentError, ToolContext};
use crate::protocol::jsonrpc::json_kind;
#[cfg(feature = "schemars")]
use schemars::transform::Transform;
#[cfg(feature = "schemars")]
use schemars::{JsonSchema, SchemaGenerator};
#[cfg(feature = "schemars")]
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The `arguments` object of a `tools/call`, taken apart one parameter at a time.
#[derive(Debug, Default)]
pub struct Arguments {
    map: Map<String, Value>,
}

impl Arguments {
    /// Wraps the `arguments` value of a call. Absent or `null` means no arguments; anything other
    /// than an object is a malformed `tools/call` (answered `-32602`, not as a tool error).
    pub fn new(value: Option<Value>) -> Result<Self, ArgumentError> {
        match value {
            None | Some(Value::Null) => Ok(Arguments::default()),
            Some(Value::Object(map)) => Ok(Arguments { map }),
            Some(other) => Err(ArgumentError::malformed(format_args!(
                "`arguments` must be an object, found {}",
                json_kind(&other)
            ))),
        }
    }

    /// Takes one named argument out.
    pub fn take(&mut self, name: &str) -> Option<Value> {
        self.map.remove(name)
    }

    /// Everything, as one object (for a parameter that is the whole argument type).
    pub fn whole(&self) -> Value {
        Value::Object(self.map.clone())
    }
}

/// Builds a tool's input schema, one parameter at a time.
#[derive(Debug)]
pub struct ParamsBuilder {
    #[cfg(feature = "schemars")]
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<String>,
    whole: Option<Value>,
    states: Vec<super::StateNeed>,
}

impl Default for ParamsBuilder {
    fn default() -> Self {
        ParamsBuilder {
            #[cfg(feature = "schemars")]
            generator: super::schema::generator(),
            properties: Map::new(),
            required: Vec::new(),
            whole: None,
            states: Vec::new(),
        }
    }
}

impl ParamsBuilder {
    /// Adds a named property.
    #[cfg(feature = "schemars")]
    pub fn property<T: JsonSchema>(
        &mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
    ) {
        // The generator's transforms reach root schemas and definitions, not a subschema.
        let mut schema = self.generator.subschema_for::<T>();
        super::schema::standard_formats().transform(&mut schema);
        let mut schema = schema.to_value();
        if let (Some(desc), Value::Object(obj)) = (description, &mut schema) {
            // A `$ref` cannot carry siblings in every validator; wrap it instead.
            if obj.contains_key("$ref") {
                schema = serde_json::json!({ "allOf": [schema], "description": desc });
            } else {
                obj.insert("description".into(), Value::String(desc.to_owned()));
            }
        }
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(name.to_owned());
        }
    }

    /// Makes `T`'s own schema the root (a parameter that is the whole argument object).
    #[cfg(feature = "schemars")]
    pub fn whole<T: JsonSchema>(&mut self) {
        let schema = self.generator.root_schema_for::<T>().to_value();
        self.whole = Some(schema);
    }

    /// Records that the tool takes application state of this type (a [`State<T>`](super::State)
    /// parameter): not part of the schema, but checked when the server starts.
    pub fn needs_state(&mut self, need: super::StateNeed) {
        if !self.states.contains(&need) {
            self.states.push(need);
        }
    }

    /// The application state types the tool's parameters take.
    pub fn state_needs(&self) -> &[super::StateNeed] {
        &self.states
    }

    /// The finished input schema: always `type: object`.
    pub fn finish(mut self) -> Value {
        #[cfg(feature = "schemars")]
        let defs = self.generator.take_definitions(true);
        // Without schemars, nothing adds a property that refers to a definition.
        #[cfg(not(feature = "schemars"))]
        let defs = Map::new();
        let mut root = match self.whole.take() {
            Some(Value::Object(mut whole)) => {
                // Named parameters next to a whole-object parameter are merged in.
                if let Some(Value::Object(props)) = whole.get_mut("properties") {
                    props.extend(std::mem::take(&mut self.properties));
                } else if !self.properties.is_empty() {
                    whole.insert(
                        "properties".into(),
                        Value::Object(std::mem::take(&mut self.properties)),
                    );
                }
                if !self.required.is_empty() {
                    let req = whole
                        .entry("required")
                        .or_insert_with(|| Value::Array(vec![]));
                    if let Value::Array(req) = req {
                        req.extend(self.required.drain(..).map(Value::String));
                    }
                }
                whole
            }
            _ => {
                let mut root = Map::new();
                root.insert("type".into(), Value::String("object".into()));
                root.insert(
                    "properties".into(),
                    Value::Object(std::mem::take(&mut self.properties)),
                );
                if !self.required.is_empty() {
                    root.insert(
                        "required".into(),
                        Value::Array(self.required.drain(..).map(Value::String).collect()),
                    );
                }
                root
            }
        };
        root.remove("title");
        if !defs.is_empty() {
            let slot = root
                .entry("$defs")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(slot) = slot {
                slot.extend(defs);
            }
        }
        root.entry("type")
            .or_insert_with(|| Value::String("object".into()));
        Value::Object(root)
    }
}

/// Something a tool function can take as a parameter. Which of the three kinds a parameter is
/// (a named argument, the whole argument object, or something injected such as [`ToolContext`])
/// is decided by which implementation applies to its type: the marker `M` tells them apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as an MCP tool parameter",
    label = "this parameter's type is neither an argument nor injected by mcp-tasks",
    note = "an argument type must implement `serde::Deserialize` and `schemars::JsonSchema` \
            (add `#[derive(Deserialize, JsonSchema)]`); the injected context is `ToolContext`; \
            application state is `State<T>` with `T: Send + Sync + 'static`"
)]
pub trait ToolParam<M>: Sized + Send + 'static {
    /// Adds this parameter to the input schema.
    fn describe(params: &mut ParamsBuilder, name: &'static str, description: Option<&'static str>);

    /// Takes this parameter's value out of the call.
    fn extract(
        ctx: &ToolContext,
        args: &mut Arguments,
        name: &'static str,
    ) -> Result<Self, ArgumentError>;
}

/// Marker: a named argument, decoded with serde and described by schemars.
#[cfg(feature = "schemars")]
#[derive(Debug)]
pub enum ViaSerde {}
/// Marker: injected by the runtime.
#[derive(Debug)]
pub enum ViaContext {}
/// Marker: the whole argument object.
#[cfg(feature = "schemars")]
#[derive(Debug)]
pub enum ViaWhole {}

#[cfg(feature = "schemars")]
impl<T: DeserializeOwned + JsonSchema + Send + 'static> ToolParam<ViaSerde> for T {
    fn describe(params: &mut ParamsBuilder, name: &'static str, description: Option<&'static str>) {
        params.property::<T>(name, description, !accepts_absent::<T>());
    }

    fn extract(
        _: &ToolContext,
        args: &mut Arguments,
        name: &'static str,
    ) -> Result<Self, ArgumentError> {
        match args.take(name) {
            Some(value) => {
                serde_json::from_value(value).map_err(|e| ArgumentError::invalid(name, e))
            }
            None => serde_json::from_value(Value::Null).map_err(|_| ArgumentError::missing(name)),
        }
    }
}

/// A type is optional as an argument when it accepts an absent value (`Option<T>`, `()`,
/// `serde_json::Value`...). serde decides, so this agrees with how the value is decoded.
#[cfg(feature = "schemars")]
fn accepts_absent<T: DeserializeOwned>() -> bool {
    serde_json::from_value::<T>(Value::Null).is_ok()
}

impl ToolParam<ViaContext> for ToolContext {
    fn describe(_: &mut ParamsBuilder, _: &'static str, _: Option<&'static str>) {}

    fn extract(
        ctx: &ToolContext,
        _: &mut Arguments,
        _: &'static str,
    ) -> Result<Self, ArgumentError> {
        Ok(ctx.clone())
    }
}

/// The whole `arguments` object as one type: `async fn search(Args(query): Args<Query>)`.
///
/// `T`'s fields become the tool's arguments (its schema is the input schema).
#[derive(Debug, Clone, PartialEq)]
pub struct Args<T>(pub T);

#[cfg(feature = "schemars")]
impl<T: DeserializeOwned + JsonSchema + Send + 'static> ToolParam<ViaWhole> for Args<T> {
    fn describe(params: &mut ParamsBuilder, _: &'static str, _: Option<&'static str>) {
        params.whole::<T>();
    }

    fn extract(
        _: &ToolContext,
        args: &mut Arguments,
        _: &'static str,
    ) -> Result<Self, ArgumentError> {
        serde_json::from_value(args.whole())
            .map(Args)
            .map_err(ArgumentError::whole)
    }
}
