// ext-php-rs's own build script locates PHP; this one makes cargo rebuild
// when the PHP it was built against changes, and lists the Lua scripts for
// src/scripts.rs (every file under src/scripts/, by name).
use std::fmt::Write;

fn main() {
    println!("cargo:rerun-if-env-changed=PHP");
    println!("cargo:rerun-if-env-changed=PHP_CONFIG");
    println!("cargo:rerun-if-changed=src/scripts");
    // At run time: a build script cached from a copy of the tree elsewhere
    // (phpize builds share a target dir) must read this tree's scripts.
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let dir = std::path::Path::new(&root).join("src/scripts");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("src/scripts/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".lua"))
        .collect();
    names.sort();
    let mut out = String::from("&[\n");
    for name in names {
        let path = dir.join(&name);
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
