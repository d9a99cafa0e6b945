//! The URIs of a task's outputs: `task://{taskId}/{name}`, which `resources/read` serves to the
//! task's owner. The id is percent-encoded where it has a character a URI's authority cannot hold
//! (a generated id never does); a name is 1 to 128 of the URI's unreserved characters
//! (`A-Z a-z 0-9 - . _ ~`), so it is written as it is.

use super::TaskId;
use std::fmt::Write as _;

/// The scheme of task output URIs, with its `://`.
const PREFIX: &str = "task://";

/// The longest output name.
pub(crate) const MAX_NAME: usize = 128;

fn unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

/// Why `name` cannot name an output, if it cannot.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME || !name.bytes().all(unreserved) {
        return Err(format!(
            "{name:?} cannot name a task output: use 1 to {MAX_NAME} of the characters \
             A-Z a-z 0-9 - . _ ~"
        ));
    }
    Ok(())
}

/// The URI of output `name` of task `id` (`name` already checked).
pub(crate) fn output_uri(id: &TaskId, name: &str) -> String {
    let mut uri = String::with_capacity(PREFIX.len() + id.as_str().len() + 1 + name.len());
    uri.push_str(PREFIX);
    for &b in id.as_str().as_bytes() {
        if unreserved(b) {
            uri.push(b as char);
        } else {
            let _ = write!(uri, "%{b:02X}");
        }
    }
    uri.push('/');
    uri.push_str(name);
    uri
}

/// The task and output name a URI of [`output_uri`]'s form names; `None` for any other URI.
pub(crate) fn parse_output_uri(uri: &str) -> Option<(TaskId, &str)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (id, name) = rest.split_once('/')?;
    check_name(name).ok()?;
    let mut bytes = Vec::with_capacity(id.len());
    let mut raw = id.bytes();
    while let Some(b) = raw.next() {
        match b {
            b'%' => {
                let hex = [raw.next()?, raw.next()?];
                let hex = std::str::from_utf8(&hex).ok()?;
                bytes.push(u8::from_str_radix(hex, 16).ok()?);
            }
            b if unreserved(b) => bytes.push(b),
            _ => return None,
        }
    }
    let id = String::from_utf8(bytes).ok()?;
    (!id.is_empty()).then(|| (TaskId::new(id), name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_id_is_written_as_it_is_and_read_back() {
        let id = TaskId::generate();
        let uri = output_uri(&id, "report.md");
        assert_eq!(uri, format!("task://{id}/report.md"));
        assert_eq!(parse_output_uri(&uri), Some((id, "report.md")));
    }

    #[test]
    fn any_custom_id_survives_the_round_trip() {
        for id in ["a/b", "100%", "é ü", "-x_~.", "?#[]@"] {
            let id = TaskId::new(id);
            let uri = output_uri(&id, "n");
            assert!(uri.bytes().all(|b| b.is_ascii_graphic()), "{uri}");
            assert_eq!(parse_output_uri(&uri), Some((id, "n")), "{uri}");
        }
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("report-2.md").is_ok());
        assert!(check_name(&"a".repeat(MAX_NAME)).is_ok());
        for bad in ["", "a/b", "a b", "ü", &"a".repeat(MAX_NAME + 1)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn other_uris_are_not_outputs() {
        for uri in [
            "notes://x/y",
            "task://",
            "task://id",
            "task:///name",
            "task://id/",
            "task://id/a/b",
            "task://i%d/n",
            "task://i%4/n",
            "task://%FF/n",
            "task://a b/n",
        ] {
            assert_eq!(parse_output_uri(uri), None, "{uri}");
        }
    }
}
