//! The runtime's modules depend on each other one way (ARCHITECTURE.md): no import circles.
//!
//! Reads `src/` as text: a file
//! depends on every module a `crate::...` or `super::...` path in it names (the longest prefix
//! that is a file), except its own ancestors reached through `super`; comments and `#[cfg(test)]`
//! modules do not count. Any strongly connected set of more than one file is a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file
        .strip_prefix(src)
        .expect("under src/")
        .with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text that counts: line comments removed, and nothing from the first `#[cfg(test)]` on.
fn code(text: &str) -> String {
    let uncommented: String = text
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    match uncommented.find("#[cfg(test)]") {
        Some(at) => uncommented[..at].to_owned(),
        None => uncommented,
    }
}

/// Every `crate::a::b` / `super::a::b` path in `text`: its head and its segments.
fn paths(text: &str) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for head in ["crate", "super"] {
        let mut from = 0;
        while let Some(at) = text[from..].find(head) {
            let start = from + at;
            from = start + head.len();
            let word_before = start > 0 && is_word(bytes[start - 1]);
            if word_before {
                continue;
            }
            let mut segments = Vec::new();
            let mut rest = &text[from..];
            while let Some(after) = rest.strip_prefix("::") {
                let len = after.bytes().take_while(|b| is_word(*b)).count();
                if len == 0 {
                    break;
                }
                segments.push(after[..len].to_owned());
                rest = &after[len..];
            }
            if !segments.is_empty() {
                out.push((head, segments));
            }
        }
    }
    out
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn resolve(files: &BTreeSet<Module>, mut path: Module) -> Option<Module> {
    while !path.is_empty() {
        if files.contains(&path) {
            return Some(path);
        }
        path.pop();
    }
    None
}

fn edges(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut found = Vec::new();
    rust_files(src, &mut found);
    let files: BTreeMap<Module, PathBuf> =
        found.into_iter().map(|f| (module_of(src, &f), f)).collect();
    let names: BTreeSet<Module> = files.keys().cloned().collect();
    let mut edges = BTreeMap::new();
    for (module, file) in &files {
        let text = code(&std::fs::read_to_string(file).expect("read a source file"));
        let mut to = BTreeSet::new();
        for (head, segments) in paths(&text) {
            let target = if head == "crate" {
                resolve(&names, segments)
            } else {
                // `super` from `a/b.rs` is `a`; from `a/b/mod.rs` it is `a` too.
                let mut base = module.clone();
                base.pop();
                base.extend(segments);
                resolve(&names, base)
            };
            let Some(target) = target else { continue };
            let ancestor = target.len() < module.len() && module.starts_with(&target);
            if &target != module && !(ancestor && head == "super") {
                to.insert(target);
            }
        }
        edges.insert(module.clone(), to);
    }
    edges
}

/// Strongly connected sets of more than one module (Tarjan).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        next: usize,
        out: Vec<Vec<Module>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            for w in &self.edges[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    set.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.out.push(set);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.out
}

fn show(set: &[Module]) -> String {
    set.iter()
        .map(|m| {
            if m.is_empty() {
                "lib".into()
            } else {
                m.join("/")
            }
        })
        .collect::<Vec<_>>()
        .join(" <-> ")
}

#[test]
fn the_runtime_has_no_import_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    assert!(
        edges.len() > 40,
        "read {} modules from {}",
        edges.len(),
        src.display()
    );
    let found: Vec<String> = circles(&edges).iter().map(|c| show(c)).collect();
    assert!(
        found.is_empty(),
        "import circles in the runtime:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_circle_is_found() {
    // The checker itself: two modules naming each other are one circle, a third one outside it.
    let m = |s: &str| vec![s.to_owned()];
    let edges = BTreeMap::from([
        (m("a"), BTreeSet::from([m("b")])),
        (m("b"), BTreeSet::from([m("a"), m("c")])),
        (m("c"), BTreeSet::new()),
    ]);
    assert_eq!(circles(&edges), vec![vec![m("a"), m("b")]]);
    // And it reads paths the way the source writes them.
    let found = paths("use super::peer::Peer; let x = crate::task::engine::X; supercrate::no;");
    assert_eq!(
        found,
        vec![
            ("crate", vec!["task".into(), "engine".into(), "X".into()]),
            ("super", vec!["peer".into(), "Peer".into()]),
        ]
    );
}

/// Everything `from` depends on, directly or not.
fn reach(edges: &BTreeMap<Module, BTreeSet<Module>>, from: &Module) -> BTreeSet<Module> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.clone()];
    while let Some(m) = todo.pop() {
        for next in edges.get(&m).into_iter().flatten() {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn dispatch_sees_the_client_only_through_peer() {
    // Transports own their loops and sit above dispatch: dispatch, and what it calls, never name
    // the connection, the driver or a transport (they reach the client through `server/peer.rs`).
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    let above = |m: &Module| {
        let path = m.join("/");
        [
            "server/connection",
            "server/driver",
            "server/stdio",
            "server/memory",
        ]
        .contains(&path.as_str())
            || path.starts_with("server/http")
            || path.starts_with("transport")
    };
    for below in [
        "server/dispatch",
        "server/incoming",
        "server/session",
        "server/call",
        "server/call/mrtr",
        "server/tasks",
        "server/plan",
        "server/fallback",
        "server/listen",
        "server/inline",
        "server/peer",
    ] {
        let module: Module = below.split('/').map(str::to_owned).collect();
        assert!(edges.contains_key(&module), "no module {below}");
        let wrong: Vec<String> = reach(&edges, &module)
            .iter()
            .filter(|m| above(m))
            .map(|m| m.join("/"))
            .collect();
        assert!(
            wrong.is_empty(),
            "{below} depends on what sits above it: {}",
            wrong.join(", ")
        );
    }
}
