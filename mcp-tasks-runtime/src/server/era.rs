//! What the server layer knows of a request's protocol: its [`Era`] (the public type) and the
//! client as that era describes it ([`ClientView`]). The exact negotiated version travels next to
//! the era, on [`Incoming`](super::incoming::Incoming).

pub(crate) use crate::protocol::Era;
pub(crate) use crate::protocol::meta::ClientView;

/// Whether protocol `version` of `era` has tasks on the wire: every modern version (the tasks
/// extension), and of the legacy ones only 2025-11-25, which introduced them. A session at
/// 2025-06-18 or 2025-03-26 is served as its version defines: no `tasks` capability, no
/// `execution` in `tools/list`, no `task` param, no `tasks/*` methods; its calls of a tool that
/// runs only as a task go to the fallback.
pub(crate) fn has_tasks(era: Era, version: &str) -> bool {
    era.is_modern() || version >= crate::protocol::LEGACY_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_2025_11_25_and_the_modern_era_have_tasks() {
        assert!(has_tasks(Era::Modern, crate::protocol::MODERN_VERSION));
        assert!(has_tasks(Era::Legacy, "2025-11-25"));
        assert!(!has_tasks(Era::Legacy, "2025-06-18"));
        assert!(!has_tasks(Era::Legacy, "2025-03-26"));
    }
}
