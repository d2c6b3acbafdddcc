//! Words of names and keys: the tokenizer of name resolution, argument keys and the lint.

/// Splits a name into lowercase words at separators (anything not a letter, a digit or a
/// combining mark, which belongs to the letter before it) and at camelCase / PascalCase
/// boundaries (`getHTTPServer` -> get, http, server; `listURLs` -> list, urls).
pub(crate) fn split_words(name: &str) -> Vec<String> {
    if name.is_ascii() {
        split_ascii_words(name.as_bytes())
    } else {
        split_unicode_words(name)
    }
}

/// `split_words` of an ASCII name, byte by byte: names are nearly always ASCII, and every
/// resolution splits several (the request, its namespace segments, its tails), so they skip
/// the decoding, the character tables and the per-character lowercase iterator. Same rules,
/// same output (`ascii_and_unicode_splits_agree`).
fn split_ascii_words(b: &[u8]) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in b.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !current.is_empty() {
            let prev = b[i - 1];
            let next = b.get(i + 1).copied();
            let after = b.get(i + 2).copied();
            let plural_acronym = next == Some(b's')
                && !after.is_some_and(|a| a.is_ascii_alphanumeric() && !a.is_ascii_uppercase());
            let boundary = prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase()
                    && next.is_some_and(|n| n.is_ascii_lowercase())
                    && !plural_acronym);
            if boundary {
                words.push(std::mem::take(&mut current));
            }
        }
        current.push(char::from(c.to_ascii_lowercase()));
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn split_unicode_words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() && !unicode_normalization::char::is_combining_mark(c) {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            let after = chars.get(i + 2).copied();
            let plural_acronym = next == Some('s')
                && !after.is_some_and(|a| a.is_alphanumeric() && !a.is_uppercase());
            let boundary = prev.is_lowercase()
                || prev.is_numeric()
                || (prev.is_uppercase()
                    && next.is_some_and(|n| n.is_lowercase())
                    && !plural_acronym);
            if boundary {
                words.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The singular of an English word, as a comparison key: `entities`/`entity`,
/// `directories`/`directory`, `matches`/`match`, `files`/`file`, `aliases`/`alias`. It only has
/// to map a singular and its plural to the same key; it is never shown.
pub(crate) fn singular(word: &str) -> String {
    const IRREGULAR: &[(&str, &str)] = &[
        ("people", "person"),
        ("children", "child"),
        ("men", "man"),
        ("women", "woman"),
        ("indices", "index"),
        ("matrices", "matrix"),
        ("vertices", "vertex"),
        ("aliases", "alias"),
        ("statuses", "status"),
        ("caches", "cache"),
        ("movies", "movie"),
        ("cookies", "cookie"),
        ("buses", "bus"),
        ("echoes", "echo"),
        ("heroes", "hero"),
        ("potatoes", "potato"),
        ("tomatoes", "tomato"),
        ("criteria", "criterion"),
    ];
    if let Some((_, s)) = IRREGULAR.iter().find(|(p, _)| *p == word) {
        return (*s).to_string();
    }
    let n = word.len();
    if n < 3 || !word.ends_with('s') || ["ss", "us", "is", "as"].iter().any(|e| word.ends_with(e)) {
        return word.to_string();
    }
    let rule = if word.ends_with("ies") && n > 4 {
        format!("{}y", &word[..n - 3])
    } else if ["sses", "xes", "ches", "shes", "zzes"]
        .iter()
        .any(|e| word.ends_with(e))
    {
        word[..n - 2].to_string()
    } else {
        word[..n - 1].to_string()
    };
    // A word of English that WordNet reads: the rule holds only where the morphology agrees
    // (`files` is `file`; `news`, `lens` and `series` are not plurals of `new`, `len`, `sery`).
    if let Some(mut lemmas) = super::lexicon::lemmas(word) {
        if !lemmas.any(|l| l == rule) {
            return word.to_string();
        }
    }
    rule
}

pub(crate) fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// Lowercase runs of letters and digits, nothing else: the lint's reading of descriptions.
pub(crate) fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_unicode_splits_agree() {
        // Every name of up to six characters over letters of both cases (`s` and `S` for the
        // plural acronym rule), a digit and separators: the byte path and the character path
        // split each the same way.
        let alphabet = [b'a', b'B', b's', b'S', b'1', b'_', b'-', b'X'];
        let mut names: Vec<Vec<u8>> = vec![Vec::new()];
        let mut checked = 0;
        for _ in 0..6 {
            let mut longer = Vec::with_capacity(names.len() * alphabet.len());
            for name in &names {
                for &c in &alphabet {
                    let mut n = name.clone();
                    n.push(c);
                    let text = std::str::from_utf8(&n).expect("ASCII");
                    assert_eq!(split_ascii_words(&n), split_unicode_words(text), "{text}");
                    checked += 1;
                    longer.push(n);
                }
            }
            names = longer;
        }
        assert!(checked > 250_000, "{checked}");
        for name in [
            "getHTTPServer",
            "listURLs",
            "URLsList",
            "read_file2",
            "v2API",
            "a--b",
        ] {
            assert_eq!(
                split_ascii_words(name.as_bytes()),
                split_unicode_words(name)
            );
        }
    }
}
