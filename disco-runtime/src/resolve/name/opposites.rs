//! Never across opposites, applied to names: the full guard of a request against one spelling
//! of a tool (`opposed_forms`) and against all of them (`NameIndex::opposed_tool`). The model
//! of opposites itself (affixes, negations, fused names) is `resolve::polarity`.

use super::index::Form;
use super::query::Query;
use super::relation;
use super::NameIndex;
use crate::resolve::meaning::{read_letters_within, Reading, RivalTable};
use crate::resolve::polarity::{
    fused_affixes, fused_table, ids_opposed, is_negation, negated_form, negation_on_one_side,
    opposed_of, opposed_pairs, opposed_words_of, prefixed_form, typo_allowance, Affixes, Polarity,
    Word,
};
use crate::resolve::vocab::is_known_word;
use crate::text::edits::osa_within;

impl NameIndex {
    /// The full opposites guard against every spelling of a tool.
    pub(super) fn opposed_tool(&self, query: &Query, tool: usize) -> bool {
        self.forms_of[tool]
            .iter()
            .any(|&f| opposed_forms(self, query, &self.forms[f as usize]))
    }
}

/// The full guard for a chosen tool: word-level (opposed words, and words moved across a
/// relational word: `relation.rs`), and letter-level for requests whose word boundaries differ
/// from the tool's (`unlockdoor` against `lock_door`).
/// `rivals`: the catalog's words' rivals (`resolve/meaning.rs`).
pub(super) fn opposed_forms(rivals: &dyn RivalTable, query: &Query, form: &Form) -> bool {
    // The same words, in the same order (the request differs in case or separators only):
    // nothing below can find an opposite where no word differs.
    if query.raw.len() == form.raw.len() && query.raw.iter().zip(&form.raw).all(|(q, f)| **q == **f)
    {
        return false;
    }
    // The same letters are the same words, cut elsewhere (`poweroff` is `power_off`,
    // `disablewifi` is `disable_wifi`); a fused word of English is kept whole by tier 3.
    if query.compact == *form.compact && query.raw.len() != form.raw.len() {
        return false;
    }
    if negation_on_one_side(&query.raw, &form.raw)
        || raw_words_opposed(rivals, query, form)
        || opposed_words_of(
            &query.stems,
            query.stem_polarity(),
            &form.stems,
            &form.stem_polarity,
        )
        || inflected_opposed(query, form)
        || relation::moved(query, form)
    {
        return true;
    }
    if misspelled_opposite(rivals, query, form) {
        return true;
    }
    let (a, b) = (query.compact.as_str(), &*form.compact);
    if a == b || query.raw.len() == form.raw.len() {
        return false;
    }
    // Strip what both share at the start and the end; what remains is what differs.
    let prefix: usize = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    let suffix: usize = a_rest
        .chars()
        .rev()
        .zip(b_rest.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    let da = &a_rest[..a_rest.len() - suffix];
    let db = &b_rest[..b_rest.len() - suffix];
    let negation_inserted = |x: &str, y: &str| y.is_empty() && is_negation(x);
    if negation_inserted(da, db) || negation_inserted(db, da) {
        return true;
    }
    // Words fused on one side: align the letters with the tool's words and compare word by
    // word (`dequeuevehicle` against `enqueue_vehicle`, `unlockdoor` against `lock_door`).
    if query.raw.len() < form.raw.len() && fused_affixes(a, &form.raw) == Affixes::Opposed {
        return true;
    }
    if form.raw.len() < query.raw.len() && fused_affixes(b, &query.raw) == Affixes::Opposed {
        return true;
    }
    // Opposite words fused into the compact form on one side only.
    let table = fused_table();
    let (qa, fb) = (query.fused(), &form.fused);
    for &x in qa {
        if fb.binary_search(&x).is_ok() {
            continue;
        }
        if table.opposite[usize::from(x)]
            .iter()
            .any(|y| fb.binary_search(y).is_ok() && qa.binary_search(y).is_err())
        {
            return true;
        }
    }
    false
}

/// `opposed_words` of the words as written (without the negation words, weighed apart): a
/// word's polarity is its stem's where the two are one (most words), the name index's
/// otherwise, rather than computed for every pair.
fn raw_words_opposed(rivals: &dyn RivalTable, query: &Query, form: &Form) -> bool {
    let polarity = query.stem_polarity();
    opposed_pairs(&query.raw, &form.raw, |i, j| {
        let (q, f) = (query.raw[i].as_str(), &*form.raw[j]);
        let qp = (polarity.get(i).copied())
            .filter(|_| query.stems.get(i).is_some_and(|s| s == q))
            .unwrap_or_else(|| Polarity::of(q));
        let fp = (form.stem_polarity.get(j).copied())
            .filter(|_| form.stems.get(j).is_some_and(|s| **s == *f))
            .unwrap_or_else(|| rivals.polarity(f));
        opposed_of(Word::new(q, &qp), Word::new(f, &fp))
    })
}

/// A request that reads as a misspelling of the opposite of a word of the tool
/// (`dcrement_counter` against `increment_counter`, `decrese_volume` against `increase_volume`,
/// `perform_aabductor` against `perform_abductee`, `sortdsc` against `sort_asc`): word by word,
/// a request word within a typo of an opposed rival of a word of the tool and at least as close
/// to it as to the tool's word, whether or not the other words pair up (`server.get_cliet`
/// against `get_server`: the misspelled `client` is no extra word to drop); and letter by
/// letter where the words do not pair up (`resolve/meaning.rs`).
fn misspelled_opposite(rivals: &dyn RivalTable, query: &Query, form: &Form) -> bool {
    // Where the words pair up, a request word stands for the tool's word it replaces; where
    // they do not, a request word may be a misspelled opposite beside the tool's word itself
    // (`get_server_cleint_events` against `get_server_events`).
    let paired = query.raw.len() == form.raw.len();
    let request = paired.then_some(&query.raw[..]);
    let by_words = query.raw.iter().any(|q| {
        // A word of the tool as it is is no misspelling; what depends on `q` alone is found
        // once for all the tool's words.
        if form.raw.iter().any(|x| **x == **q) {
            return false;
        }
        let known = std::cell::OnceCell::new();
        (form.raw.iter()).any(|w| misspelled_rival(rivals, q, w, request, &known))
    });
    if by_words || query.raw.len() == form.raw.len() {
        return by_words;
    }
    // Letters within two edits of an opposite spelling of the tool, and no farther from it
    // than from the tool's own.
    // Rival spellings are measured within two edits: a distance over that counts as three.
    let d = osa_within(&query.compact, &form.compact, 2).unwrap_or(3);
    d > 0 && read_letters_within(&query.compact, &form.raw, d, 2, rivals) == Reading::Opposed
}

/// Whether request word `q`, no word of the tool as it is, reads as a misspelling of an
/// opposite of the tool's word `w`: not when `w` is a word of `request` when it is given (the
/// words pair up). `known`: whether `q` is a known word, found on first need.
fn misspelled_rival(
    rivals: &dyn RivalTable,
    q: &str,
    w: &str,
    request: Option<&[String]>,
    known: &std::cell::OnceCell<bool>,
) -> bool {
    if request.is_some_and(|r| r.iter().any(|x| **x == *w)) {
        return false;
    }
    // Only a misspelling: a word is weighed by `opposed_words`.
    // The tool's word behind a prefix is a word made from it: opposed when the prefix negates
    // (`noadsorbent`), another word otherwise (`reinstall`).
    if prefixed_form(q, w) {
        return negated_form(q, w);
    }
    if *known.get_or_init(|| is_known_word(q)) {
        return false;
    }
    // An allowance is at most two edits: a distance past it counts as three.
    let dw = osa_within(q, w, 2).unwrap_or(3);
    rivals.rivals(w).opposed_with_chars().any(|(x, chars)| {
        let allowance = typo_allowance(chars).max(1);
        osa_within(q, x, dw.min(allowance)).is_some()
    })
}

/// A word on one side only that is an inflection of the opposite of a word on the other side
/// only (`get_created_items` against `get_deleted_items`, `list_started_instances` against
/// `list_stopped_instances`): the table knows the lemmas, the guard reads the inflections.
fn inflected_opposed(query: &Query, form: &Form) -> bool {
    // A word without ids is opposed to none: the request's are looked up only against a
    // tool word that has some.
    (0..query.raw.len()).any(|i| {
        !form.raw.iter().any(|f| **f == *query.raw[i])
            && (0..form.raw.len()).any(|j| {
                form.raw_inflected[j].as_deref().is_some_and(|ids| {
                    !query.raw.iter().any(|q| *q == *form.raw[j])
                        && ids_opposed(query.raw_inflected(i), Some(ids))
                })
            })
    })
}
