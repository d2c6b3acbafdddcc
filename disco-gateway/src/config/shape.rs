//! Readers of the shapes of the file's values, for serde: each takes one shape of JSON and
//! refuses any other with a fixed message that never shows the value it refused.
//!
//! serde's own refusals show the value (`invalid type: string "...", expected a map`), and the
//! value may be a secret: a token written where a list was expected, an `env` written as one
//! string. serde would also read a JSON array into a struct, field by field, so that a server
//! written as `["npx", ["-y"]]` would run `npx`; here a struct is read from an object only.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A field that is there: `null` is refused as a value of the wrong type rather than taken for
/// the field's absence (which `#[serde(default)]` stands for).
pub(super) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// One value, taken by `read` from its JSON; refused with `must` when `read` finds nothing.
pub(super) fn scalar<'de, D, T>(
    d: D,
    must: &'static str,
    read: impl FnOnce(Value) -> Option<T>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    read(Value::deserialize(d)?).ok_or_else(|| D::Error::custom(must))
}

/// A `T` written as a JSON object; anything else is refused with `must`.
pub(super) fn object<'de, D, T>(d: D, must: &'static str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_any(Only::<T>::new(Shape::Object, must))
}

/// A `T` written as a JSON array; anything else is refused with `must`.
pub(super) fn array<'de, D, T>(d: D, must: &'static str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_any(Only::<T>::new(Shape::Array, must))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Object,
    Array,
}

/// Takes its shape into `T`, through the deserializer's own map or sequence (so that the path
/// of an error inside goes on), and refuses every other value unseen.
struct Only<T> {
    shape: Shape,
    must: &'static str,
    into: PhantomData<T>,
}

impl<T> Only<T> {
    fn new(shape: Shape, must: &'static str) -> Self {
        Only {
            shape,
            must,
            into: PhantomData,
        }
    }

    fn refuse<E: Error>(self) -> Result<T, E> {
        Err(E::custom(self.must))
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Only<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.must)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        match self.shape {
            Shape::Object => T::deserialize(MapAccessDeserializer::new(map)),
            Shape::Array => self.refuse(),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        match self.shape {
            Shape::Array => T::deserialize(SeqAccessDeserializer::new(seq)),
            Shape::Object => self.refuse(),
        }
    }

    // Every other value; serde's defaults would show it. The narrower integers and `f32` come
    // here through serde's defaults, characters and borrowed strings through `visit_str`.
    fn visit_bool<E: Error>(self, _: bool) -> Result<T, E> {
        self.refuse()
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<T, E> {
        self.refuse()
    }
    fn visit_i128<E: Error>(self, _: i128) -> Result<T, E> {
        self.refuse()
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<T, E> {
        self.refuse()
    }
    fn visit_u128<E: Error>(self, _: u128) -> Result<T, E> {
        self.refuse()
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<T, E> {
        self.refuse()
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<T, E> {
        self.refuse()
    }
    fn visit_bytes<E: Error>(self, _: &[u8]) -> Result<T, E> {
        self.refuse()
    }
    fn visit_unit<E: Error>(self) -> Result<T, E> {
        self.refuse()
    }
}
