//! Readers of the shapes of the file's values, for serde: each takes one shape of JSON and
//! refuses any other with a fixed message that never shows the value it refused.
//!
//! serde's own refusals show the value (`invalid type: string "...", expected a map`), and the
//! value may be a secret: a token written where a list was expected, an `env` written as one
//! string. serde would also read a JSON array into a struct, field by field, so that a server
//! written as `["npx", ["-y"]]` would run `npx`; here a struct is read from an object only.
//! And serde reads a key given twice two ways (a map keeps the last, a struct refuses the
//! second at the struct); here every object refuses it, at the key.

use std::collections::BTreeSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer, StringDeserializer};
use serde::de::{Deserialize, DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
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

/// A `T` written as a JSON object, each key once; anything else is refused with `must`.
pub(super) fn object<'de, D, T>(d: D, must: &'static str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    InObject {
        must,
        seed: PhantomData::<T>,
    }
    .deserialize(d)
}

/// A `T` written as a JSON array; anything else is refused with `must`.
pub(super) fn array<'de, D, T>(d: D, must: &'static str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_any(Only::new(Shape::Array, must, PhantomData::<T>))
}

/// What `seed` reads, written as a JSON object, each key once; anything else is refused with
/// `must`. [`object`] for a reader that carries something of its own.
pub(super) struct InObject<S> {
    pub(super) must: &'static str,
    pub(super) seed: S,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for InObject<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        d.deserialize_any(Only::new(Shape::Object, self.must, self.seed))
    }
}

/// What a key given twice is told. Readers of JSON differ on which of the two counts (serde's
/// maps keep the last, its structs refuse the second): the file is read one way only.
pub(super) const GIVEN_TWICE: &str =
    "given more than once: each key may be given once (JSON readers differ on which one counts)";

/// The one key of the map serde_json hands a number over as, with its `arbitrary_precision`
/// feature: a number written where an object was expected would otherwise be read as one.
const NUMBER_KEY: &str = "$serde_json::private::Number";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Object,
    Array,
}

/// Takes its shape into `seed`, through the deserializer's own map (each key once, see
/// [`Distinct`]) or sequence, so that the path of an error inside goes on, and refuses every
/// other value unseen.
struct Only<S> {
    shape: Shape,
    must: &'static str,
    seed: S,
}

impl<S> Only<S> {
    fn new(shape: Shape, must: &'static str, seed: S) -> Self {
        Only { shape, must, seed }
    }

    fn refuse<T, E: Error>(self) -> Result<T, E> {
        Err(E::custom(self.must))
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for Only<S> {
    type Value = S::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.must)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<S::Value, A::Error> {
        match self.shape {
            Shape::Object => self
                .seed
                .deserialize(MapAccessDeserializer::new(Distinct::new(map, self.must))),
            Shape::Array => self.refuse(),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<S::Value, A::Error> {
        match self.shape {
            Shape::Array => self.seed.deserialize(SeqAccessDeserializer::new(seq)),
            Shape::Object => self.refuse(),
        }
    }

    // Every other value; serde's defaults would show it. The narrower integers and `f32` come
    // here through serde's defaults, characters and borrowed strings through `visit_str`.
    fn visit_bool<E: Error>(self, _: bool) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_i128<E: Error>(self, _: i128) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_u128<E: Error>(self, _: u128) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_bytes<E: Error>(self, _: &[u8]) -> Result<S::Value, E> {
        self.refuse()
    }
    fn visit_unit<E: Error>(self) -> Result<S::Value, E> {
        self.refuse()
    }
}

/// A map whose keys are each given once, whatever reads it: a derived struct (which would
/// refuse a repeated field at the struct, not at the key) and a `BTreeMap` (which would keep
/// the last) alike.
struct Distinct<A> {
    map: A,
    /// What the map must be, said when it turns out to be a number (see [`NUMBER_KEY`]).
    must: &'static str,
    seen: BTreeSet<String>,
}

impl<A> Distinct<A> {
    fn new(map: A, must: &'static str) -> Self {
        Distinct {
            map,
            must,
            seen: BTreeSet::new(),
        }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Distinct<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let once = Once {
            seed,
            seen: &mut self.seen,
        };
        match self.map.next_key_seed(once)? {
            None => Ok(None),
            Some(Key::Read(key)) => Ok(Some(key)),
            // Refused here, after the key: the error is the value's, not a key's.
            Some(Key::Number) => Err(A::Error::custom(self.must)),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

enum Key<V> {
    Read(V),
    /// [`NUMBER_KEY`].
    Number,
}

/// One key of a [`Distinct`] map: refused when it was given before, else read by `seed`.
/// Both happen while the key is read, so that the refusal (and an unknown key's, from
/// `seed`) is at the key's own path.
struct Once<'a, K> {
    seed: K,
    seen: &'a mut BTreeSet<String>,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for Once<'_, K> {
    type Value = Key<K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(d)?;
        if key == NUMBER_KEY {
            return Ok(Key::Number);
        }
        if self.seen.contains(&key) {
            return Err(D::Error::custom(GIVEN_TWICE));
        }
        self.seen.insert(key.clone());
        self.seed
            .deserialize(StringDeserializer::<D::Error>::new(key))
            .map(Key::Read)
    }
}
