//! Replies off the wire: where a RESP2 reply ends, and what it says.
//!
//! [`Frame`] finds where a reply that has begun to arrive ends. It resumes
//! where it stopped when more bytes come, so a reply read in many pieces is
//! walked once, and it refuses what is not RESP2 and arrays nested deeper
//! than the `redis` crate's own parser takes ([`MAX_DEPTH`]). Once the
//! whole reply is there, [`decode`] reads it, checked already, into the
//! `redis` crate's `Value`, which the rest of the crate (and its cluster
//! code) reads: one pass, each bulk string copied once.
//!
//! Why not the `redis` crate's own `Parser`: it spends about 34 µs on a
//! reply of 100 tasks with their scores (200 bulk strings), a tenth of that
//! here (docs/decisions/0002-reply-walker.md); and it cannot resume, so a reply that trickles
//! in over a slow link would be parsed again after every read. The
//! `redis-protocol` crate decoded the whole reply once found (it too
//! decodes only from a reply's start, and recurses into nested arrays
//! without a bound): a second walk and a frame per element before the
//! `Value`, a quarter of a 100-task pop's client instructions, gone since.
//! A property test checks both walks against the `redis` crate's parser.

use redis::{ErrorKind, RedisError, Value};

/// How deep arrays may nest: the `redis` crate's parser refuses deeper.
pub const MAX_DEPTH: usize = 100;

/// Where the walk through a reply stands (see the module comment).
#[derive(Default)]
pub struct Frame {
    /// Where the next element (or the rest of the current line) starts.
    at: usize,
    /// Where the search for the current line's end resumes.
    seek: usize,
    /// The elements still to come of each array that is open, outermost
    /// first.
    open: Vec<u64>,
    /// How long the reply is at least, once a bulk string's length was
    /// read: a reader refuses a reply too large before it arrives.
    wants: usize,
}

/// What a reply's bytes are not: RESP2 (the caller quotes the reply).
pub struct NotResp;

impl Frame {
    /// How many bytes the reply has at least, as far as its lengths read
    /// so far say.
    pub fn wants(&self) -> usize {
        self.wants
    }

    /// The length of the reply at the start of `buf` once it is all there,
    /// None while more must come. `buf` must be the same bytes as at the
    /// last call, with more after them.
    pub fn end(&mut self, buf: &[u8]) -> Result<Option<usize>, NotResp> {
        loop {
            let Some(&kind) = buf.get(self.at) else {
                return Ok(None);
            };
            let from = self.seek.max(self.at + 1);
            let Some(cr) = buf[from..].windows(2).position(|w| w == b"\r\n") else {
                // The line goes on: search again from its last byte.
                self.seek = buf.len().saturating_sub(1).max(self.at + 1);
                return Ok(None);
            };
            let line = &buf[self.at + 1..from + cr];
            let next = from + cr + 2;
            match kind {
                b'+' | b'-' => self.at = next,
                b':' => {
                    number(line)?;
                    self.at = next;
                }
                b'$' => match number(line)? {
                    -1 => self.at = next,
                    len => {
                        let len = usize::try_from(len).map_err(|_| NotResp)?;
                        let end = next.checked_add(len).and_then(|e| e.checked_add(2));
                        let end = end.ok_or(NotResp)?;
                        if buf.len() < end {
                            // Wait for the whole string (the line is read
                            // again then: it is short).
                            self.seek = self.at + 1;
                            self.wants = end;
                            return Ok(None);
                        }
                        if &buf[end - 2..end] != b"\r\n" {
                            return Err(NotResp);
                        }
                        self.at = end;
                    }
                },
                b'*' => match number(line)? {
                    -1 | 0 => self.at = next,
                    len => {
                        let len = u64::try_from(len).map_err(|_| NotResp)?;
                        if self.open.len() + 1 >= MAX_DEPTH {
                            return Err(NotResp);
                        }
                        self.open.push(len);
                        self.at = next;
                        self.seek = 0;
                        continue;
                    }
                },
                _ => return Err(NotResp),
            }
            self.seek = 0;
            // An element is complete, and with it every array it ends.
            loop {
                match self.open.last_mut() {
                    None => return Ok(Some(self.at)),
                    Some(left) => {
                        *left -= 1;
                        if *left > 0 {
                            break;
                        }
                        self.open.pop();
                    }
                }
            }
        }
    }
}

/// A length or integer line: a decimal i64, as Redis writes it (an
/// optional sign, then digits; read as `str::parse` reads it, without its
/// UTF-8 check on every line of a long reply).
fn number(line: &[u8]) -> Result<i64, NotResp> {
    let (negative, digits) = match line {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, line),
    };
    if digits.is_empty() {
        return Err(NotResp);
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(NotResp);
        }
        let d = i64::from(d - b'0');
        // Accumulated negatively: i64::MIN has no positive counterpart.
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_sub(d))
            .ok_or(NotResp)?;
    }
    if negative {
        Ok(n)
    } else {
        n.checked_neg().ok_or(NotResp)
    }
}

/// The value of `reply`, one whole reply as [`Frame::end`] found it.
pub fn decode(reply: &[u8]) -> Result<Value, NotResp> {
    let mut reply = Cursor::new(reply);
    let value = read(&mut reply, 0)?;
    if reply.end() { Ok(value) } else { Err(NotResp) }
}

/// A reply of pairs, each a bulk string and a number written as a bulk
/// string (a sorted set's members with their scores, flat), read straight
/// from its bytes, without a `Value` for each. None when the reply is
/// anything else (an error reply, a nil, another shape), for the caller to
/// decode it as a `Value`. A score reads as the `redis` crate reads a bulk
/// string as an f64.
pub fn pairs(reply: &[u8]) -> Option<Vec<(Vec<u8>, f64)>> {
    let mut reply = Cursor::new(reply);
    let count = reply.array()?;
    if count % 2 != 0 {
        return None;
    }
    let mut pairs = Vec::with_capacity(reply.room(count / 2, 8));
    for _ in 0..count / 2 {
        let member = reply.bulk()?.to_vec();
        let score = std::str::from_utf8(reply.bulk()?).ok()?.parse().ok()?;
        pairs.push((member, score));
    }
    reply.end().then_some(pairs)
}

/// One whole reply read value by value, for a reader that knows its shape
/// (see [`pairs`]): each step is None where the reply holds something else.
pub struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(reply: &'a [u8]) -> Self {
        Cursor { buf: reply, at: 0 }
    }

    /// An array's length (not a nil array).
    pub fn array(&mut self) -> Option<usize> {
        usize::try_from(self.line(b'*')?).ok()
    }

    /// An integer.
    pub fn int(&mut self) -> Option<i64> {
        self.line(b':')
    }

    /// A bulk string (not a nil).
    pub fn bulk(&mut self) -> Option<&'a [u8]> {
        self.bulk_or_nil()?
    }

    /// A bulk string, or a nil (Some(None)).
    pub fn bulk_or_nil(&mut self) -> Option<Option<&'a [u8]>> {
        match self.line(b'$')? {
            -1 => Some(None),
            len => self.body(usize::try_from(len).ok()?).map(Some),
        }
    }

    /// Room for `count` items of at least `least` bytes each, as far as the
    /// reply's bytes go: a count that did not come cannot reserve memory.
    pub fn room(&self, count: usize, least: usize) -> usize {
        count.min((self.buf.len() - self.at) / least)
    }

    /// Whether the whole reply was read.
    pub fn end(&self) -> bool {
        self.at == self.buf.len()
    }

    /// The number on the line that starts with `kind`.
    fn line(&mut self, kind: u8) -> Option<i64> {
        if *self.buf.get(self.at)? != kind {
            return None;
        }
        number(self.next_line()?.1).ok()
    }

    /// The next line: its kind (its first byte) and the rest of it.
    fn next_line(&mut self) -> Option<(u8, &'a [u8])> {
        let kind = *self.buf.get(self.at)?;
        let start = self.at + 1;
        let cr = start
            + self
                .buf
                .get(start..)?
                .windows(2)
                .position(|w| w == b"\r\n")?;
        self.at = cr + 2;
        Some((kind, &self.buf[start..cr]))
    }

    /// A bulk string's `len` bytes (after its length's line), and its CRLF.
    fn body(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(len)?;
        if self.buf.get(end..end.checked_add(2)?)? != b"\r\n" {
            return None;
        }
        let bytes = &self.buf[self.at..end];
        self.at = end + 2;
        Some(bytes)
    }
}

/// The value that starts where `reply` is, moving it past the value;
/// `depth` arrays enclose it. Each bulk string is copied once, from the
/// buffer into its `Value`.
fn read(reply: &mut Cursor, depth: usize) -> Result<Value, NotResp> {
    let from = reply.at;
    let (kind, line) = reply.next_line().ok_or(NotResp)?;
    Ok(match kind {
        b'+' => match std::str::from_utf8(line).map_err(|_| NotResp)? {
            "OK" => Value::Okay,
            text => Value::SimpleString(text.to_owned()),
        },
        // An error reply keeps the kinds the `redis` crate gives it (MOVED,
        // NOSCRIPT...): its own parser reads the line, prefix and CRLF
        // included.
        b'-' => redis::parse_redis_value(&reply.buf[from..reply.at]).map_err(|_| NotResp)?,
        b':' => Value::Int(number(line)?),
        b'$' => match number(line)? {
            -1 => Value::Nil,
            len => {
                let len = usize::try_from(len).map_err(|_| NotResp)?;
                Value::BulkString(reply.body(len).ok_or(NotResp)?.to_vec())
            }
        },
        b'*' => match number(line)? {
            -1 => Value::Nil,
            len => {
                let len = usize::try_from(len).map_err(|_| NotResp)?;
                if depth + 1 >= MAX_DEPTH {
                    return Err(NotResp);
                }
                // Each element takes at least 3 bytes.
                let mut items = Vec::with_capacity(reply.room(len, 3));
                for _ in 0..len {
                    items.push(read(reply, depth + 1)?);
                }
                Value::Array(items)
            }
        },
        _ => return Err(NotResp),
    })
}

/// Appends to `out` the command whose `count` words are `parts` (RESP2: an
/// array of bulk strings), as the `redis` crate packs a `Cmd`, without
/// making one: a command given as its words (a waiter's `BLPOP`, the
/// commands of a plain first try). A script call frames its words as they
/// come instead ([`Words`]).
pub fn write_command<'a, I>(out: &mut Vec<u8>, count: usize, parts: I)
where
    I: Iterator<Item = &'a [u8]> + Clone,
{
    // Room for each word and its framing (`$`, a length of up to 10 digits,
    // two CRLF): reserved once, without formatting the lengths twice.
    out.reserve(parts.clone().map(|p| p.len() + 16).sum::<usize>() + 24);
    let mut digits = itoa::Buffer::new();
    write_len(out, b'*', count, &mut digits);
    for part in parts {
        write_bulk(out, part, &mut digits);
    }
}

/// Appends one word of a command (a bulk string: its length, then it).
pub fn write_bulk(out: &mut Vec<u8>, word: &[u8], digits: &mut itoa::Buffer) {
    write_len(out, b'$', word.len(), digits);
    out.extend_from_slice(word);
    out.extend_from_slice(b"\r\n");
}

/// Words written one after the other as a command writes them (bulk
/// strings), with how many there are: a script call's keys or arguments,
/// framed once as they come, and copied whole into the request.
#[derive(Clone, Debug, Default)]
pub struct Words {
    framed: Vec<u8>,
    count: usize,
}

impl Words {
    pub fn with_capacity(bytes: usize) -> Words {
        Words {
            framed: Vec::with_capacity(bytes),
            count: 0,
        }
    }

    /// How many words there are.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The words as written, framed.
    pub fn framed(&self) -> &[u8] {
        &self.framed
    }

    /// The words themselves.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + Clone {
        let mut at = 0;
        std::iter::from_fn(move || {
            let rest = self.framed.get(at..).filter(|r| !r.is_empty())?;
            // Written by write_bulk: `$<len>\r\n<word>\r\n`.
            let line = rest.iter().position(|&b| b == b'\r')?;
            let len: usize = std::str::from_utf8(&rest[1..line]).ok()?.parse().ok()?;
            let word = rest.get(line + 2..line + 2 + len)?;
            at += line + 2 + len + 2;
            Some(word)
        })
    }
}

impl redis::RedisWrite for Words {
    fn write_arg(&mut self, arg: &[u8]) {
        write_bulk(&mut self.framed, arg, &mut itoa::Buffer::new());
        self.count += 1;
    }

    fn writer_for_next_arg(&mut self) -> impl std::io::Write + '_ {
        NextWord {
            words: self,
            word: Vec::new(),
        }
    }
}

/// A word written in pieces: framed when it is complete (dropped).
struct NextWord<'a> {
    words: &'a mut Words,
    word: Vec<u8>,
}

impl std::io::Write for NextWord<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.word.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for NextWord<'_> {
    fn drop(&mut self) {
        redis::RedisWrite::write_arg(self.words, &self.word);
    }
}

/// Appends a length's line: `kind` (`*` or `$`), the length `n`, CRLF. The
/// usual one or two digits are written as one small copy each.
pub fn write_len(out: &mut Vec<u8>, kind: u8, n: usize, digits: &mut itoa::Buffer) {
    // The casts take digits 0-9.
    let digit = |d: usize| b'0' + d as u8;
    if n < 10 {
        out.extend_from_slice(&[kind, digit(n), b'\r', b'\n']);
    } else if n < 100 {
        out.extend_from_slice(&[kind, digit(n / 10), digit(n % 10), b'\r', b'\n']);
    } else {
        out.push(kind);
        out.extend_from_slice(digits.format(n).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// The same command as the `redis` crate's `Cmd` (for a cluster, which the
/// crate routes by its keys; for a pipeline), sized at once.
pub fn command_of<'a, I>(count: usize, parts: I) -> redis::Cmd
where
    I: Iterator<Item = &'a [u8]> + Clone,
{
    let mut cmd = redis::Cmd::with_capacity(count, parts.clone().map(<[u8]>::len).sum());
    for part in parts {
        cmd.arg(part);
    }
    cmd
}

/// The error of a reply that is not RESP2, quoting its first line.
pub fn not_redis(head: &[u8]) -> RedisError {
    let line = head
        .iter()
        .take(48)
        .copied()
        .take_while(|&b| b != b'\r' && b != b'\n')
        .collect::<Vec<u8>>();
    let quoted: String = line.escape_ascii().to_string();
    RedisError::from((
        ErrorKind::Parse,
        "not the Redis protocol",
        format!("the server there does not speak the Redis protocol (it answered '{quoted}')"),
    ))
}

/// One reply as the `redis` crate's parser reads it, for the tests.
#[cfg(test)]
fn oracle(reply: &[u8]) -> redis::RedisResult<Value> {
    redis::parse_redis_value(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Feeds `reply` (plus `after`, the next reply's bytes) in pieces cut
    /// at `cuts`: where the reply ends, and its value.
    fn read_in_pieces(reply: &[u8], after: &[u8], cuts: &[usize]) -> (usize, Value) {
        let all = [reply, after].concat();
        let mut frame = Frame::default();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (all.len() + 1)).collect();
        cuts.push(all.len());
        cuts.sort();
        for cut in cuts {
            if let Some(end) = frame
                .end(&all[..cut])
                .unwrap_or_else(|_| panic!("refused {all:?}"))
            {
                return (
                    end,
                    decode(&all[..end]).unwrap_or_else(|_| panic!("undecodable")),
                );
            }
        }
        panic!("never complete: {all:?}");
    }

    fn resp() -> impl Strategy<Value = Vec<u8>> {
        let leaf = prop_oneof![
            "[a-zA-Z0-9 ]{0,12}".prop_map(|s| format!("+{s}\r\n").into_bytes()),
            Just(b"+OK\r\n".to_vec()),
            "[A-Z]{1,8} [a-z ]{0,12}".prop_map(|s| format!("-{s}\r\n").into_bytes()),
            any::<i64>().prop_map(|n| format!(":{n}\r\n").into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(|b| {
                [
                    format!("${}\r\n", b.len()).into_bytes(),
                    b,
                    b"\r\n".to_vec(),
                ]
                .concat()
            }),
            Just(b"$-1\r\n".to_vec()),
            Just(b"*-1\r\n".to_vec()),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            proptest::collection::vec(inner, 0..8).prop_map(|items| {
                [format!("*{}\r\n", items.len()).into_bytes(), items.concat()].concat()
            })
        })
    }

    /// A reply a sorted set's members with their scores could be, and
    /// others near it: bulk strings (scores among them, some not numbers),
    /// and now and then a nil, an integer or an error in their place.
    fn pairs_reply() -> impl Strategy<Value = Vec<u8>> {
        let bulk = |b: Vec<u8>| {
            [
                format!("${}\r\n", b.len()).into_bytes(),
                b,
                b"\r\n".to_vec(),
            ]
            .concat()
        };
        let word = prop_oneof![
            6 => proptest::collection::vec(any::<u8>(), 0..12).prop_map(bulk),
            6 => any::<f64>().prop_map(move |f| bulk(format!("{f}").into_bytes())),
            2 => prop_oneof![
                Just("inf"), Just("-inf"), Just("nan"), Just("1e400"), Just("0.1"),
                Just("1764201234.5670001"), Just(" 1"), Just("1.")
            ]
            .prop_map(move |s| bulk(s.as_bytes().to_vec())),
            1 => Just(b"$-1\r\n".to_vec()),
            1 => any::<i64>().prop_map(|n| format!(":{n}\r\n").into_bytes()),
            1 => Just(b"-ERR no\r\n".to_vec()),
        ];
        prop_oneof![
            8 => proptest::collection::vec(word, 0..9).prop_map(|items| {
                [format!("*{}\r\n", items.len()).into_bytes(), items.concat()].concat()
            }),
            1 => Just(b"*-1\r\n".to_vec()),
            1 => Just(b"-NOSCRIPT No matching script\r\n".to_vec()),
        ]
    }

    proptest! {
        /// A reply read straight into pairs is what the `redis` crate makes
        /// of its `Value`; one that is refused is left to that (the caller
        /// decodes it), and every array of pairs of bulk strings whose
        /// scores are numbers is taken.
        #[test]
        fn pairs_are_read_as_the_redis_crate_reads_them(reply in pairs_reply()) {
            let value = oracle(&reply).unwrap();
            let taken = pairs(&reply);
            let made: redis::RedisResult<Vec<(Vec<u8>, f64)>> =
                value.clone().extract_error().and_then(|v| Ok(redis::from_redis_value(v)?));
            if let Some(taken) = &taken {
                let made = made.as_ref().unwrap();
                prop_assert_eq!(taken.len(), made.len());
                for ((id, score), (id2, score2)) in taken.iter().zip(made) {
                    prop_assert_eq!(id, id2);
                    prop_assert!(score.to_bits() == score2.to_bits() || (score.is_nan() && score2.is_nan()));
                }
            }
            let all_pairs = matches!(&value, Value::Array(items)
                if items.len() % 2 == 0 && items.iter().all(|v| matches!(v, Value::BulkString(_))));
            if all_pairs && made.is_ok() {
                prop_assert!(taken.is_some(), "refused {:?}", String::from_utf8_lossy(&reply));
            }
        }

        /// Whatever the pieces, the reply ends where it ends and reads as
        /// the `redis` crate reads it.
        #[test]
        fn reads_as_the_redis_crate_reads(
            reply in resp(),
            after in resp(),
            cuts in proptest::collection::vec(any::<usize>(), 0..6),
        ) {
            let (end, value) = read_in_pieces(&reply, &after, &cuts);
            prop_assert_eq!(end, reply.len());
            prop_assert_eq!(value, oracle(&reply).unwrap());
        }

        /// Bytes that are not RESP2 are refused or wait for more: never a
        /// panic, never a value the `redis` crate would not read.
        #[test]
        fn garbage_is_refused_or_read_as_the_redis_crate_reads(
            bytes in proptest::collection::vec(prop_oneof![
                Just(b'*'), Just(b'$'), Just(b':'), Just(b'+'), Just(b'-'), Just(b'\r'),
                Just(b'\n'), Just(b'1'), Just(b'0'), any::<u8>()
            ], 0..40),
        ) {
            if let Ok(Some(end)) = Frame::default().end(&bytes)
                && let Ok(value) = decode(&bytes[..end])
            {
                prop_assert_eq!(Ok(value), oracle(&bytes[..end]).map_err(|e| e.to_string()));
            }
        }
    }

    proptest! {
        /// A length or integer line reads as `str::parse` reads it, or is
        /// refused where it refuses.
        #[test]
        fn numbers_read_as_str_parse_reads_them(
            line in prop_oneof![
                any::<i64>().prop_map(|n| n.to_string().into_bytes()),
                "[-+]?[0-9]{0,21}".prop_map(String::into_bytes),
                proptest::collection::vec(any::<u8>(), 0..6),
            ],
        ) {
            let parsed = std::str::from_utf8(&line).ok().and_then(|s| s.parse::<i64>().ok());
            prop_assert_eq!(number(&line).ok(), parsed);
        }
    }

    proptest! {
        /// A command is packed as the `redis` crate packs it.
        #[test]
        fn commands_are_packed_as_the_redis_crate_packs_them(
            parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..20),
        ) {
            let mut packed = b"before".to_vec();
            write_command(&mut packed, parts.len(), parts.iter().map(Vec::as_slice));
            prop_assert_eq!(&packed[..6], b"before");
            prop_assert_eq!(&packed[6..], &redis::pack_command(&parts)[..]);
        }
    }

    proptest! {
        /// Words framed as they come give back the same words, and pack,
        /// after the command's count, as the `redis` crate packs them.
        #[test]
        fn framed_words_are_the_words_packed(
            parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..20),
            pieces in 1..4usize,
        ) {
            let mut words = Words::with_capacity(16);
            for (i, part) in parts.iter().enumerate() {
                if i % 2 == 0 {
                    redis::RedisWrite::write_arg(&mut words, part);
                } else {
                    let mut w = redis::RedisWrite::writer_for_next_arg(&mut words);
                    for piece in part.chunks(part.len().div_ceil(pieces).max(1)) {
                        std::io::Write::write_all(&mut w, piece).unwrap();
                    }
                }
            }
            prop_assert_eq!(words.count(), parts.len());
            prop_assert_eq!(words.iter().map(<[u8]>::to_vec).collect::<Vec<_>>(), parts.clone());
            let mut packed = Vec::new();
            write_len(&mut packed, b'*', words.count(), &mut itoa::Buffer::new());
            packed.extend_from_slice(words.framed());
            prop_assert_eq!(packed, redis::pack_command(&parts));
        }
    }

    #[test]
    fn error_replies_keep_their_kinds() {
        let (_, value) = read_in_pieces(b"-NOSCRIPT No matching script\r\n", b"", &[3]);
        let err = value.extract_error().unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::Server(redis::ServerErrorKind::NoScript)
        );
    }

    #[test]
    fn arrays_nest_as_deep_as_the_redis_crate_takes_and_no_deeper() {
        let nested = |depth: usize| [b"*1\r\n".repeat(depth - 1), b":1\r\n".to_vec()].concat();
        assert!(oracle(&nested(MAX_DEPTH)).is_ok());
        assert!(matches!(
            Frame::default().end(&nested(MAX_DEPTH)),
            Ok(Some(_))
        ));
        assert!(oracle(&nested(MAX_DEPTH + 1)).is_err());
        assert!(Frame::default().end(&nested(MAX_DEPTH + 1)).is_err());
        // A hostile server's million levels are refused, not recursed into.
        assert!(Frame::default().end(&b"*1\r\n".repeat(1_000_000)).is_err());
    }

    #[test]
    fn a_reply_read_a_byte_at_a_time_is_walked_once() {
        let big = [
            b"$100000\r\n".to_vec(),
            vec![b'x'; 100_000],
            b"\r\n".to_vec(),
        ]
        .concat();
        let mut frame = Frame::default();
        for n in 0..big.len() {
            assert!(matches!(frame.end(&big[..n]), Ok(None)));
        }
        assert!(matches!(frame.end(&big), Ok(Some(n)) if n == big.len()));
        let line = [b"+".to_vec(), vec![b'y'; 100_000], b"\r\n".to_vec()].concat();
        let mut frame = Frame::default();
        for n in 0..line.len() {
            assert!(matches!(frame.end(&line[..n]), Ok(None)));
            // The line's end is searched for from where the last search
            // stopped, not from the line's start.
            assert!(n < 2 || frame.seek == n - 1);
        }
        assert!(matches!(frame.end(&line), Ok(Some(n)) if n == line.len()));
    }

    #[test]
    fn what_is_not_resp_is_refused() {
        for bad in [
            &b"HTTP/1.1 400 Bad Request\r\n"[..],
            b":12x\r\n",
            b"$3\r\nabcd\r\n",
            b"*-2\r\n",
            b"$-2\r\n",
        ] {
            assert!(Frame::default().end(bad).is_err(), "{bad:?}");
        }
    }
}
