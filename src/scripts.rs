//! The Lua scripts under `src/scripts/`, each built with the files it
//! includes: `need.lua` first (the checks every script makes before it
//! writes), then what its header's `-- include:` lines name (and what
//! those include, each file once, a file after its own includes), then the
//! script. Redis runs them as one script (EVALSHA, loaded on first use).

/// Every file under `src/scripts/`, by name.
const FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/scripts.rs"));

/// A script built from `src/scripts/<file>` and its includes (`with`
/// files after them: a variant), loaded on first use. A file that does not
/// exist does not compile.
macro_rules! script {
    ($file:literal $(, with $($extra:literal),+)?) => {{
        const _: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/scripts/", $file));
        std::sync::LazyLock::new(|| {
            redis::Script::new(&$crate::scripts::source($file, &[$($($extra),+)?]))
        })
    }};
}
pub(crate) use script;

/// The text of `file` under `src/scripts/`.
fn text(file: &str) -> &'static str {
    match FILES.iter().find(|(name, _)| *name == file) {
        Some((_, text)) => text,
        // The scripts are the crate's own: a wrong name is a bug caught by
        // the tests below, not a run-time condition.
        None => panic!("no script src/scripts/{file}"),
    }
}

/// The files `file`'s header includes, in order.
fn includes(file: &str) -> impl Iterator<Item = &'static str> {
    text(file)
        .lines()
        .take_while(|l| l.starts_with("--"))
        .filter_map(|l| l.strip_prefix("-- include:"))
        .flat_map(str::split_whitespace)
}

/// `file` after its includes, each once, into `order`.
fn resolve(file: &'static str, order: &mut Vec<&'static str>, path: &mut Vec<&'static str>) {
    if order.contains(&file) {
        return;
    }
    assert!(!path.contains(&file), "include cycle: {path:?} -> {file}");
    path.push(file);
    for included in includes(file) {
        resolve(included, order, path);
    }
    path.pop();
    order.push(file);
}

/// The files of the script `file` with `extra` files after its includes
/// (a variant: Symfony's format of permits), in the order Redis runs them.
pub fn files(file: &'static str, extra: &[&'static str]) -> Vec<&'static str> {
    let mut order = vec!["need.lua"];
    for included in includes(file) {
        resolve(included, &mut order, &mut Vec::new());
    }
    for e in extra {
        resolve(e, &mut order, &mut Vec::new());
    }
    resolve(file, &mut order, &mut Vec::new());
    order
}

/// The source of the script `file` (see [`files`]): its includes, then its
/// own text as a function. On Redis 7 and later (and the servers that
/// speak as it) the function is simply run. Before 7.0 it runs under
/// `pcall`, so that errors read as on Redis 7: an error raised as `{err =
/// ...}` (need.lua's) is the reply (those servers' error handler fails on a
/// table, with a Lua trace instead of the message), and a command's error,
/// which they hand the script as `@user_script: <line>: -<error>`, is
/// replied as `<error>` (`READONLY You can't write against a read only
/// replica.`). Any other error is raised again as it was.
pub fn source(file: &'static str, extra: &[&'static str]) -> String {
    let mut parts: Vec<&str> = files(file, extra).into_iter().map(text).collect();
    let main = parts.pop().unwrap_or_default();
    let mut source: String = parts.concat();
    source.push_str("local function redislock_script()\n");
    source.push_str(main);
    source.push_str(
        "\nend\n\
         if redis.REDIS_VERSION_NUM then return redislock_script() end\n\
         local ok, reply = pcall(redislock_script)\n\
         if ok or (type(reply) == 'table' and reply.err) then return reply end\n\
         local said = type(reply) == 'string' and string.match(reply, '^@user_script:%s*%d+:%s*%-(.+)$')\n\
         if said then return {err = said} end\n\
         error(reply, 0)\n",
    );
    source
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_resolves_to_its_includes_in_order() {
        for (name, _) in FILES {
            let files = files(name, &[]);
            assert_eq!(files.first(), Some(&"need.lua"), "{name}");
            assert_eq!(files.last(), Some(name), "{name}");
            for (i, f) in files.iter().enumerate() {
                assert!(!files[i + 1..].contains(f), "{name}: {f} twice");
                for included in includes(f) {
                    let at = files.iter().position(|x| *x == included);
                    assert!(at.is_some_and(|at| at < i), "{name}: {included} before {f}");
                }
            }
        }
        assert_eq!(
            files("queue_ack.lua", &[]),
            [
                "need.lua",
                "line.lua",
                "queue_line.lua",
                "queue_count.lua",
                "queue_add.lua",
                "queue_task.lua",
                "queue_ack.lua"
            ]
        );
        assert_eq!(
            files("permits_acquire.lua", &["permits_symfony.lua"]),
            [
                "need.lua",
                "line.lua",
                "lock_line.lua",
                "permits_line.lua",
                "permits_symfony.lua",
                "permits_acquire.lua"
            ]
        );
    }

    /// Every function a script calls that is defined in one of the
    /// scripts is defined in what it includes (or itself).
    #[test]
    fn a_script_includes_every_shared_function_it_calls() {
        let defines = |file: &str| -> Vec<String> {
            text(file)
                .lines()
                .filter_map(|l| {
                    let rest = l
                        .trim_start()
                        .strip_prefix("local ")
                        .unwrap_or(l.trim_start());
                    let name = rest.strip_prefix("function ")?;
                    Some(name.split('(').next()?.trim().to_owned())
                })
                .collect()
        };
        let all: Vec<(String, &str)> = FILES
            .iter()
            .flat_map(|(f, _)| defines(f).into_iter().map(move |d| (d, *f)))
            .collect();
        for (name, body) in FILES {
            let reach: Vec<String> = files(name, &[]).iter().flat_map(|f| defines(f)).collect();
            for (function, home) in &all {
                let called = body
                    .match_indices(&format!("{function}("))
                    .any(|(i, _)| !body[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'));
                assert!(
                    !called || reach.contains(function),
                    "{name} calls {function} (in {home}) without including it"
                );
            }
        }
    }
}
