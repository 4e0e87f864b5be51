// ext-php-rs's own build script locates PHP; this one makes cargo rebuild
// when the PHP it was built against changes, and lists the Lua scripts for
// src/scripts.rs (every file under src/scripts/ and its folders, by name).
use std::fmt::Write;

fn main() {
    println!("cargo:rerun-if-env-changed=PHP");
    println!("cargo:rerun-if-env-changed=PHP_CONFIG");
    println!("cargo:rerun-if-changed=src/scripts");
    // At run time: a build script cached from a copy of the tree elsewhere
    // (phpize builds share a target dir) must read this tree's scripts.
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let dir = std::path::Path::new(&root).join("src/scripts");
    // Each script by its file name, whatever folder of src/scripts/ holds
    // it (the folders say what it is for; src/scripts.rs names no folder).
    let mut found: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut dirs = vec![dir];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("src/scripts/").flatten() {
            let path = entry.path();
            let name = entry.file_name().into_string().unwrap_or_default();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".lua") {
                found.push((name, path));
            }
        }
    }
    found.sort();
    for pair in found.windows(2) {
        assert!(pair[0].0 != pair[1].0, "two scripts named {}", pair[0].0);
    }
    let mut out = String::from("&[\n");
    for (name, path) in found {
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push(']');
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("scripts.rs");
    std::fs::write(dest, out).expect("OUT_DIR/scripts.rs");
}
