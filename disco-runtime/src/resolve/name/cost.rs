//! The cost model of tier 4 in one place: what a typo, a synonym, a dropped or an extra word
//! costs (`UNIT`, `DROPPED`, `EXTRA`, `FILLER`), the score of one form against the request,
//! and the letters-only comparison for requests that lost their word boundaries.

use super::fuzzy::{Candidate, Kind};
use super::index::Form;
use super::query::Query;
use super::relation::{self, Order};
use super::Rule;
use crate::resolve::meaning::{read_letters, Reading};
use crate::resolve::polarity::{
    fused_affixes, ids_opposed, is_negation, opposed_of, same_stem_opposed, Affixes, Word,
};
use crate::resolve::vocab::is_known_word;
use crate::text::edits::osa_within;
use crate::text::lexicon::same_lemma;
use crate::text::words::char_len;

// Fuzzy costs, in quarter units so that everything stays integral.
/// One character edit inside a word, or a synonym.
pub(super) const UNIT: u32 = 4;
/// A word of the tool missing from the request.
pub(super) const DROPPED: u32 = 4;
/// A word of the request missing from the tool: dearer than a dropped word, because the caller
/// asked for something this tool does not say it does.
pub(super) const EXTRA: u32 = 6;
/// A dropped or extra filler word ("with", "tool", "the"): it rarely changes the meaning.
pub(super) const FILLER: u32 = 2;

/// Scores one form against the request. Words are matched as a bag (order was tier 3's
/// business): identical stems first, then synonyms, then typos; what is left over on either
/// side is an extra or a dropped word.
pub(super) fn score(
    query: &Query,
    form: &Form,
    expansions: &[Vec<(&str, u32, Kind)>],
    letters: bool,
    known: &dyn Fn(&str) -> bool,
) -> Candidate {
    let mut used = vec![false; form.stems.len()];
    let mut matched = vec![false; query.stems.len()];
    let mut cost = 0;
    // (request word, tool word) as matched, for `relation::order` when it applies.
    let (relational, mut pairs) = (relation::applies(query, form), Vec::new());
    let mut kinds = [false; 4]; // typo, synonym, dropped, extra
    let mut anchored = false; // some word matched as written or with a typo
    let mut guessed = false; // some word matched by a typo that may not be corrected
    for pass in [Kind::Same, Kind::Synonym, Kind::Typo] {
        for (i, list) in expansions.iter().enumerate() {
            if matched[i] {
                continue;
            }
            let mut best: Option<(u32, usize, bool)> = None;
            for (word, word_cost, kind) in list {
                let guess = pass == Kind::Typo && *kind == Kind::Guess;
                if *kind != pass && !guess {
                    continue;
                }
                if let Some(j) =
                    (0..form.stems.len()).find(|&j| !used[j] && *form.stems[j] == **word)
                {
                    if best.is_none_or(|(c, _, _)| *word_cost < c) {
                        best = Some((*word_cost, j, guess));
                    }
                }
            }
            if let Some((word_cost, j, guess)) = best {
                used[j] = true;
                matched[i] = true;
                if relational {
                    pairs.push((i, j));
                }
                cost += word_cost;
                guessed |= guess;
                match pass {
                    Kind::Same => anchored = true,
                    Kind::Typo => {
                        anchored = true;
                        kinds[0] = true;
                    }
                    Kind::Synonym => kinds[1] = true,
                    Kind::Guess | Kind::Opposed => {}
                }
            }
        }
    }
    // A request word opposed to a leftover tool word (`set` against `get`) pairs up at the
    // price of a substitution: the candidate can then never be chosen, but it stays as close
    // as it really is, so that a request halfway between two opposite tools is not "clear".
    let mut blocked = false;
    for (i, r) in query.stems.iter().enumerate() {
        if matched[i] {
            continue;
        }
        let r = Word::new(r, &query.stem_polarity()[i]);
        let opposed_to = |j: usize| {
            let word = Word::new(&form.stems[j], &form.stem_polarity[j]);
            opposed_of(r, word)
                || expansions[i]
                    .iter()
                    .any(|(w, _, kind)| *kind == Kind::Opposed && **w == *form.stems[j])
        };
        if let Some(j) = (0..form.stems.len()).find(|&j| !used[j] && opposed_to(j)) {
            used[j] = true;
            matched[i] = true;
            cost += 2 * UNIT;
            blocked = true;
        }
    }
    let (mut dropped, mut extra, mut content_edits) = (false, false, 0);
    for (j, stem) in form.stems.iter().enumerate() {
        if !used[j] {
            dropped = true;
            if is_filler(stem) {
                cost += FILLER;
            } else {
                cost += DROPPED;
                content_edits += 1;
            }
        }
    }
    for (i, stem) in query.stems.iter().enumerate() {
        if !matched[i] {
            extra = true;
            if is_filler(stem) {
                cost += FILLER;
            } else {
                cost += EXTRA;
                content_edits += 1;
            }
            // `unget_team_info` is not `team_info` with a stray word: it negates `get`; nor is
            // `created_delete_file` `delete_file` with one: its extra word is the opposite of
            // one the tool has, in any inflection.
            let word = Word::new(stem, &query.stem_polarity()[i]);
            blocked |= query.negates_known(known)[i]
                || (0..form.stems.len()).any(|j| {
                    same_stem_opposed(word, Word::new(&form.stems[j], &form.stem_polarity[j]))
                        || ids_opposed(
                            query.raw_inflected()[i].as_deref(),
                            form.raw_inflected[j].as_deref(),
                        )
                });
        }
    }
    kinds[2] = dropped;
    kinds[3] = extra;
    let mut rule = match kinds {
        [true, false, false, false] => Rule::Typo,
        [false, true, false, false] => Rule::Synonym,
        [false, false, true, false] => Rule::DroppedWord,
        [false, false, false, true] => Rule::ExtraWord,
        _ => Rule::Fuzzy,
    };
    let matched_words = matched.iter().filter(|m| **m).count();
    // A word missing on one side and another word on the other is a substitution: another
    // object (`delete_user` is not `delete_file`), never a correction.
    let mut correctable = anchored
        && !guessed
        && cost > 0
        && !(dropped && extra)
        && match content_edits {
            // Typos, synonyms and fillers: one edit for a one-word name, two for longer ones.
            0 => {
                cost <= if form.stems.len() <= 1 {
                    UNIT
                } else {
                    2 * UNIT
                }
            }
            // One dropped or extra word and nothing else but a filler; what is left must still
            // say enough (two words in common) to single the tool out.
            1 => cost <= EXTRA && matched_words >= 2,
            _ => false,
        };

    // The request may have lost its word boundaries (`raedfile`): compare the letters.
    if letters && query.stems.len() != form.stems.len() {
        let len = char_len(&query.compact);
        let allowance = match len {
            0..=5 => 0,
            6..=11 => 1,
            _ => 2,
        };
        // A typo of the letters never changes a word's prefix (`dequeuevehicle` is not
        // `enqueue_vehicle`).
        if allowance > 0 && !letters_change_a_prefix(query, form) {
            let d = osa_within(&query.compact, &form.compact, allowance).unwrap_or(usize::MAX);
            if d > 0 && d <= allowance && (UNIT * d as u32) < cost {
                cost = UNIT * d as u32;
                rule = Rule::Typo;
                // A fused request that is itself a word stays whole (`offset`, `download`);
                // letters as close to a rival spelling of the tool (`getpayee` against
                // `get_payer`, `sortdsc` against `sort_asc`) are no correction.
                // So does a word of the request that the tool lacks (`apply` is no misspelling
                // of `appy` in `AppyPieAIAppBuilder`).
                let word = (query.raw.len() == 1 && is_known_word(&query.raw[0]))
                    || (0..query.raw.len()).any(|i| {
                        is_known_word(&query.raw[i]) && !covered(i, &query.raw, &form.raw)
                    });
                match read_letters(&query.compact, &form.raw, d) {
                    Reading::Opposed => {
                        blocked = true;
                        correctable = false;
                    }
                    Reading::Typo => correctable = !word,
                    Reading::Word => correctable = false,
                }
            }
        }
    }

    // Words moved across a relational word state another relation: priced as a substitution
    // and never chosen, like an opposite word (`relation.rs`).
    match relation::order(query, form, &pairs) {
        Order::Kept => {}
        Order::Unclear => correctable = false,
        Order::Moved => {
            cost += 2 * UNIT;
            blocked = true;
        }
    }

    Candidate {
        tool: form.tool,
        cost,
        rule,
        correctable,
        // Opposed pairs were found above; a negation word left over on either side blocks too.
        // The complete guard (`opposed_forms`) runs again on the final choice and on each
        // suggestion.
        blocked: blocked
            || (0..query.raw.len()).any(|i| !matched[i] && is_negation(&query.raw[i]))
            || (0..form.raw.len()).any(|j| !used[j] && is_negation(&form.raw[j])),
    }
}

/// Whether the request's letters, aligned with the form's words (or the form's with the
/// request's, whichever has fewer words), change the prefix of some word.
fn letters_change_a_prefix(query: &Query, form: &Form) -> bool {
    if query.raw.len() < form.raw.len() {
        fused_affixes(&query.compact, &form.raw) != Affixes::Unrelated
    } else {
        fused_affixes(&form.compact, &query.raw) != Affixes::Unrelated
    }
}

pub(super) fn is_filler(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "the"
            | "of"
            | "for"
            | "with"
            | "by"
            | "at"
            | "my"
            | "and"
            | "tool"
            | "function"
            | "func"
            | "fn"
            | "api"
            | "cmd"
            | "command"
            | "action"
            | "method"
    )
}

/// Whether request word `i` stands for whole words of the tool: one of them (or a form of its
/// lemma), several of them fused (`filelist` for `file`, `list`), or a piece of one that the
/// request's neighbouring words complete (`api`, `token` for `apitoken`). A word that is only
/// part of a tool word (`toke` in `token`) stands for none.
fn covered<T: AsRef<str>>(i: usize, request: &[String], tool: &[T]) -> bool {
    let w = request[i].as_str();
    let words: Vec<&str> = tool.iter().map(AsRef::as_ref).collect();
    if words.iter().any(|f| *f == w || same_lemma(w, f)) {
        return true;
    }
    let runs = |pieces: &[&str], whole: &str| {
        (0..pieces.len()).any(|s| (s + 1..=pieces.len()).any(|e| pieces[s..e].concat() == whole))
    };
    if runs(&words, w) {
        return true;
    }
    // A run of request words around `i` that makes one tool word.
    let pieces: Vec<&str> = request.iter().map(String::as_str).collect();
    words
        .iter()
        .any(|f| (0..=i).any(|s| (i + 1..=pieces.len()).any(|e| pieces[s..e].concat() == *f)))
}
