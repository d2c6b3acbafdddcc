//! Argument repair and validation: the arguments a model sent, made into the arguments the
//! handler expects, or an error result that tells the model exactly what to send instead.
//!
//! Repairs, in order, each applied only when it can lead to exactly one parameter:
//! 1. a declared parameter alias (`question` -> `query`);
//! 2. the same key spelled differently: case, separators, camelCase (`maxResults`,
//!    `Max-Results` -> `max_results`);
//! 3. an unknown key that is a clear near-miss (typo, plural/singular) of a single parameter
//!    that was not given, and no other parameter comes close (never into a boolean: a
//!    near-miss alone is not enough to switch something on or off);
//! 4. a value of the wrong JSON type that can only mean one thing for the parameter's schema:
//!    `"5"` for an integer, `"true"` for a boolean, a lone value for an array, a JSON-encoded
//!    object or array in a string, a number for a string;
//! 5. a string that is one allowed value in another case or with other separators between its
//!    words (`"HIGH"` for `"high"`), when exactly one allowed value matches so;
//! 6. (before 3) the fields of an object parameter sent flat, beside it (`{"title": ..}` for
//!    `{"issue": {"title": ..}}`): put into it when every unknown key is a field of that one
//!    object parameter, which was not given, and of no other object parameter not given;
//!
//! Rules 1-5 apply inside nested objects too, with the object's fields for parameters
//! (`issue.Priority` -> `issue.priority`, `"HIGH"` -> `"high"`), to a bounded depth and number
//! of keys (see `nested`); a nested key that matches no field is left for the schema.
//!
//! then validation of the result against the tool's JSON Schema. `null` for an optional
//! parameter means "not given".
//!
//! Never across opposites: a key that states the opposite of a parameter (`no_force`,
//! `forceOff`, `unforce`, `not_force`, `min_price` for `max_price`) is never taken for it,
//! whatever its value; the model is told which parameter it negates, its type, and how to say
//! what it meant (`"force": false`).

use serde_json::{Map, Value};

use crate::tool::built::{CatalogTool, ParamInfo};
use crate::tool::schema::JsonObject;

mod nested;

/// One change made to the arguments, reported in the result's `_meta`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ArgFix {
    /// A key was renamed to the parameter it stands for.
    Renamed {
        from: String,
        to: String,
        rule: &'static str,
    },
    /// A value was converted to the type the parameter's schema expects.
    Coerced {
        param: String,
        from: Value,
        to: Value,
        rule: &'static str,
    },
    /// `null` for an optional parameter was taken as "not given".
    DroppedNull { param: String },
    /// Keys sent beside an object parameter that are all fields of it, and of no other
    /// object parameter that was not given, were put into it (`{"title": ..}` for
    /// `{"issue": {"title": ..}}`).
    Wrapped { keys: Vec<String>, into: String },
}

impl ArgFix {
    pub fn to_json(&self) -> Value {
        match self {
            ArgFix::Renamed { from, to, rule } => {
                serde_json::json!({"kind": "renamed", "from": from, "to": to, "rule": rule})
            }
            ArgFix::Coerced {
                param,
                from,
                to,
                rule,
            } => {
                serde_json::json!({"kind": "coerced", "param": param, "from": from, "to": to, "rule": rule})
            }
            ArgFix::DroppedNull { param } => {
                serde_json::json!({"kind": "dropped_null", "param": param})
            }
            ArgFix::Wrapped { keys, into } => {
                serde_json::json!({"kind": "wrapped", "from": keys, "to": into, "rule": "fields_sent_flat"})
            }
        }
    }
}

/// The arguments ready for the handler, and what was changed to get there.
#[derive(Debug, Default)]
pub struct Prepared {
    pub arguments: Map<String, Value>,
    pub fixes: Vec<ArgFix>,
}

/// Whether to repair arguments or only check them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Repair {
    /// Declared aliases only; everything else must be exact.
    Strict,
    /// All repairs above (default).
    #[default]
    Safe,
}

/// Keys longer than this are never matched fuzzily and are clipped in messages.
const MAX_KEY_LEN: usize = 128;
/// Beyond this many keys only exact and declared names are considered.
const MAX_FUZZY_KEYS: usize = 64;

/// `maxResults`, `Max-Results`, `max results` -> `maxresults`.
pub fn normalise_key(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Repairs and validates `args` for `tool`. The error is the message for an `isError` result.
pub fn prepare(
    tool: &CatalogTool,
    args: Map<String, Value>,
    repair: Repair,
) -> Result<Prepared, String> {
    // The usual call: every key a declared parameter, no `null`, every value already of its
    // type, nothing required missing. Nothing below would change it unless the schema refuses
    // a value that is an allowed one in another case, so it goes to the validator as it came.
    let as_sent = args.keys().all(|k| tool.param(k).is_some())
        && tool.params.iter().all(|p| match args.get(&p.name) {
            None => !p.required,
            Some(Value::Null) => false,
            Some(value) => has_declared_type(value, &p.schema),
        });
    if as_sent {
        let instance = Value::Object(args);
        let errors = tool.validate_input(&instance);
        let Value::Object(args) = instance else {
            return Err(explain(tool, &errors));
        };
        // A value may be an allowed one in another case (`"HIGH"` for `"high"`): the rules
        // below repair it and say so. A validator that accepted the arguments has found every
        // value allowed already; without a validator (a schema that could not be compiled),
        // the values are looked at here, as the rules below would.
        // Inside a nested object, a key in another spelling is not an unknown parameter to
        // the validator (a struct ignores keys it does not know), and is looked at here too.
        let validated = tool.validates_input();
        let nested_repairable = || {
            repair == Repair::Safe && nested::needs_repair(&tool.params, &args, &tool.input_schema)
        };
        let repairable = || {
            nested_repairable()
                || repair == Repair::Safe
                    && tool.params.iter().any(|p| {
                        let schema = nested::resolve(&p.schema, &tool.input_schema);
                        args.get(&p.name)
                            .is_some_and(|v| enum_value(v, schema).is_some())
                    })
        };
        if errors.is_empty() && ((validated && !nested_repairable()) || !repairable()) {
            return Ok(Prepared {
                arguments: args,
                fixes: Vec::new(),
            });
        }
        if !errors.is_empty() && !repairable() {
            return Err(explain(tool, &errors));
        }
        return repair_and_check(tool, args, repair);
    }
    repair_and_check(tool, args, repair)
}

/// The arguments as the repair rules below leave them, checked against the schema.
fn repair_and_check(
    tool: &CatalogTool,
    args: Map<String, Value>,
    repair: Repair,
) -> Result<Prepared, String> {
    let mut run = Run {
        root: &tool.input_schema,
        repair,
        fixes: Vec::new(),
        problems: Vec::new(),
        budget: nested::MAX_NESTED_KEYS,
    };
    let fields: Vec<Field<'_>> = tool.params.iter().map(Field::from).collect();
    let fuzzy_allowed = repair == Repair::Safe && args.len() <= MAX_FUZZY_KEYS;

    // 1-2: exact names, declared aliases, spelling-equivalent keys; opposites answered.
    let (mut out, mut unknown) = run.match_keys(args, &fields, "", fuzzy_allowed);

    // Fields of an object parameter sent flat, beside it rather than in it.
    if repair == Repair::Safe && !unknown.is_empty() && unknown.len() <= MAX_FUZZY_KEYS {
        if let Some(target) = nested::wrap_target(&fields, &out, &unknown, run.root) {
            run.fixes.push(ArgFix::Wrapped {
                keys: unknown.iter().map(|(k, _)| k.clone()).collect(),
                into: target.to_string(),
            });
            out.insert(
                target.to_string(),
                Value::Object(std::mem::take(&mut unknown).into_iter().collect()),
            );
        }
    }

    // 3: a near-miss of exactly one parameter that was not given.
    if fuzzy_allowed && !unknown.is_empty() {
        unknown = run.match_near_misses(unknown, &fields, &mut out, "");
    }

    // Keys beside a missing object parameter that state the opposite of one of its fields.
    if !unknown.is_empty() && unknown.len() <= MAX_FUZZY_KEYS {
        unknown.retain(
            |(key, _)| match nested::opposite_field(&fields, &out, key, run.root) {
                Some(problem) => {
                    run.problems.push(problem);
                    false
                }
                None => true,
            },
        );
    }

    if !unknown.is_empty() {
        // Name a few: thousands of keys from a hostile caller must not come back verbatim.
        const SHOWN: usize = 10;
        let mut list: Vec<String> = unknown
            .iter()
            .take(SHOWN)
            .map(|(k, _)| format!("`{}`", clip(k)))
            .collect();
        if unknown.len() > SHOWN {
            list.push(format!("and {} more", unknown.len() - SHOWN));
        }
        let hint = if unknown.len() <= MAX_FUZZY_KEYS {
            nested::flat_fields_hint(&fields, &out, &unknown, run.root)
        } else {
            String::new()
        };
        run.problems
            .push(format!("unknown parameter(s) {}{hint}", list.join(", ")));
    }

    // `null` for an optional parameter, 4-5 values, and the same inside nested objects.
    run.repair_values(&mut out, &fields, "", 0);

    let missing: Vec<String> = tool
        .params
        .iter()
        .filter(|p| p.required && out.get(&p.name).is_none_or(Value::is_null))
        .map(|p| format!("`{}`", p.name))
        .collect();
    if !missing.is_empty() {
        run.problems.push(format!(
            "missing required parameter(s) {}",
            missing.join(", ")
        ));
    }

    let Run {
        fixes,
        mut problems,
        ..
    } = run;
    if problems.is_empty() {
        let instance = Value::Object(out);
        let errors = tool.validate_input(&instance);
        let Value::Object(out) = instance else {
            return Err(explain(tool, &problems));
        };
        if errors.is_empty() {
            return Ok(Prepared {
                arguments: out,
                fixes,
            });
        }
        problems.extend(errors);
    }
    Err(explain(tool, &problems))
}

/// A parameter, or a field of a nested object, as the key and value rules see it.
#[derive(Clone, Copy)]
pub(crate) struct Field<'a> {
    pub(crate) name: &'a str,
    pub(crate) aliases: &'a [String],
    pub(crate) schema: &'a Value,
    pub(crate) required: bool,
}

impl<'a> From<&'a ParamInfo> for Field<'a> {
    fn from(p: &'a ParamInfo) -> Self {
        Field {
            name: &p.name,
            aliases: &p.aliases,
            schema: &p.schema,
            required: p.required,
        }
    }
}

impl<'a> Field<'a> {
    /// Its name, then its aliases.
    fn names(&self) -> impl Iterator<Item = &'a str> {
        std::iter::once(self.name).chain(self.aliases.iter().map(String::as_str))
    }
}

/// One call's repair: what was changed, what is wrong, and how much nested work is left.
struct Run<'t> {
    /// The input schema, for the `$ref`s of nested schemas.
    root: &'t JsonObject,
    repair: Repair,
    fixes: Vec<ArgFix>,
    problems: Vec<String>,
    /// Keys of nested objects that may still be looked at (see [`nested::MAX_NESTED_KEYS`]).
    budget: usize,
}

impl Run<'_> {
    /// Rules 1-2 over the keys of one object against its fields: exact names, declared
    /// aliases, then (when `fuzzy`) the same key spelled differently. Keys that state the
    /// opposite of a field are answered and dropped; the others are returned unknown.
    /// `prefix` is the object's path (`issue.`), empty at the top level.
    fn match_keys(
        &mut self,
        args: Map<String, Value>,
        fields: &[Field<'_>],
        prefix: &str,
        fuzzy: bool,
    ) -> (Map<String, Value>, Vec<(String, Value)>) {
        let mut out = Map::new();
        let mut unknown: Vec<(String, Value)> = Vec::new();
        for (key, value) in args {
            if fields.iter().any(|f| f.name == key) {
                self.insert(&mut out, prefix, key.clone(), key, value);
                continue;
            }
            if let Some(f) = fields.iter().find(|f| f.aliases.contains(&key)) {
                self.renamed(prefix, &key, f.name, "alias");
                self.insert(&mut out, prefix, f.name.to_string(), key, value);
                continue;
            }
            if fuzzy && key.len() <= MAX_KEY_LEN {
                let norm = normalise_key(&key);
                let mut matches = fields
                    .iter()
                    .filter(|f| f.names().any(|n| normalise_key(n) == norm));
                if let (Some(f), None) = (matches.next(), matches.next()) {
                    self.renamed(prefix, &key, f.name, "spelling");
                    self.insert(&mut out, prefix, f.name.to_string(), key, value);
                    continue;
                }
            }
            unknown.push((key, value));
        }
        // Keys that state the opposite of a field are answered, never repaired.
        unknown.retain(|(key, _)| match opposite_param(key, fields) {
            Some(f) => {
                self.problems
                    .push(opposite_problem(key, prefix, &f, prefix));
                false
            }
            None => true,
        });
        (out, unknown)
    }

    /// Rule 3: each unknown key that is a clear near-miss of exactly one field not given, and
    /// claimed by no other key, renamed to it. Returns the keys still unknown.
    fn match_near_misses(
        &mut self,
        pending: Vec<(String, Value)>,
        fields: &[Field<'_>],
        out: &mut Map<String, Value>,
        prefix: &str,
    ) -> Vec<(String, Value)> {
        let targets: Vec<Field<'_>> = fields
            .iter()
            .filter(|f| !out.contains_key(f.name))
            .copied()
            .collect();
        // Which unknown keys point at which field; a field claimed by two keys is ambiguous
        // and repaired for neither.
        let claims: Vec<Option<usize>> = pending
            .iter()
            .map(|(k, v)| near_miss(k, v, &targets))
            .collect();
        let mut still_unknown = Vec::new();
        for ((key, value), claim) in pending.into_iter().zip(claims.iter()) {
            let unique = claim.filter(|t| claims.iter().filter(|c| **c == Some(*t)).count() == 1);
            match unique {
                Some(t) => {
                    let name = targets[t].name;
                    self.renamed(prefix, &key, name, "near_miss");
                    self.insert(out, prefix, name.to_string(), key, value);
                }
                None => still_unknown.push((key, value)),
            }
        }
        still_unknown
    }

    /// `null` for an optional field means "not given"; then (under [`Repair::Safe`]) rules
    /// 4-5 on each field's value, and the same rules inside every value that is an object of
    /// known fields (or a list of them), to a bounded depth.
    fn repair_values(
        &mut self,
        out: &mut Map<String, Value>,
        fields: &[Field<'_>],
        prefix: &str,
        depth: usize,
    ) {
        for f in fields {
            if !f.required && out.get(f.name).is_some_and(Value::is_null) {
                out.remove(f.name);
                self.fixes.push(ArgFix::DroppedNull {
                    param: format!("{prefix}{}", f.name),
                });
            }
        }
        if self.repair != Repair::Safe {
            return;
        }
        for f in fields {
            let Some(value) = out.get_mut(f.name) else {
                continue;
            };
            let schema = nested::resolve(f.schema, self.root);
            let repaired = coerce(value, schema)
                .or_else(|| enum_value(value, schema).map(|v| (v, "enum_case")));
            if let Some((coerced, rule)) = repaired {
                let from = std::mem::replace(value, coerced.clone());
                self.fixes.push(ArgFix::Coerced {
                    param: format!("{prefix}{}", f.name),
                    from,
                    to: coerced,
                    rule,
                });
            }
            if value.is_object() || value.is_array() {
                self.repair_nested(value, schema, &format!("{prefix}{}", f.name), depth + 1);
            }
        }
    }

    /// The rules above inside `value`, when its schema is an object of known fields (or a
    /// list of such objects): keys renamed, `null`s dropped, values coerced. Keys that match
    /// no field are left for the schema (a struct that does not deny unknown fields ignores
    /// them).
    fn repair_nested(&mut self, value: &mut Value, schema: &Value, path: &str, depth: usize) {
        if depth > nested::MAX_DEPTH || self.budget == 0 {
            return;
        }
        match value {
            Value::Object(obj) => {
                let Some(object) = nested::object_schema(schema, self.root) else {
                    return;
                };
                if obj.len() > self.budget {
                    self.budget = 0;
                    return;
                }
                self.budget -= obj.len();
                let fields = object.fields();
                let prefix = format!("{path}.");
                let fuzzy = obj.len() <= MAX_FUZZY_KEYS;
                let (mut out, mut unknown) =
                    self.match_keys(std::mem::take(obj), &fields, &prefix, fuzzy);
                if fuzzy && !unknown.is_empty() {
                    unknown = self.match_near_misses(unknown, &fields, &mut out, &prefix);
                }
                for (key, value) in unknown {
                    out.insert(key, value);
                }
                self.repair_values(&mut out, &fields, &prefix, depth);
                *obj = out;
            }
            Value::Array(items) => {
                let Some(item_schema) = nested::items_schema(schema, self.root) else {
                    return;
                };
                for (i, item) in items.iter_mut().enumerate() {
                    if self.budget == 0 {
                        return;
                    }
                    self.repair_nested(item, item_schema, &format!("{path}[{i}]"), depth);
                }
            }
            _ => {}
        }
    }

    fn renamed(&mut self, prefix: &str, from: &str, to: &str, rule: &'static str) {
        self.fixes.push(ArgFix::Renamed {
            from: format!("{prefix}{from}"),
            to: format!("{prefix}{to}"),
            rule,
        });
    }

    fn insert(
        &mut self,
        out: &mut Map<String, Value>,
        prefix: &str,
        name: String,
        from: String,
        value: Value,
    ) {
        if out.contains_key(&name) {
            self.problems.push(format!(
                "`{prefix}{name}` was given twice (as `{}` and as another spelling); send it once",
                clip(&from)
            ));
        } else {
            out.insert(name, value);
        }
    }
}

/// The one parameter `key` is a clear near-miss of, if any: a small edit distance relative to
/// the length, or the same word in singular/plural, and clearly closer than any other.
///
/// A boolean is switched on or off by its name alone, so closeness alone never names one:
/// a misspelled key reaches a boolean only when the value is a boolean too and the misspelling
/// changes no prefix (`recursiv: true` is `recursive`; `nforce` and `reforce` are not `force`).
fn near_miss(key: &str, value: &Value, targets: &[Field<'_>]) -> Option<usize> {
    if key.len() > MAX_KEY_LEN || key.is_empty() {
        return None;
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
                        if boolean && super::polarity::typo_possible(&norm, &target) {
                            closeness(&norm, &target)
                        } else {
                            0.0
                        }
                    } else {
                        // A change of prefix is another key, not a misspelling (`relimit`).
                        let target = normalise_key(n);
                        if super::polarity::typo_possible(&norm, &target) {
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
    let (best, score) = *scored.first()?;
    let runner_up = scored.get(1).map_or(0.0, |s| s.1);
    (score >= 0.8 && score - runner_up >= 0.15).then_some(best)
}

/// The parameter whose opposite `key` states, if any: the same words but for polarity, that
/// is negating words (`no_force`, `force_off`, `dont_force`, `skip_confirm`), a negating or
/// opposed prefix (`noforce`, `unforce`, `nonrecursive`), or a word of opposite meaning
/// (`min_price` for `max_price`, `exclude_tags` for `include_tags`), on either side.
fn opposite_param<'t>(key: &str, params: &[Field<'t>]) -> Option<Field<'t>> {
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
                .is_some_and(super::polarity::is_negating_particle)
                || compact
                    .strip_suffix(target.as_str())
                    .is_some_and(super::polarity::is_negating_particle))
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

fn singular_words(key: &str) -> Vec<String> {
    crate::text::words::split_words(key)
        .iter()
        .map(|w| crate::text::words::singular(w))
        .collect()
}

/// Two keys that say the same thing but with opposite polarity: once the negating words are
/// taken out of each and the words they share cancel, what is left pairs up as opposites
/// (`unforce`/`force`, `min`/`max`) or as a word and the word with a negating word glued
/// after it (`forceoff`/`force`), and the negations on the two sides do not cancel out.
fn differ_by_polarity(a: &[String], b: &[String]) -> bool {
    use super::polarity::{is_negating_particle, opposed};
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
            && super::polarity::fused_affixes(&fused, words) == super::polarity::Affixes::Opposed;
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
fn negated_by_suffix(long: &str, short: &str) -> bool {
    long.strip_prefix(short).is_some_and(|rest| {
        short.chars().count() >= 3
            && ["off", "not", "no", "false", "disabled", "never"].contains(&rest)
    })
}

/// What the model is told about a key that states the opposite of a parameter.
fn opposite_problem(key: &str, key_prefix: &str, p: &Field<'_>, prefix: &str) -> String {
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
fn singular_key(key: &str) -> String {
    crate::text::words::split_words(key)
        .iter()
        .map(|w| crate::text::words::singular(w))
        .collect()
}

/// 1.0 for the same word, high for a typo, low otherwise.
fn closeness(a: &str, b: &str) -> f64 {
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

fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The one allowed value a string differs from only by case and by the separators between its
/// words (`"HIGH"` for `"high"`, `"in-progress"` for `"in_progress"`: see [`enum_key`]), when the schema lists its values (`enum`, or
/// `oneOf`/`anyOf` branches of one `const` each). None when the value is allowed as sent, or
/// when no value or more than one matches so (`"A"` with both `"a"` and `"A"` allowed).
fn enum_value(value: &Value, schema: &Value) -> Option<Value> {
    let Value::String(sent) = value else {
        return None;
    };
    let options: Vec<&Value> = match schema.get("enum") {
        Some(Value::Array(values)) => values.iter().collect(),
        _ => ["oneOf", "anyOf"]
            .iter()
            .find_map(|k| schema.get(*k).and_then(Value::as_array))?
            .iter()
            .map(|branch| branch.get("const"))
            .collect::<Option<Vec<&Value>>>()?,
    };
    if options.contains(&value) {
        return None;
    }
    let wanted = enum_key(sent);
    let mut matching = options
        .iter()
        .filter(|o| o.as_str().is_some_and(|o| enum_key(o) == wanted));
    match (matching.next(), matching.next()) {
        (Some(only), None) => Some((*only).clone()),
        _ => None,
    }
}

/// An allowed value's spelling key: lower case, and without the `_`, `-` and spaces that stand
/// between two letters (`in-progress`, `In Progress`, `inProgress` -> `inprogress`). Every
/// other character is kept: a leading `-` sorts descending or is a sign, `+5`/`-5` and `1.0`/`10`
/// are different values, and `-` alone is a value of its own.
fn enum_key(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let joins_letters = matches!(c, '_' | '-' | ' ')
            && i > 0
            && chars[i - 1].is_alphabetic()
            && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
        if !joins_letters {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The value converted to what the schema expects, when the conversion is unambiguous.
fn coerce(value: &Value, schema: &Value) -> Option<(Value, &'static str)> {
    if has_declared_type(value, schema) {
        return None;
    }
    let types = schema_types(schema);
    let wants = |t: &str| types.contains(&t);
    match value {
        Value::String(s) => {
            let t = s.trim();
            if wants("integer") {
                if let Ok(i) = t.parse::<i64>() {
                    return Some((Value::from(i), "string_to_integer"));
                }
                if let Ok(u) = t.parse::<u64>() {
                    return Some((Value::from(u), "string_to_integer"));
                }
            }
            if wants("number") {
                // "10" is the integer 10, which a number schema accepts as it is.
                if let Ok(i) = t.parse::<i64>() {
                    return Some((Value::from(i), "string_to_number"));
                }
                if let Some(n) = t.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                    return Some((Value::Number(n), "string_to_number"));
                }
            }
            if wants("boolean") {
                match t.to_ascii_lowercase().as_str() {
                    "true" => return Some((Value::Bool(true), "string_to_boolean")),
                    "false" => return Some((Value::Bool(false), "string_to_boolean")),
                    _ => {}
                }
            }
            if wants("object") || wants("array") {
                if let Ok(parsed) = serde_json::from_str::<Value>(t) {
                    let ok = (wants("object") && parsed.is_object())
                        || (wants("array") && parsed.is_array());
                    if ok {
                        return Some((parsed, "json_string_decoded"));
                    }
                }
            }
            if wants("array") {
                let item = schema.get("items").unwrap_or(&Value::Null);
                let inner = coerce(value, item).map(|(v, _)| v);
                let element = inner.unwrap_or_else(|| value.clone());
                if item.is_null() || schema_types(item).iter().any(|t| matches_type(&element, t)) {
                    return Some((Value::Array(vec![element]), "wrapped_in_array"));
                }
            }
            None
        }
        Value::Number(n) if wants("string") => {
            Some((Value::String(n.to_string()), "number_to_string"))
        }
        Value::Number(n) if wants("integer") => {
            // 3.0 -> 3
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9.0e15)
                .then(|| (Value::from(f as i64), "float_to_integer"))
        }
        Value::Bool(_) | Value::Number(_) | Value::Object(_) if wants("array") => {
            let item = schema.get("items").unwrap_or(&Value::Null);
            let ok = item.is_null() || schema_types(item).iter().any(|t| matches_type(value, t));
            ok.then(|| (Value::Array(vec![value.clone()]), "wrapped_in_array"))
        }
        _ => None,
    }
}

/// Whether `value` has one of the types `schema` declares (or the schema declares none):
/// then there is nothing to coerce.
fn has_declared_type(value: &Value, schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => matches_type(value, t),
        Some(Value::Array(ts)) => {
            let mut declared = ts.iter().filter_map(Value::as_str).peekable();
            declared.peek().is_none() || declared.any(|t| matches_type(value, t))
        }
        _ => true,
    }
}

fn matches_type(value: &Value, t: &str) -> bool {
    match t {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// Keeps hostile keys from filling an error message.
fn clip(s: &str) -> String {
    crate::util::clip(s, 64)
}

/// `Invalid arguments for tool: <problems>. Expected parameters: ...`
pub fn explain(tool: &CatalogTool, problems: &[String]) -> String {
    const MAX_PROBLEMS: usize = 10;
    let shown: Vec<&str> = problems
        .iter()
        .take(MAX_PROBLEMS)
        .map(String::as_str)
        .collect();
    let mut text = format!(
        "Invalid arguments for tool `{}`: {}",
        tool.name,
        shown.join("; ")
    );
    if problems.len() > MAX_PROBLEMS {
        text.push_str(&format!(" (and {} more)", problems.len() - MAX_PROBLEMS));
    }
    text.push('.');
    text.push_str(&expected_parameters(tool));
    text
}

/// The parameter list a model needs to retry: name, type, required or not, description.
pub fn expected_parameters(tool: &CatalogTool) -> String {
    if tool.params.is_empty() {
        return " This tool takes no parameters: send `{}`.".to_string();
    }
    let mut text = String::from(" Expected parameters:");
    let mut left = nested::MAX_LISTED_FIELDS;
    for p in &tool.params {
        let schema = nested::resolve(&p.schema, &tool.input_schema);
        let label = crate::tool::schema::type_label(schema);
        text.push_str(&format!("\n- `{}` ({label}", p.name));
        text.push_str(if p.required {
            ", required"
        } else {
            ", optional"
        });
        if let Some(d) = &p.default {
            text.push_str(&format!(", default {d}"));
        }
        text.push(')');
        if let Some(d) = &p.description {
            text.push_str(": ");
            text.push_str(d);
        }
        nested::list_fields(&p.schema, &tool.input_schema, &p.name, &mut left, &mut text);
    }
    text
}

/// A short type name from a parameter's schema (see [`crate::tool::schema::type_label`]).
pub fn type_label(p: &ParamInfo) -> String {
    crate::tool::schema::type_label(&p.schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn tool(schema: Value) -> CatalogTool {
        let Value::Object(schema) = schema else {
            panic!("a schema is an object")
        };
        let def = crate::tool::provider::DynamicTool::new(rmcp::model::Tool::new(
            "t",
            "a test tool",
            std::sync::Arc::new(schema),
        ));
        CatalogTool::from_dynamic(
            def,
            crate::tool::built::ToolHandler::Meta(crate::tool::built::MetaKind::Search),
        )
        .expect("a valid tool")
    }

    fn outcome(result: Result<Prepared, String>) -> Result<(Value, usize), String> {
        result.map(|p| (Value::Object(p.arguments), p.fixes.len()))
    }

    /// Arguments sent exactly as declared skip the repair rules: the outcome must be the one
    /// the rules give, for valid arguments and for ones only the schema's limits refuse.
    #[test]
    fn arguments_sent_as_declared_come_out_as_the_repair_rules_leave_them() {
        let t = tool(json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1},
                "x": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "free": {}
            },
            "required": ["n"]
        }));
        let cases = [
            json!({"n": 3}),
            json!({"n": 3, "x": 2.5, "tags": ["a"], "mode": "a", "free": [1]}),
            json!({"n": 0}),
            json!({"n": 3, "mode": "c"}),
            json!({"n": 3.0}),
            json!({"n": "3"}),
            json!({"n": 3, "tags": "a"}),
            json!({"n": 3, "x": null}),
            json!({"n": 3, "mode": null}),
            json!({"x": 1}),
            json!({"n": 3, "nn": 1}),
            json!({"N": 3}),
        ];
        for case in cases {
            let Value::Object(args) = case.clone() else {
                unreachable!()
            };
            for repair in [Repair::Safe, Repair::Strict] {
                assert_eq!(
                    outcome(prepare(&t, args.clone(), repair)),
                    outcome(repair_and_check(&t, args.clone(), repair)),
                    "{case} ({repair:?})"
                );
            }
        }
        // The short way is taken only when nothing is to be repaired.
        let Value::Object(float) = json!({"n": 3.0}) else {
            unreachable!()
        };
        assert_eq!(
            outcome(prepare(&t, float, Repair::Safe)),
            Ok((json!({"n": 3}), 1))
        );
    }

    fn remove_directory() -> CatalogTool {
        tool(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "force": {"type": "boolean"},
                "recursive": {"type": "boolean"},
                "max_price": {"type": "number"},
                "include_tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path"]
        }))
    }

    pub(super) fn args(value: Value) -> Map<String, Value> {
        let Value::Object(map) = value else {
            unreachable!()
        };
        map
    }

    /// A negated flag is the call the model meant to be safe: it is never the flag.
    #[test]
    fn keys_that_negate_a_parameter_are_answered_never_repaired() {
        let t = remove_directory();
        for (key, param) in [
            ("no_force", "force"),
            ("noforce", "force"),
            ("force_no", "force"),
            ("unforce", "force"),
            ("un_force", "force"),
            ("NoForce", "force"),
            ("forceOff", "force"),
            ("force_off", "force"),
            ("not_force", "force"),
            ("dont_force", "force"),
            ("without_force", "force"),
            ("skip_force", "force"),
            ("nonforce", "force"),
            ("no_recursive", "recursive"),
            ("recursive_no", "recursive"),
            ("norecursive", "recursive"),
            ("unrecursive", "recursive"),
            ("non_recursive", "recursive"),
            ("min_price", "max_price"),
            ("exclude_tags", "include_tags"),
        ] {
            for value in [
                json!(true),
                json!(false),
                json!("true"),
                json!(1),
                json!(["x"]),
            ] {
                for repair in [Repair::Safe, Repair::Strict] {
                    let sent = args(json!({"path": "/data", key: value}));
                    let err = prepare(&t, sent, repair).expect_err(key);
                    assert!(
                        err.contains(&format!("`{key}` states the opposite"))
                            && err.contains(param),
                        "{key}: {err}"
                    );
                }
            }
        }
        let err = prepare(
            &t,
            args(json!({"path": "/", "no_force": true})),
            Repair::Safe,
        )
        .unwrap_err();
        assert!(err.contains("send `\"force\": false`"), "{err}");
        let err =
            prepare(&t, args(json!({"path": "/", "min_price": 3})), Repair::Safe).unwrap_err();
        assert!(err.contains("`max_price` (number)"), "{err}");
    }

    #[test]
    fn a_boolean_is_reached_by_a_misspelling_only_with_a_boolean_value() {
        let t = remove_directory();
        let p = prepare(
            &t,
            args(json!({"path": "/", "recursiv": true})),
            Repair::Safe,
        )
        .unwrap();
        assert_eq!(p.arguments.get("recursive"), Some(&json!(true)));
        let p = prepare(
            &t,
            args(json!({"path": "/", "forse": "false"})),
            Repair::Safe,
        )
        .unwrap();
        assert_eq!(p.arguments.get("force"), Some(&json!(false)));
        for sent in [
            json!({"path": "/", "recursiv": "yes"}),
            json!({"path": "/", "recursiv": 1}),
            json!({"path": "/", "nforce": true}),
            json!({"path": "/", "reforce": true}),
        ] {
            assert!(
                prepare(&t, args(sent.clone()), Repair::Safe).is_err(),
                "{sent}"
            );
        }
        // A change of prefix is another key, and fused opposites are opposites.
        let t2 = tool(json!({
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "min_price": {"type": "number"},
                           "stops": {"type": "array"}, "no_of_adults": {"type": "integer"},
                           "location": {"type": "string"}}
        }));
        for sent in [
            json!({"relimit": 3}),
            json!({"unlimit": 3}),
            json!({"maxprice": 3}),
            json!({"MaxPrice": 3}),
        ] {
            assert!(
                prepare(&t2, args(sent.clone()), Repair::Safe).is_err(),
                "{sent}"
            );
        }
        // Nouns that look like negating verbs, and parameters with a `no` of their own, do not
        // make a misspelled key an opposite.
        let p = prepare(
            &t2,
            args(json!({"stpos": [], "loction": "Paris"})),
            Repair::Safe,
        )
        .unwrap();
        assert!(p.arguments.contains_key("stops") && p.arguments.contains_key("location"));
        // The plural of another parameter is that parameter, whatever its opposite says.
        let t = tool(json!({
            "type": "object",
            "properties": {"start_location": {"type": "string"}, "end_location": {"type": "string"}}
        }));
        let p = prepare(&t, args(json!({"end_locations": "LA"})), Repair::Safe).unwrap();
        assert_eq!(p.arguments.get("end_location"), Some(&json!("LA")));
    }

    #[test]
    fn keys_normalise_across_styles() {
        assert_eq!(normalise_key("maxResults"), "maxresults");
        assert_eq!(normalise_key("Max-Results"), "maxresults");
        assert_eq!(normalise_key("max_results"), "maxresults");
        assert_eq!(normalise_key("max results"), "maxresults");
    }

    #[test]
    fn closeness_prefers_typos_and_plurals() {
        assert!(closeness("query", "qeury") >= 0.8);
        assert_eq!(singular_key("tags"), singular_key("tag"));
        assert_eq!(singular_key("boxes"), singular_key("box"));
        assert_eq!(
            singular_key("initialVelocities"),
            singular_key("initial_velocity")
        );
        assert_eq!(singular_key("start_cities"), singular_key("startCity"));
        assert_ne!(singular_key("class"), singular_key("cla"));
        assert_eq!(closeness("id", "ip"), 0.0);
        assert_eq!(closeness("limit", "offset"), 0.0);
    }

    #[test]
    fn coercions_follow_the_schema() {
        let int = json!({"type": "integer"});
        assert_eq!(coerce(&json!("5"), &int).unwrap().0, json!(5));
        assert_eq!(coerce(&json!(5.0), &int).unwrap().0, json!(5));
        assert!(coerce(&json!(5.5), &int).is_none());
        assert!(coerce(&json!("five"), &int).is_none());
        let boolean = json!({"type": "boolean"});
        assert_eq!(coerce(&json!("TRUE"), &boolean).unwrap().0, json!(true));
        assert!(coerce(&json!("yes"), &boolean).is_none());
        let arr = json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(coerce(&json!("a"), &arr).unwrap().0, json!(["a"]));
        assert_eq!(
            coerce(&json!("[\"a\",\"b\"]"), &arr).unwrap().0,
            json!(["a", "b"])
        );
        let ints = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(coerce(&json!("7"), &ints).unwrap().0, json!([7]));
        assert_eq!(coerce(&json!(7), &ints).unwrap().0, json!([7]));
        let obj = json!({"type": "object"});
        assert_eq!(
            coerce(&json!("{\"a\":1}"), &obj).unwrap().0,
            json!({"a": 1})
        );
        assert!(coerce(&json!("[1]"), &obj).is_none());
        let string = json!({"type": "string"});
        assert_eq!(coerce(&json!(12), &string).unwrap().0, json!("12"));
        assert!(coerce(&json!("ok"), &string).is_none());
    }

    /// Every spelling of an allowed value that differs from it only by case and separators
    /// becomes that value, through `enum` and through `oneOf` consts alike; a spelling that two
    /// allowed values share, or that no value has, is left for the schema to refuse.
    #[test]
    fn enum_values_are_repaired_only_when_one_matches() {
        let values = [
            "high",
            "low",
            "in_progress",
            "done",
            "readOnly",
            "read-write",
            "A",
            "a",
            "x",
        ];
        let spellings = |v: &str| -> Vec<String> {
            let words: Vec<String> = crate::text::words::split_words(v);
            let mut out = vec![
                v.to_uppercase(),
                v.to_lowercase(),
                words.join("_"),
                words.join("-"),
                words.join(" "),
                words.join("").to_uppercase(),
            ];
            out.retain(|s| s != v);
            out
        };
        let as_enum = json!({"type": "string", "enum": values});
        let as_one_of =
            json!({"oneOf": values.iter().map(|v| json!({"const": v})).collect::<Vec<_>>()});
        let key = |s: &str| enum_key(s);
        for schema in [&as_enum, &as_one_of] {
            for v in values {
                assert_eq!(
                    enum_value(&json!(v), schema),
                    None,
                    "{v} is allowed as sent"
                );
                let twins = values.iter().filter(|o| key(o) == key(v)).count();
                for sent in spellings(v) {
                    if values.contains(&sent.as_str()) {
                        continue;
                    }
                    let got = enum_value(&json!(sent), schema);
                    if twins == 1 {
                        assert_eq!(got, Some(json!(v)), "{sent} for {v}");
                    } else {
                        assert_eq!(got, None, "{sent}: {twins} values match");
                    }
                }
            }
            for other in ["highest", "hgh", "progress", "", "b", "done!"] {
                assert_eq!(enum_value(&json!(other), schema), None, "{other}");
            }
            assert_eq!(enum_value(&json!(5), schema), None);
        }
        // Signs, digits and dots are part of a value, not separators: a value without one of
        // them is a different value, never repaired into the one that has it.
        let signed = [
            (vec!["+1", "-1", "laugh"], vec!["1", " 1", "1 "]),
            (vec!["UTC+5", "UTC-5"], vec!["UTC5", "utc 5", "UTC_5"]),
            (
                vec!["-created_at", "name"],
                vec!["created_at", "CREATED_AT", "created at"],
            ),
            (vec!["1.0", "2.0"], vec!["10", "1_0", "1-0"]),
            (vec!["-", "."], vec!["", " ", "_"]),
            (vec!["asc", "-asc"], vec!["ASC_", "_asc", "--asc"]),
        ];
        for (allowed, sent) in signed {
            let schema = json!({"type": "string", "enum": allowed});
            for s in sent {
                assert_eq!(enum_value(&json!(s), &schema), None, "{s} for {allowed:?}");
            }
        }
        // Generated: dropping or adding any character that is not a separator between two
        // letters never meets an allowed value.
        for v in ["-1", "+1", "UTC-5", "v1.2", "-created_at", "a-b", "x_y z"] {
            let schema = json!({"enum": [v]});
            let chars: Vec<char> = v.chars().collect();
            for i in 0..chars.len() {
                let between_letters = i > 0
                    && chars[i - 1].is_alphabetic()
                    && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
                if between_letters && matches!(chars[i], '_' | '-' | ' ') {
                    continue;
                }
                let dropped: String = chars
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, c)| c)
                    .collect();
                assert_eq!(
                    enum_value(&json!(dropped), &schema),
                    None,
                    "{dropped} for {v}"
                );
            }
            for extra in ['-', '+', '.', '_'] {
                let added = format!("{extra}{v}");
                assert_eq!(enum_value(&json!(added), &schema), None, "{added} for {v}");
            }
        }
        // Not a list of values: nothing to repair to.
        assert_eq!(enum_value(&json!("HIGH"), &json!({"type": "string"})), None);
        let mixed = json!({"oneOf": [{"const": "high"}, {"type": "integer"}]});
        assert_eq!(enum_value(&json!("HIGH"), &mixed), None);
    }

    #[test]
    fn an_enum_value_in_another_case_is_repaired_and_reported() {
        let t = tool(json!({
            "type": "object",
            "properties": {"priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"]}},
            "required": ["priority"]
        }));
        let p = prepare(
            &t,
            json!({"priority": "HIGH"}).as_object().unwrap().clone(),
            Repair::Safe,
        )
        .unwrap();
        assert_eq!(p.arguments["priority"], json!("high"));
        assert_eq!(
            p.fixes[0].to_json(),
            json!({"kind": "coerced", "param": "priority", "from": "HIGH", "to": "high", "rule": "enum_case"})
        );
        // Strict checks only.
        let err = prepare(
            &t,
            json!({"priority": "HIGH"}).as_object().unwrap().clone(),
            Repair::Strict,
        )
        .unwrap_err();
        // The refusal names every allowed value, not the first two.
        for v in ["low", "medium", "high", "urgent"] {
            assert!(err.contains(&format!("\"{v}\"")), "{v} missing from: {err}");
        }
        assert!(!err.contains("other candidates"), "{err}");
    }

    /// Without a compiled input schema the same arguments are repaired alike, whether or not
    /// something else in them takes the slower path.
    #[test]
    fn an_enum_value_is_repaired_alike_on_both_paths() {
        for pattern in [None, Some("(")] {
            let mut schema = json!({
                "type": "object",
                "properties": {
                    "p": {"type": "string", "enum": ["high", "low"]},
                    "q": {"type": "string"}
                }
            });
            if let Some(bad) = pattern {
                // A pattern that does not compile: the tool is kept, unvalidated.
                schema["properties"]["q"]["pattern"] = json!(bad);
            }
            let t = tool(schema);
            assert_eq!(t.validates_input(), pattern.is_none());
            for args in [json!({"p": "HIGH"}), json!({"p": "HIGH", "q": null})] {
                let p = prepare(&t, args.as_object().unwrap().clone(), Repair::Safe).unwrap();
                assert_eq!(p.arguments["p"], json!("high"), "{args} ({pattern:?})");
            }
        }
    }

    #[test]
    fn a_long_list_of_allowed_values_is_shown_up_to_a_bound() {
        let values: Vec<String> = (0..60).map(|i| format!("value_{i:02}")).collect();
        let t = tool(json!({
            "type": "object",
            "properties": {"v": {"type": "string", "enum": values}},
        }));
        let err = prepare(
            &t,
            json!({"v": "x".repeat(5_000)}).as_object().unwrap().clone(),
            Repair::Safe,
        )
        .unwrap_err();
        let line = err.lines().next().unwrap();
        assert!(
            line.contains("\"value_00\"") && line.contains("\"value_49\""),
            "{line}"
        );
        assert!(!line.contains("\"value_50\""), "{line}");
        assert!(line.contains("(60 in all)"), "{line}");
        assert!(line.len() < 1_500, "{} bytes", line.len());
    }
}
