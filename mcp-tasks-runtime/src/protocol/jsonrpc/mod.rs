//! JSON-RPC 2.0 envelopes: error codes and objects (`error.rs`), request ids (`id.rs`), incoming
//! messages read through a tree (`message.rs`) or, in the common case, straight from their text
//! (`fast.rs`), replies written from their parts (`reply.rs`) and messages built as trees
//! (`build.rs`).

mod build;
mod error;
mod fast;
mod id;
mod message;
mod reply;

pub use super::params::Params;
pub use build::{
    empty_object, error_message, json_kind, notification_message, request_message, result_message,
};
pub use error::{RpcError, codes};
pub use id::{RequestId, Wire};
pub use message::{Message, Notification, Rejected, Request, Response};
pub(crate) use reply::ServerInfoMeta;
pub use reply::{Payload, Reply};
