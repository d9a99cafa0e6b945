//! JSON-RPC 2.0 envelopes: error codes and objects (`error.rs`), request ids (`id.rs`), incoming
//! messages read through a tree (`message.rs`) or, in the common case, straight from their text
//! (`fast.rs`), replies written from their parts (`reply.rs`) and messages built as trees
//! (`build.rs`).

pub(crate) mod build;
mod error;
mod fast;
mod id;
pub(crate) mod message;
mod reply;

pub(crate) use super::params::Params;
pub(crate) use build::{
    empty_object, error_message, json_kind, notification_message, request_message, result_message,
};
pub use error::RpcError;
pub use id::RequestId;
pub(crate) use id::Wire;
pub(crate) use message::{Message, Notification, Rejected, Request, Response};
pub(crate) use reply::ServerInfoMeta;
pub(crate) use reply::{Payload, Reply};
