//! Word order is meaning where a relational word stands between: `copy_local_to_remote` is not
//! `copy_remote_to_local`, nor `convert_usd_to_eur` `convert_eur_to_usd`. Words of a name may
//! change places (tier 3's word order, the fuzzy tier's bag of words) only while every
//! relational word keeps its neighbours and no two words trade its sides; a request that moves
//! them states the opposite relation, and is an opposite at every tier (`Order::Moved`).
//!
//! Which words are paired is the caller's: the fuzzy tier's scoring pairs them as it prices
//! them (`cost.rs`); the guard (`moved`) pairs equal stems, then typos.

use super::index::Form;
use super::query::Query;
use crate::resolve::polarity::{typo_allowance, typo_possible};
use crate::text::edits::osa_within;
use crate::text::words::{char_len, singular};

/// Words that relate the words on their two sides: which way a conversion, a copy or a move
/// goes, what is grouped, counted or compared by what. Compared with a name's words as the
/// tokenizer gives them (lowercase).
fn is_relational(word: &str) -> bool {
    matches!(
        word,
        "to" | "from" | "into" | "onto" | "by" | "per" | "vs" | "than" | "before" | "after"
    )
}

/// What a pairing of the request's words with a tool's words does to the relational words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Order {
    /// Every relational word keeps its neighbours, and no words trade its sides.
    Kept,
    /// A relational word on one side only, whose neighbours come the other way round on the
    /// other side (`convert_eur_usd` against `convert_usd_to_eur`): without the word, which
    /// way the name reads is a convention nobody can check. Not a correction; a suggestion may
    /// still help.
    Unclear,
    /// A relational word with other neighbours, or words that traded its sides: the opposite
    /// relation.
    Moved,
}

/// Whether the request states another relation than this spelling of a tool, by the guard's
/// own pairing of their words (equal stems, then typos, each in order). A request that joined
/// words the tool keeps apart (`byemailnylas` against `EmailByNylas`) is read as the tool's
/// words where its letters spell them.
pub(super) fn moved(query: &Query, form: &Form) -> bool {
    if query.raw.len() < form.raw.len() && form.relational {
        if let Some(words) = split_joined(&query.raw, &form.raw) {
            let stems: Vec<String> = words.iter().map(|w| singular(w)).collect();
            return order_of(&words, form, &pair_words(&stems, form)) == Order::Moved;
        }
    }
    if !applies(query, form) {
        return false;
    }
    order(query, form, &pair_words(&query.stems, form)) == Order::Moved
}

/// Whether the request or the tool's spelling has a relational word: otherwise any order is
/// kept, and no pairing need be looked at.
pub(super) fn applies(query: &Query, form: &Form) -> bool {
    query.relational || form.relational
}

/// What `pairs` (request word, tool word: positions) does to the relational words of either.
pub(super) fn order(query: &Query, form: &Form, pairs: &[(usize, usize)]) -> Order {
    if !applies(query, form) {
        return Order::Kept;
    }
    order_of(&query.raw, form, pairs)
}

fn order_of<S: AsRef<str>>(request: &[S], form: &Form, pairs: &[(usize, usize)]) -> Order {
    let pairs = &untangle(pairs, request.len(), &form.stems);
    let mut in_form: Vec<Option<usize>> = vec![None; request.len()];
    let mut in_request: Vec<Option<usize>> = vec![None; form.raw.len()];
    for &(i, j) in pairs {
        if let (Some(a), Some(b)) = (in_form.get_mut(i), in_request.get_mut(j)) {
            *a = Some(j);
            *b = Some(i);
        }
    }
    let mut unclear = false;
    for (j, word) in form.raw.iter().enumerate() {
        if !is_relational(word) {
            continue;
        }
        match in_request[j] {
            Some(i) if is_relational(request[i].as_ref()) => {
                if moved_around((i, j), pairs, &form.stems) {
                    return Order::Moved;
                }
            }
            _ => unclear |= neighbours_reversed(j, &in_request),
        }
    }
    for (i, word) in request.iter().enumerate() {
        let paired = in_form[i].is_some_and(|j| is_relational(&form.raw[j]));
        if is_relational(word.as_ref()) && !paired {
            unclear |= neighbours_reversed(i, &in_form);
        }
    }
    if unclear {
        Order::Unclear
    } else {
        Order::Kept
    }
}

pub(super) fn any_relational<S: AsRef<str>>(words: &[S]) -> bool {
    words.iter().any(|w| is_relational(w.as_ref()))
}

/// For a relational word paired at (`ri`, `rj`): whether its nearest paired word on either side
/// is another word in the request than in the tool (compared by the tool's stems, so that two
/// copies of one word are one neighbour), or words crossed it both ways: against
/// `copy_local_big_file_to_new_remote_folder`, `copy_remote_big_file_to_new_local_folder`
/// keeps the neighbours of `to` and still swaps `local` and `remote`. Crossing it one way only
/// is a word moved around the phrase (`usd_to_eur_convert`).
fn moved_around((ri, rj): (usize, usize), pairs: &[(usize, usize)], stems: &[Box<str>]) -> bool {
    // Nearest on the left and on the right, by the request's order and by the tool's.
    let (mut left_q, mut left_f, mut right_q, mut right_f) = (None, None, None, None);
    let (mut went_right, mut went_left) = (false, false);
    for &(i, j) in pairs {
        if (i, j) == (ri, rj) {
            continue;
        }
        went_right |= i < ri && j > rj;
        went_left |= i > ri && j < rj;
        if i < ri && left_q.is_none_or(|(bi, _): (usize, usize)| i > bi) {
            left_q = Some((i, j));
        }
        if i > ri && right_q.is_none_or(|(bi, _): (usize, usize)| i < bi) {
            right_q = Some((i, j));
        }
        if j < rj && left_f.is_none_or(|(_, bj): (usize, usize)| j > bj) {
            left_f = Some((i, j));
        }
        if j > rj && right_f.is_none_or(|(_, bj): (usize, usize)| j < bj) {
            right_f = Some((i, j));
        }
    }
    let same = |a: Option<(usize, usize)>, b: Option<(usize, usize)>| match (a, b) {
        (None, None) => true,
        (Some((_, x)), Some((_, y))) => stems[x] == stems[y],
        _ => false,
    };
    (went_right && went_left) || !same(left_q, left_f) || !same(right_q, right_f)
}

/// For a relational word at `at` on one side only: whether the words right before and after it
/// are both paired, in the other order.
fn neighbours_reversed(at: usize, other: &[Option<usize>]) -> bool {
    let before = at
        .checked_sub(1)
        .and_then(|k| other.get(k).copied().flatten());
    let after = other.get(at + 1).copied().flatten();
    matches!((before, after), (Some(a), Some(b)) if a > b)
}

/// The same pairing up to which copy of a repeated word goes with which: as many pairs as can
/// be in order, in order (a longest common subsequence of the words the request's words were
/// paired with and the tool's words), then each other request word with the first free copy
/// of its word. Copies of a word are one word to the reader, so the reading that keeps the
/// order best is the one to judge (`license_group_api_add_license_to_license_group` moves
/// nothing however its four `license`s were first paired).
fn untangle(pairs: &[(usize, usize)], words: usize, stems: &[Box<str>]) -> Vec<(usize, usize)> {
    let mut want: Vec<Option<&str>> = vec![None; words];
    for &(i, j) in pairs {
        if let (Some(w), Some(stem)) = (want.get_mut(i), stems.get(j)) {
            *w = Some(stem);
        }
    }
    let (n, m) = (words, stems.len());
    let at = |i: usize, j: usize| i * (m + 1) + j;
    let same = |i: usize, j: usize| want[i] == Some(&*stems[j]);
    // Longest in-order pairing from (i, j) on.
    let mut longest = vec![0u16; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            longest[at(i, j)] = if same(i, j) {
                longest[at(i + 1, j + 1)] + 1
            } else {
                longest[at(i + 1, j)].max(longest[at(i, j + 1)])
            };
        }
    }
    let mut out = Vec::with_capacity(pairs.len());
    let (mut used, mut done) = (vec![false; m], vec![false; n]);
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(i, j) {
            out.push((i, j));
            (used[j], done[i]) = (true, true);
            (i, j) = (i + 1, j + 1);
        } else if longest[at(i + 1, j)] >= longest[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    for i in (0..n).filter(|&i| !done[i]) {
        if let Some(j) = (0..m).find(|&j| !used[j] && same(i, j)) {
            used[j] = true;
            out.push((i, j));
        }
    }
    out
}

/// The guard's pairing: equal stems first, then words a typo apart, each request word with
/// the first free tool word (`untangle` then settles which copy of a word is which).
fn pair_words<S: AsRef<str>>(stems: &[S], form: &Form) -> Vec<(usize, usize)> {
    let mut used = vec![false; form.stems.len()];
    let mut pairs = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (i, stem) in stems.iter().enumerate() {
        match (0..form.stems.len()).find(|&j| !used[j] && *form.stems[j] == *stem.as_ref()) {
            Some(j) => {
                used[j] = true;
                pairs.push((i, j));
            }
            None => open.push(i),
        }
    }
    for i in open {
        let a = stems[i].as_ref();
        let typo = |j: usize| {
            let b = &*form.stems[j];
            let allowance = typo_allowance(char_len(a).max(char_len(b)));
            allowance > 0
                && char_len(a).abs_diff(char_len(b)) <= allowance
                && osa_within(a, b, allowance).is_some()
                && typo_possible(a, b)
        };
        if let Some(j) = (0..form.stems.len()).find(|&j| !used[j] && typo(j)) {
            used[j] = true;
            pairs.push((i, j));
        }
    }
    pairs
}

/// The request's words with each one the tool keeps apart split into the tool's words
/// (`byemailnylas` -> by, email, nylas), or `None` when some word's letters are not the tool's
/// words end to end.
fn split_joined<S: AsRef<str>>(request: &[String], tool: &[S]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for word in request {
        if tool.iter().any(|t| t.as_ref() == word) {
            out.push(word.clone());
            continue;
        }
        // `ends[k]`: the tool word that ends a split of `word[..k]`, and where it starts.
        let mut ends: Vec<Option<(usize, usize)>> = vec![None; word.len() + 1];
        for k in 0..word.len() {
            if k > 0 && ends[k].is_none() {
                continue;
            }
            for (t, w) in tool.iter().enumerate() {
                let w = w.as_ref();
                if !w.is_empty() && word[k..].starts_with(w) && ends[k + w.len()].is_none() {
                    ends[k + w.len()] = Some((t, k));
                }
            }
        }
        let mut parts = Vec::new();
        let mut at = word.len();
        while at > 0 {
            let (t, start) = ends[at]?;
            parts.push(tool[t].as_ref().to_string());
            at = start;
        }
        out.extend(parts.into_iter().rev());
    }
    Some(out)
}
