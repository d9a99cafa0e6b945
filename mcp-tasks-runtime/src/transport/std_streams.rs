//! This process's stdin and stdout as async streams.
//!
//! tokio's `stdin()` / `stdout()` hand every read and write to the blocking thread pool, which
//! costs two thread hops per message. An MCP client spawns its server with pipes (Python's
//! `asyncio`, Rust's `tokio::process`) or socket pairs (Node's `child_process`, through libuv), and
//! both can be driven by the reactor instead: here they are duplicated and registered
//! non-blocking. A terminal, a regular file or anything else falls back to tokio's own streams.
//!
//! Putting the pipe in non-blocking mode changes the open file description that fd 0 / fd 1 share
//! with this process (not the client's end of the pipe). Code that later does blocking reads of
//! stdin in the same process would see `WouldBlock`; a stdio server has no such code.

use tokio::io::{AsyncRead, AsyncWrite};

/// The reading half of the process's standard streams.
pub type StdinStream = Box<dyn AsyncRead + Send + Unpin>;
/// The writing half.
pub type StdoutStream = Box<dyn AsyncWrite + Send + Unpin>;

/// stdin and stdout, read and written without blocking threads when they are pipes or sockets.
pub fn std_streams() -> (StdinStream, StdoutStream) {
    let reader = reactor::stdin().unwrap_or_else(|| Box::new(tokio::io::stdin()));
    let writer = reactor::stdout().unwrap_or_else(|| Box::new(tokio::io::stdout()));
    (reader, writer)
}

#[cfg(unix)]
mod reactor {
    use super::{StdinStream, StdoutStream};
    use std::fs::File;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    enum Kind {
        Fifo(File),
        Socket(std::os::unix::net::UnixStream),
    }

    /// A duplicate of `fd` when it is a pipe or a stream socket; `None` otherwise or on any error
    /// (the caller then uses tokio's blocking-pool streams, which work for everything).
    fn classify(fd: BorrowedFd<'_>) -> Option<Kind> {
        tokio::runtime::Handle::try_current().ok()?;
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let file_type = file.metadata().ok()?.file_type();
        if file_type.is_fifo() {
            Some(Kind::Fifo(file))
        } else if file_type.is_socket() {
            let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
            socket.set_nonblocking(true).ok()?;
            Some(Kind::Socket(socket))
        } else {
            None
        }
    }

    /// Registration fails only outside a runtime (checked first) or when the kernel refuses
    /// epoll registration; the descriptor then stays non-blocking, which tokio's blocking-pool
    /// streams would read as an error, so that case is logged loudly.
    fn fallback<T>(stream: &str, error: &std::io::Error) -> Option<T> {
        tracing::warn!(%error, "{stream} could not be registered with the reactor");
        None
    }

    pub(super) fn stdin() -> Option<StdinStream> {
        let stream: StdinStream = match classify(std::io::stdin().as_fd())? {
            Kind::Fifo(file) => match tokio::net::unix::pipe::Receiver::from_file(file) {
                Ok(pipe) => Box::new(pipe),
                Err(e) => return fallback("stdin", &e),
            },
            Kind::Socket(socket) => match tokio::net::UnixStream::from_std(socket) {
                Ok(socket) => Box::new(socket),
                Err(e) => return fallback("stdin", &e),
            },
        };
        Some(stream)
    }

    pub(super) fn stdout() -> Option<StdoutStream> {
        let stream: StdoutStream = match classify(std::io::stdout().as_fd())? {
            Kind::Fifo(file) => match tokio::net::unix::pipe::Sender::from_file(file) {
                Ok(pipe) => Box::new(pipe),
                Err(e) => return fallback("stdout", &e),
            },
            Kind::Socket(socket) => match tokio::net::UnixStream::from_std(socket) {
                Ok(socket) => Box::new(socket),
                Err(e) => return fallback("stdout", &e),
            },
        };
        Some(stream)
    }
}

#[cfg(not(unix))]
mod reactor {
    use super::{StdinStream, StdoutStream};

    pub(super) fn stdin() -> Option<StdinStream> {
        None
    }

    pub(super) fn stdout() -> Option<StdoutStream> {
        None
    }
}
