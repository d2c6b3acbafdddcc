//! Keys the model sent that are not the parameters' names: the clear near-miss of one
//! parameter (rule 3 of the module above), and the key that states a parameter's opposite,
//! which is never taken for it (`no_force`, `unforce`, `min_price` for `max_price`).

use serde_json::Value;

use super::{clip, normalise_key, schema_types, Field, MAX_KEY_LEN};
use crate::resolve::meaning::{read_key, Reading};

/// Which of the fields a key is close to (see [`near_miss`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum NearMiss<'t> {
    /// None comes close, or the closest is a boolean the value cannot switch.
    None,
    /// This one (its index), clearly closer than any other.
    One(usize),
    /// These (their indices, each with the name or alias the key is close to, closest
    /// first): close, and none clearly closer than the others. The key is repaired into none
    /// of them; the model is told each.
    Several(Vec<(usize, &'t str)>),
}

/// The fields `key` is a near-miss of: a small edit distance relative to the length, or the
/// same word in singular/plural. [`NearMiss::One`] when one is clearly closer than any other
/// (by at least [`MARGIN`]); [`NearMiss::Several`] when two or more are close and none
/// clearly closer (`querys` for `query` and `queries`). `targets` are all the fields, sent or
/// not: a key close to a field that was sent and to one that was not must not be taken for
/// the second.
///
/// Every field is scored by its names alone, booleans too, so a boolean close to the key
/// keeps a further field from being taken for it. But a boolean is switched on or off by its
/// name alone, so closeness alone never names one: a misspelled key is taken for a boolean
/// only when the value is a boolean too (`recursiv: true` is `recursive`; `recursiv: "yes"`
/// beside `recursion` is neither). A misspelling that changes a prefix is another key
/// (`nforce` and `reforce` are not `force`).
pub(super) fn near_miss<'t>(key: &str, value: &Value, targets: &[Field<'t>]) -> NearMiss<'t> {
    if key.len() > MAX_KEY_LEN || key.is_empty() {
        return NearMiss::None;
    }
    let request = KeyForms {
        key,
        norm: normalise_key(key),
        number_free: singular_key(key),
        words: field_words(targets),
    };
    // Each field's best name: a field the key is close to but may not be taken for (another
    // word, an opposite or a misspelling as close to one) still counts against the others,
    // so that removing it never makes another field "clearly closer".
    let mut scored: Vec<Scored<'t>> = targets
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.names().map(|n| request.score(i, n)).fold(
                Scored::new(i, 0, p.name, false, Reading::Typo),
                |best, next| {
                    if next.score > best.score {
                        next
                    } else {
                        best
                    }
                },
            )
        })
        .collect();
    // Stable: equally close fields stay in the order of the parameters.
    scored.sort_by_key(|s| std::cmp::Reverse(s.score));
    let Some(best) = scored.first().cloned() else {
        return NearMiss::None;
    };
    if best.score < CLOSE {
        return NearMiss::None;
    }
    let runner_up = scored.get(1).map_or(0, |s| s.score);
    if best.score - runner_up >= MARGIN {
        if best.reading != Reading::Typo {
            return NearMiss::None;
        }
        let boolean = schema_types(targets[best.field].schema).contains(&"boolean");
        return if !boolean || best.plural || switches(value) {
            NearMiss::One(best.field)
        } else {
            NearMiss::None
        };
    }
    // None clearly closer: those close enough to be named, within the margin of the best; an
    // opposite is never named (the model is never pointed at it).
    let close: Vec<(usize, &'t str)> = scored
        .iter()
        .take_while(|s| best.score - s.score < MARGIN)
        .filter(|s| s.score >= CLOSE && s.reading != Reading::Opposed)
        .map(|s| (s.field, s.name))
        .collect();
    if close.len() < 2 {
        return NearMiss::None;
    }
    NearMiss::Several(close)
}

/// A value that switches a boolean: `true`, `false`, or either as a string.
fn switches(value: &Value) -> bool {
    value.is_boolean()
        || value
            .as_str()
            .is_some_and(|s| matches!(s.trim().to_ascii_lowercase().as_str(), "true" | "false"))
}

/// A key as `near_miss` compares it with the fields' names.
struct KeyForms<'k> {
    key: &'k str,
    /// Normalised (`normalise_key`).
    norm: String,
    /// Without its number (`singular_key`).
    number_free: String,
    /// The words of every field's names (`field_words`).
    words: Vec<String>,
}

impl KeyForms<'_> {
    /// Name `n` of field `i`: its score, whether it is the same word in the other number,
    /// and how the key reads against it (`resolve/meaning.rs`).
    fn score<'t>(&self, i: usize, n: &'t str) -> Scored<'t> {
        if singular_key(n) == self.number_free {
            return Scored::new(i, PLURAL, n, true, Reading::Typo);
        }
        // A change of prefix is another key, not a misspelling (`relimit`).
        let target = normalise_key(n);
        if !crate::resolve::polarity::typo_possible(&self.norm, &target) {
            return Scored::new(i, 0, n, false, Reading::Opposed);
        }
        let score = closeness_score(&self.norm, &target);
        let reading = if score > 0 {
            read_key(self.key, n, &self.words)
        } else {
            Reading::Typo
        };
        // A key whose words are words is not close to another word at all.
        let score = if reading == Reading::Word { 0 } else { score };
        Scored::new(i, score, n, false, reading)
    }
}

/// One field as `near_miss` scores it.
#[derive(Clone)]
struct Scored<'t> {
    field: usize,
    score: u32,
    name: &'t str,
    plural: bool,
    reading: Reading,
}

impl<'t> Scored<'t> {
    fn new(field: usize, score: u32, name: &'t str, plural: bool, reading: Reading) -> Self {
        Scored {
            field,
            score,
            name,
            plural,
            reading,
        }
    }
}

/// How close a key must be to a field to be taken for it, or named beside another: a typo
/// ([`closeness_score`]) or a plural ([`PLURAL`]).
const CLOSE: u32 = 80;
/// How much closer one field must be than every other for a key to be taken for it ("clearly
/// closer"): at least this much, so a plural (95) is not clearly closer than a two-letter
/// typo (80), nor a one-letter typo (90) than a plural.
const MARGIN: u32 = 15;
/// The score of the same word in the other number (`querys` for `query`).
const PLURAL: u32 = 95;

/// What the model is told about a key close to several fields (`close`: each field's name
/// and the name or alias of it the key is close to, closest first), none of them clearly
/// closer: it was repaired into none of them.
pub(super) fn several_problem(key: &str, prefix: &str, close: &[(&str, &str)]) -> String {
    let mut list: Vec<String> = close
        .iter()
        .map(|(field, name)| {
            if field == name {
                format!("`{prefix}{field}`")
            } else {
                format!("`{prefix}{field}` (alias `{name}`)")
            }
        })
        .collect();
    let last = list.pop().unwrap_or_default();
    let (all, none) = if list.len() == 1 {
        ("both ", "neither")
    } else {
        ("", "none of them")
    };
    format!(
        "`{prefix}{}` is close to {all}{} and {last}, none clearly closer, so it was repaired \
         into {none}; send the one you mean",
        clip(key),
        list.join(", ")
    )
}

/// The parameter whose opposite `key` states, if any: the same words but for polarity, that
/// is negating words (`no_force`, `force_off`, `dont_force`, `skip_confirm`), a negating or
/// opposed prefix (`noforce`, `unforce`, `nonrecursive`), or a word of opposite meaning
/// (`min_price` for `max_price`, `exclude_tags` for `include_tags`), on either side.
pub(super) fn opposite_param<'t>(key: &str, params: &[Field<'t>]) -> Option<Field<'t>> {
    if key.len() > MAX_KEY_LEN || key.is_empty() {
        return None;
    }
    // A negating word glued to the whole name: `noforce`, `notifyattendeesno`, `forceoff`.
    let compact = normalise_key(key);
    let glued = |name: &str| {
        let target = normalise_key(name);
        target.chars().count() >= 3
            && (compact
                .strip_prefix(target.as_str())
                .is_some_and(crate::resolve::polarity::is_negating_particle)
                || compact
                    .strip_suffix(target.as_str())
                    .is_some_and(crate::resolve::polarity::is_negating_particle))
    };
    if let Some(p) = params.iter().find(|p| p.names().any(glued)) {
        return Some(*p);
    }
    let key_words = singular_words(key);
    // `end_locations` is the plural of `end_location`, whatever `start_location` says.
    if params
        .iter()
        .any(|p| p.names().any(|n| singular_words(n) == key_words))
    {
        return None;
    }
    if let Some(p) = params.iter().find(|p| {
        p.names()
            .any(|name| differ_by_polarity(&key_words, &singular_words(name)))
    }) {
        return Some(*p);
    }
    // A misspelling of a parameter's opposite (`mn_results` beside `max_results`, `dsable_beta`
    // beside `enable_beta`), unless it reads as a misspelling of some parameter itself.
    let words = field_words(params);
    let close = |name: &str| closeness_score(&compact, &normalise_key(name)) > 0;
    let readings: Vec<(Field<'t>, Reading)> = params
        .iter()
        .flat_map(|p| p.names().map(move |n| (p, n)))
        .filter(|(_, n)| close(n))
        .map(|(p, n)| (*p, read_key(key, n, &words)))
        .collect();
    if readings.iter().any(|(_, r)| *r == Reading::Typo) {
        return None;
    }
    readings
        .into_iter()
        .find(|(_, r)| *r == Reading::Opposed)
        .map(|(p, _)| p)
}

/// The words of every name and alias of `fields`, in the singular: the catalog a key is read
/// against.
pub(super) fn field_words(fields: &[Field<'_>]) -> Vec<String> {
    let mut words: Vec<String> = fields
        .iter()
        .flat_map(|f| f.names())
        .flat_map(singular_words)
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

pub(super) fn singular_words(key: &str) -> Vec<String> {
    crate::text::words::split_words(key)
        .iter()
        .map(|w| crate::text::words::singular(w))
        .collect()
}

/// Two keys that say the same thing but with opposite polarity: once the negating words are
/// taken out of each and the words they share cancel, what is left pairs up as opposites
/// (`unforce`/`force`, `min`/`max`) or as a word and the word with a negating word glued
/// after it (`forceoff`/`force`), and the negations on the two sides do not cancel out.
pub(super) fn differ_by_polarity(a: &[String], b: &[String]) -> bool {
    use crate::resolve::polarity::{is_negating_particle, opposed};
    let mut flips = 0usize;
    let mut left: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut right: Vec<&str> = b.iter().map(String::as_str).collect();
    left.retain(|w| match right.iter().position(|r| r == w) {
        Some(i) => {
            right.remove(i);
            false
        }
        None => true,
    });
    // Opposed words pair up before the negating words are set aside: `off` in `power_off`
    // stands against `on` in `power_on`, it does not just negate.
    left.retain(|w| {
        let pair = right
            .iter()
            .position(|r| opposed(w, r) || negated_by_suffix(w, r) || negated_by_suffix(r, w));
        match pair {
            Some(i) => {
                right.remove(i);
                flips += 1;
                false
            }
            None => true,
        }
    });
    for side in [&mut left, &mut right] {
        side.retain(|w| {
            let negating = is_negating_particle(w);
            flips += usize::from(negating);
            !negating
        });
    }
    if left.is_empty() && right.is_empty() {
        return flips % 2 == 1;
    }
    if left.len() == right.len() || left.is_empty() || right.is_empty() {
        // Words left over on both sides that are not opposites: another key.
        return false;
    }
    // Words fused on one side (`maxprice` against `min_price`): the same letters but for a word
    // of opposite meaning.
    let (fused, words) = if left.len() < right.len() {
        (left.concat(), &right)
    } else {
        (right.concat(), &left)
    };
    let joined = words.concat();
    if fused == joined {
        return flips % 2 == 1;
    }
    let opposed_letters = strsim::osa_distance(&fused, &joined) <= 3
        && crate::resolve::polarity::fused_affixes(&fused, words)
            == crate::resolve::polarity::Affixes::Opposed;
    opposed_letters && flips.is_multiple_of(2)
}

/// `long` is `short` with a negating word glued after it: `forceoff`, `recursiveno`.
pub(super) fn negated_by_suffix(long: &str, short: &str) -> bool {
    long.strip_prefix(short).is_some_and(|rest| {
        short.chars().count() >= 3
            && ["off", "not", "no", "false", "disabled", "never"].contains(&rest)
    })
}

/// What the model is told about a key that states the opposite of a parameter (or is a
/// misspelling of its opposite): which parameter it stands against, and that nothing was
/// applied. It never tells the model what to send: a key read wrongly must not turn into
/// advice to send the opposite of what was meant.
pub(super) fn opposite_problem(key: &str, key_prefix: &str, p: &Field<'_>, prefix: &str) -> String {
    let ty = crate::tool::schema::type_label(p.schema);
    let name = format!("{prefix}{}", p.name);
    let key = format!("{key_prefix}{}", clip(key));
    if schema_types(p.schema).contains(&"boolean") {
        format!(
            "`{key}` states the opposite of the boolean parameter `{name}`, so it was not \
             applied to it, nor to any other parameter"
        )
    } else {
        format!(
            "`{key}` states the opposite of parameter `{name}` ({ty}), so it was not applied \
             to it, nor to any other parameter"
        )
    }
}

/// A key's words (snake, kebab, camel), each in the singular, joined: `initialVelocities`
/// and `initial_velocity` meet at `initialvelocity`.
pub(super) fn singular_key(key: &str) -> String {
    crate::text::words::split_words(key)
        .iter()
        .map(|w| crate::text::words::singular(w))
        .collect()
}

/// 100 for the same word, 90 for a typo of one edit, 80 for one of two, 0 otherwise.
pub(super) fn closeness_score(a: &str, b: &str) -> u32 {
    if a == b {
        return 100;
    }
    let longest = a.chars().count().max(b.chars().count());
    if longest < 4 {
        // Too short to tell a typo from another word (`id` vs `ip`).
        return 0;
    }
    // One edit (a transposition counts as one) in a word of four or more letters, or two in
    // one of seven or more.
    match strsim::damerau_levenshtein(a, b) {
        1 => 90,
        2 if longest >= 7 => 80,
        _ => 0,
    }
}
