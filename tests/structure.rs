//! What the layout promises a reader, read from the tree (issue 95's
//! structural check): the README's first screen says what redislock is,
//! the two commands and how to load what they built; a task's stored tags
//! are split by one reader in Rust (as `queue_tags.lua` is in Lua:
//! `scripts::tests`).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

#[test]
fn the_readme_opens_with_what_it_is_then_the_two_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (before, after) = readme.split_once("## Two commands").unwrap();
    let words = before.split_whitespace().count();
    assert!(words <= 90, "{words} words before the two commands");
    let prose = before.replace('\n', " ");
    for sentence in prose.split(". ") {
        let n = sentence.split_whitespace().count();
        assert!(n <= 45, "a sentence of {n} words: {sentence}");
    }
    // Within a screen (24 lines) of the top: both commands, and the load.
    let screen: Vec<&str> = readme.lines().take(24).collect();
    let screen = screen.join("\n");
    for line in [
        "make demo",
        "make test",
        "extension=$PWD/target/release/libredislock.so",
    ] {
        assert!(screen.contains(line), "{line} in the first screen");
    }
    assert!(after.contains("## What it does"));
}

#[test]
fn one_rust_reader_splits_stored_tags() {
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    let marks = ["0x1d", "0x1e", "\\x1d", "\\x1e", "\\u{1d}", "\\u{1e}"];
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if marks.iter().any(|m| code.contains(m)) {
                found.push(format!(
                    "{}:{}",
                    file.strip_prefix(root()).unwrap().display(),
                    i + 1
                ));
            }
        }
    }
    assert_eq!(found.len(), 2, "GROUP_MARK and TRACE_MARK only: {found:?}");
    assert!(
        found.iter().all(|f| f.starts_with("src/queue/mod.rs:")),
        "{found:?}"
    );
}
