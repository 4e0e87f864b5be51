//! Owner tokens: who holds a lock, permits or a lease, as Redis records it.

/// A fresh owner token: unique across processes and hosts.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The owner token for an owner the caller names: the owner itself when it
/// is made of URL-safe characters (as random owners are: readable in
/// Redis), else `%` and its hex (the scripts take ':' as a separator; no
/// plain owner starts with `%`, so the two never meet).
pub fn owner_token(owner: &[u8]) -> String {
    let plain = |b: &u8| b.is_ascii_alphanumeric() || b"-._~".contains(b);
    if owner.iter().all(plain) {
        return String::from_utf8_lossy(owner).into_owned();
    }
    let mut token = String::with_capacity(1 + 2 * owner.len());
    token.push('%');
    for b in owner {
        token.push_str(&format!("{b:02x}"));
    }
    token
}
