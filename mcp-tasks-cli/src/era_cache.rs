//! The on-disk cache of the era each server was last found to speak.

use crate::command::Target;
use mcp_tasks_client::EraChoice;
use serde_json::{Map, Value};

/// The server a command speaks to, as a key of [`EraCache`]: the URL, or the command line.
pub fn cache_key(target: &Target) -> String {
    match target {
        Target::Http { url, .. } => url.clone(),
        Target::Stdio { program, args, .. } => {
            let mut all = vec![program.clone()];
            all.extend(args.iter().cloned());
            Value::from(all).to_string()
        }
    }
}

/// The era each server (by [`cache_key`]) was last found to speak: `eras.json` in
/// `$MCP_TASKS_CACHE_DIR`, else `$XDG_CACHE_HOME/mcp-tasks`, else `~/.cache/mcp-tasks`. Best
/// effort: a cache that cannot be read or written is no cache.
pub struct EraCache {
    path: Option<std::path::PathBuf>,
}

impl EraCache {
    pub fn open() -> EraCache {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let dir = env("MCP_TASKS_CACHE_DIR")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                env("XDG_CACHE_HOME").map(|d| std::path::PathBuf::from(d).join("mcp-tasks"))
            })
            .or_else(|| env("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/mcp-tasks")));
        EraCache {
            path: dir.map(|d| d.join("eras.json")),
        }
    }

    fn read(&self) -> Map<String, Value> {
        self.path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<Map<String, Value>>(&t).ok())
            .unwrap_or_default()
    }

    fn write(&self, map: &Map<String, Value>) {
        if let Some(p) = &self.path {
            if let Some(dir) = p.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let tmp = p.with_extension(format!("json.{}", std::process::id()));
            if std::fs::write(&tmp, Value::Object(map.clone()).to_string()).is_ok() {
                let _ = std::fs::rename(&tmp, p);
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<EraChoice> {
        match self.read().get(key).and_then(Value::as_str) {
            Some("legacy") => Some(EraChoice::Legacy),
            Some("modern") => Some(EraChoice::Modern),
            _ => None,
        }
    }

    pub fn remember(&self, key: &str, era: EraChoice) {
        let name = if era == EraChoice::Modern {
            "modern"
        } else {
            "legacy"
        };
        let mut map = self.read();
        if map.get(key).and_then(Value::as_str) != Some(name) {
            map.insert(key.to_owned(), Value::from(name));
            self.write(&map);
        }
    }

    pub fn forget(&self, key: &str) {
        let mut map = self.read();
        if map.remove(key).is_some() {
            self.write(&map);
        }
    }
}
