//! The floor: a bare JSON-RPC server that answers every request with an empty result. It reads
//! each line, takes its `id` (serde skips the rest), and writes `{"jsonrpc":"2.0","id":…,"result":{}}`,
//! flushing when no more input is buffered (the other servers batch their writes too).

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
}

/// Serves one client over a reader and a writer until the reader closes.
pub async fn serve<R, W>(reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut writer = BufWriter::with_capacity(64 * 1024, writer);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            break;
        }
        let id = match serde_json::from_str::<Envelope<'_>>(&line) {
            Ok(Envelope { id: Some(id) }) => id.get().to_owned(),
            Ok(Envelope { id: None }) => continue,
            Err(_) => "null".to_owned(),
        };
        writer.write_all(br#"{"jsonrpc":"2.0","id":"#).await?;
        writer.write_all(id.as_bytes()).await?;
        writer.write_all(b",\"result\":{}}\n").await?;
        if reader.buffer().is_empty() {
            writer.flush().await?;
        }
    }
    writer.flush().await
}
