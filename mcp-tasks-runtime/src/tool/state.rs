//! Application state: values registered once on the server ([`ServerBuilder::state`]) and
//! handed to tools as a [`State<T>`] parameter or through [`ToolContext::state`].
//!
//! [`ServerBuilder::state`]: crate::ServerBuilder::state
//! [`ToolContext::state`]: super::ToolContext::state

use super::{ArgumentError, Arguments, ParamsBuilder, ToolContext, ToolParam};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

/// A value the application registered with [`ServerBuilder::state`], shared by every call: a database
/// pool, an HTTP client, a cache. Take it as a tool parameter (it is never part of the input
/// schema); it derefs to `T`:
///
/// ```
/// use mcp_tasks_runtime::{Server, State, tool};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// #[derive(Default)]
/// struct Counter(AtomicU64);
///
/// /// Counts calls.
/// #[tool]
/// async fn hit(counter: State<Counter>) -> String {
///     format!("hit #{}", counter.0.fetch_add(1, Ordering::Relaxed) + 1)
/// }
///
/// let server = Server::builder("counter", "1.0.0").state(Counter::default()).tool::<hit>();
/// assert!(server.build().is_ok());
/// ```
///
/// A tool whose `State<T>` was never registered is found before the server serves anything:
/// [`ServerBuilder::build`] fails, naming the tool and the type. `T` must be
/// `Send + Sync + 'static`, since calls and tasks share it across threads.
///
/// [`ServerBuilder::state`]: crate::ServerBuilder::state
/// [`ServerBuilder::build`]: crate::ServerBuilder::build
pub struct State<T> {
    /// Always holds a `T`: a `State<T>` is made only by [`StateMap::get`], which requires
    /// `T: Send + Sync`. Kept erased so that `State<T>` is `Send` whatever `T` is, and a misused
    /// `State<NotSync>` is one error on the parameter, not a second one on the tool's future.
    value: Arc<dyn Any + Send + Sync>,
    _type: PhantomData<fn() -> T>,
}

impl<T: 'static> State<T> {
    fn get(&self) -> &T {
        self.value
            .downcast_ref::<T>()
            .expect("a State<T> always holds a T")
    }
}

impl<T: Send + Sync + 'static> State<T> {
    /// The shared value itself (to keep beyond the call, or hand to a spawned task).
    pub fn arc(this: &Self) -> Arc<T> {
        this.value
            .clone()
            .downcast::<T>()
            .expect("a State<T> always holds a T")
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State {
            value: self.value.clone(),
            _type: PhantomData,
        }
    }
}

impl<T: 'static> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.get()
    }
}

impl<T: fmt::Debug + 'static> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(self.get()).finish()
    }
}

/// Marker: application state.
#[derive(Debug)]
pub enum ViaState {}

impl<T: Send + Sync + 'static> ToolParam<ViaState> for State<T> {
    fn describe(params: &mut ParamsBuilder, _: &'static str, _: Option<&'static str>) {
        params.needs_state(StateNeed::of::<T>());
    }

    fn extract(
        ctx: &ToolContext,
        _: &mut Arguments,
        _: &'static str,
    ) -> Result<Self, ArgumentError> {
        // `ServerBuilder::build` makes this unreachable for a served tool; a context built by hand (a
        // test driving a tool directly) may lack it.
        ctx.state::<T>().ok_or_else(|| {
            ArgumentError::internal(format!(
                "no application state of type `{}` is registered (register it with `Server::state`)",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// A state type a tool takes, as its parameters declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateNeed {
    /// The type's id.
    pub id: TypeId,
    /// The type's name, for messages.
    pub name: &'static str,
}

impl StateNeed {
    /// The need for a `State<T>`.
    pub fn of<T: 'static>() -> Self {
        StateNeed {
            id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
        }
    }
}

/// The registered state values, one per type.
#[derive(Clone, Default)]
pub struct StateMap {
    values: HashMap<TypeId, (&'static str, Arc<dyn Any + Send + Sync>)>,
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.values.values().map(|(name, _)| name))
            .finish()
    }
}

impl StateMap {
    /// Registers `value` (replacing an earlier value of the same type).
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(
            TypeId::of::<T>(),
            (std::any::type_name::<T>(), Arc::new(value)),
        );
    }

    /// The value of type `T`, if one is registered.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        let (_, value) = self.values.get(&TypeId::of::<T>())?;
        Some(State {
            value: value.clone(),
            _type: PhantomData,
        })
    }

    /// Whether a value of this type is registered.
    pub fn contains(&self, need: &StateNeed) -> bool {
        self.values.contains_key(&need.id)
    }
}
