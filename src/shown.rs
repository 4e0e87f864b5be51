//! Names and values as messages show them, the same from every layer: an
//! engine's typed error and a binding's message quote a name alike.

/// A value quoted for a message, cut at 64 characters: a message never
/// carries megabytes of an argument. Control characters are escaped
/// (see [`escaped`]).
pub fn quoted(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() <= 64 {
        return format!("'{}'", escaped(bytes));
    }
    let head: String = text.chars().take(64).collect();
    format!("'{}...' ({} bytes)", escaped(head.as_bytes()), bytes.len())
}

/// A name or value as a message shows it: its bytes as UTF-8 (a byte that
/// is none shown as U+FFFD), its control characters escaped (`\x1b`,
/// `\u{9b}`): a message reaches terminals and logs, where they would act.
pub fn escaped(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if !text.chars().any(char::is_control) {
        return text.into_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c as u32 {
            _ if !c.is_control() => out.push(c),
            n @ 0..=0x7f => out.push_str(&format!("\\x{n:02x}")),
            n => out.push_str(&format!("\\u{{{n:x}}}")),
        }
    }
    out
}
