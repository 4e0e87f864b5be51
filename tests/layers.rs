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

/// The code of a file without its comments.
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
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
        let text = code(&path);
        for (i, _) in text.match_indices("crate::") {
            let name: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
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
