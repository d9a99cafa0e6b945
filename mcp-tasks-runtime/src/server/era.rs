//! What the server layer knows of a request's protocol: its [`Era`] (the public type) and the
//! client as that era describes it ([`ClientView`]). The exact negotiated version travels next to
//! the era, on [`Incoming`](super::incoming::Incoming).

pub(crate) use crate::protocol::Era;
pub(crate) use crate::protocol::meta::ClientView;
