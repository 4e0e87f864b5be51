//! Every Redis key of a name, built in one place (docs/keys.md).
//!
//! The seed layouts stay byte for byte (`Queue:<name>`, `Lock:<name>`,
//! `order_lock_<id>`), so old PHP code and the extension share them. Every
//! key the extension adds beside them is `<prefix><kind word>{<tag>}` and
//! then, when the name (or, for the seed kinds, the seed key) holds a brace,
//! `#<seed marker><length of the name>:<name>`, and last a role (`:dead`,
//! `:fence`, ...; a named lock's own key has none). Read after the prefix,
//! such a key says its kind (the word, or for the seed kinds the marker
//! inside the braces or after `#`), its name (inside the braces, or counted
//! out by its length) and its role, so two different (kind, name, role)
//! never share a key whatever bytes the name holds: no name reaches another
//! name's keys.
//!
//! The tag puts all keys of a name in one Cluster slot: for a seed kind the
//! slot of the seed key, for the others the slot Redis gives the name (so
//! names with one `{tag}` share it). It is the seed key (or the name) itself
//! when that holds no brace, else that key's own hash-tag content, else a
//! short stand-in string that hashes to the same slot.

/// What a name names: each kind has keys of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A queue (the seed's `RedisQueue` and `RedisLock\Queue`): `Queue:<name>`.
    Queue,
    /// A seed `RedisLock` lock: `Lock:<name>`.
    SeedLock,
    /// A seed `Lock_Service` order lock: `order_lock_<id>`.
    OrderLock,
    /// A `RedisLock\Lock` (and Redlock, multi-lock): `lock:{<name>}`.
    Lock,
    /// A `RedisLock\Semaphore`: `semaphore:{<name>}`.
    Semaphore,
    /// A read-write lock: `rwlock:{<name>}`.
    RwLock,
    /// A stock: `stock:{<name>}`.
    Stock,
    /// A rate limiter: `limit:{<name>}` and a role, then the limited key.
    Limiter,
    /// Work run once per slot: `once:{<name>}:s:<slot>`.
    Once,
    /// A leader's lock: `leader:{<name>}`.
    Leader,
    /// Batches of jobs (Laravel's `Bus::batch()`): `batches:{<name>}` and
    /// a role, a batch's own keys the role and its id.
    Batches,
    /// A lock on the key another client names as is (Laravel's stock cache
    /// locks): `<name>` itself, whatever it holds; only its added keys
    /// (`exactlock:{...}`) are redislock's.
    ExactLock,
    /// A read-write lock on the key another client names as is (Symfony's
    /// stock RedisStore): `<name>` itself; its added keys are
    /// `exactrwlock:{...}`.
    ExactRwLock,
}

impl Kind {
    /// What the seed code puts before the name in its key.
    fn seed_marker(self) -> Option<&'static [u8]> {
        match self {
            Kind::Queue => Some(b"Queue:"),
            Kind::SeedLock => Some(b"Lock:"),
            Kind::OrderLock => Some(b"order_lock_"),
            Kind::ExactLock | Kind::ExactRwLock => Some(b""),
            _ => None,
        }
    }

    /// What stands before the tag of a shard's or a partition's keys: the
    /// kind's word, and for queues (whose keys start with the seed's
    /// `Queue:<name>`, any name's) `queue:`.
    fn shard_word(self) -> &'static [u8] {
        match self {
            Kind::Queue => b"queue:",
            kind => kind.word(),
        }
    }

    /// What stands before the tag in the extension's keys of this kind.
    fn word(self) -> &'static [u8] {
        match self {
            Kind::Lock => b"lock:",
            Kind::Semaphore => b"semaphore:",
            Kind::RwLock => b"rwlock:",
            Kind::Stock => b"stock:",
            Kind::Limiter => b"limit:",
            Kind::Once => b"once:",
            Kind::Leader => b"leader:",
            Kind::Batches => b"batches:",
            Kind::ExactLock => b"exactlock:",
            Kind::ExactRwLock => b"exactrwlock:",
            Kind::Queue | Kind::SeedLock | Kind::OrderLock => b"",
        }
    }
}

/// The keys of one name of one kind under one prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The name's own key: the seed key, or for the other kinds the one
    /// without a role.
    pub main: Vec<u8>,
    /// What every added key starts with; a role follows.
    base: Vec<u8>,
}

impl Place {
    pub fn new(prefix: &[u8], kind: Kind, name: &[u8]) -> Self {
        let hashed = match kind.seed_marker() {
            Some(marker) => [prefix, marker, name].concat(),
            None => name.to_vec(),
        };
        let mut base = [prefix, kind.word(), b"{"].concat();
        close(&mut base, &hashed, |base| {
            base.extend_from_slice(kind.seed_marker().unwrap_or_default());
            counted(base, name);
        });
        let main = match kind.seed_marker() {
            Some(_) => hashed,
            None => base.clone(),
        };
        Place { main, base }
    }

    /// The keys of an order lock of a layout of its own (a copy of the
    /// seed's `Lock_Service` whose template is not `order_lock_%s`): its
    /// lock is `<prefix><before><order><after>`, and its added keys are
    /// `<prefix>{<that key>}` and a role, as the seed's are, or, where the
    /// key holds a brace, `<prefix>{<tag>}#<len>:<before><len>:<after><len>:<order>`
    /// (the seed's have `order_lock_` after the `#`, never a digit).
    pub fn order(prefix: &[u8], before: &[u8], after: &[u8], order: &[u8]) -> Self {
        let main = [prefix, before, order, after].concat();
        let mut base = [prefix, b"{"].concat();
        close(&mut base, &main, |base| {
            for part in [before, after, order] {
                counted(base, part);
            }
        });
        Place { main, base }
    }

    /// The keys of shard `i` of `n` of the name: `<prefix><kind
    /// word>{<tag>}#s<i>/<n>:<length of the name>:<name>` (no other layout
    /// has `#s` after the tag), the tag the stand-in ([`stand_in`]) of the
    /// slot `i` n-ths of the slot space past the name's own: a Cluster
    /// gives each primary a contiguous range of slots, so the shards of one
    /// name, evenly spaced, spread over its primaries.
    pub fn shard(prefix: &[u8], kind: Kind, name: &[u8], i: usize, n: usize) -> Self {
        const SLOTS: usize = 16384;
        let home = usize::from(slot(&Place::new(prefix, kind, name).main));
        let target = (home + i * SLOTS / n.max(1)) % SLOTS;
        let tag = stand_in(u16::try_from(target).unwrap_or_default());
        let mut base = [prefix, kind.shard_word(), b"{", &tag, b"}#s"].concat();
        base.extend_from_slice(format!("{i}/{n}:{}:", name.len()).as_bytes());
        base.extend_from_slice(name);
        Place {
            main: base.clone(),
            base,
        }
    }

    /// The added key with `role` (`":dead"`, `":fence"`, `":"` for the
    /// prefix of waiters' keys, ...).
    pub fn beside(&self, role: &str) -> Vec<u8> {
        [self.base.as_slice(), role.as_bytes()].concat()
    }
}

/// Ends an added keys' base after its `{`: the hashed key and `}`, or,
/// where that key holds a brace, its tag, `}#` and what `count` writes
/// to tell it apart from every other key of that tag.
fn close(base: &mut Vec<u8>, hashed: &[u8], count: impl FnOnce(&mut Vec<u8>)) {
    if hashed.iter().any(|&b| b == b'{' || b == b'}') {
        base.extend_from_slice(&tag(hashed));
        base.extend_from_slice(b"}#");
        count(base);
    } else {
        base.extend_from_slice(hashed);
        base.push(b'}');
    }
}

/// `<length>:<part>`: a part that says where it ends.
fn counted(base: &mut Vec<u8>, part: &[u8]) {
    base.extend_from_slice(part.len().to_string().as_bytes());
    base.push(b':');
    base.extend_from_slice(part);
}

/// The name whose key `key` is: its own key (`role` "", for a kind with a
/// word but no seed marker), or its added key with `role` (`":fence"`):
/// the inverse of [`Place::new`].
pub fn name_of(prefix: &[u8], kind: Kind, key: &[u8], role: &str) -> Option<Vec<u8>> {
    let rest = key
        .strip_prefix(prefix)?
        .strip_prefix(kind.word())?
        .strip_prefix(b"{")?
        .strip_suffix(role.as_bytes())?;
    let close = rest.iter().position(|&b| b == b'}')?;
    let marker = kind.seed_marker().unwrap_or_default();
    let name = match rest[close + 1..].strip_prefix(b"#") {
        // A seed kind's tag is its seed key: prefix, marker, name.
        None if kind.seed_marker().is_some() => {
            rest[..close].strip_prefix(prefix)?.strip_prefix(marker)?
        }
        None => &rest[..close],
        Some(counted) => {
            let counted = counted.strip_prefix(marker)?;
            let colon = counted.iter().position(|&b| b == b':')?;
            let len: usize = std::str::from_utf8(&counted[..colon]).ok()?.parse().ok()?;
            counted.get(colon + 1..)?.get(..len)?
        }
    };
    let place = Place::new(prefix, kind, name);
    let built = if role.is_empty() {
        place.main
    } else {
        place.beside(role)
    };
    (built == key).then(|| name.to_vec())
}

/// The name, partition `i` and count `n` whose shard's key `key` is (see
/// [`Place::shard`]: `<prefix><word>{<tag>}#s<i>/<n>:<length>:<name>`):
/// parsed, then checked by making it again.
pub fn shard_of(prefix: &[u8], kind: Kind, key: &[u8]) -> Option<(Vec<u8>, usize, usize)> {
    let rest = key
        .strip_prefix(prefix)?
        .strip_prefix(kind.shard_word())?
        .strip_prefix(b"{".as_slice())?;
    let close = rest.iter().position(|&b| b == b'}')?;
    let mut fields = rest[close + 1..]
        .strip_prefix(b"#s".as_slice())?
        .splitn(3, |&b| b == b':');
    let (place, len, name) = (fields.next()?, fields.next()?, fields.next()?);
    let (i, n) = std::str::from_utf8(place).ok()?.split_once('/')?;
    let (i, n): (usize, usize) = (i.parse().ok()?, n.parse().ok()?);
    let len: usize = std::str::from_utf8(len).ok()?.parse().ok()?;
    if name.len() != len || i >= n {
        return None;
    }
    (Place::shard(prefix, kind, name, i, n).main == key).then(|| (name.to_vec(), i, n))
}

/// `bytes` matching only themselves in a `SCAN ... MATCH` glob.
pub fn literal(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for &b in bytes {
        if b"*?[]\\".contains(&b) {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

/// The two `MATCH` globs of the own keys of the names of `kind` that match
/// the glob `pattern` (see [`Place::new`]): `<word>{<name>}` for a name
/// without braces, `<word>{<tag>}#<length>:<name>` for one with.
pub fn globs(prefix: &[u8], kind: Kind, pattern: &[u8]) -> [Vec<u8>; 2] {
    let (prefix, word) = (literal(prefix), kind.word());
    [
        [&prefix[..], word, b"{", pattern, b"}"].concat(),
        [&prefix[..], word, b"{*}#*:", pattern].concat(),
    ]
}

/// The words at the start of every key the extension keeps under a prefix
/// (after it): its own kinds' (`lock:{`...), the drop-in kinds' seed keys
/// and the operator records.
const KEPT: [&[u8]; 15] = [
    b"lock:{",
    b"semaphore:{",
    b"rwlock:{",
    b"stock:{",
    b"limit:{",
    b"once:{",
    b"leader:{",
    b"batches:{",
    b"exactlock:{",
    b"exactrwlock:{",
    b"Queue:",
    b"Lock:",
    b"order_lock_",
    b"lock_unique_id",
    b"redislock:",
];

/// Whether the key `<prefix><name>` is one the extension keeps for some
/// name (see [`KEPT`]; a drop-in kind's added keys `{<prefix><seed
/// key>}<role>` and `{<tag>}#<marker>...`). An exact kind (a lock on the
/// key another client names as is) must not be given such a key: it would
/// read another name's keys in its own format (a read lock granted while
/// the write lock of the read-write lock whose key it names holds; a
/// queue's sorted set read as lock holders).
pub fn reserved(prefix: &[u8], name: &[u8]) -> bool {
    if KEPT.iter().any(|kept| name.starts_with(kept)) {
        return true;
    }
    let Some(tagged) = name.strip_prefix(b"{") else {
        return false;
    };
    let seed = [Kind::Queue, Kind::SeedLock, Kind::OrderLock]
        .iter()
        .filter_map(|k| k.seed_marker())
        .any(|marker| tagged.starts_with(&[prefix, marker].concat()));
    let counted = tagged
        .iter()
        .position(|&b| b == b'}')
        .is_some_and(|close| tagged[close + 1..].starts_with(b"#"));
    seed || counted
}

/// Which of `n` shards or partitions `name` (a buyer, a group, a task's
/// id) belongs to: the same for every client, whatever its language.
pub fn spread(name: &[u8], n: usize) -> usize {
    usize::from(crc16::State::<crc16::XMODEM>::calculate(name)) % n.max(1)
}

/// The Cluster slot of `key` (its hash tag's, when it has one).
pub fn slot(key: &[u8]) -> u16 {
    crc16::State::<crc16::XMODEM>::calculate(hash_tag(key).unwrap_or(key)) % 16384
}

/// The content Redis hashes in `key`, when `key` has a hash tag.
pub fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let len = key[open + 1..].iter().position(|&b| b == b'}')?;
    (len > 0).then(|| &key[open + 1..open + 1 + len])
}

/// Brace-free text that Redis hashes to the slot of `key`: its hash tag,
/// or the shortest stand-in (digits and letters) with that slot.
fn tag(key: &[u8]) -> Vec<u8> {
    match hash_tag(key) {
        Some(tag) => tag.to_vec(),
        None => stand_in(slot(key)),
    }
}

/// The characters of a stand-in.
const STAND_IN_ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The `n`-th string of `len` (at most 4) characters over
/// [`STAND_IN_ALPHABET`], its first character the lowest digit.
fn stand_in_candidate(mut n: usize, len: u32) -> ([u8; 4], usize) {
    let mut candidate = [0u8; 4];
    let len = (len as usize).min(4);
    for c in &mut candidate[..len] {
        *c = STAND_IN_ALPHABET[n % STAND_IN_ALPHABET.len()];
        n /= STAND_IN_ALPHABET.len();
    }
    (candidate, len)
}

/// Each slot's stand-in, found in one pass over the candidates the first
/// time one is asked for (never at module startup): 74,396 strings of up
/// to three characters reach every slot, where a search per name or per
/// shard took up to as many tries each time.
static STAND_INS: std::sync::LazyLock<Vec<Vec<u8>>> = std::sync::LazyLock::new(|| {
    let mut table = vec![Vec::new(); 16384];
    let mut left = table.len();
    for len in 1..=4u32 {
        for n in 0..STAND_IN_ALPHABET.len().pow(len) {
            let (candidate, len) = stand_in_candidate(n, len);
            let text = &candidate[..len];
            let crc = crc16::State::<crc16::XMODEM>::calculate(text);
            let entry = &mut table[usize::from(crc % 16384)];
            if entry.is_empty() {
                *entry = text.to_vec();
                left -= 1;
                if left == 0 {
                    return table;
                }
            }
        }
    }
    table
});

/// The first string over [0-9A-Za-z], shortest first, in `slot` (four
/// characters reach every slot: a test checks it).
pub fn stand_in(slot: u16) -> Vec<u8> {
    match STAND_INS.get(usize::from(slot)) {
        Some(tag) if !tag.is_empty() => tag.clone(),
        // Not reached (see above). The layout stays injective without the tag.
        _ => b"_".to_vec(),
    }
}

/// Why `prefix` cannot serve on a Redis Cluster, if it cannot: a `{` in it
/// that does not open a hash tag puts the keys of one script in different
/// slots.
pub fn cluster_prefix_problem(prefix: &[u8]) -> Option<String> {
    if prefix.contains(&b'{') && hash_tag(prefix).is_none() {
        return Some(
            "on a Redis Cluster a prefix with '{' must hold a whole hash tag ('{app}:'), \
             or Redis hashes its keys apart"
                .into(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use redis::cluster_routing::Slot;

    use proptest::prelude::*;

    /// A shard's key names its name and place again ([`shard_of`]), and
    /// no other key does: another kind's, a queue's own, one cut short.
    #[test]
    fn a_shard_key_is_read_back_to_its_name() {
        let names: [&[u8]; 5] = [
            b"jobs",
            b"{t}:leases",
            b"x:dead",
            b"a}b{c",
            b"\0\xff:#s1/2:",
        ];
        for prefix in [b"".as_slice(), b"app:", b"{app}:"] {
            for name in names {
                for n in 2..5 {
                    for i in 0..n {
                        let key = Place::shard(prefix, Kind::Queue, name, i, n).main;
                        assert_eq!(
                            shard_of(prefix, Kind::Queue, &key),
                            Some((name.to_vec(), i, n))
                        );
                        assert_eq!(shard_of(prefix, Kind::Stock, &key), None);
                        assert_eq!(shard_of(prefix, Kind::Queue, &key[..key.len() - 1]), None);
                    }
                }
                let own = Place::new(prefix, Kind::Queue, name).main;
                assert_eq!(shard_of(prefix, Kind::Queue, &own), None);
            }
        }
    }

    #[test]
    fn a_glob_literal_matches_only_itself() {
        assert_eq!(literal(b"a*b?[c]\\d"), b"a\\*b\\?\\[c\\]\\\\d".to_vec());
        assert_eq!(
            globs(b"p*", Kind::Lock, b"job-*"),
            [
                b"p\\*lock:{job-*}".to_vec(),
                b"p\\*lock:{*}#*:job-*".to_vec()
            ]
        );
    }

    use super::*;

    const KINDS: [Kind; 13] = [
        Kind::Queue,
        Kind::SeedLock,
        Kind::OrderLock,
        Kind::Lock,
        Kind::Semaphore,
        Kind::RwLock,
        Kind::Stock,
        Kind::Limiter,
        Kind::Once,
        Kind::Leader,
        Kind::Batches,
        Kind::ExactLock,
        Kind::ExactRwLock,
    ];
    /// Every role the engines use, waiters' keys (`a:`/`w:` + token) and
    /// limiters' keys (`t:`, `f:`, `s:`, `n:` + the limited key) too.
    const ROLES: [&str; 37] = [
        ":payloads",
        ":tags",
        ":groups",
        ":group:",
        ":group:tenant-42",
        ":failures",
        ":dead-failures",
        ":workers",
        ":workers-done",
        ":recent",
        ":attempts",
        ":leased",
        ":leases",
        ":dead",
        ":stats",
        ":line",
        ":fence",
        ":permits",
        ":buyers",
        ":takes",
        ":a:0af3",
        ":w:0af3",
        ":a:x",
        ":w:%3a",
        ":t:",
        ":t:1.2.3.4",
        ":f:}",
        ":s:{x}:n:",
        ":n:",
        ":n:#5:",
        ":s:2026-11-28",
        ":term",
        ":all",
        ":open",
        ":b:0198d2c4-7a1e-7c3b-9f0e-2b1c9d8e7f60",
        ":f:0198d2c4-7a1e-7c3b-9f0e-2b1c9d8e7f60",
        ":b:x}",
    ];

    fn exact(kind: Kind) -> bool {
        matches!(kind, Kind::ExactLock | Kind::ExactRwLock)
    }

    /// Who owns a key: a (kind, name), or for an exact kind's own key the
    /// key itself (kind None), which both exact kinds share: it is the
    /// other client's key, named as is.
    type Owner = (Option<Kind>, Vec<u8>);

    /// A name's keys and their owners. An exact kind given a key the
    /// extension keeps ([`reserved`]) is refused: it has no keys.
    fn keys_of(prefix: &[u8], kind: Kind, name: &[u8]) -> Vec<(Vec<u8>, Owner)> {
        if exact(kind) && reserved(prefix, name) {
            return Vec::new();
        }
        let place = Place::new(prefix, kind, name);
        let own = (Some(kind), name.to_vec());
        let main = if exact(kind) {
            (None, name.to_vec())
        } else {
            own.clone()
        };
        let mut keys = vec![(place.main.clone(), main)];
        keys.extend(ROLES.iter().map(|r| (place.beside(r), own.clone())));
        keys
    }

    /// Bytes that make keys meet when names are appended blindly: braces,
    /// colons, `#`, digits, the seed markers' letters, NUL, invalid UTF-8.
    fn hostile() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop::sample::select(b"{}:#0123456789QueueLockr_ \0\xff".to_vec());
        let bytes = prop::collection::vec(byte, 0..10);
        let tail = prop::sample::select(vec![
            "",
            ":dead",
            ":leases",
            "}:dead",
            "}",
            "{",
            "{}",
            "#Queue:3:",
            ":fence",
            "}#5:",
        ]);
        (bytes, tail).prop_map(|(mut b, t)| {
            b.extend_from_slice(t.as_bytes());
            b
        })
    }

    fn name() -> impl Strategy<Value = Vec<u8>> {
        hostile().prop_filter("names are not empty", |n| !n.is_empty())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Under one prefix, two different (kind, name) never share a key:
        /// every layout together, the exact kinds' (Laravel's and Symfony's
        /// formats, on a key named as is) included, their names often
        /// spelling another name's key.
        #[test]
        fn one_prefix_never_gives_two_names_one_key(
            prefix in hostile(),
            names in prop::collection::vec(
                (0..KINDS.len(), name(), prop::option::of((0..KINDS.len(), 0..=ROLES.len()))),
                2..6,
            ),
        ) {
            let mut owner: HashMap<Vec<u8>, Owner> = HashMap::new();
            let mut named: Vec<(Kind, Vec<u8>)> = Vec::new();
            for (k, n, spells) in names {
                let kind = KINDS[k];
                match spells {
                    // An exact name that is another name's key (after the
                    // prefix), beside that other name.
                    Some((other, r)) if exact(kind) => {
                        let place = Place::new(&prefix, KINDS[other], &n);
                        let key = ROLES.get(r).map_or(place.main.clone(), |role| place.beside(role));
                        named.push((KINDS[other], n));
                        named.push((kind, key[prefix.len()..].to_vec()));
                    }
                    _ => named.push((kind, n)),
                }
            }
            for (kind, n) in named {
                for (key, me) in keys_of(&prefix, kind, &n) {
                    if let Some(other) = owner.insert(key.clone(), me.clone()) {
                        prop_assert_eq!(&other, &me, "key {:?}", String::from_utf8_lossy(&key));
                    }
                }
            }
        }

        /// Order layouts of their own: two (layout, order) whose locks are
        /// two keys never share an added key. (Their locks are the keys the
        /// app chose: any key, as an exact lock's is.)
        #[test]
        fn order_layouts_never_share_an_added_key(
            prefix in hostile(),
            one in (hostile(), hostile(), name()),
            two in (hostile(), hostile(), name()),
        ) {
            let a = Place::order(&prefix, &one.0, &one.1, &one.2);
            let b = Place::order(&prefix, &two.0, &two.1, &two.2);
            if a.main != b.main {
                prop_assert_ne!(a.beside(":line"), b.beside(":line"));
                prop_assert_ne!(a.beside(":fence"), b.beside(":fence"));
            }
        }

        /// The prefixes a fleet uses side by side (none and a tagged one,
        /// one and a longer one) never share a key either.
        #[test]
        fn prefixes_side_by_side_never_share_a_key(
            pair in prop::sample::select(vec![
                ("", "{app}:"), ("app:", "app:staging:"), ("app", "app:"), ("", "app:"),
                ("{app}:", "{app}:x:"), ("a", "a{b}"),
            ]),
            one in (0..KINDS.len() - 1, name()),
            two in (0..KINDS.len() - 1, name()),
        ) {
            // (An exact kind's own key is named as is: across prefixes it can
            // name any key; its added keys count.)
            let keys = |prefix: &str, (k, n): &(usize, Vec<u8>)| -> Vec<Vec<u8>> {
                keys_of(prefix.as_bytes(), KINDS[*k], n)
                    .into_iter()
                    .filter(|(_, (kind, _))| kind.is_some())
                    .map(|(key, _)| key)
                    .collect()
            };
            let first = keys(pair.0, &one);
            for key in keys(pair.1, &two) {
                prop_assert!(!first.contains(&key), "{:?}", String::from_utf8_lossy(&key));
            }
        }

        /// Every key of a name is in one Cluster slot, a seed kind's in its
        /// seed key's, whatever the name and any prefix a Cluster takes.
        #[test]
        fn a_names_keys_share_one_slot(prefix in hostile(), k in 0..KINDS.len() - 1, n in name()) {
            prop_assume!(cluster_prefix_problem(&prefix).is_none());
            let keys: Vec<Vec<u8>> = keys_of(&prefix, KINDS[k], &n).into_iter().map(|(key, _)| key).collect();
            let slot = Slot::for_key(&Place::new(&prefix, KINDS[k], &n).main);
            for key in &keys {
                prop_assert_eq!(Slot::for_key(key), slot, "{:?}", String::from_utf8_lossy(key));
            }
        }
    }

    #[test]
    fn names_without_braces_keep_readable_keys() {
        let queue = Place::new(b"", Kind::Queue, b"orders");
        assert_eq!(queue.main, b"Queue:orders");
        assert_eq!(queue.beside(":dead"), b"{Queue:orders}:dead");
        let prefixed = Place::new(b"app:", Kind::Queue, b"orders");
        assert_eq!(prefixed.main, b"app:Queue:orders");
        assert_eq!(prefixed.beside(":dead"), b"app:{app:Queue:orders}:dead");
        let lock = Place::new(b"app:", Kind::Lock, b"job");
        assert_eq!(lock.main, b"app:lock:{job}");
        assert_eq!(lock.beside(":fence"), b"app:lock:{job}:fence");
        assert_eq!(Place::new(b"", Kind::SeedLock, b"x").main, b"Lock:x");
        assert_eq!(Place::new(b"", Kind::OrderLock, b"7").main, b"order_lock_7");
        let exact = Place::new(b"app_", Kind::ExactLock, b"laravel_cache:x");
        assert_eq!(exact.main, b"app_laravel_cache:x");
        assert_eq!(
            exact.beside(":line"),
            b"app_exactlock:{app_laravel_cache:x}:line"
        );
    }

    #[test]
    fn an_order_layout_of_its_own_keeps_its_keys_and_counts_out_braces() {
        let own = Place::order(b"app:", b"staging_lock_", b":x", b"7");
        assert_eq!(own.main, b"app:staging_lock_7:x");
        assert_eq!(own.beside(":line"), b"app:{app:staging_lock_7:x}:line");
        // The seed's layout through it is the seed's keys.
        let seed = Place::new(b"app:", Kind::OrderLock, b"7");
        assert_eq!(Place::order(b"app:", b"order_lock_", b"", b"7"), seed);
        // With a brace, the parts are counted out: `a` + `{b}` and `a{` + `b}` differ.
        let one = Place::order(b"", b"a", b"", b"{b}");
        let two = Place::order(b"", b"a{", b"", b"b}");
        assert_eq!(one.main, two.main);
        assert_ne!(one.beside(":line"), two.beside(":line"));
        assert_eq!(
            one.beside(":line"),
            [b"{b}#1:a0:3:{b}".as_slice(), b":line"].concat()
        );
    }

    #[test]
    fn names_with_braces_are_counted_out_after_their_tag() {
        // `{shop}:orders:dead` is a queue of its own, not the dead letters
        // of `{shop}:orders`.
        let orders = Place::new(b"", Kind::Queue, b"{shop}:orders");
        assert_eq!(orders.main, b"Queue:{shop}:orders");
        assert_eq!(
            orders.beside(":dead"),
            b"{shop}#Queue:13:{shop}:orders:dead"
        );
        let dead = Place::new(b"", Kind::Queue, b"{shop}:orders:dead");
        assert_eq!(dead.main, b"Queue:{shop}:orders:dead");
        assert_ne!(dead.main, orders.beside(":dead"));
        // A name that is all brace gets a stand-in tag in the same slot.
        let brace = Place::new(b"", Kind::Lock, b"}");
        assert_eq!(
            Slot::for_key(&brace.main),
            Slot::for_key(brace.beside(":fence"))
        );
        assert_eq!(
            name_of(b"", Kind::Lock, &brace.main, ""),
            Some(b"}".to_vec())
        );
    }

    #[test]
    fn name_of_reads_back_any_name() {
        for name in [&b"job"[..], b"{g}a", b"a}b", b"}", b"x{}y", b"a:b}#3:c"] {
            for prefix in [&b""[..], b"app:", b"{app}:"] {
                let main = Place::new(prefix, Kind::Lock, name).main;
                assert_eq!(name_of(prefix, Kind::Lock, &main, ""), Some(name.to_vec()));
                assert_eq!(
                    name_of(prefix, Kind::Lock, &[&main[..], b":fence"].concat(), ""),
                    None
                );
                let fence = Place::new(prefix, Kind::ExactLock, name).beside(":fence");
                assert_eq!(
                    name_of(prefix, Kind::ExactLock, &fence, ":fence"),
                    Some(name.to_vec())
                );
                assert_eq!(name_of(prefix, Kind::ExactLock, &main, ":fence"), None);
            }
        }
    }

    /// The table gives each slot the string the search it replaced found:
    /// the first candidate, shortest first, in that slot (the layout of
    /// names with braces stays byte for byte).
    #[test]
    fn each_slot_has_the_first_stand_in_in_it() {
        for s in 0..16384u16 {
            let tag = stand_in(s);
            assert_eq!(Slot::for_key(&tag), Slot::new(s).unwrap(), "{s}");
            assert!(tag.len() <= 3);
        }
        for s in (0..16384u16).step_by(97) {
            let want = Slot::new(s).unwrap();
            let first = (1..=4u32)
                .flat_map(|len| {
                    (0..STAND_IN_ALPHABET.len().pow(len)).map(move |n| {
                        let (c, len) = stand_in_candidate(n, len);
                        c[..len].to_vec()
                    })
                })
                .find(|c| Slot::for_key(c) == want)
                .unwrap();
            assert_eq!(stand_in(s), first, "{s}");
        }
    }

    #[test]
    fn four_characters_reach_every_slot() {
        let mut seen = std::collections::HashSet::new();
        const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        'all: for len in 1..=4u32 {
            for mut n in 0..ALPHABET.len().pow(len) {
                let mut candidate = Vec::new();
                for _ in 0..len {
                    candidate.push(ALPHABET[n % ALPHABET.len()]);
                    n /= ALPHABET.len();
                }
                seen.insert(Slot::for_key(&candidate));
                if seen.len() == 16384 {
                    break 'all;
                }
            }
        }
        assert_eq!(seen.len(), 16384);
    }

    #[test]
    fn a_cluster_refuses_a_prefix_whose_brace_opens_no_tag() {
        assert!(cluster_prefix_problem(b"{app}:").is_none());
        assert!(cluster_prefix_problem(b"app}").is_none());
        assert!(cluster_prefix_problem(b"app:").is_none());
        assert!(cluster_prefix_problem(b"x{}y").is_some());
        assert!(cluster_prefix_problem(b"app{").is_some());
    }
}
