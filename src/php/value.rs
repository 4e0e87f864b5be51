//! The seed classes take untyped parameters and judge them with PHP's
//! `empty()` and loose comparisons. `Value` is such a parameter, copied out
//! of its zval, with those rules and the conversions the bindings need.

use std::fmt::{self, Display};

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::{FromZval, StubLiteral};
use ext_php_rs::exception::{PhpException, PhpResult};
use ext_php_rs::flags::DataType;
use ext_php_rs::types::{ZendHashTable, ZendObject, ZendStr, Zval};
use ext_php_rs::zend::ce;

/// A parameter as PHP's errors name it, `<method>: Argument #<n> ($<name>)`,
/// written out only when an error message needs it: a hot method checks its
/// arguments without formatting a string per argument per call.
#[derive(Clone, Copy)]
pub struct Argument(pub &'static str, pub u8, pub &'static str);

impl Display for Argument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: Argument #{} (${})", self.0, self.1, self.2)
    }
}

/// A parameter's name that a closure writes, when an error needs it (an
/// entry of an array argument, named with its key).
#[derive(Clone, Copy)]
pub struct Named<F>(pub F);

impl<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result> Display for Named<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    /// The array's entries in order, keys as PHP holds them.
    Array(Vec<(Key, Value)>),
    /// An object with `__toString()` (by class name), and the string it
    /// gave: where PHP takes a string, it is that string (a uuid object as
    /// a lock name or a task id), and nothing else (not a number, never
    /// empty).
    Stringable(String, Vec<u8>),
    /// An object (by class name) or a resource: never a valid scalar here.
    Other(String),
}

/// A parameter with a default: unlike a required `Value`, it may be omitted,
/// and an explicit null is passed on as null (the seeds' parameters are
/// untyped, so `lock('a', null)` is legal there).
pub type Optional = Arg<Mixed>;

/// `mixed` (with a default).
pub enum Mixed {}
impl Declared for Mixed {
    const TYPE: DataType = DataType::Mixed;
    const NULLABLE: bool = true;
}

/// How deep arrays are copied: an options array whose list holds options
/// arrays (Redlock's `nodes`, each a node's options) is the deepest any
/// parameter takes. Deeper arrays, and arrays that contain themselves, are
/// not walked: they stay an opaque "array" that every parameter refuses
/// with a `TypeError`.
const MAX_DEPTH: usize = 3;

/// An array key as PHP holds it: most arrays passed here are lists, whose
/// int keys are never needed as text.
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    Int(i64),
    Str(Vec<u8>),
}

impl Key {
    /// The key as PHP casts it to a string (an int as its decimal digits).
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            Key::Int(n) => n.to_string().into_bytes().into(),
            Key::Str(s) => s.as_slice().into(),
        }
    }
}

/// The entries of a PHP array in order: ext-php-rs' own iterator panics on
/// a string key that is not UTF-8 (`[$bin => 1]`).
pub fn entries(ht: &ZendHashTable) -> impl Iterator<Item = (Key, &Zval)> {
    let mut iter = ht.iter();
    std::iter::from_fn(move || {
        let (key, value) = iter.next_zval()?;
        let key = match key.zend_str() {
            Some(s) => Key::Str(s.as_bytes().to_vec()),
            None => Key::Int(key.long().unwrap_or_default()),
        };
        Some((key, value))
    })
}

/// The values of a PHP array in order (see [`entries`]).
fn values(ht: &ZendHashTable) -> impl Iterator<Item = &Zval> {
    let mut iter = ht.iter();
    std::iter::from_fn(move || Some(iter.next_zval()?.1))
}

/// Inserts `value` under `key` as PHP keys it: a canonical decimal integer
/// becomes an int key, anything else a string key of those bytes.
pub fn insert_keyed(
    out: &mut ZendHashTable,
    key: &[u8],
    value: impl ext_php_rs::convert::IntoZval,
) -> PhpResult<()> {
    let int = std::str::from_utf8(key)
        .ok()
        .and_then(|k| k.parse::<i64>().ok())
        .filter(|n| n.to_string().as_bytes() == key);
    match int {
        Some(n) => out.insert(n, value)?,
        None => out.insert(&*ext_php_rs::types::ZendStr::new(key, false), value)?,
    }
    Ok(())
}

impl Value {
    pub fn copy_of(zv: &Zval) -> Self {
        Self::copy_at(zv, 0)
    }

    fn copy_at(zv: &Zval, depth: usize) -> Self {
        let zv = zv.dereference();
        if zv.is_null() {
            Value::Null
        } else if let Some(b) = zv.bool() {
            Value::Bool(b)
        } else if let Some(i) = zv.long() {
            Value::Int(i)
        } else if let Some(f) = zv.double() {
            Value::Float(f)
        } else if let Some(s) = zv.zend_str() {
            Value::Str(s.as_bytes().to_vec())
        } else if let Some(arr) = zv.array() {
            if depth >= MAX_DEPTH {
                return Value::Other("array".to_owned());
            }
            Value::Array(
                entries(arr)
                    .map(|(k, v)| (k, Value::copy_at(v, depth + 1)))
                    .collect(),
            )
        } else if let Some(obj) = zv.object() {
            let class = class_name(obj);
            match text_of(obj) {
                Some(text) => Value::Stringable(class, text),
                None => Value::Other(class),
            }
        } else {
            Value::Other(zv.get_type().to_string())
        }
    }

    /// PHP's `empty($v)`.
    pub fn is_empty(&self) -> bool {
        match self {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Int(i) => *i == 0,
            Value::Float(f) => *f == 0.0,
            Value::Str(s) => s.is_empty() || s == b"0",
            Value::Array(a) => a.is_empty(),
            Value::Stringable(..) | Value::Other(_) => false,
        }
    }

    /// PHP 8's `$v == null`: like `empty()`, except that "0" is not null.
    pub fn is_loosely_null(&self) -> bool {
        !matches!(self, Value::Str(s) if s == b"0") && self.is_empty()
    }

    /// PHP's name for the value's type, for error messages.
    pub fn type_name(&self) -> &str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Array(_) => "array",
            Value::Stringable(class, _) | Value::Other(class) => class,
        }
    }

    /// The value as a number, as PHP's arithmetic takes it: null and bools
    /// count, numeric strings are parsed, anything else is a `TypeError`.
    pub fn number(&self, param: impl Display + Copy) -> PhpResult<f64> {
        let n = match self {
            Value::Null => Some(0.0),
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(s) => numeric(s),
            _ => None,
        };
        n.ok_or_else(|| {
            type_error(format!(
                "{param} must be of type int|float, {} given",
                self.type_name()
            ))
        })
    }

    /// A number that must be finite (NAN and INF are a `ValueError`).
    pub fn finite(&self, param: impl Display + Copy) -> PhpResult<f64> {
        let n = self.number(param)?;
        if n.is_finite() {
            Ok(n)
        } else {
            Err(value_error(format!(
                "{param} must be a finite number, {} given",
                shown(n)
            )))
        }
    }

    /// [`Value::bytes`] of a value no longer needed: a string is moved out,
    /// not copied.
    pub fn into_bytes(self, param: impl Display + Copy) -> PhpResult<Vec<u8>> {
        match self {
            Value::Str(s) | Value::Stringable(_, s) => Ok(s),
            other => other.bytes(param),
        }
    }

    /// The value as PHP's string conversion gives it, bytes as they are.
    pub fn bytes(&self, param: impl Display + Copy) -> PhpResult<Vec<u8>> {
        match self {
            Value::Str(s) | Value::Stringable(_, s) => Ok(s.clone()),
            Value::Null => Ok(Vec::new()),
            Value::Bool(b) => Ok(if *b { b"1".to_vec() } else { Vec::new() }),
            Value::Int(i) => Ok(i.to_string().into_bytes()),
            Value::Float(f) => {
                let precision = ext_php_rs::zend::ExecutorGlobals::get().precision;
                Ok(php_float(*f, precision).into_bytes())
            }
            _ => Err(type_error(format!(
                "{param} must be of type string|int|float, {} given",
                self.type_name()
            ))),
        }
    }
}

/// An object's class as PHP's messages name it: an anonymous class as
/// `class@anonymous` (its full name goes on after a NUL byte with the file
/// that declared it).
fn class_name(obj: &ZendObject) -> String {
    let name = obj.get_class_name().unwrap_or_else(|_| "object".to_owned());
    match name.split_once('\0') {
        Some((shown, _)) => shown.to_owned(),
        None => name,
    }
}

/// What the object's `__toString()` returns, as PHP's string conversion
/// calls it; None for a class without one, or when it threw (the exception
/// stays pending, and it is what the call throws).
fn text_of(obj: &ZendObject) -> Option<Vec<u8>> {
    if obj.get_class_entry().__tostring.is_null() {
        return None;
    }
    let text = obj.try_call_method("__toString", vec![]).ok()?;
    text.zend_str().map(|s| s.as_bytes().to_vec())
}

/// What `var_dump()` and `print_r()` show of an object (its
/// `__debugInfo()`): these entries, in order.
pub fn debug_info(entries: Vec<(&str, Zval)>) -> PhpResult<ZBox<ZendHashTable>> {
    let mut info = ZendHashTable::with_capacity(entries.len().try_into().unwrap_or(u32::MAX));
    for (key, value) in entries {
        info.insert(key, value)?;
    }
    Ok(info)
}

/// A name or id: the value as a string, which must not be empty.
pub fn non_empty(value: &Value, param: impl Display + Copy) -> PhpResult<Vec<u8>> {
    let bytes = value.bytes(param)?;
    if bytes.is_empty() {
        return Err(value_error(format!("{param} must not be empty")));
    }
    Ok(bytes)
}

/// The whitespace PHP allows around a numeric string.
const PHP_SPACE: &[char] = &[' ', '\t', '\n', '\r', '\x0b', '\x0c'];

/// A PHP numeric string (leading and trailing whitespace allowed).
fn numeric(s: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(s).ok()?;
    let t = text.trim_matches(PHP_SPACE);
    let valid = !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && t.bytes().any(|b| b.is_ascii_digit());
    if valid { t.parse().ok() } else { None }
}

/// PHP cannot throw a message with a NUL byte in it (names and DSNs may
/// hold them): show them escaped.
pub fn printable(message: String) -> String {
    if message.contains('\0') {
        message.replace('\0', "\\0")
    } else {
        message
    }
}

pub fn type_error(message: String) -> PhpException {
    PhpException::new(printable(message), 0, ce::type_error())
}

pub fn value_error(message: String) -> PhpException {
    PhpException::new(printable(message), 0, ce::value_error())
}

/// A required parameter: any PHP value, null included.
impl<'a> FromZval<'a> for Value {
    const TYPE: DataType = DataType::Mixed;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        Some(Value::copy_of(zval))
    }
}

/// What a typed parameter declares to PHP (reflection, stubs). The binding
/// still checks the value itself, so the errors say exactly what is wrong.
pub trait Declared {
    const TYPE: DataType;
    /// Whether null is declared as accepted (and, trailing, the parameter
    /// may be omitted).
    const NULLABLE: bool;
}

/// `string`.
pub enum Text {}
impl Declared for Text {
    const TYPE: DataType = DataType::String;
    const NULLABLE: bool = false;
}

/// `?string`.
pub enum NullableText {}
impl Declared for NullableText {
    const TYPE: DataType = DataType::String;
    const NULLABLE: bool = true;
}

/// `int` (with a default).
pub enum Int {}
impl Declared for Int {
    const TYPE: DataType = DataType::Long;
    const NULLABLE: bool = false;
}

/// `?int`.
pub enum NullableInt {}
impl Declared for NullableInt {
    const TYPE: DataType = DataType::Long;
    const NULLABLE: bool = true;
}

/// `array`.
pub enum List {}
impl Declared for List {
    const TYPE: DataType = DataType::Array;
    const NULLABLE: bool = false;
}

/// `float` (with a default).
pub enum Float {}
impl Declared for Float {
    const TYPE: DataType = DataType::Double;
    const NULLABLE: bool = false;
}

/// `?float`.
pub enum NullableFloat {}
impl Declared for NullableFloat {
    const TYPE: DataType = DataType::Double;
    const NULLABLE: bool = true;
}

/// `?array`.
pub enum NullableArray {}
impl Declared for NullableArray {
    const TYPE: DataType = DataType::Array;
    const NULLABLE: bool = true;
}

/// A parameter declared as `D` whose value is any PHP value.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg<D>(pub Value, std::marker::PhantomData<D>);

impl<D> std::ops::Deref for Arg<D> {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0
    }
}

impl<D> From<i64> for Arg<D> {
    fn from(v: i64) -> Self {
        Arg(Value::Int(v), std::marker::PhantomData)
    }
}

impl<D> StubLiteral for Arg<D> {
    fn stub_literal(&self) -> String {
        match &self.0 {
            Value::Int(v) => v.to_string(),
            _ => "null".to_owned(),
        }
    }
}

impl<'a, D: Declared> FromZval<'a> for Arg<D> {
    const TYPE: DataType = D::TYPE;
    const NULLABLE: bool = D::NULLABLE;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        Some(Arg(Value::copy_of(zval), std::marker::PhantomData))
    }

    fn from_missing() -> Option<Self> {
        Some(Arg(Value::Null, std::marker::PhantomData))
    }
}

/// A seed parameter whose default is not fixed (php.ini may change it, or
/// the extension chooses it): `given` is `None` when the caller omitted it.
/// Reflection shows the seed's own default, `literal`.
pub struct Defaulted {
    pub given: Option<Value>,
    literal: &'static str,
}

/// The seed's default of a [`Defaulted`] parameter, as PHP code writes it.
pub struct Literal(pub &'static str);

impl From<Literal> for Defaulted {
    fn from(literal: Literal) -> Self {
        Self {
            given: None,
            literal: literal.0,
        }
    }
}

impl StubLiteral for Defaulted {
    fn stub_literal(&self) -> String {
        self.literal.to_owned()
    }
}

impl<'a> FromZval<'a> for Defaulted {
    const TYPE: DataType = DataType::Mixed;
    const NULLABLE: bool = true;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        Some(Self {
            given: Some(Value::copy_of(zval)),
            literal: "",
        })
    }
}

impl Defaulted {
    /// The value given, or `default` when the caller omitted it.
    pub fn or(self, default: f64) -> Value {
        self.given.unwrap_or(Value::Float(default))
    }
}

/// A `callable` parameter, checked by the binding.
pub struct Callback<'a>(pub &'a Zval);

impl<'a> FromZval<'a> for Callback<'a> {
    const TYPE: DataType = DataType::Callable;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        Some(Callback(zval))
    }
}

/// A parameter that is one id or an array of them (the seed's
/// `enqueue($name, $id)`), read where PHP holds it for the length of the
/// call: a batch's string ids are borrowed, not copied out one by one.
pub struct Ids<'a>(&'a Zval);

impl<'a> FromZval<'a> for Ids<'a> {
    const TYPE: DataType = DataType::Mixed;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        Some(Ids(zval.dereference()))
    }
}

impl<'a> Ids<'a> {
    /// PHP's `empty($id)`.
    pub fn is_empty(&self) -> bool {
        if let Some(items) = self.0.array() {
            return items.len() == 0;
        }
        if self.0.is_object() {
            return false; // (without calling __toString() a second time)
        }
        match self.0.zend_str() {
            Some(s) => matches!(s.as_bytes(), b"" | b"0"),
            None => Value::copy_of(self.0).is_empty(),
        }
    }

    /// The ids as PHP's string conversion gives them: an array's entries
    /// (each a string, int or float: `item` names it in the error), or the
    /// value itself (`one`).
    pub fn bytes(
        &self,
        one: impl Display + Copy,
        item: impl Display + Copy,
    ) -> PhpResult<Vec<std::borrow::Cow<'a, [u8]>>> {
        match self.0.array() {
            None => Ok(vec![Self::id(self.0, 0, one)?]),
            Some(items) => values(items).map(|zv| Self::id(zv, 1, item)).collect(),
        }
    }

    /// One id, `depth` arrays deep in the argument: a string borrowed,
    /// anything else converted as [`Value::copy_of`] reads it.
    #[inline(always)]
    fn id(
        zv: &'a Zval,
        depth: usize,
        param: impl Display + Copy,
    ) -> PhpResult<std::borrow::Cow<'a, [u8]>> {
        match zv.dereference().zend_str() {
            Some(s) => Ok(s.as_bytes().into()),
            None => Ok(Value::copy_at(zv, depth).into_bytes(param)?.into()),
        }
    }
}

/// A float in a message, as `var_export()` writes it: the shortest form
/// that reads back the same, `1.0E+300` rather than 301 digits, `NAN` and
/// `INF` as PHP code spells them.
pub fn shown(d: f64) -> String {
    php_float(d, -1)
}

/// A float as PHP's string conversion writes it (`"Lock:{$name}"`): Zend's
/// `zend_gcvt` with the `precision` INI (14 by default; -1: the shortest
/// form that reads back the same), so `0.1 + 0.2` is "0.3" and `1e25` is
/// "1.0E+25".
pub fn php_float(d: f64, precision: i64) -> String {
    if d.is_nan() {
        return "NAN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "INF" } else { "-INF" }.into();
    }
    // zend_dtoa: the significant digits, trailing zeros dropped, and where
    // the decimal point goes.
    let ndigit = if precision == 0 { 1 } else { precision };
    let (digits, decpt) = if d == 0.0 {
        ("0".to_owned(), 1)
    } else {
        let sci = match usize::try_from(ndigit) {
            Ok(n) => format!("{:.*e}", n.clamp(1, 40) - 1, d.abs()),
            Err(_) => format!("{:e}", d.abs()),
        };
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let digits = digits.trim_end_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        (digits.to_owned(), exp.parse::<i64>().unwrap_or(0) + 1)
    };
    let limit = if ndigit < 0 { 17 } else { ndigit };
    let mut out = String::new();
    if d.is_sign_negative() {
        out.push('-');
    }
    if decpt < -3 || decpt > limit {
        let exp = decpt - 1;
        out.push_str(&digits[..1]);
        out.push('.');
        out.push_str(if digits.len() > 1 { &digits[1..] } else { "0" });
        out.push_str(&format!(
            "E{}{}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        ));
    } else if decpt < 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat(usize::try_from(-decpt).unwrap_or(0)));
        out.push_str(&digits);
    } else {
        let whole = usize::try_from(decpt).unwrap_or(0);
        for i in 0..whole {
            out.push(digits.as_bytes().get(i).map_or('0', |&b| b as char));
        }
        if digits.len() > whole {
            if whole == 0 {
                out.push('0');
            }
            out.push('.');
            out.push_str(&digits[whole..]);
        }
    }
    out
}

pub use crate::shown::{escaped, quoted};

/// A PHP string of any bytes.
pub fn binary(bytes: &[u8]) -> Zval {
    let mut zv = Zval::new();
    zv.set_zend_string(ZendStr::new(bytes, false));
    zv
}

/// A float, or null.
pub fn optional_float(value: Option<f64>) -> Zval {
    let mut zv = Zval::new();
    if let Some(v) = value {
        zv.set_double(v);
    }
    zv
}

/// A PHP string of any bytes, or null.
pub fn optional_binary(bytes: Option<&[u8]>) -> Zval {
    bytes.map_or_else(Zval::new, binary)
}

/// A PHP array of the table.
pub fn array(table: ZBox<ZendHashTable>) -> Zval {
    let mut zv = Zval::new();
    zv.set_hashtable(table);
    zv
}

/// A bool option.
pub fn flag(value: &Value, param: &str) -> PhpResult<bool> {
    match value {
        Value::Bool(b) => Ok(*b),
        other => Err(type_error(format!(
            "{param} must be of type bool, {} given",
            other.type_name()
        ))),
    }
}

/// A whole number >= 0 (see [`whole_in`]).
pub fn natural(value: &Value, param: impl Display + Copy) -> PhpResult<u64> {
    whole_in(value, param, 0..=u64::MAX)
}

/// A whole number in `range`: an int, or a string that holds one (`'5'`,
/// as PHP's own `int` parameters take it; a numeric string with a
/// fraction is a `ValueError`, anything else a `TypeError`). Out of range,
/// the message says the whole range.
pub fn whole_in(
    value: &Value,
    param: impl Display + Copy,
    range: std::ops::RangeInclusive<u64>,
) -> PhpResult<u64> {
    let n: i64 = match value {
        Value::Int(n) => *n,
        Value::Str(s) => match std::str::from_utf8(s).map(|t| t.trim_matches(PHP_SPACE).parse()) {
            Ok(Ok(n)) => n,
            _ if numeric(s).is_some() => {
                return Err(value_error(format!(
                    "{param} must be a whole number, {} given",
                    quoted(s)
                )));
            }
            _ => {
                return Err(type_error(format!(
                    "{param} must be of type int, string given"
                )));
            }
        },
        other => {
            return Err(type_error(format!(
                "{param} must be of type int, {} given",
                other.type_name()
            )));
        }
    };
    match u64::try_from(n) {
        Ok(n) if range.contains(&n) => Ok(n),
        _ if *range.end() == u64::MAX => Err(value_error(format!(
            "{param} must be >= {}, {n} given",
            range.start()
        ))),
        _ => Err(value_error(format!(
            "{param} must be between {} and {}, {n} given",
            range.start(),
            range.end()
        ))),
    }
}

/// The entries of an `?array $options` parameter, by option name (a name
/// that is not UTF-8 is no option's: it is shown with U+FFFD).
fn option_entries(options: &Value, method: impl Display) -> PhpResult<Vec<(String, &Value)>> {
    match options {
        Value::Null => Ok(Vec::new()),
        Value::Array(entries) => Ok(entries
            .iter()
            .map(|(name, value)| (String::from_utf8_lossy(&name.bytes()).into_owned(), value))
            .collect()),
        other => Err(type_error(format!(
            "{method} must be of type ?array, {} given",
            other.type_name()
        ))),
    }
}

/// One option of a method's options array: its name, and how its value
/// (checked, with `param` naming it in errors) goes into what the method
/// builds. A method's table of them is the one list of its options: it
/// reads them, and names them in the error for an unknown one.
pub struct Opt<T> {
    pub name: &'static str,
    pub read: fn(&mut T, &Value, &str) -> PhpResult<()>,
}

/// The [`Opt`] `name` whose value, read by `read(value, param)`, is what
/// the method builds' `field`.
macro_rules! opt {
    ($name:literal => $field:tt = $read:expr) => {
        $crate::php::value::Opt {
            name: $name,
            read: |o, v, p| {
                o.$field = ($read)(v, p)?;
                Ok(())
            },
        }
    };
}
pub(crate) use opt;

/// Reads `options` (null, or an array) into `into` by `table`.
pub fn read_options<T>(
    options: &Value,
    method: impl Display + Copy,
    table: &[Opt<T>],
    into: &mut T,
) -> PhpResult<()> {
    for (name, value) in option_entries(options, method)? {
        let Some(option) = table.iter().find(|o| o.name == name) else {
            let known: Vec<&str> = table.iter().map(|o| o.name).collect();
            return Err(unknown_option(method, &name, &known.join(", ")));
        };
        (option.read)(into, value, &format!("{method} option '{name}'"))?;
    }
    Ok(())
}

/// The error of an option `name` that is none of `known`.
fn unknown_option(method: impl Display, name: &str, known: &str) -> PhpException {
    value_error(format!(
        "{method} has an unknown option {} (known: {known})",
        quoted(name.as_bytes())
    ))
}
