//! Keys the model sent that are not the parameters' names: the clear near-miss of one
//! parameter (rule 3 of the module above), and the key that states a parameter's opposite,
//! which is never taken for it (`no_force`, `unforce`, `min_price` for `max_price`).

use serde_json::Value;

use super::{clip, normalise_key, schema_types, Field, MAX_KEY_LEN};

/// Which of the fields a key is close to (see [`near_miss`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum NearMiss {
    /// None comes close.
    None,
    /// This one (its index), clearly closer than any other.
    One(usize),
    /// These (their indices, closest first): close, and none clearly closer than the others.
    /// The key is repaired into none of them; the model is told each.
    Several(Vec<usize>),
}

/// The fields `key` is a near-miss of: a small edit distance relative to the length, or the
/// same word in singular/plural. [`NearMiss::One`] when one is clearly closer than any other;
/// [`NearMiss::Several`] when two or more are close and none clearly closer (`querys` for
/// `query` and `queries`). `targets` are all the fields, sent or not: a key close to a field
/// that was sent and to one that was not must not be taken for the second.
///
/// A boolean is switched on or off by its name alone, so closeness alone never names one:
/// a misspelled key reaches a boolean only when the value is a boolean too and the misspelling
/// changes no prefix (`recursiv: true` is `recursive`; `nforce` and `reforce` are not `force`).
pub(super) fn near_miss(key: &str, value: &Value, targets: &[Field<'_>]) -> NearMiss {
    if key.len() > MAX_KEY_LEN || key.is_empty() {
        return NearMiss::None;
    }
    let norm = normalise_key(key);
    let number_free = singular_key(key);
    let mut scored: Vec<(usize, f64)> = targets
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let best = p
                .names()
                .map(|n| {
                    if singular_key(n) == number_free {
                        0.95
                    } else if schema_types(p.schema).contains(&"boolean") {
                        let target = normalise_key(n);
                        let boolean = value.is_boolean()
                            || value.as_str().is_some_and(|s| {
                                matches!(s.trim().to_ascii_lowercase().as_str(), "true" | "false")
                            });
                        if boolean && crate::resolve::polarity::typo_possible(&norm, &target) {
                            closeness(&norm, &target)
                        } else {
                            0.0
                        }
                    } else {
                        // A change of prefix is another key, not a misspelling (`relimit`).
                        let target = normalise_key(n);
                        if crate::resolve::polarity::typo_possible(&norm, &target) {
                            closeness(&norm, &target)
                        } else {
                            0.0
                        }
                    }
                })
                .fold(0.0, f64::max);
            (i, best)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let Some(&(best, score)) = scored.first() else {
        return NearMiss::None;
    };
    if score < CLOSE {
        return NearMiss::None;
    }
    // Those close enough, and within the margin of the best: none of them clearly closer.
    let close: Vec<usize> = scored
        .iter()
        .take_while(|(_, s)| *s >= CLOSE && score - s < MARGIN)
        .map(|(i, _)| *i)
        .collect();
    match close.len() {
        1 => NearMiss::One(best),
        _ => NearMiss::Several(close),
    }
}

/// How close a key must be to a field to be taken for it (a typo, a plural).
const CLOSE: f64 = 0.8;
/// How much closer one field must be than the next for a key to be taken for it.
const MARGIN: f64 = 0.15;

/// What the model is told about a key close to several fields (`names`, closest first),
/// none of them clearly closer: it was repaired into none of them.
pub(super) fn several_problem(key: &str, prefix: &str, names: &[&str]) -> String {
    let mut list: Vec<String> = names.iter().map(|n| format!("`{prefix}{n}`")).collect();
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
    params
        .iter()
        .find(|p| {
            p.names()
                .any(|name| differ_by_polarity(&key_words, &singular_words(name)))
        })
        .copied()
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
    let mut left: Vec<&str> = Vec::with_capacity(a.len());
    let mut right: Vec<&str> = Vec::with_capacity(b.len());
    for (words, kept) in [(a, &mut left), (b, &mut right)] {
        for w in words {
            if is_negating_particle(w) {
                flips += 1;
            } else {
                kept.push(w);
            }
        }
    }
    left.retain(|w| match right.iter().position(|r| r == w) {
        Some(i) => {
            right.remove(i);
            false
        }
        None => true,
    });
    if left.len() != right.len() {
        // Words fused on one side (`maxprice` against `min_price`): the same letters but for
        // a word of opposite meaning.
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
        return opposed_letters && flips.is_multiple_of(2);
    }
    for w in &left {
        let pair = right
            .iter()
            .position(|r| opposed(w, r) || negated_by_suffix(w, r) || negated_by_suffix(r, w));
        match pair {
            Some(i) => {
                right.remove(i);
                flips += 1;
            }
            None => return false,
        }
    }
    flips % 2 == 1
}

/// `long` is `short` with a negating word glued after it: `forceoff`, `recursiveno`.
pub(super) fn negated_by_suffix(long: &str, short: &str) -> bool {
    long.strip_prefix(short).is_some_and(|rest| {
        short.chars().count() >= 3
            && ["off", "not", "no", "false", "disabled", "never"].contains(&rest)
    })
}

/// What the model is told about a key that states the opposite of a parameter.
pub(super) fn opposite_problem(key: &str, key_prefix: &str, p: &Field<'_>, prefix: &str) -> String {
    let ty = crate::tool::schema::type_label(p.schema);
    let name = format!("{prefix}{}", p.name);
    let key = format!("{key_prefix}{}", clip(key));
    if schema_types(p.schema).contains(&"boolean") {
        format!(
            "`{key}` states the opposite of the boolean parameter `{name}`, so it was not \
             applied; to turn `{name}` off, send `\"{}\": false`",
            p.name
        )
    } else {
        format!(
            "`{key}` states the opposite of parameter `{name}` ({ty}), so it was not applied; \
             send `{name}` with the value you mean"
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

/// 1.0 for the same word, high for a typo, low otherwise.
pub(super) fn closeness(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let longest = a.chars().count().max(b.chars().count());
    if longest < 4 {
        // Too short to tell a typo from another word (`id` vs `ip`).
        return 0.0;
    }
    // One edit (a transposition counts as one) in a word of four or more letters, or two in
    // one of seven or more.
    match strsim::damerau_levenshtein(a, b) {
        1 => 0.9,
        2 if longest >= 7 => 0.8,
        _ => 0.0,
    }
}
