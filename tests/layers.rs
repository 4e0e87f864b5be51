//! The design's two rules, read from the source (docs/development.md,
//! "Architecture"): the bindings in `src/php/` build no Redis key and touch
//! no Redis type, and the crate's top-level modules depend on each other
//! without a cycle (the engines never on the bindings).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file without its comments: `//` and `/* */` outside
/// string and character literals (a `"//"` in a string stays code),
/// each line kept in its place.
fn code(path: &Path) -> String {
    strip_comments(&std::fs::read_to_string(path).unwrap())
}

fn strip_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += 2;
            }
            // A raw string: r"...", r#"..."#.
            'r' if matches!(next, Some('"' | '#'))
                && !chars
                    .get(i.wrapping_sub(1))
                    .is_some_and(|p| p.is_alphanumeric() || *p == '_') =>
            {
                let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                if chars.get(i + 1 + hashes) != Some(&'"') {
                    out.push(c);
                    i += 1;
                    continue;
                }
                let end: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let body: String = chars[i..].iter().collect();
                let close = body[2 + hashes..]
                    .find(&end)
                    .map_or(body.len(), |at| at + 2 + hashes + end.len());
                out.push_str(&body[..close]);
                i += body[..close].chars().count();
            }
            '"' => {
                out.push(c);
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        out.push(chars[i]);
                        i += 1;
                    }
                    if i < chars.len() {
                        out.push(chars[i]);
                        i += 1;
                    }
                }
                if i < chars.len() {
                    out.push('"');
                    i += 1;
                }
            }
            // A character literal ('"', '\''), not a lifetime ('a).
            '\'' if chars.get(i + 2) == Some(&'\'') || next == Some('\\') => {
                let len = if next == Some('\\') { 4 } else { 3 };
                out.extend(chars[i..(i + len).min(chars.len())].iter());
                i += len;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[test]
fn comments_are_found_outside_strings_only() {
    let text =
        "let a = \"// not a comment\"; // a comment\nlet b = '\"'; /* gone\n */ let c = r#\"//\"#;";
    assert_eq!(
        strip_comments(text),
        "let a = \"// not a comment\"; \nlet b = '\"'; \n let c = r#\"//\"#;"
    );
}

/// The top-level modules a piece of code names through `crate::`, its
/// `use crate::{a, b::c}` groups included.
fn crate_modules(text: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group, nested groups skipped.
            let (mut depth, mut item) = (0, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(word(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            out.insert(word(&item));
        } else {
            out.insert(word(rest));
        }
    }
    out.remove("");
    out
}

#[test]
fn crate_paths_are_read_with_their_groups() {
    let text = "use crate::{resp, signals};\nuse crate::lock::{self, registry::{A, B}};\nlet x = crate::queue::put();";
    let found: Vec<String> = crate_modules(text).into_iter().collect();
    assert_eq!(found, ["lock", "queue", "resp", "signals"]);
}

#[test]
fn bindings_build_no_key_and_touch_no_redis_type() {
    let forbidden = ["redis::", "Keys", ".keys()", "config.key(", "config.prefix"];
    let mut found = Vec::new();
    for path in sources(&src().join("php")) {
        for (n, line) in code(&path).lines().enumerate() {
            for word in forbidden {
                if line.contains(word) {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "engine work in the bindings:\n{}",
        found.join("\n")
    );
}

/// Each top-level module (a file or a directory of `src/`) and the
/// top-level modules its code names through `crate::`.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = src();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in sources(&root) {
        let relative = path.strip_prefix(&root).unwrap();
        let module = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if module == "lib" {
            continue;
        }
        let deps = graph.entry(module.clone()).or_default();
        for name in crate_modules(&code(&path)) {
            if name != module {
                deps.insert(name);
            }
        }
    }
    graph
}

#[test]
fn top_level_modules_have_no_cycle() {
    let graph = module_graph();
    assert!(
        graph.contains_key("lock") && graph.contains_key("php"),
        "{graph:?}"
    );
    for (module, deps) in &graph {
        if module != "php" {
            assert!(
                !deps.contains("php"),
                "engine module {module} depends on the bindings"
            );
        }
    }
    // The bindings name the engines and the neutral modules they translate
    // (configuration, errors, process descriptions, durations, how a name
    // is shown in a message), never the
    // machinery under them (keys, scripts, the wire, waiting, signals):
    // docs/development.md, "Architecture".
    let allowed = [
        "batch",
        "config",
        "conn",
        "identity",
        "limit",
        "lock",
        "once",
        "queue",
        "shown",
        "stock",
        "telemetry",
        "time",
    ];
    let beyond: Vec<&String> = graph["php"]
        .iter()
        .filter(|m| !allowed.contains(&m.as_str()))
        .collect();
    assert!(beyond.is_empty(), "the bindings name {beyond:?}");
    // Depth-first search for a back edge.
    fn visit<'a>(
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        module: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(module) {
            return;
        }
        if let Some(at) = path.iter().position(|m| *m == module) {
            panic!("module cycle: {} -> {module}", path[at..].join(" -> "));
        }
        path.push(module);
        for dep in graph.get(module).into_iter().flatten() {
            visit(graph, dep, path, done);
        }
        path.pop();
        done.insert(module);
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(&graph, module, &mut Vec::new(), &mut done);
    }
}
