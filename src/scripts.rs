//! The Lua scripts under `src/scripts/`, each built from the files it
//! includes: `need.lua` first (the checks every script makes before it
//! writes), then the functions it shares with its kind, then the operation.
//! Redis runs them as one script (EVALSHA, loaded on first use).

/// A script made of files under `src/scripts/`, concatenated: the checks
/// every script makes before it writes (`need.lua`), the functions it
/// shares with its kind, then the operation; Redis runs them as one script.
macro_rules! script {
    ($($file:literal),+) => {
        std::sync::LazyLock::new(|| {
            redis::Script::new(concat!(
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/scripts/need.lua")),
                $(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/scripts/", $file)),)+
            ))
        })
    };
}
pub(crate) use script;

/// A script of something that waits in line: the line's functions
/// (`line.lua`) first (see [`script!`]).
macro_rules! line_script {
    ($($file:literal),+) => {
        $crate::scripts::script!("line.lua", $($file),+)
    };
}
pub(crate) use line_script;
