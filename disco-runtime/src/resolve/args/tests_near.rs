//! A key close to two fields is repaired into neither, whichever of them the call sent, and
//! the model is told both: generated over tool shapes (random field names, types, other
//! fields, required or not, at the top level or inside an object parameter), keys one edit or
//! a plural away from two fields, and every subset of the fields sent; then the cases found.

use serde_json::{json, Map, Value};

use super::tests::{args, tool};
use super::*;

/// Syllables without the letters of negating words and affixes (`no`, `un`, `min`, `ex`),
/// and words that do not start with the prefixes those letters still make (`de`, `re`): the
/// generated names are close to one another by construction only. A key close to `dedo`
/// and to its negation `dededo` is answered with neither (`resolve/meaning.rs`).
const CONSONANTS: &[u8] = b"bdfgklprtvz";
const VOWELS: &[u8] = b"aeiou";

fn word(rng: &mut fastrand::Rng) -> String {
    loop {
        let w: String = (0..rng.usize(2..4))
            .flat_map(|_| {
                [
                    CONSONANTS[rng.usize(..CONSONANTS.len())],
                    VOWELS[rng.usize(..VOWELS.len())],
                ]
            })
            .map(char::from)
            .collect();
        if !crate::resolve::polarity::has_prefix_reading(&w) {
            return w;
        }
    }
}

/// `words` as one key, in snake case or camel case.
fn key_of(words: &[String], camel: bool) -> String {
    if !camel {
        return words.join("_");
    }
    let mut out = words[0].clone();
    for w in &words[1..] {
        let mut c = w.chars();
        if let Some(first) = c.next() {
            out.extend(first.to_uppercase());
            out.extend(c);
        }
    }
    out
}

/// One edit of the last word's end (never its first letters: a change of prefix is another
/// word): a letter changed, dropped, added, or the last two swapped.
fn edit(word: &str, rng: &mut fastrand::Rng) -> String {
    let mut w: Vec<char> = word.chars().collect();
    let n = w.len();
    let letter = char::from(CONSONANTS[rng.usize(..CONSONANTS.len())]);
    match rng.usize(..4) {
        0 => w[n - 1] = letter,
        1 => {
            w.pop();
        }
        2 => w.push(letter),
        _ => w.swap(n - 1, n - 2),
    }
    w.into_iter().collect()
}

/// The two fields a key is close to, and the key (as words: the last one edited).
struct Pair {
    a: Vec<String>,
    b: Vec<String>,
    key: Vec<String>,
    /// The last word of the stem is a word of the tables with an `e` after it.
    tabled: bool,
}

/// Words the tables oppose to others or class as synonyms (`del`, WordNet's `abaxial`) that
/// are not known words themselves: before an `e` (`dele`, `deles`), the plural's letters hold
/// the word, and a key that is the word (`tuvi_del`) is one edit from one field and two from
/// the other. The plural is no inflection of the word: it is the other field's.
fn table_words() -> Vec<&'static str> {
    let mut words: Vec<&'static str> = crate::resolve::lexicon::opposed_pairs()
        .flat_map(|(a, b)| [a, b])
        .chain(
            crate::resolve::vocab::SYNONYMS
                .iter()
                .flat_map(|&(a, b)| [a, b]),
        )
        .filter(|w| {
            (3..=8).contains(&w.len())
                && w.bytes().all(|c| c.is_ascii_lowercase())
                && !w.ends_with('e')
                && !crate::resolve::vocab::is_known_word(w)
                && !crate::resolve::polarity::has_prefix_reading(w)
        })
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// A pair none of whose words reads as a polarity prefix before a stem (`dedes` as `de` +
/// `des`, see `word`).
fn pair(rng: &mut fastrand::Rng, table: &[&str]) -> Pair {
    loop {
        let p = pair_once(rng, table);
        if ![&p.a, &p.b, &p.key].iter().any(|words| {
            words
                .iter()
                .any(|w| crate::resolve::polarity::has_prefix_reading(w))
        }) {
            return p;
        }
    }
}

fn pair_once(rng: &mut fastrand::Rng, table: &[&str]) -> Pair {
    // Two different words: a key's word that is another word of the fields is a word, no
    // misspelling (`vigu_vigu` is not `vigu_vigt`, `resolve/meaning.rs`).
    let mut stem: Vec<String> = vec![word(rng)];
    if rng.bool() {
        let second = word(rng);
        if second != stem[0] {
            stem.push(second);
        }
    }
    let last = stem.len() - 1;
    let tabled = !table.is_empty() && rng.usize(..4) == 0;
    if tabled {
        stem[last] = format!("{}e", table[rng.usize(..table.len())]);
    }
    let stem = stem;
    let with_last = |w: String| {
        let mut words = stem.clone();
        words[last] = w;
        words
    };
    match rng.usize(..5) {
        // A name and its plural, the key, beside a name one edit from the plural (not the
        // same word): a plural is not clearly closer than a typo of one letter.
        4 => {
            let plural = format!("{}s", stem[last]);
            Pair {
                a: stem.clone(),
                b: with_last(edit(&plural, rng)),
                key: with_last(plural),
                tabled,
            }
        }
        // A name in `y`, its plural in `ies`, and the plural in `ys` (`querys`): the plural
        // of both.
        3 => {
            let y = format!("{}y", stem[last]);
            Pair {
                a: with_last(y.clone()),
                b: with_last(format!("{}ies", &y[..y.len() - 1])),
                key: with_last(format!("{y}s")),
                tabled,
            }
        }
        // Two edits of the key: one edit from each.
        0 => {
            let key = stem.clone();
            let a = with_last(edit(&stem[last], rng));
            let b = with_last(edit(&stem[last], rng));
            Pair { a, b, key, tabled }
        }
        // A name and its plural, and the name with its last letter dropped: one edit from
        // the name, two from the plural (which takes seven letters or more to be close).
        2 if stem.concat().len() >= 6 => {
            let mut shorter = stem[last].clone();
            shorter.pop();
            Pair {
                a: stem.clone(),
                b: with_last(format!("{}s", stem[last])),
                key: with_last(shorter),
                tabled,
            }
        }
        // A name and its plural, and a key one edit from the plural, not a plural itself.
        _ => {
            let plural = format!("{}s", stem[last]);
            let key = with_last(format!("{}z", stem[last]));
            Pair {
                a: stem.clone(),
                b: with_last(plural),
                key,
                tabled,
            }
        }
    }
}

/// A field's type and a value of it. A key close to a boolean is sent with a value of any of
/// these types: a boolean keeps a further field from being taken for the key either way.
fn typed(rng: &mut fastrand::Rng) -> (Value, Value) {
    match rng.usize(..5) {
        0 => (json!({"type": "string"}), json!("some text")),
        1 => (json!({"type": "integer"}), json!(7)),
        2 => (json!({"type": "number"}), json!(2.5)),
        3 => (
            json!({"type": "array", "items": {"type": "string"}}),
            json!(["x"]),
        ),
        _ => (json!({"type": "boolean"}), json!(true)),
    }
}

/// The problem the model is told about `key`, if it names it as close to several fields: the
/// fields it lists.
fn close_fields(message: &str, key: &str) -> Option<String> {
    let start = message.find(&format!("`{key}` is close to "))?;
    let rest = &message[start..];
    let end = rest.find("none clearly closer")?;
    Some(rest[..end].to_string())
}

/// Generated tool shapes: a key close to two fields (one edit from each, or a plural and a
/// typo), any subset of the fields sent, at the top level or inside an object, a word of the
/// tables in a quarter of them: the call is never repaired into either field, and its error
/// names both. Several seeds: a shape the generator makes rarely is met under one of them.
#[test]
fn a_key_close_to_two_fields_is_repaired_into_neither_and_names_both() {
    let table = table_words();
    assert!(table.contains(&"del") && table.len() > 100, "{table:?}");
    for seed in [0x0C10_5E70, 0x5EED_0281, 0xDE1E_5000] {
        close_to_two_fields(seed, &table);
    }
}

/// One seed's cases of the rule above.
fn close_to_two_fields(seed: u64, table: &[&str]) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut checked, mut with_alias, mut boolean_not_switched) = (0usize, 0usize, 0usize);
    let mut tabled = 0usize;
    for case in 0..4000 {
        let p = pair(&mut rng, table);
        let camel = rng.bool();
        let (a, b) = (key_of(&p.a, camel), key_of(&p.b, camel));
        let key = key_of(&p.key, rng.bool());
        // Other fields of other words than the key's, for the same reason.
        let others: Vec<String> = (0..rng.usize(0..4))
            .map(|_| word(&mut rng))
            .filter(|w| !p.key.contains(w))
            .collect();
        let names: Vec<&String> = [&a, &b].into_iter().chain(&others).collect();
        let norms: Vec<String> = names.iter().map(|n| normalise_key(n)).collect();
        // Names that are one name in another spelling, or a key that is: not this rule's case.
        let distinct = norms
            .iter()
            .enumerate()
            .all(|(i, n)| !norms[..i].contains(n));
        if !distinct || norms.contains(&normalise_key(&key)) || key.chars().count() < 4 {
            continue;
        }
        // A key that is another number of one field is that field's word, which is never a
        // misspelling of the other (`resolve/meaning.rs`): `a_key_that_is_a_word_...` below.
        let number = super::keys::singular_key(&key);
        if [&a, &b]
            .iter()
            .any(|n| super::keys::singular_key(n) == number)
        {
            continue;
        }
        // Likewise a key that holds a word of English or of APIs the fields do not (`tubiDog`
        // beside `tubiDogu`): a word is not a misspelling.
        let field_words: Vec<String> = [&a, &b]
            .iter()
            .flat_map(|n| super::keys::singular_words(n))
            .collect();
        if super::keys::singular_words(&key)
            .iter()
            .any(|w| !field_words.contains(w) && crate::resolve::vocab::is_known_word(w))
        {
            continue;
        }
        let mut properties = Map::new();
        let mut values = Map::new();
        let mut required = Vec::new();
        let key_value = typed(&mut rng).1;
        // At the top level, `a` or `b` may be an alias of a field of another name: the model
        // is told the field and the alias.
        let mut aliased: Vec<(String, String)> = Vec::new();
        for name in &names {
            let (schema, value) = typed(&mut rng);
            if rng.usize(..3) == 0 {
                required.push(json!(name));
            }
            properties.insert(name.to_string(), schema);
            values.insert(name.to_string(), value);
        }
        let boolean_close = [&a, &b]
            .iter()
            .any(|n| properties[n.as_str()]["type"] == "boolean");
        let mut sent = Map::new();
        for name in &names {
            if rng.bool() {
                sent.insert(name.to_string(), values[name.as_str()].clone());
            }
        }
        let not_switched = boolean_close && !key_value.is_boolean();
        sent.insert(key.clone(), key_value);
        let nested = rng.usize(..3) == 0;
        if !nested {
            // The field is declared under its new name, with its schema, so that the aliased
            // field is as typed as any other. The fields in the order the tool lists them,
            // a new name drawn for each.
            let keys: Vec<String> = properties.keys().cloned().collect();
            for name in &keys {
                let renamed = format!("{}_{}", word(&mut rng), word(&mut rng));
                if !(*name == a || *name == b)
                    || sent.contains_key(name)
                    || !rng.bool()
                    || properties.contains_key(&renamed)
                {
                    continue;
                }
                if let Some(schema) = properties.remove(name) {
                    properties.insert(renamed.clone(), schema);
                }
                for r in required.iter_mut() {
                    if r == &json!(name) {
                        *r = json!(renamed);
                    }
                }
                aliased.push((renamed, name.to_string()));
            }
        }
        let object = json!({"type": "object", "properties": properties, "required": required});
        let (t, arguments, prefix) = if nested {
            let t = tool(json!({
                "type": "object",
                "properties": {"options": object, "id": {"type": "string"}},
                "required": ["options"]
            }));
            (t, args(json!({"options": sent, "id": "x"})), "options.")
        } else {
            let mut t = tool(object);
            for p in t.params.iter_mut() {
                if let Some((_, alias)) = aliased.iter().find(|(field, _)| *field == p.name) {
                    p.aliases.push(alias.clone());
                }
            }
            (t, sent.clone(), "")
        };
        // The aliased fields keep their schemas: each has its type.
        let typed_alias = !aliased.is_empty()
            && aliased.iter().all(|(field, _)| {
                t.param(field)
                    .is_some_and(|p| p.schema().get("type").is_some())
            });
        let why = format!(
            "seed {seed:#x} case {case}: {arguments:?} for {}",
            Value::Object(properties)
        );
        let message = match prepare(&t, arguments, Repair::Safe) {
            Ok(p) => panic!("repaired: {why} -> {:?} {:?}", p.arguments, p.fixes),
            Err(message) => message,
        };
        let listed = close_fields(&message, &format!("{prefix}{key}"))
            .unwrap_or_else(|| panic!("not answered as close to both: {why}: {message}"));
        for name in [&a, &b] {
            let named = match aliased.iter().find(|(_, alias)| alias == name) {
                Some((field, alias)) => format!("`{field}` (alias `{alias}`)"),
                None => format!("`{prefix}{name}`"),
            };
            assert!(
                listed.contains(&named),
                "{named} not named: {why}: {message}"
            );
        }
        checked += 1;
        with_alias += usize::from(typed_alias);
        boolean_not_switched += usize::from(not_switched);
        tabled += usize::from(p.tabled);
    }
    assert!(
        checked > 2000 && tabled > 400,
        "only {checked} cases, {tabled} with a word of the tables"
    );
    assert!(
        with_alias > 300 && boolean_not_switched > 300,
        "{with_alias} cases with a typed aliased field, {boolean_not_switched} with a boolean close to a \
         key of another type"
    );
}

/// The cases found: `querys` beside `query` and `queries` (the plural of either), and
/// `user_nam` beside `user_name` and `user_names` (one edit, two edits), for each subset of
/// the two sent, camelCase too; a field given already is not repaired into either.
#[test]
fn query_and_queries_and_user_name_and_user_names() {
    let cases = [
        ("query", "queries", "querys"),
        ("user_name", "user_names", "user_nam"),
        ("userName", "userNames", "userNam"),
    ];
    for (a, b, key) in cases {
        let t = tool(json!({
            "type": "object",
            "properties": {
                a: {"type": "string"},
                b: {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer"}
            }
        }));
        for sent in [
            json!({}),
            json!({a: "x"}),
            json!({b: ["x"]}),
            json!({a: "x", b: ["y"]}),
        ] {
            let mut sent = args(sent);
            sent.insert(key.into(), json!("z"));
            let message =
                prepare(&t, sent.clone(), Repair::Safe).expect_err(&format!("{sent:?} repaired"));
            // Equally close, they come in the order of the parameters.
            let said = |x: &str, y: &str| {
                message.contains(&format!(
                    "`{key}` is close to both `{x}` and `{y}`, none clearly closer, so it was \
                     repaired into neither; send the one you mean"
                ))
            };
            assert!(said(a, b) || said(b, a), "{sent:?}: {message}");
        }
    }
    // A near-miss of one field only, already given, is not repaired into it, nor elsewhere.
    let t = tool(json!({
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}
    }));
    let message = prepare(&t, args(json!({"query": "x", "qeury": "y"})), Repair::Safe)
        .expect_err("not repaired");
    assert!(
        message.contains("unknown parameter(s) `qeury`"),
        "{message}"
    );
    // Three close fields: each named.
    let t = tool(json!({
        "type": "object",
        "properties": {"kabo": {"type": "string"}, "kabi": {"type": "string"},
                       "kabu": {"type": "string"}}
    }));
    let message = prepare(&t, args(json!({"kabe": "x"})), Repair::Safe).expect_err("several");
    assert!(
        message.contains(
            "`kabe` is close to `kabi`, `kabo` and `kabu`, none clearly closer, so it was \
             repaired into none of them"
        ),
        "{message}"
    );
    // Alone, a plural is still repaired into its field.
    let t = tool(json!({
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}
    }));
    let p = prepare(&t, args(json!({"querys": "x"})), Repair::Safe).expect("repaired");
    assert_eq!(p.arguments, args(json!({"query": "x"})));
}

/// A boolean counts as close by its name whatever the value: `recursiv: "yes"` beside the
/// boolean `recursive` (one edit) and the string `recursion` (two) is neither, as is
/// `overwrit: "a.txt"` beside `overwrite` and `overwrites`. A boolean alone is reached by a
/// misspelling only with a boolean value.
#[test]
fn a_boolean_close_to_a_key_keeps_a_further_field_from_being_taken_for_it() {
    let cases = [
        ("recursive", "recursion", "recursiv", json!("yes")),
        ("overwrite", "overwrites", "overwrit", json!("a.txt")),
        ("recursive", "recursion", "recursiv", json!(3)),
    ];
    for (boolean, other, key, value) in cases {
        let t = tool(json!({
            "type": "object",
            "properties": {boolean: {"type": "boolean"}, other: {"type": "string"}}
        }));
        let message = prepare(&t, args(json!({key: value})), Repair::Safe)
            .expect_err("repaired into neither");
        assert!(
            message.contains(&format!(
                "`{key}` is close to both `{boolean}` and `{other}`, none clearly closer"
            )),
            "{message}"
        );
    }
    let t = tool(json!({
        "type": "object",
        "properties": {"recursive": {"type": "boolean"}, "path": {"type": "string"}}
    }));
    let p = prepare(
        &t,
        args(json!({"path": "/", "recursiv": true})),
        Repair::Safe,
    )
    .expect("a boolean value reaches the boolean");
    assert_eq!(p.arguments, args(json!({"path": "/", "recursive": true})));
    let message = prepare(
        &t,
        args(json!({"path": "/", "recursiv": "yes"})),
        Repair::Safe,
    )
    .expect_err("closeness alone never switches a boolean");
    assert!(message.contains("`recursiv`"), "{message}");
}

/// "Clearly closer" is a margin of at least 15 points between the discrete scores (plural 95,
/// one edit 90, two edits 80): a plural is clearly closer than a typo of two letters, and not
/// than a typo of one; a typo of one letter is not clearly closer than one of two.
#[test]
fn clearly_closer_is_a_margin_of_at_least_fifteen() {
    let t = tool(json!({
        "type": "object",
        "properties": {"document": {"type": "string"}, "dacumants": {"type": "string"}}
    }));
    // 95 against 80: exactly the margin.
    let p = prepare(&t, args(json!({"documents": "a"})), Repair::Safe).expect("repaired");
    assert_eq!(p.arguments, args(json!({"document": "a"})));
    // The closest field sent already: not repaired into the other.
    let message = prepare(
        &t,
        args(json!({"document": "a", "documents": "b"})),
        Repair::Safe,
    )
    .expect_err("not repaired");
    assert!(
        message.contains("unknown parameter(s) `documents`"),
        "{message}"
    );
    // `documents` is a word, the plural of `document`, and so never a misspelling of
    // `documentz`: the plural is taken.
    let t = tool(json!({
        "type": "object",
        "properties": {"document": {"type": "string"}, "documentz": {"type": "string"}}
    }));
    let p = prepare(&t, args(json!({"documents": "a"})), Repair::Safe).expect("repaired");
    assert_eq!(p.arguments, args(json!({"document": "a"})));
    // 95 against 90: neither.
    {
        let (a, b, key) = ("user_name", "user_names", "user_nam");
        let t = tool(json!({
            "type": "object",
            "properties": {a: {"type": "string"}, b: {"type": "string"}}
        }));
        let message = prepare(&t, args(json!({key: "a"})), Repair::Safe).expect_err("neither");
        assert!(
            message.contains(&format!("`{key}` is close to both `{a}` and `{b}`")),
            "{message}"
        );
    }
}

/// A key close to an alias is answered with the field and the alias (equally close fields
/// in the order of the parameters).
#[test]
fn an_alias_close_to_a_key_is_named_with_its_field() {
    let mut t = tool(json!({
        "type": "object",
        "properties": {"search_text": {"type": "string"}, "queries": {"type": "array"}}
    }));
    t.params
        .iter_mut()
        .filter(|p| p.name == "search_text")
        .for_each(|p| p.aliases.push("query".into()));
    let message = prepare(&t, args(json!({"querys": "a"})), Repair::Safe).expect_err("neither");
    assert!(
        message.contains(
            "`querys` is close to both `queries` and `search_text` (alias `query`), none \
             clearly closer"
        ),
        "{message}"
    );
}

/// The case the generator found: `tuvi_del` beside `tuviDele` (one edit) and `tuviDeles` (two
/// edits, and the plural of the first), in every spelling of the key, with each subset of the
/// two sent, at the top level and inside an object: close to both, repaired into neither.
#[test]
fn tuvi_del_beside_tuvi_dele_and_tuvi_deles() {
    let (a, b) = ("tuviDele", "tuviDeles");
    for key in ["tuvi_del", "tuviDel", "tuvidel", "tuvi-del", "TuviDel"] {
        for sent in [
            json!({}),
            json!({a: "x"}),
            json!({b: "x"}),
            json!({a: "x", b: "y"}),
        ] {
            let mut sent = args(sent);
            sent.insert(key.into(), json!("z"));
            let fields = json!({
                "type": "object",
                "properties": {a: {"type": "string"}, b: {"type": "string"}}
            });
            let nested = tool(json!({
                "type": "object",
                "properties": {"options": fields, "id": {"type": "string"}},
                "required": ["options"]
            }));
            for (t, arguments, prefix) in [
                (tool(fields.clone()), sent.clone(), ""),
                (
                    nested,
                    args(json!({"options": Value::Object(sent.clone()), "id": "x"})),
                    "options.",
                ),
            ] {
                let message =
                    prepare(&t, arguments, Repair::Safe).expect_err(&format!("{sent:?} repaired"));
                assert!(
                    message.contains(&format!(
                        "`{prefix}{key}` is close to both `{prefix}{a}` and `{prefix}{b}`, none \
                         clearly closer"
                    )),
                    "{prefix}{sent:?}: {message}"
                );
            }
        }
    }
}
