//! Argument repair and validation: the arguments a model sent, made into the arguments the
//! handler expects, or an error result that tells the model exactly what to send instead.
//!
//! Repairs, in order, each applied only when it can lead to exactly one parameter:
//! 1. a declared parameter alias (`question` -> `query`);
//! 2. the same key spelled differently: case, separators, camelCase (`maxResults`,
//!    `Max-Results` -> `max_results`);
//! 3. an unknown key that is a clear near-miss (typo, plural/singular) of a single parameter
//!    that was not given, and no other parameter comes close, given or not, booleans
//!    included (into a boolean only with a boolean value: a misspelling alone is not enough
//!    to switch something on or off); a key close to several parameters (`querys` for
//!    `query` and `queries`) is repaired into none, and the model is told each of them;
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
use explain::clip;
pub use explain::{expected_parameters, explain, type_label};
use keys::{near_miss, opposite_param, opposite_problem, several_problem, NearMiss};
use values::{coerce, enum_value, has_declared_type, schema_types};

mod explain;
mod keys;
mod nested;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_near;
mod values;

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
pub fn prepare<H>(
    tool: &CatalogTool<H>,
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
            Some(value) => has_declared_type(value, p.schema()),
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
                        let schema = nested::resolve(p.schema(), &tool.input_schema);
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
fn repair_and_check<H>(
    tool: &CatalogTool<H>,
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
    if repair == Repair::Safe && !unknown.is_empty() && unknown.len() <= MAX_FUZZY_KEYS {
        run.wrap_flat_fields(&fields, &mut out, &mut unknown);
    }
    // 3: a near-miss of exactly one parameter, not given, and of no other.
    if fuzzy_allowed && !unknown.is_empty() {
        unknown = run.match_near_misses(unknown, &fields, &mut out, "");
    }
    if !unknown.is_empty() && unknown.len() <= MAX_FUZZY_KEYS {
        run.refuse_opposite_fields(&fields, &out, &mut unknown);
    }
    if !unknown.is_empty() {
        run.refuse_unknown(&fields, &out, &unknown);
    }
    // `null` for an optional parameter, 4-5 values, and the same inside nested objects.
    run.repair_values(&mut out, &fields, "", 0);
    if let Some(missing) = missing_required(tool, &out) {
        run.problems.push(missing);
    }
    checked(tool, out, run)
}

/// The required parameters `out` lacks (or sends as `null`), as a problem.
fn missing_required<H>(tool: &CatalogTool<H>, out: &Map<String, Value>) -> Option<String> {
    let missing: Vec<String> = tool
        .params
        .iter()
        .filter(|p| p.required && out.get(&p.name).is_none_or(Value::is_null))
        .map(|p| format!("`{}`", p.name))
        .collect();
    (!missing.is_empty()).then(|| format!("missing required parameter(s) {}", missing.join(", ")))
}

/// The repaired arguments `out` when the rules found no problem and the schema accepts
/// them; else the message that explains every problem.
fn checked<H>(
    tool: &CatalogTool<H>,
    out: Map<String, Value>,
    run: Run<'_>,
) -> Result<Prepared, String> {
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

impl Run<'_> {
    /// Fields of an object parameter sent flat, beside it rather than in it: moved into it.
    fn wrap_flat_fields(
        &mut self,
        fields: &[Field<'_>],
        out: &mut Map<String, Value>,
        unknown: &mut Vec<(String, Value)>,
    ) {
        if let Some(target) = nested::wrap_target(fields, out, unknown, self.root) {
            self.fixes.push(ArgFix::Wrapped {
                keys: unknown.iter().map(|(k, _)| k.clone()).collect(),
                into: target.to_string(),
            });
            out.insert(
                target.to_string(),
                Value::Object(std::mem::take(unknown).into_iter().collect()),
            );
        }
    }

    /// Keys beside a missing object parameter that state the opposite of one of its fields:
    /// each a problem of its own, no longer unknown.
    fn refuse_opposite_fields(
        &mut self,
        fields: &[Field<'_>],
        out: &Map<String, Value>,
        unknown: &mut Vec<(String, Value)>,
    ) {
        unknown.retain(
            |(key, _)| match nested::opposite_field(fields, out, key, self.root) {
                Some(problem) => {
                    self.problems.push(problem);
                    false
                }
                None => true,
            },
        );
    }

    /// The keys no parameter took, as a problem that names a few: thousands of keys from a
    /// hostile caller must not come back verbatim.
    fn refuse_unknown(
        &mut self,
        fields: &[Field<'_>],
        out: &Map<String, Value>,
        unknown: &[(String, Value)],
    ) {
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
            nested::flat_fields_hint(fields, out, unknown, self.root)
        } else {
            String::new()
        };
        self.problems
            .push(format!("unknown parameter(s) {}{hint}", list.join(", ")));
    }
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
            schema: p.schema(),
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
    /// claimed by no other key, renamed to it. Every field is a candidate, given or not: a key
    /// as close to a field given as to one not given is taken for neither. A key close to
    /// several fields, none clearly closer, is answered with each of them and repaired into
    /// none. Returns the keys still unknown.
    fn match_near_misses(
        &mut self,
        pending: Vec<(String, Value)>,
        fields: &[Field<'_>],
        out: &mut Map<String, Value>,
        prefix: &str,
    ) -> Vec<(String, Value)> {
        let claims: Vec<NearMiss> = pending
            .iter()
            .map(|(k, v)| near_miss(k, v, fields))
            .collect();
        // A field claimed by two keys is ambiguous and repaired for neither; a field given
        // already is not repaired into.
        let one = |c: &NearMiss| match c {
            NearMiss::One(t) if !out.contains_key(fields[*t].name) => Some(*t),
            _ => None,
        };
        let unique: Vec<Option<usize>> = claims
            .iter()
            .map(|c| one(c).filter(|t| claims.iter().filter(|c| one(c) == Some(*t)).count() == 1))
            .collect();
        let mut still_unknown = Vec::new();
        for (((key, value), claim), unique) in pending.into_iter().zip(&claims).zip(unique) {
            if let Some(t) = unique {
                let name = fields[t].name;
                self.renamed(prefix, &key, name, "near_miss");
                self.insert(out, prefix, name.to_string(), key, value);
            } else if let NearMiss::Several(close) = claim {
                let names: Vec<(&str, &str)> =
                    close.iter().map(|&(i, n)| (fields[i].name, n)).collect();
                self.problems.push(several_problem(&key, prefix, &names));
            } else {
                still_unknown.push((key, value));
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
